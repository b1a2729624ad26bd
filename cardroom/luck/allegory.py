"""Allegory's chance model and value function for the luck estimator.

Cards first become known (decision 183) at the setup (the Pool's cards to
everyone, each Moral to its seat) and whenever a card comes into the Pool
from the deck (after a take or a claim). The setup is one event revealing
several cards at once: its expectation is sampled from the engine's own
setup sampler. A card coming into the Pool is uniform over the deck's cards;
the cards are all different, so its expectation is exact when the deck holds
at most ``EXACT_MAX`` cards and sampled otherwise.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

from cardroom.luck.estimator import Adapter, Context, Step, ValueFunction, play_ahead, terminal_points
from cardroom.luck.kernel import AllegoryNet, tales_value
from cardroom.luck.nets import allegory_net_1
from engine.allegory.game import AllegoryState
from engine.core import CHANCE

# The bound for exact expectations (13 kinds of card value in Allegra).
EXACT_MAX = 13


class AllegoryValue(ValueFunction):
    """``allegory-tales@1``: each seat's worth is the built-in greedy bot's
    smoothed score (its weakest Tale, 0.3 of the middle one and 0.1 of the
    highest, -6 per empty Tale, 2 per set of three of a theme and 0.8 for a
    pair, 1 per Tale holding its Moral, 0.12 per chip), plus half of the best
    gain a Pool card (with its chips) would give it. Seat ``s`` beats ``o``
    with the normal probability of the worth difference, whose spread
    shrinks with the cards left to the end (``SPREAD_START`` at the start,
    ``SPREAD_END`` at the last card); rank points as in Allegra's. The
    weights are the greedy bot's, the rest set by reasoning, never fitted
    (the constants and the arithmetic: cardroom.luck.kernel)."""

    name = "allegory-tales"
    version = 1

    def __call__(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        return tales_value(state, forfeited)  # cardroom.luck.kernel's arithmetic (compiled with the engine)


_NET_PATH = Path(__file__).with_name("allegory-net-1.json")


def _net(weights: dict[str, Any]) -> AllegoryNet:
    return AllegoryNet(*(weights[k] for k in ("own", "other", "shared", "bias", "out", "out_bias")))


@functools.cache
def _record_net() -> AllegoryNet:
    """The weights of record, read once a process (every match's luck
    builds an adapter); the network is only read, so one is shared."""
    return _net(json.loads(_NET_PATH.read_text(encoding="utf-8")))


class NetAllegoryValue(ValueFunction):
    """``allegory-net@1``: ``V`` learned from play. A small network
    (cardroom.luck.kernel.AllegoryNet) gives, for each pair of seats, the
    probability that one finishes above the other from each seat's
    features (its Tales by total, empty Tales, sets, pairs, Moral Tales,
    its score if the game ended now, chips, cards held, the greedy bot's
    smoothed worth and the best gains the Pool offers it with its chips,
    bid state, turn, and the unseen cards of its weakest Tale) and the
    shared ones (phase, cards left to the end, deck size, high bid, chips
    on the Pool); rank points are their mean over the other seats. Fitted
    by ``benchmarks/luck_fit.py allegory-net`` to the final rank points of
    every state of matches of greedy-family and search play, seeds
    ``derive(36000, 'allegory-net', i)`` (weights:
    ``allegory-net-1.json``)."""

    name = "allegory-net"
    version = 1

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        self.net = _record_net() if table is None else _net(table)
        # the weights of record: their literal form (cardroom.luck.nets, the same floats), else the reference's loops
        self.evaluate = allegory_net_1 if table is None else self.net.value

    def __call__(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        return self.evaluate(state, forfeited)


class ScaledNetAllegoryValue(NetAllegoryValue):
    """``allegory-net@2``: ``allegory-net@1`` (the very network and
    weights), its values times ``SCALES[n]`` at a table of ``n`` (decision
    303). The luck is linear in ``V``, so a match's luck is scaled by the
    same factor, and it stays unbiased (any fixed ``V`` does). At 4
    players ``allegory-net@1``'s luck is about twice too large: its best
    multiple was the same on four bots of the greedy family and on the
    convergence benchmark's 4-player fields, so it is the network's, not a
    field's. The factor is that multiple pooled over those line-ups'
    2,400 matches (seeds ``derive(37000, 'allegory', 'kept', ...)``), set
    before it was measured held out (docs/luck.md). Elsewhere unscaled:
    not measured there. A named alternative, not the one of record."""

    version = 2
    SCALES = {4: 0.552}

    @property
    def draws_label(self) -> str:
        return f"{NetAllegoryValue.name}@{NetAllegoryValue.version}"  # (its luck exactly the record's times the factor)

    def __call__(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        values = super().__call__(state, forfeited)
        scale = self.SCALES.get(state.n)
        return values if scale is None else [scale * v for v in values]


class LookaheadAllegoryValue(NetAllegoryValue):
    """``allegory-look@1``: ``allegory-net@1``'s network, evaluated where
    the built-in greedy policy would take the game before the next card
    comes into the Pool: from the state, the seats to move play the greedy
    bot's choice (ties to the first) for up to ``LIMIT`` decisions,
    stopping at the end, where several seats act at once, and after the
    decision that brings a card into the Pool (decision 285). At a
    greedy seat's own move ``V`` then does not move, and a card's luck
    includes what the auction it opens will make of it.

    The decision that brings a card in shows the deck's next card, which
    no one has seen: the chance model stays exact for such a ``V`` because
    Allegory's cards are all different, so an outcome's card swapped to
    the deck's top from its one place leaves the rest of the deck in every
    order equally often. A named alternative, not the one of record: it
    pays for greedy-like players and not for search (docs/luck.md)."""

    name = "allegory-look"
    version = 1
    reads_hidden = True  # (the card a take brings in; exact here, every card being different)
    LIMIT = 60

    def __init__(self) -> None:
        super().__init__()
        from bots.allegory_greedy import choose  # the built-in bot's very policy

        self.choose = choose

    def __call__(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        ahead = play_ahead(state, forfeited, self.choose, self.LIMIT, _go, _cards_held)
        return super().__call__(ahead, forfeited)


def _go(_state: AllegoryState, _action: dict[str, Any]) -> str:
    return "go"


def _cards_held(state: AllegoryState) -> int:
    """Changes when a card is taken, which brings the next one into the Pool."""
    return sum(state.ncards)


class AllegoryAdapter(Adapter):
    def __init__(self, value: ValueFunction | None = None) -> None:
        # allegory-net@1 is the value function of record (decision 282): it
        # removes more luck than allegory-tales@1 and, its weights compiled
        # as literals (decision 280), costs under a tenth of a match
        self.value = NetAllegoryValue() if value is None else value

    def step(
        self, pre: AllegoryState, event: dict[str, Any], post: AllegoryState, index: int, ctx: Context
    ) -> Step | None:
        if event["by"] == CHANCE:  # the setup: the Pool and the Morals at once

            def setup(rng: random.Random) -> AllegoryState:
                alt = pre.clone()
                alt.apply_chance(alt.sample_chance(rng))
                return alt

            return Step(index, post, sample=setup)
        if not pre.deck or sum(post.ncards) == sum(pre.ncards):
            return None  # no card came into the Pool
        seat, action = event["by"], event["action"]
        deck = pre.deck
        top = len(deck) - 1

        def with_top(j: int) -> AllegoryState:
            alt = pre.clone()
            alt.deck[top], alt.deck[j] = alt.deck[j], alt.deck[top]
            alt.apply(seat, action)
            return alt

        if len(deck) <= EXACT_MAX:
            return Step(index, post, exact=[(1 / len(deck), with_top(j)) for j in range(len(deck))], actual_at=top)
        # a card drawn again gives the state built for it the first time, and
        # the actual card the actual state: the estimator then values each
        # once (32 draws from a deck of 40 repeat about 10 cards)
        built: dict[int, AllegoryState] = {top: post}

        def drawn(rng: random.Random) -> AllegoryState:
            j = int(rng.random() * len(deck))
            if j not in built:
                built[j] = with_top(j)
            return built[j]

        return Step(index, post, sample=drawn)


__all__ = ["AllegoryAdapter", "AllegoryValue", "LookaheadAllegoryValue", "NetAllegoryValue", "ScaledNetAllegoryValue"]
