"""``allegra-look@1`` and ``allegory-look@1`` (decision 285): the learned
networks where the greedy policy takes the game before the next card is
known. They read cards no one has seen, so each exact outcome must leave the
rest of its pile in the true distribution: in Allegra each outcome's card
comes from a place drawn uniformly among those holding it (the first-place
rule would not do), in Allegory every card is different. These tests hold
both constructions to the true distribution, exactly, and the value
functions to what they say they evaluate."""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from bots import builtin_chooser
from bots.allegra_greedy import choose
from cardroom.luck.allegra import (
    AllegraAdapter,
    LookaheadAllegraValue,
    NetAllegraValue,
    outcomes_hidden_exact,
)
from cardroom.luck.estimator import _FirstChoice, luck_with
from cardroom.luck.kernel import card_at, exact_outcomes, put_card
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from engine.core import CHANCE
from engine.replay import iter_states, load

ROOT = Path(__file__).resolve().parents[2]
ALLEGRA = sorted((ROOT / "tests" / "data" / "replays").glob("allegra-*.json"))


class FixedPlace:
    """A generator whose ``randrange(n)`` gives a chosen index (modulo
    ``n``): the test weighs every index by its probability instead of
    drawing."""

    def __init__(self, k: int) -> None:
        self.k = k

    def randrange(self, n: int) -> int:
        return self.k % n


def pile_state():
    """A dealt state whose deck's top four places hold a, c, c, b."""
    doc = load(ALLEGRA[0])
    _index, _event, state = next(iter(iter_states(doc)))
    state = state.clone()
    assert len(state.deck) >= 4
    pile = [("k", j) for j in range(4)]
    return state, pile


def distribution(construct) -> dict[tuple[int, tuple[int, ...]], Fraction]:
    """Over every order of the labelled cards a, c, c, b in the pile (each
    equally likely), the weight of each (value at ``loc``, the pile's
    values in order) among the alternatives ``construct`` builds, each
    weighed by its outcome's probability."""
    base, pile = pile_state()
    cards = [3, 7, 7, 5]  # a, c, c, b
    orders = list(itertools.permutations(range(4)))
    out: dict[tuple[int, tuple[int, ...]], Fraction] = defaultdict(Fraction)
    for order in orders:
        state = base.clone()
        for place, label in zip(pile, order):
            put_card(state, place, cards[label])
        for weight, alternatives in construct(state, pile):
            for p, alt in alternatives:
                values = tuple(card_at(alt, place) for place in pile)
                out[(values[0], values)] += Fraction(1, len(orders)) * weight * Fraction(p).limit_denominator(100)
    return dict(out)


def truth() -> dict[tuple[int, tuple[int, ...]], Fraction]:
    """The true distribution: every order of the labelled cards equally likely."""
    cards = [3, 7, 7, 5]
    out: dict[tuple[int, tuple[int, ...]], Fraction] = defaultdict(Fraction)
    orders = list(itertools.permutations(range(4)))
    for order in orders:
        values = tuple(cards[label] for label in order)
        out[(values[0], values)] += Fraction(1, len(orders))
    return dict(out)


def same(state):
    return state


def test_outcomes_drawn_from_a_uniform_place_follow_the_true_distribution():
    """Each outcome's state, over the actual orders and the drawn places,
    lies in every order of the rest of the pile as often as the true
    distribution says (exactly, in fractions): so a value function that
    reads the pile's hidden cards still gets an exact ``E[V]``."""

    def uniform(state, pile):
        actual = card_at(state, pile[0])
        copies = sum(card_at(state, place) == 7 for place in pile) if actual != 7 else 1
        # weigh each index the generator may give by its probability (only the 7s have two places)
        for k in range(copies):
            yield Fraction(1, copies), outcomes_hidden_exact(state, pile[0], pile, same, FixedPlace(k))[0]

    assert distribution(uniform) == truth()


def test_the_first_place_rule_would_not_follow_it():
    """The construction for value functions that read only what was shown
    (the copy moved is always the first): the rest of the pile is not in
    the true distribution, which is why a value function that reads hidden
    cards needs the one above."""

    def first(state, pile):
        yield Fraction(1), exact_outcomes(state, pile[0], pile, same)[0]

    got, want = distribution(first), truth()
    assert sum(got.values()) == sum(want.values()) == 1
    assert got != want


def test_the_lookahead_evaluates_the_network_where_greedy_play_takes_the_state():
    """At a chance node or the end, ``allegra-look@1`` is ``allegra-net@1``;
    after a card is drawn, it is the network at the state the drawer's
    greedy choice makes (followed while no card is turned up and no card
    drawn); the same numbers every time."""
    look, net = LookaheadAllegraValue(), NetAllegraValue()
    doc = load(ALLEGRA[0])
    nothing = frozenset()
    drawn = moved = 0
    for _index, event, post in iter_states(doc):
        v = look(post, nothing)
        assert v == look(post, nothing)
        assert abs(sum(v) - post.num_players / 2) < 1e-9  # rank points
        if post.is_terminal() or post.is_chance_node():
            assert v == net(post, nothing)
        elif event["by"] != CHANCE and event["action"]["type"] == "draw" and len(post.to_act()) == 1:
            seat = post.to_act()[0]
            action = choose(post.observation(seat), post.legal_actions(seat), _FirstChoice)
            ahead = post.clone()
            ahead.apply(seat, action)
            if ahead.to_act() != post.to_act() or ahead.is_chance_node():  # the drawer's choice ended the look
                turned = any(
                    u is None and x is not None and ahead.upv[i] is not None
                    for i, (u, x) in enumerate(zip(post.upv, post.val))
                )
                if turned:
                    assert v == net(ahead, nothing)
                    moved += v != net(post, nothing)
            drawn += 1
    assert drawn > 10 and moved > 5, (drawn, moved)


