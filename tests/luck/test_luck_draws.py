"""``allegra-net@2`` (decision 281): ``allegra-net@1``'s network, every chance
step's ``E[V]`` the mean of ``V`` over ``draws`` outcomes drawn from the
step's true distribution. The draws are the true distribution's, they do
not depend on the actual outcome (so the luck stays unbiased), and the
mean luck over random matches is 0 within its interval."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from pathlib import Path

import pytest

from cardroom.luck.allegra import AllegraAdapter, DrawnNetAllegraValue, NetAllegraValue
from cardroom.luck.estimator import Context, expectation, iter_steps, luck_with, step_rng
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from engine import get_game_class
from engine.allegra.game import CARDS
from engine.core import CHANCE
from engine.replay import iter_states, load

ROOT = Path(__file__).resolve().parents[2]
ALLEGRA = [p for p in sorted((ROOT / "tests" / "data" / "replays").glob("allegra-*.json"))]


def key(state) -> tuple:
    """Everything a card's place can change in an Allegra state."""
    return (
        tuple(state.val), tuple(state.upv), tuple(state.deck), tuple(state.discard), tuple(state.removed),
        state.drawn, state.held,
    )  # fmt: skip


def test_allegra_net_2_is_allegra_net_1_with_4_draws():
    two, one = DrawnNetAllegraValue(), NetAllegraValue()
    assert (two.label, two.draws, one.draws) == ("allegra-net@2", 4, 0)
    doc = load(ALLEGRA[0])
    for step, forfeited in iter_steps(doc, AllegraAdapter(two), {}):
        assert step.exact is None and step.sample is not None  # only the drawn outcomes are built
        assert two(step.actual, forfeited) == one(step.actual, forfeited)  # the same network


@pytest.mark.parametrize("path", ALLEGRA, ids=lambda p: p.name)
def test_allegra_net_2_draws_a_cards_value_from_the_true_distribution(path):
    """At every step that reveals one card, each draw is one of the exact
    alternatives (``allegra-net@1``'s, the same state), and over 60 draws a
    step the values' frequencies fit the exact probabilities (a chi-square
    over all steps within 5 standard deviations of its degrees of freedom);
    every drawn state holds the 120 cards."""
    doc = load(path)
    rng = random.Random(281)
    chi2 = 0.0
    dof = 0
    steps = 0
    pairs = zip(iter_steps(doc, AllegraAdapter(NetAllegraValue()), {}), iter_steps(doc, AllegraAdapter(DrawnNetAllegraValue()), {}))  # fmt: skip
    for (exact, _), (drawn, _) in pairs:
        assert exact.index == drawn.index
        if exact.exact is None:
            continue
        at = {key(state): k for k, (_, state) in enumerate(exact.exact)}
        counts = Counter()
        n = 60
        for _ in range(n):
            state = drawn.sample(rng)
            assert state.card_count() == Counter(CARDS)
            counts[at[key(state)]] += 1  # a KeyError: not one of the alternatives
        for k, (p, _) in enumerate(exact.exact):
            chi2 += (counts[k] - n * p) ** 2 / (n * p)
        dof += len(exact.exact) - 1
        steps += 1
    assert steps > 20 and dof > 100
    assert abs(chi2 - dof) < 5 * math.sqrt(2 * dof), (chi2, dof)


def hidden_shuffled(state, rng: random.Random):
    """``state`` with its face-down cards dealt anew among the face-down
    slots, and the deck's among the deck: another actual outcome for every
    card revealed next (the piles' cards unchanged)."""
    alt = state.clone()
    slots = [i for i in range(alt.lay.N) if alt.upv[i] is None and alt.val[i] is not None]
    values = [alt.val[i] for i in slots]
    rng.shuffle(values)
    for i, v in zip(slots, values):
        alt.val[i] = v
    rng.shuffle(alt.deck)
    return alt


