"""A match's wall-clock ceiling (cardroom.ceiling, enforced by the runner):
derived from the time control; when it passes, the bots that thought for
longer than their share forfeit and the match still ends with a result; if
no bot is at fault, the runner says the platform was too slow."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cardroom.ceiling import decisions_bound, match_ceiling_ms
from cardroom.players import TIMEOUT, InProcessPlayer, TimeControl
from cardroom.runner import MatchCeilingExceeded, run_match
from engine.replay import verify

REPLAYS = Path(__file__).resolve().parent / "data" / "replays"
TIME = TimeControl(startup_ms=5000, per_move_ms=1000, overage_ms=1000, total_ms=60_000, end_grace_ms=200)


class SlowPlayer(InProcessPlayer):
    """The built-in random bot, thinking ``seconds`` before every move."""

    def __init__(self, seconds: float):
        super().__init__("slowpoke", None)
        self.seconds = seconds

    def act(self, state, seat):
        time.sleep(self.seconds)
        return super().act(state, seat)


def test_the_bot_that_ran_the_match_past_its_ceiling_forfeits_and_the_match_ends():
    started = time.monotonic()
    record = run_match("allegory", [SlowPlayer(0.05), "builtin:random"], seed=3, time=TIME, ceiling_ms=1000)
    elapsed = time.monotonic() - started
    assert [(f.seat, f.reason) for f in record.forfeits] == [(0, TIMEOUT)]
    assert "wall-clock ceiling of 1.0 s" in record.forfeits[0].detail
    assert "more than its share (0.5 s)" in record.forfeits[0].detail
    assert record.result.ranks[0] == 2  # a forfeit ranks last
    assert elapsed < 30  # the rest is played by the default policy, at engine speed
    verify(record.replay)  # a valid replay (raises ReplayError otherwise), the forfeit marked from its event on
    # The same match without the ceiling: played to its end by both bots.
    unbounded = run_match("allegory", [SlowPlayer(0.05), "builtin:random"], seed=3, time=TIME)
    assert unbounded.forfeits == []
    assert unbounded.elapsed_ms > 1000


def test_a_match_past_its_ceiling_with_no_bot_at_fault_is_the_platforms_failure():
    def slow_platform(index, event):  # the platform's own work between events
        time.sleep(0.01)

    with pytest.raises(MatchCeilingExceeded, match="the time went to the platform"):
        run_match("allegory", ["builtin:random", "builtin:random"], seed=3, time=TIME, on_event=slow_platform, ceiling_ms=300)


def test_allegra_decisions_are_bounded_by_the_turn_limit():
    replay = json.loads((REPLAYS / "allegra-2p-turn-limit.json").read_text())
    per_seat = [sum(1 for e in replay["events"] if e["by"] == seat) for seat in range(replay["num_players"])]
    bound = decisions_bound("allegra", 2)
    assert max(per_seat) <= bound < 3 * max(per_seat)  # a bound, and not a silly one
    assert decisions_bound("allegra", 4) > bound
    assert decisions_bound("allegory", 2) is None


def test_default_ceilings():
    default = TimeControl()  # the ladders' defaults: 10 s start-up, 1 s a move, 300 s a match, 0.5 s end grace
    # each seat: start-up + the whole-match budget (it is shorter than the moves bound), then grace and allowance
    assert match_ceiling_ms("allegra", 2, default) == 2 * (10_000 + 300_000) + 500 + 30_000
    assert match_ceiling_ms("allegory", 4, default) == 4 * (10_000 + 300_000) + 500 + 30_000
    # a fast time control with a generous budget: the moves bound decides
    quick = TimeControl(startup_ms=1000, per_move_ms=10, overage_ms=100, total_ms=3_600_000, end_grace_ms=500)
    seat = 1000 + decisions_bound("allegra", 2) * 10 + 100
    assert match_ceiling_ms("allegra", 2, quick, allowance_ms=0) == 2 * seat + 500