def test_a_value_function_that_reads_hidden_cards_takes_exact_expectations():
    class Drawn(LookaheadAllegraValue):
        draws = 4

    doc = load(ALLEGRA[0])
    with pytest.raises(ValueError, match="reads hidden cards"):
        luck_with(doc, lambda _g: AllegraAdapter(Drawn()))


@pytest.mark.parametrize("players", [2, 4])
def test_lookahead_luck_adds_up_to_0_and_is_the_same_every_run(players):
    greedy = builtin_chooser("greedy", "allegra")
    record = run_match("allegra", [InProcessPlayer("greedy", greedy) for _ in range(players)], seed=285_000 + players)
    first = luck_with(record.replay, lambda _g: AllegraAdapter(LookaheadAllegraValue()))
    again = luck_with(record.replay, lambda _g: AllegraAdapter(LookaheadAllegraValue()))
    assert first.value_function == "allegra-look@1"
    assert [s.luck for s in first.seats] == [s.luck for s in again.seats]
    assert abs(sum(s.luck for s in first.seats)) < 1e-9
    assert any(abs(s.luck) > 0.01 for s in first.seats)


ALLEGORY = sorted((ROOT / "tests" / "data" / "replays").glob("allegory-*.json"))


def test_allegory_outcomes_leave_the_rest_of_the_deck_in_every_order_equally_often():
    """Allegory's exact step (a card comes into the Pool with at most 13
    left): over every order of a deck of four cards, the alternatives,
    weighed by their probabilities, hold each (card brought in, order of
    the rest) exactly as often as the true distribution does, so
    ``allegory-look@1``, which reads the next card when its lookahead
    brings one in, still gets an exact ``E[V]``."""
    from cardroom.luck.allegory import AllegoryAdapter, NetAllegoryValue
    from cardroom.luck.estimator import Context

    doc = load(ALLEGORY[0])
    adapter = AllegoryAdapter(NetAllegoryValue())
    pre = None
    for at, event, post in iter_states(doc):
        if pre is not None and event["by"] != CHANCE and sum(post.ncards) != sum(pre.ncards):
            index = at
            break
        pre = post.clone()
    else:
        pytest.fail("no card came into the Pool")
    del pre.deck[:-4]  # the deck's last four cards (the test enumerates their orders)
    cards = list(pre.deck)
    orders = list(itertools.permutations(cards))
    got: dict[tuple, Fraction] = defaultdict(Fraction)
    for order in orders:
        base = pre.clone()
        base.deck[:] = list(order)
        after = base.clone()
        after.apply(event["by"], event["action"])
        step = adapter.step(base, event, after, index, Context())
        assert step is not None and step.exact is not None
        for p, alt in step.exact:
            assert Fraction(p).limit_denominator(10) == Fraction(1, len(cards))
            got[tuple(alt.deck) + tuple(sorted(map(str, alt.pool)))] += Fraction(1, len(orders) * len(cards))
    want: dict[tuple, Fraction] = defaultdict(Fraction)
    for order in orders:
        after = pre.clone()
        after.deck[:] = list(order)
        after.apply(event["by"], event["action"])
        want[tuple(after.deck) + tuple(sorted(map(str, after.pool)))] += Fraction(1, len(orders))
    assert dict(got) == dict(want)


def test_allegory_lookahead_evaluates_the_network_where_greedy_play_takes_the_state():
    """``allegory-look@1`` is ``allegory-net@1`` at a chance node and at the
    end, and elsewhere the network at the state the greedy bot's choices
    reach (re-played by hand here); its luck adds up to 0 over the seats
    on every Allegory replay (2-6 players, a forfeit) and is the same
    every run."""
    from bots.allegory_greedy import choose as allegory_choose
    from cardroom.luck.allegory import AllegoryAdapter, LookaheadAllegoryValue, NetAllegoryValue

    look, net = LookaheadAllegoryValue(), NetAllegoryValue()
    assert look.label == "allegory-look@1"
    nothing = frozenset()
    doc = load(ALLEGORY[0])
    differs = 0
    for _index, _event, post in iter_states(doc):
        v = look(post, nothing)
        if post.is_terminal() or post.is_chance_node():
            assert v == net(post, nothing)
            continue
        ahead = post.clone()
        for _ in range(LookaheadAllegoryValue.LIMIT):
            if ahead.is_terminal() or ahead.is_chance_node() or len(ahead.to_act()) != 1:
                break
            seat = ahead.to_act()[0]
            cards = sum(ahead.ncards)
            ahead.apply(seat, allegory_choose(ahead.observation(seat), ahead.legal_actions(seat), _FirstChoice))
            if sum(ahead.ncards) != cards:
                break
        assert v == net(ahead, nothing)
        differs += v != net(post, nothing)
    assert differs > 10
    for path in ALLEGORY:
        doc = load(path)
        forfeits = {f["seat"]: f["event"] for f in doc["result"].get("forfeits", [])}
        assert forfeits or "forfeit" not in path.name
        first = luck_with(doc, lambda _g: AllegoryAdapter(LookaheadAllegoryValue()))
        again = luck_with(doc, lambda _g: AllegoryAdapter(LookaheadAllegoryValue()))
        assert [s.luck for s in first.seats] == [s.luck for s in again.seats]
        assert abs(sum(s.luck for s in first.seats)) < 1e-9
        assert any(abs(s.luck) > 1e-6 for s in first.seats)