@pytest.mark.parametrize("path", ALLEGRA, ids=lambda p: p.name)
def test_allegra_net_2_draws_do_not_depend_on_the_actual_outcome(path):
    """Every player's event that reveals cards, replayed from the same
    state with its hidden cards dealt anew (another actual card, often):
    the step's draws give the very same ``V``, draw by draw."""
    doc = load(path)
    value = DrawnNetAllegraValue()
    adapter = AllegraAdapter(value)
    rng = random.Random(2810)
    ctx = Context()
    pre = None
    steps = other_actual = 0
    nothing = frozenset()
    for index, event, post in iter_states(doc):
        if pre is None:
            pre = get_game_class("allegra")(doc["num_players"], doc["options"]).new_initial_state()
        ctx2 = Context(ctx.forfeited, dict(ctx.extra))  # as it was before this event, for the other outcome
        step = adapter.step(pre, event, post, index, ctx)
        if step is not None and event["by"] != CHANCE and not post.is_terminal():
            pre2 = hidden_shuffled(pre, rng)
            post2 = pre2.clone()
            post2.apply(event["by"], event["action"])
            step2 = adapter.step(pre2, event, post2, index, ctx2)
            assert step2 is not None and step2.key == step.key != ""
            other_actual += value(post2, nothing) != value(post, nothing)
            one, two = step_rng(value.label, index, step.key), step_rng(value.label, index, step2.key)
            for _ in range(value.draws):
                assert value(step.sample(one), nothing) == value(step2.sample(two), nothing)
            assert expectation(step, value, nothing, doc["num_players"]) == expectation(
                step2, value, nothing, doc["num_players"]
            )
            steps += 1
        pre = post.clone()
    assert steps > 20 and other_actual > steps / 4, (steps, other_actual)


def test_allegra_net_2_matches_draw_their_own_numbers():
    """The draws are seeded by the cards revealed before the step, not by
    the event's place alone: two matches at the same event draw different
    numbers (else every match's draws at an event would err the same way,
    and that error would not average out over matches), and one match's
    steps are seeded the same on every run."""
    adapter = AllegraAdapter(DrawnNetAllegraValue())
    keys = []
    for seed in (281_500, 281_501):
        doc = run_match("allegra", [InProcessPlayer("random", None), InProcessPlayer("random", None)], seed=seed).replay
        keys.append({step.index: step.key for step, _ in iter_steps(doc, adapter, {})})
        assert keys[-1] == {step.index: step.key for step, _ in iter_steps(doc, adapter, {})}
    common = sorted(set(keys[0]) & set(keys[1]))
    assert len(common) > 20
    assert keys[0][0] == keys[1][0] == "r"  # the first deal: nothing revealed yet
    assert sum(keys[0][i] != keys[1][i] for i in common) >= len(common) - 1


def test_allegra_net_2_mean_luck_of_random_matches_is_0_within_its_interval():
    """Over 150 random matches (fixed seeds: deterministic) each seat's
    mean luck with ``allegra-net@2`` is within 3 standard errors of 0."""
    luck = []
    for i in range(150):
        record = run_match(
            "allegra", [InProcessPlayer("random", None), InProcessPlayer("random", None)], seed=281_000 + i
        )
        report = luck_with(record.replay, lambda _g: AllegraAdapter(DrawnNetAllegraValue()))
        luck.append([s.luck for s in report.seats])
    for seat in range(2):
        xs = [x[seat] for x in luck]
        se = statistics.stdev(xs) / math.sqrt(len(xs))
        assert abs(statistics.mean(xs)) < 3 * se, (seat, statistics.mean(xs), se)
        assert statistics.stdev(xs) > 0.01  # the luck is not trivially 0


def test_allegra_net_2_evaluates_a_value_drawn_twice_once():
    """A step that draws the same card twice uses the state it built the
    first time and its ``V`` (the same numbers, fewer evaluations): over a
    replay's steps, ``V`` is evaluated once per distinct card drawn other
    than the actual one, and the expectation is the mean over all the
    draws, repeats counted."""

    class Counted(DrawnNetAllegraValue):
        calls = 0

        def __call__(self, state, forfeited):
            Counted.calls += 1
            return super().__call__(state, forfeited)

    value = Counted()
    doc = load(ALLEGRA[0])
    n = doc["num_players"]
    repeats = 0
    for step, forfeited in iter_steps(doc, AllegraAdapter(value), {}):
        actual = DrawnNetAllegraValue()(step.actual, forfeited)
        rng = step_rng(value.label, step.index, step.key)
        drawn = [step.sample(rng) for _ in range(value.draws)]
        distinct = {id(s) for s in drawn if s is not step.actual}
        repeats += len(distinct) < sum(s is not step.actual for s in drawn)
        Counted.calls = 0
        got = expectation(step, value, forfeited, n, actual)
        assert Counted.calls == len(distinct)
        plain = DrawnNetAllegraValue()
        want = [0.0] * n
        for s in drawn:
            v = actual if s is step.actual else plain(s, forfeited)
            for seat in range(n):
                want[seat] += v[seat] / value.draws
        assert got == want
    assert repeats > 5
