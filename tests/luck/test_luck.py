"""The luck estimator (cardroom.luck) and ``cardroom luck`` (contract section 3)."""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cardroom.luck import adapter_for, luck_of
from cardroom.luck.allegra import AllegraAdapter, NetAllegraValue
from cardroom.luck.estimator import iter_steps, rank_points
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from engine.allegory.game import CARD_TALE, CARD_VALUE
from engine.allegra.game import CARDS
from engine.replay import load

ROOT = Path(__file__).resolve().parents[2]
OWN = sorted((ROOT / "tests" / "data" / "replays").glob("*.json"))
SHARED_DIR = Path("/work/shared/replays")
SHARED = sorted(SHARED_DIR.glob("*.json")) if SHARED_DIR.is_dir() else []


def cardroom(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cardroom", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def check_line(line: str, path: Path) -> dict:
    doc = json.loads(line)
    assert list(doc) == ["replay", "game", "value_function", "seats"]
    assert doc["replay"] == str(path)
    replay = load(path)
    assert doc["game"] == replay["game"]
    assert re.fullmatch(r"[a-z-]+@\d+", doc["value_function"])
    assert [s["seat"] for s in doc["seats"]] == list(range(replay["num_players"]))
    points = rank_points(replay["result"]["ranks"])
    for seat, want in zip(doc["seats"], points):
        assert list(seat) == ["seat", "payoff", "luck", "adjusted"]
        assert seat["payoff"] == want
        assert seat["adjusted"] == pytest.approx(seat["payoff"] - seat["luck"], abs=1e-12)
        assert math.isfinite(seat["luck"])
    # rank points add up to the same total whatever happens, so does V: the
    # seats' luck adds up to 0
    assert sum(s["luck"] for s in doc["seats"]) == pytest.approx(0, abs=1e-9)
    return doc


def test_cli_prints_one_line_per_replay_in_order_and_exits_0():
    paths = OWN + SHARED
    out = cardroom("luck", *map(str, paths))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(paths)
    docs = [check_line(line, path) for line, path in zip(lines, paths)]
    # chance did something in every one of these matches
    assert all(any(abs(s["luck"]) > 1e-6 for s in d["seats"]) for d in docs)


def test_cli_is_the_same_on_every_run():
    paths = [str(p) for p in OWN]
    first, second = cardroom("luck", *paths), cardroom("luck", *paths)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout


def test_cli_names_an_unreadable_replay_and_still_prints_the_others(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cut = tmp_path / "cut.json"
    doc = json.loads(OWN[0].read_text())
    doc["events"] = doc["events"][:5]
    cut.write_text(json.dumps(doc))
    out = cardroom("luck", str(OWN[0]), str(bad), str(cut), str(tmp_path / "missing.json"))
    assert out.returncode == 1
    assert len(out.stdout.splitlines()) == 1
    check_line(out.stdout.splitlines()[0], OWN[0])
    err = out.stderr.splitlines()
    assert len(err) == 3
    assert err[0].startswith(f"{bad}: INVALID: ") and "not valid JSON" in err[0]
    assert err[1].startswith(f"{cut}: INVALID: ") and "ends before the game is over" in err[1]
    assert err[2].startswith(f"{tmp_path / 'missing.json'}: INVALID: cannot read")


def exact_adapter(game: str):
    """The game's chance model with every expectation it can take exactly:
    Allegra's value of record draws its expectations (allegra-net@2,
    decision 281), so its exact twin allegra-net@1 lists the outcomes."""
    return AllegraAdapter(NetAllegraValue()) if game == "allegra" else adapter_for(game)


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_each_chance_step_is_the_true_distribution_and_its_luck_averages_to_0(path):
    """At every chance step: the alternatives are a probability distribution
    (exact) or draws from one (sampled), the actual outcome's state is one
    of the exact alternatives, and the luck's expectation over the
    alternatives is 0 to float precision."""
    doc = load(path)
    adapter = exact_adapter(doc["game"])
    forfeits = {f["seat"]: f["event"] for f in doc["result"].get("forfeits", [])}
    steps = 0
    for step, forfeited in iter_steps(doc, adapter, forfeits):
        steps += 1
        if step.exact is None:
            continue
        assert sum(p for p, _ in step.exact) == pytest.approx(1, abs=1e-12)
        values = [adapter.value(s, forfeited) for _, s in step.exact]
        expected = [sum(p * v[s] for (p, _), v in zip(step.exact, values)) for s in range(doc["num_players"])]
        luck_mean = [
            sum(p * (v[s] - expected[s]) for (p, _), v in zip(step.exact, values)) for s in range(len(expected))
        ]
        assert luck_mean == pytest.approx([0.0] * len(expected), abs=1e-12)
        actual = adapter.value(step.actual, forfeited)
        assert any(v == pytest.approx(actual, abs=1e-12) for v in values)
        if doc["game"] == "allegra":
            for _, alt in step.exact:  # every alternative holds the 120 cards
                assert alt.card_count() == Counter(CARDS)
    assert steps > 0


def test_allegra_draw_is_uniform_over_the_cards_not_yet_seen():
    doc = load(ROOT / "tests" / "data" / "replays" / "allegra-2p.json")
    adapter = exact_adapter("allegra")
    checked = 0
    for step, _ in iter_steps(doc, adapter, {}):
        state = step.actual
        if state.drawn is None or step.exact is None or state.phase < 4:
            continue
        dist = Counter()
        for p, alt in step.exact:
            dist[alt.drawn] += p
        # not seen by anyone: the face-down cards and the deck, plus the drawn one
        unseen = Counter(v for v, u in zip(state.val, state.upv) if v is not None and u is None)
        unseen.update(state.deck)
        unseen[state.drawn] += 1
        total = sum(unseen.values())
        if len(step.exact) == len(unseen):  # a draw before any reshuffle of the round
            assert dict(dist) == pytest.approx({v: c / total for v, c in unseen.items()})
            checked += 1
    assert checked > 10


def _random_match_luck(game: str, seed: int) -> list[float]:
    record = run_match(game, [InProcessPlayer("random", None), InProcessPlayer("random", None)], seed=seed)
    return [s.luck for s in luck_of(record.replay).seats]


@pytest.mark.parametrize("game", ["allegory", "allegra"])
def test_mean_luck_of_random_matches_is_0_within_its_interval(game):
    """A modest statistical check (the benchmark does 2,000 matches):
    over 150 matches each seat's mean luck is within 3 standard errors of 0
    (the seeds are fixed, so the test is deterministic)."""
    luck = [_random_match_luck(game, 900_000 + i) for i in range(150)]
    for seat in range(2):
        xs = [x[seat] for x in luck]
        se = statistics.stdev(xs) / math.sqrt(len(xs))
        assert abs(statistics.mean(xs)) < 3 * se, (seat, statistics.mean(xs), se)
        assert statistics.stdev(xs) > 0.01  # the luck is not trivially 0


def _uniform(state, seat):
    """The built-in random bot's policy in Allegra: uniform over the legal
    actions (``random_action`` is; Allegory's legal list holds templates,
    not whole actions, so its random policy is not this list's)."""
    legal = state.legal_actions(seat)
    return [(1 / len(legal), a) for a in legal]


def test_action_luck_of_a_known_random_policy_averages_to_0():
    """AIVAT's action correction with the random bots' true policy: the
    action luck is not 0 in a match, adds up to 0 over the seats, and its
    mean over 60 matches is within 3 standard errors of 0."""
    from cardroom.luck.estimator import action_luck

    per_match = []
    for i in range(60):
        record = run_match(
            "allegra", [InProcessPlayer("random", None), InProcessPlayer("random", None)], seed=950_000 + i
        )
        x = action_luck(record.replay, adapter_for("allegra").value, {0: _uniform, 1: _uniform}, {})
        assert sum(x) == pytest.approx(0, abs=1e-9)
        per_match.append(x[0])
        with_actions = luck_of(record.replay, {0: _uniform, 1: _uniform}).seats[0].luck
        assert with_actions == pytest.approx(luck_of(record.replay).seats[0].luck + x[0], abs=1e-12)
    se = statistics.stdev(per_match) / math.sqrt(len(per_match))
    assert se > 0.001
    assert abs(statistics.mean(per_match)) < 3 * se


@pytest.mark.parametrize(
    "label", ["allegra-area@3", "allegra-ender@1", "allegra-net@1", "allegra-net@2", "allegra-look@1"]
)
def test_an_alternative_allegra_value_is_a_distribution_over_ranks_at_every_step(label):
    """The measured alternatives (``allegra-area@3``, outcome-fitted;
    ``allegra-ender@1``, the ender's doubling, decision 240;
    ``allegra-net@1``, learned from play, decision 276; ``allegra-net@2``,
    its expectations drawn, decision 281; ``allegra-look@1``, the network
    where greedy play takes the state, decision 285): at every alternative (or four
    drawn ones) of every chance step of every Allegra replay (2 to 6
    players, knocks, forfeits, a reshuffle, a turn limit) each seat's value
    is a rank-points figure and they add up to the same total, so the luck
    adds up to 0; and some luck is credited."""
    from cardroom.luck.allegra import (
        AllegraAdapter,
        DrawnNetAllegraValue,
        EnderAllegraValue,
        LookaheadAllegraValue,
        NetAllegraValue,
        OutcomeAllegraValue,
    )
    from cardroom.luck.estimator import luck_with

    value = {
        "allegra-area@3": OutcomeAllegraValue, "allegra-ender@1": EnderAllegraValue, "allegra-net@1": NetAllegraValue,
        "allegra-net@2": DrawnNetAllegraValue, "allegra-look@1": LookaheadAllegraValue,
    }[label]()  # fmt: skip
    rng = random.Random(281)
    assert value.label == label
    adapter = AllegraAdapter(value)
    for path in [p for p in OWN if load(p)["game"] == "allegra"]:
        doc = load(path)
        n = doc["num_players"]
        for step, forfeited in iter_steps(doc, adapter, {}):
            for _, alt in step.exact or [(0.25, step.sample(rng)) for _ in range(4)]:
                v = value(alt, forfeited)
                assert all(-1e-12 <= x <= 1 + 1e-12 for x in v)
                assert sum(v) == pytest.approx(n / 2, abs=1e-9)
        report = luck_with(doc, lambda _g: adapter)
        assert report.value_function == label
        assert sum(s.luck for s in report.seats) == pytest.approx(0, abs=1e-9)
        assert any(abs(s.luck) > 1e-6 for s in report.seats)


def test_allegra_ender_1_favours_the_seat_whose_doubling_is_less_likely():
    """Last round, the ender known and two points ahead on raw cards, the
    totals so far equal: the ender is doubled unless it is lowest, so the
    other seat is the favourite; swap the raw estimates and the ender is."""
    from cardroom.luck.allegra import EnderAllegraValue

    value = EnderAllegraValue()
    m = 2.0 * value.raw[0][0]
    behind = value.above(0.0, m, 2.0, 0.0, 30.0, 28.0, 1.0, 0.0)
    ahead = value.above(0.0, -m, 2.0, 0.0, 28.0, 30.0, 1.0, 0.0)
    assert behind < 0.3 < 0.7 < ahead
    # with rounds to come whose spread dwarfs a doubling, they hardly count
    assert behind < value.above(0.0, m, 2.0, 300.0, 30.0, 28.0, 1.0, 0.0) == pytest.approx(0.5, abs=0.05)


def test_allegory_net_1_is_a_distribution_over_ranks_and_its_luck_averages_to_0_at_exact_steps():
    """``allegory-net@1`` (the learned value, decision 277) on every Allegory
    replay (2 to 6 players, unique Morals, a forfeit): at every alternative
    of every chance step each seat's value is a rank-points figure and they
    add up to the same total; at the exact steps (the last 13 cards) the
    luck's expectation over the alternatives is 0 to float precision and
    the actual outcome is one of them; some luck is credited."""
    from cardroom.luck.allegory import AllegoryAdapter, NetAllegoryValue
    from cardroom.luck.estimator import luck_with

    value = NetAllegoryValue()
    assert value.label == "allegory-net@1"
    adapter = AllegoryAdapter(value)
    exact_steps = 0
    for path in [p for p in OWN if load(p)["game"] == "allegory"]:
        doc = load(path)
        n = doc["num_players"]
        forfeits = {f["seat"]: f["event"] for f in doc["result"].get("forfeits", [])}
        for step, forfeited in iter_steps(doc, adapter, forfeits):
            if step.exact is None:
                continue
            exact_steps += 1
            assert sum(p for p, _ in step.exact) == pytest.approx(1, abs=1e-12)
            values = [value(s, forfeited) for _, s in step.exact]
            for v in values:
                assert all(-1e-12 <= x <= 1 + 1e-12 for x in v)
                assert sum(v) == pytest.approx(n / 2, abs=1e-9)
            expected = [sum(p * v[s] for (p, _), v in zip(step.exact, values)) for s in range(n)]
            luck_mean = [sum(p * (v[s] - expected[s]) for (p, _), v in zip(step.exact, values)) for s in range(n)]
            assert luck_mean == pytest.approx([0.0] * n, abs=1e-12)
            assert value(step.actual, forfeited) in values
        report = luck_with(doc, lambda _g: adapter)
        assert report.value_function == "allegory-net@1"
        assert sum(s.luck for s in report.seats) == pytest.approx(0, abs=1e-9)
        assert any(abs(s.luck) > 1e-6 for s in report.seats)
    assert exact_steps > 5


def test_allegory_card_drawn_again_is_valued_once():
    """At a sampled Allegory step (more cards in the deck than are listed
    exactly) a card drawn again gives the state built for it the first
    time, and the actual card the actual state: ``V`` is evaluated once per
    distinct card other than the actual one, and the expectation is still
    the mean of ``V`` over every draw, repeats counted, each state built
    anew (the same numbers as before the states were kept)."""
    from cardroom.luck.allegory import AllegoryAdapter, NetAllegoryValue
    from cardroom.luck.estimator import SAMPLES, expectation, step_rng

    class Counted(NetAllegoryValue):
        calls = 0

        def __call__(self, state, forfeited):
            Counted.calls += 1
            return super().__call__(state, forfeited)

    value, plain = Counted(), NetAllegoryValue()
    doc = load(ROOT / "tests" / "data" / "replays" / "allegory-2p.json")
    n = doc["num_players"]
    sampled = repeats = actual_drawn = 0
    for step, forfeited in iter_steps(doc, AllegoryAdapter(value), {}):
        if step.exact is not None:
            continue
        sampled += 1
        actual = plain(step.actual, forfeited)
        rng = step_rng(value.label, step.index, step.key)
        drawn = [step.sample(rng) for _ in range(SAMPLES)]
        distinct = {id(s) for s in drawn if s is not step.actual}
        repeats += len(distinct) < sum(s is not step.actual for s in drawn)
        actual_drawn += any(s is step.actual for s in drawn)
        Counted.calls = 0
        got = expectation(step, value, forfeited, n, actual)
        assert Counted.calls == len(distinct)
        want = [0.0] * n
        for s in drawn:
            v = plain(s.clone(), forfeited)
            for seat in range(n):
                want[seat] += v[seat] / SAMPLES
        assert got == want
    assert sampled > 10 and repeats > 5 and actual_drawn > 0


def test_allegory_net_1_favours_the_seat_ahead():
    """Late in a 2-player game, the seat whose weakest Tale is far higher is
    the favourite; with the Tales swapped, the other is."""
    from cardroom.luck.allegory import NetAllegoryValue
    from engine import new_game

    value = NetAllegoryValue()
    state = new_game("allegory", 2).new_initial_state()
    state.apply_chance(state.sample_chance(random.Random(277)))
    dealt = sorted(state.deck, key=lambda c: -CARD_VALUE[c])
    strong = [[c for c in dealt if CARD_TALE[c] == t][:3] for t in range(3)]
    weak = [[c for c in reversed(dealt) if CARD_TALE[c] == t][:3] for t in range(3)]
    for c in [c for tale in strong + weak for c in tale]:
        state.deck.remove(c)
    state.tales = [strong, weak]
    state.ncards = [9, 9]
    ahead = value(state, frozenset())
    state.tales = [weak, strong]
    behind = value(state, frozenset())
    assert ahead[0] > 0.8 and behind[0] < 0.2
