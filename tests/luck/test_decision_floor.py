"""benchmarks/luck_decision_floor.py (decision 305): the variance the
players' own decisions add to a result, the least any correction for
chance keeps; its parts on cases whose answer is known and on real
matches of the built-in bots."""

from __future__ import annotations

import random
import statistics

import pytest

from cardroom.runner import run_match
from tests.benchmarks import benchmark


def test_a_decision_s_term_is_unbiased_where_the_play_outs_are_noisy():
    floor = benchmark("luck_decision_floor")
    rng = random.Random(5)
    values = [0.0, 0.3, 1.0]  # V*(h·a) of three actions, drawn uniformly: Var_a = 0.1756
    truth = statistics.pvariance(values)
    terms, naive = [], []
    for _ in range(40_000):
        v1, v2 = rng.choice(values), rng.choice(values)
        # paired play-outs: a shared part and each action's own noise
        gaps = []
        for _j in range(4):
            shared = rng.gauss(0, 1.0)
            gaps.append((v1 + shared + rng.gauss(0, 0.5)) - (v2 + shared + rng.gauss(0, 0.5)))
        terms.append(floor.variance_term(gaps))
        naive.append(statistics.mean(gaps) ** 2 / 2)
    se = statistics.stdev(terms) / len(terms) ** 0.5
    assert abs(statistics.mean(terms) - truth) < 3 * se
    assert statistics.mean(naive) - truth > 10 * se  # without taking the noise out it is well above


def test_the_same_actions_give_no_term_and_no_play_out():
    floor = benchmark("luck_decision_floor")
    # Allegory's greedy bot and greedy-chips draw nothing: every decision's two actions agree
    row = floor.match_row("allegory", "chips", 100_000, 0, 4)
    assert row["decisions"] > 20
    assert row["terms"] == [0.0, 0.0] and row["play_outs"] == 0


def test_a_search_bot_copied_mid_match_knows_what_the_match_s_bot_knew():
    floor = benchmark("luck_decision_floor")
    lv = benchmark("luck_variance")
    names = ["ismcts-3", "greedy"]
    doc = run_match("allegory", [lv.make(n, "allegory") for n in names], seed=77).replay
    # SearchFrom with no history plays the built-in search bot's match move for move
    again = run_match("allegory", [floor.SearchFrom("ismcts-3", []), lv.make("greedy", "allegory")], seed=77).replay
    moves = lambda d: [(e["by"], e["action"]) for e in d["events"]]  # noqa: E731 (not the think times)
    assert moves(again) == moves(doc)
    seen = []  # the search seat's observations as its bot appended them

    class Recording(floor.SearchFrom):
        def act(self, state, seat):
            seen.append([dict(o) for o in self._history])
            return super().act(state, seat)

    run_match("allegory", [Recording("ismcts-3", []), lv.make("greedy", "allegory")], seed=77)
    rebuilt = [histories[0] for _state, seat, histories, _reshuffled in floor.decisions(doc) if seat == 0]
    assert len(rebuilt) == len(seen) > 5
    assert rebuilt == seen


@pytest.mark.slow
def test_on_real_matches_the_decisions_of_a_random_bot_add_variance():
    floor = benchmark("luck_decision_floor")
    rows = [floor.match_row("allegra", "greedy", i, 6, 6) for i in range(100_000, 100_008)]
    assert all(len(r["terms"]) == 2 and r["decisions"] > 50 for r in rows)
    assert sum(r["play_outs"] for r in rows) > 0  # the weak greedy's random moves differ somewhere
    figures = floor.figures(rows)
    assert set(figures) >= {"floor", "floor_seated", "kept", "kept_seated", "most", "most_seated"}
    assert 0.3 < figures["kept"] < 2.0


@pytest.mark.parametrize("game", ["allegory", "allegra"])
def test_play_outs_deal_anew_only_the_cards_nobody_has_seen(game):
    floor = benchmark("luck_decision_floor")
    lv = benchmark("luck_variance")
    doc = run_match(game, [lv.make("greedy", game), lv.make("weak-greedy", game)], seed=31).replay
    every = floor.decisions(doc)
    assert game == "allegra" or not any(r for *_, r in every)  # Allegory's deck is never reshuffled
    changed = 0
    for state, _seat, _histories, reshuffled in every[:: max(1, len(every) // 12)]:
        dealt = floor.unseen_dealt_anew(game, state, reshuffled, random.Random(changed + 3))
        for seat in range(2):  # no seat can tell the difference
            assert dealt.observation(seat) == state.observation(seat)
        if game == "allegory":
            assert sorted(dealt.deck) == sorted(state.deck)
        else:  # the face-down slots and the deck are one pile until a reshuffle: the cards move between them
            cards = lambda st: sorted([*st.deck, *(v for v in st.val if v is not None)])  # noqa: E731
            assert cards(dealt) == cards(state)
        changed += dealt.deck != state.deck or (game == "allegra" and dealt.val != state.val)
    assert changed >= 6
