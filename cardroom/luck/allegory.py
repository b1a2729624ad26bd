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

import random
from typing import Any

from cardroom.luck.allegra import _points
from cardroom.luck.estimator import Adapter, Context, Step, ValueFunction, terminal_points
from engine.allegory.game import CARD_TALE, CARD_THEME, CARD_VALUE, CARDS_TO_END, AllegoryState
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
    weights are the greedy bot's, the rest set by reasoning, never fitted."""

    name = "allegory-tales"
    version = 1
    W_SECOND, W_THIRD, EMPTY_TALE, PAIR, CHIP = 0.30, 0.10, 6.0, 0.8, 0.12
    POOL_SHARE = 0.5
    SPREAD_START, SPREAD_END = 5.0, 1.0

    def worth(self, state: AllegoryState, seat: int, extra: int = -1, chips: int = 0) -> float:
        tales = state.tales[seat]
        totals = [0, 0, 0]
        sizes = [0, 0, 0]
        themes: dict[int, int] = {}
        moral = state.morals[seat]
        moral_tales = 0
        for t in range(3):
            has_moral = False
            for c in tales[t]:
                totals[t] += CARD_VALUE[c]
                sizes[t] += 1
                themes[CARD_THEME[c]] = themes.get(CARD_THEME[c], 0) + 1
                has_moral = has_moral or CARD_THEME[c] == moral
            if extra >= 0 and CARD_TALE[extra] == t:
                totals[t] += CARD_VALUE[extra]
                sizes[t] += 1
                themes[CARD_THEME[extra]] = themes.get(CARD_THEME[extra], 0) + 1
                has_moral = has_moral or CARD_THEME[extra] == moral
            moral_tales += has_moral
        a, b, c = sorted(totals)
        score = a + self.W_SECOND * b + self.W_THIRD * c - self.EMPTY_TALE * sizes.count(0)
        for count in themes.values():
            score += 2 * (count // 3) + (self.PAIR if count % 3 == 2 else 0.0)
        return score + moral_tales + self.CHIP * (state.chips[seat] + chips)

    def __call__(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        n = state.n
        worths = []
        for s in range(n):
            base = self.worth(state, s)
            best = 0.0
            for card, chips in zip(state.pool, state.pchips):
                gain = self.worth(state, s, card, chips) - base
                if gain > best:
                    best = gain
            worths.append(base + self.POOL_SHARE * best)
        left = max(0, CARDS_TO_END - max(state.ncards)) / CARDS_TO_END
        spread = self.SPREAD_END + (self.SPREAD_START - self.SPREAD_END) * left
        var = [spread * spread / 2] * n  # the difference's spread is ``spread``
        return _points(worths, var, forfeited, lower_is_better=False)


class AllegoryAdapter(Adapter):
    def __init__(self) -> None:
        self.value = AllegoryValue()

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
            return Step(index, post, exact=[(1 / len(deck), with_top(j)) for j in range(len(deck))])
        return Step(index, post, sample=lambda rng: with_top(int(rng.random() * len(deck))))


__all__ = ["AllegoryAdapter", "AllegoryValue"]
