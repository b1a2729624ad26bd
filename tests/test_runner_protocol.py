"""The match runner with real bot programs over protocol v1 (no sandbox here:
the sandbox has its own hostile-bot suite). Each misbehaving bot must end in
the right forfeit while the match still finishes for everyone else."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cardroom.launch import PlainLauncher
from cardroom.players import TimeControl
from cardroom.runner import run_match
from engine.replay import verify

HERE = Path(__file__).resolve().parent
FAST = TimeControl(startup_ms=5000, per_move_ms=400, overage_ms=200, total_ms=20_000, end_grace_ms=200)


def misbehaving_bot(tmp_path: Path, behaviour: str, moves: int = 2) -> str:
    source = (HERE / "bots" / "misbehaving_bot.py").read_text()
    source = source.replace('BEHAVIOUR = "none"', f'BEHAVIOUR = "{behaviour}"').replace("MOVES = 2", f"MOVES = {moves}")
    path = tmp_path / f"{behaviour}_bot.py"
    path.write_text(source)
    return str(path)


def play(game: str, bots: list[str], seed: int = 7):
    return run_match(game, bots, seed=seed, time=FAST, launcher=PlainLauncher())


@pytest.mark.parametrize(
    "behaviour, reason",
    [
        ("crash", "crash"),
        ("exit", "exit"),
        ("timeout", "timeout"),
        ("garbage", "invalid_json"),
        ("wrong_message", "invalid_message"),
        ("illegal", "illegal_action"),
        ("close_stdout", "exit"),
        ("no_ready", "timeout"),
    ],
)
@pytest.mark.parametrize("game", ["allegory", "allegra"])
def test_misbehaving_bot_forfeits_and_match_finishes(tmp_path, game, behaviour, reason):
    bot = misbehaving_bot(tmp_path, behaviour)
    record = play(game, ["builtin:random", bot, "builtin:greedy"])
    replay = record.replay
    assert [f["seat"] for f in replay["result"]["forfeits"]] == [1]
    forfeit = replay["result"]["forfeits"][0]
    assert forfeit["reason"] == reason, record.forfeits[0].detail
    # The forfeiter is ranked below everyone else, and the match reached its end.
    assert replay["result"]["ranks"][1] == 3
    assert sorted(replay["result"]["ranks"][i] for i in (0, 2))[0] == 1
    verify(replay)
    # Every decision of seat 1 from the forfeit on is the default policy's, marked.
    seat1 = [(i, e) for i, e in enumerate(replay["events"]) if e["by"] == 1]
    marked = [i for i, e in seat1 if e.get("forfeit")]
    assert marked and marked[0] == forfeit["event"]
    assert all(e.get("forfeit") for i, e in seat1 if i >= forfeit["event"])
    assert not any(e.get("forfeit") for i, e in seat1 if i < forfeit["event"])
    moves_before = len([i for i, _ in seat1 if i < forfeit["event"]])
    expected_moves = 0 if behaviour == "no_ready" else 2
    assert moves_before == expected_moves


def test_bots_that_ignore_the_end_share_one_grace_period(tmp_path):
    """Every seat is told the match is over at once and the grace period
    runs for all of them together: four bots that stay after "end" hold the
    match up for one grace period (then they are killed), not four."""
    lingerer = misbehaving_bot(tmp_path, "linger", moves=10**9)
    control = TimeControl(startup_ms=5000, per_move_ms=400, overage_ms=200, total_ms=20_000, end_grace_ms=2000)
    started = time.monotonic()
    record = run_match("allegory", [lingerer] * 4, seed=3, time=control, launcher=PlainLauncher())
    elapsed = time.monotonic() - started
    assert record.forfeits == []
    assert 2.0 <= elapsed < 2.0 + 3.0, f"the match took {elapsed:.1f} s: one 2 s grace period plus play was expected, not four"


@pytest.mark.parametrize(
    "control, limit",
    [
        # The bank is named beside the per-move time: "no action within 600 ms"
        # read as a mistake next to a stated 400 ms a move (issue 25).
        (FAST, "no action within 400 ms per move plus 200 ms of overage bank"),
        (TimeControl(startup_ms=5000, per_move_ms=400, overage_ms=0, total_ms=20_000, end_grace_ms=200),
         "no action within 400 ms per move (its 0 ms overage bank is spent)"),
        (TimeControl(startup_ms=5000, per_move_ms=400, overage_ms=200, total_ms=300, end_grace_ms=200),
         "no action within the "),
    ],
)
def test_a_timeout_names_the_per_move_time_and_the_bank(tmp_path, control, limit):
    bot = misbehaving_bot(tmp_path, "timeout")
    record = run_match("allegra", [bot, "builtin:random"], seed=7, time=control, launcher=PlainLauncher())
    [forfeit] = record.forfeits
    assert forfeit.reason == "timeout" and forfeit.detail.startswith(limit), forfeit.detail
    if control.total_ms == 300:  # what was left of the total, which was less than a move and the bank
        assert forfeit.detail.endswith("ms left of its 300 ms of total thinking time"), forfeit.detail


def test_bot_stderr_is_kept_as_its_log(tmp_path):
    bot = misbehaving_bot(tmp_path, "crash", moves=3)
    record = play("allegra", [bot, "builtin:random"])
    log = record.logs[0]
    assert "move 1\nmove 2\nmove 3\n" in log
    assert "RuntimeError: deliberate crash" in log
    assert "forfeited at event" in log


def test_well_behaved_program_plays_a_whole_match(tmp_path):
    bots = [str(HERE.parent / "bots" / "random_bot.py"), "builtin:random", str(HERE.parent / "bots" / "allegra_greedy.py")]
    record = play("allegra", bots, seed=3)
    assert record.replay["result"]["forfeits"] == []
    report = verify(record.replay)
    assert report.result.ranks == record.replay["result"]["ranks"]
    assert all(isinstance(e.get("ms"), int) for e in record.replay["events"] if e["by"] != "chance")


def test_same_seed_gives_identical_replay():
    bots = ["builtin:greedy", "builtin:random", "builtin:random", "builtin:greedy"]
    for game in ("allegory", "allegra"):
        first = run_match(game, bots, seed=42).replay
        second = run_match(game, bots, seed=42).replay
        strip = lambda r: json.dumps([{k: v for k, v in e.items() if k != "ms"} for e in r["events"]])  # noqa: E731
        assert strip(first) == strip(second)
        assert first["result"] == second["result"]
        assert strip(run_match(game, bots, seed=43).replay) != strip(first)


def test_a_match_plays_in_a_process_with_more_than_1024_descriptors_open(tmp_path):
    """A casual worker holds hundreds of matches in one process, about eight
    descriptors each (decision 206): the bots' pipes are numbered past
    select()'s 1024, and a match still plays."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1300 and (hard == resource.RLIM_INFINITY or hard >= 1300):
        resource.setrlimit(resource.RLIMIT_NOFILE, (1300, hard))
    elif soft < 1300:
        pytest.skip(f"the open files limit here is {hard}")
    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        bots = [str(HERE.parent / "bots" / "random_bot.py"), str(HERE.parent / "bots" / "allegra_greedy.py")]
        record = play("allegra", bots, seed=5)
    finally:
        for fd in filler:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert min(filler) < 1024 < max(filler)
    assert record.replay["result"]["forfeits"] == [] and verify(record.replay).result.ranks == record.replay["result"]["ranks"]
