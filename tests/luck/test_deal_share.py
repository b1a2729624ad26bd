"""benchmarks/luck_variance.py's ``deal-share``: the share of a result's
variance its deal decides (decision 298), on known cases and on real
matches of the built-in bots."""

from __future__ import annotations

import random

import pytest

from tests.benchmarks import benchmark


def _benchmark():
    return benchmark("luck_variance")


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
        played = run_match("allegory", players, seed=seed, chance=KeyedChance(seed)).replay["events"]
        return [{k: v for k, v in e.items() if k != "ms"} for e in played]  # the moves, not their timings

    seed = 98765
    assert events(["greedy", "greedy"], "first", seed) == events(["greedy", "greedy"], "second", seed)
    assert events(["greedy", "weak-greedy"], "first", seed) == events(["greedy", "weak-greedy"], "first", seed)
    differ = [
        events(["greedy", "weak-greedy"], "first", s) != events(["greedy", "weak-greedy"], "second", s)
        for s in range(seed, seed + 5)
    ]
    assert any(differ)


def test_the_sampled_search_plays_as_the_search_bot_and_draws_beside_it():
    """decision 299: the search seat that draws more actions plays the
    plain search bot's moves exactly, and draws K legal actions at each
    of its decisions; the drawn policy is fed to the action term in order."""
    lv = _benchmark()
    from cardroom.luck.estimator import action_luck
    from cardroom.luck.games import adapter_for
    from cardroom.runner import run_match
    from engine.replay import Verification

    seed = 4242
    plain = run_match("allegory", [lv.make("ismcts-3", "allegory"), lv.make("ismcts-2", "allegory")], seed=seed)
    sampled = [lv.SampledSearch("ismcts-3", 2), lv.SampledSearch("ismcts-2", 2)]
    doc = run_match("allegory", sampled, seed=seed).replay

    def moves(events):  # the events without their timings
        return [{k: v for k, v in e.items() if k != "ms"} for e in events]

    assert moves(doc["events"]) == moves(plain.replay["events"])
    for seat, player in enumerate(sampled):
        decisions = [e for e in doc["events"] if e["by"] == seat]
        assert len(player.drawn) == len(decisions) > 0
        assert all(len(drawn) == 2 for drawn in player.drawn)
    policies = {s: lv.sampled_policy(p.drawn) for s, p in enumerate(sampled)}
    luck = action_luck(doc, adapter_for("allegory").value, policies, dict(Verification(doc).recorded))
    assert sum(luck) == pytest.approx(0.0, abs=1e-9)  # what one seat gains by a draw the other loses
    assert any(abs(x) > 0 for x in luck)  # the searches drew other actions somewhere


def test_a_ratio_whose_resample_has_no_variance_is_unbounded_not_an_error():
    """A handful of duplicate sets of bots that draw nothing: most sets
    level, so some resamples of them have no variance at all."""
    lv = _benchmark()
    plain = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0]
    sets = [0.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    ratio, low, high = lv.ratio_interval(plain, sets, 1, 2)
    assert 0 < low <= ratio < high == float("inf")
