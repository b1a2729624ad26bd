"""benchmarks/luck_variance.py's ``deal-share``: the share of a result's
variance its deal decides (decision 298), on known cases and on real
matches of the built-in bots."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _benchmark():
    name = "luck_variance_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "luck_variance.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_a_result_the_deal_fixes_is_all_the_deal_s():
    lv = _benchmark()
    rng = random.Random(1)
    first = [rng.choice([-1.0, 1.0]) for _ in range(40)]
    assert lv.deal_share_of(first, list(first), [i % 2 for i in range(40)]) == pytest.approx(1.0)


def test_independent_plays_share_nothing_but_noise():
    lv = _benchmark()
    rng = random.Random(2)
    n = 4000
    first = [rng.gauss(0, 1) for _ in range(n)]
    second = [rng.gauss(0, 1) for _ in range(n)]
    assert abs(lv.deal_share_of(first, second, [i % 2 for i in range(n)])) < 0.05


def test_the_seat_s_own_mean_is_not_the_deal_s():
    """Each seating shifts the result (a seat's advantage): that shift is
    shared by both plays of a deal but is not the deal's doing."""
    lv = _benchmark()
    rng = random.Random(3)
    n = 4000
    seating = [i % 2 for i in range(n)]
    deal = [rng.gauss(0, 1) for _ in range(n)]  # variance 1 from the deal
    first = [5 * g + d + rng.gauss(0, 1) for g, d in zip(seating, deal)]  # and 1 from the bots' own draws
    second = [5 * g + d + rng.gauss(0, 1) for g, d in zip(seating, deal)]
    assert lv.deal_share_of(first, second, seating) == pytest.approx(0.5, abs=0.05)


def test_no_variance_is_an_error_not_a_share():
    lv = _benchmark()
    with pytest.raises(ValueError):
        lv.deal_share_of([1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1])


def test_salted_bots_replay_the_deal_with_draws_of_their_own():
    """On real matches: the deterministic Allegory greedy bot plays a deal
    the same way whatever its salt, and the weak greedy (a random move a
    tenth of the time) plays it differently once salted apart."""
    lv = _benchmark()
    from cardroom.runner import run_match
    from cardroom.tournament.seeds import KeyedChance

    def events(names, salt, seed):
        players = [lv.Salted(lv.make(n, "allegory"), salt) for n in names]
        return run_match("allegory", players, seed=seed, chance=KeyedChance(seed)).replay["events"]

    seed = 98765
    assert events(["greedy", "greedy"], "first", seed) == events(["greedy", "greedy"], "second", seed)
    assert events(["greedy", "weak-greedy"], "first", seed) == events(["greedy", "weak-greedy"], "first", seed)
    differ = [
        events(["greedy", "weak-greedy"], "first", s) != events(["greedy", "weak-greedy"], "second", s)
        for s in range(seed, seed + 5)
    ]
    assert any(differ)
