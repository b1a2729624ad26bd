"""Allegra's chance model and value function for the luck estimator.

Cards first become known (decision 183) when the deal turns the discard
pile's first card up, when a face-down slot is turned up (a reveal, a flip
after a discard, the end of a round), when a face-down card leaves its slot
(swapped, taken over from the discard, placed over by a knocker, exchanged),
and when a card is drawn from the deck. Until then a card lies in one of two
piles: the *deal pile* (the face-down slots, and the deck until the round's
first reshuffle) or the *reshuffle pile* (the deck made from the discard
pile). The next card known from a pile is uniform over that pile's cards.
"""

from __future__ import annotations

import functools
import json
import math
import random
import statistics
from pathlib import Path
from typing import Any

from cardroom.luck.estimator import Adapter, Context, Step, ValueFunction, play_ahead, terminal_points
from cardroom.luck.kernel import (
    ALL_COUNT,
    ALL_SUM,
    FD,
    VALUES,
    AreaModel,
    Loc,
    NetModel,
    card_at,
    deck_locations,
    double_ender,
    exact_outcomes,
    face_down_locations,
    mean_over_others,
    phi,
    pile_counts,
    points,
    progress,
    put_card,
    unseen_counts,
)
from cardroom.luck.kernel import MEAN_CARD as _MEAN
from cardroom.luck.nets import allegra_net_1
from engine.allegra.game import CARDS, CELLS, COLS, DRAWN, ROUNDS, TURN, AllegraState
from engine.core import CHANCE

CARD_VAR = sum((c - _MEAN) ** 2 for c in CARDS) / ALL_COUNT  # one unknown card's variance


class AllegraValue(ValueFunction):
    """``allegra-area@1``: each seat's expected total is its score so far
    plus, in a round under way, its area's face-up cards and the mean of the
    unseen cards for each face-down one (the active seat holding a drawn
    card counts it placed where it saves most); the uncertainty of a total
    is one card's variance per face-down card, ``ROUND_VAR_IN_PLAY`` for
    the turns left in the round and ``ROUND_VAR`` per round still to deal.
    Seat ``s`` beats ``o`` with the normal probability of the difference;
    the rank points are the mean of those over the other seats (the points
    of ``cardroom.tournament.standings`` are exactly that with 0/1/half).
    The constants are set by reasoning, never fitted (docs/luck.md)."""

    name = "allegra-area"
    version = 1
    ROUND_VAR = 15.0**2  # a round's score spread per seat (about 15 points)
    ROUND_VAR_IN_PLAY = 6.0**2

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        n = state.n
        totals = [float(t) for t in state.totals]
        var = [0.0] * n
        if state.phase <= 1:  # between rounds (a deal is due; a reshuffle never is here)
            rounds_left = ROUNDS - state.round + 1
            var = [rounds_left * self.ROUND_VAR] * n
        else:
            upv = state.upv
            val = state.val
            seen = 0
            seen_sum = 0
            for v in upv:
                if v is not None:
                    seen += 1
                    seen_sum += v
            for pile in (state.discard, state.removed):
                seen += len(pile)
                seen_sum += sum(pile)
            for v in (state.drawn, state.held):
                if v is not None:
                    seen += 1
                    seen_sum += v
            unseen = ALL_COUNT - seen
            mu = (ALL_SUM - seen_sum) / unseen if unseen else _MEAN
            lay = state.lay
            later = (ROUNDS - state.round) * self.ROUND_VAR + self.ROUND_VAR_IN_PLAY
            for s in range(n):
                up_sum = 0
                worst = None
                fd = 0
                for i in lay.area[s]:
                    v = upv[i]
                    if v is not None:
                        up_sum += v
                        if worst is None or v > worst:
                            worst = v
                    elif val[i] is not None:
                        fd += 1
                est = up_sum + fd * mu
                if s == state.active and state.drawn is not None and state.phase >= 4:
                    d = state.drawn
                    best = 0.0
                    if worst is not None and worst - d > best:
                        best = worst - d
                    if fd and mu - d > best:
                        best = mu - d
                    est -= best
                totals[s] += est
                var[s] = fd * CARD_VAR + later
        return points(totals, var, forfeited, True)


# -- allegra-area@2: what a slot will hold when the round is scored ---------
MIN_COUNT = 30  # a fitted cell needs this many observations
_TABLE_PATH = Path(__file__).with_name("allegra-area-2.json")


def _pairs(table: dict[str, float]) -> dict[tuple[int, int], float]:
    out = {}
    for key, mean in table.items():
        a, b = key.split(":")
        out[(int(a), int(b))] = mean
    return out


def holding_key(state: AllegraState, slot: int) -> int | None:
    """What a slot holds, as the fitted table keys it: its face-up value,
    ``FD`` when face down, None when empty."""
    if state.val[slot] is None:
        return None
    v = state.upv[slot]
    return FD if v is None else v


class FittedAllegraValue(ValueFunction):
    """``allegra-area@2``: as ``allegra-area@1``, but each slot counts what
    it is expected to hold when the round is scored, given what it holds now
    and how far the round has gone (the table ``final``, fitted once on
    greedy play by benchmarks/luck_fit.py on seeds no measurement plays); a
    face-down slot counts the mean of ``final`` over the unseen cards; the
    card the active seat may use (its drawn card, or the discard's top at
    the start of its turn) adds a fitted slope per progress times the card's
    distance from the mean card; an ender is doubled when not lowest. The spread of a round's score around that estimate (``spread``, per
    progress) and a whole round's (``round_var``) are fitted with it."""

    name = "allegra-area"
    version = 2

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        if table is None:
            table = json.loads(_TABLE_PATH.read_text(encoding="utf-8"))
        # the arithmetic is cardroom.luck.kernel's (compiled with the engine)
        self.model = AreaModel(
            _pairs(table["final"]),
            {int(p): v for p, v in table.get("drawn", {}).items()},
            {int(p): v for p, v in table.get("top", {}).items()},
            {int(p): v for p, v in table.get("spread", {}).items()},
            float(table.get("round_var", 0.0)),
        )

    def round_estimate(self, state: AllegraState) -> list[float]:
        """Each seat's expected score for the round under way (doubling included)."""
        return self.model.round_estimate(state)

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        return self.model.value(state, forfeited)


# -- allegra-area@3: the same estimates, weighed against the match's outcome --
_OUTCOME_PATH = Path(__file__).with_name("allegra-area-3.json")


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def outcome_bucket(state: AllegraState) -> str:
    """The fitted weights' key: the round, and how far it has gone (``b``
    between rounds, when the next deal is due)."""
    return f"{state.round}:b" if state.phase <= 1 else f"{state.round}:{progress(state)}"


def outcome_features(value: FittedAllegraValue, state: AllegraState) -> tuple[list[float], list[float]]:
    """Each seat's score so far and its expected score for the round under
    way (0 between rounds): what the outcome weights multiply."""
    banked = [float(t) for t in state.totals]
    if state.phase <= 1:
        return banked, [0.0] * state.n
    return banked, value.round_estimate(state)


class OutcomeAllegraValue(FittedAllegraValue):
    """``allegra-area@3``: ``allegra-area@2``'s estimates (score so far, the
    round's expected score from the slot table), but seat ``s`` beats ``o``
    with the logistic probability ``σ(a·(banked_o − banked_s) + b·(round_o −
    round_s))``, the weights ``a``, ``b`` fitted per round and progress
    (``outcome_bucket``) by maximum likelihood against who actually won the
    match (benchmarks/luck_fit.py, seeds no measurement plays), rather than
    an assumed normal spread of the round score; rank points as the mean
    over the other seats. In place of the fitted drawn-card slopes, the
    round's estimate counts the card each seat may use next
    (``card_term``)."""

    version = 3

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        if table is None:
            table = json.loads(_OUTCOME_PATH.read_text(encoding="utf-8"))
        super().__init__(table)
        self.outcome = {k: (float(a), float(b)) for k, (a, b) in table.get("outcome", {}).items()}

    def round_estimate(self, state: AllegraState) -> list[float]:
        """``allegra-area@2``'s round estimate with this version's ``card_term``."""
        model = self.model
        unseen = unseen_counts(state)
        left = sum(unseen)
        prog = progress(state)
        row = model.row(prog)
        fd_value = model.fd_value(prog, row, unseen, left)
        out = model.area_sums(state, row, fd_value)
        for s in range(state.n):
            out[s] += self.card_term(state, s, prog, row, fd_value, unseen, left)
        return double_ender(state, out)

    def card_term(
        self,
        state: AllegraState,
        seat: int,
        prog: int,
        row: list[float],
        fd_value: float,
        unseen: list[int],
        left: int,
    ) -> float:
        """The card a seat may use next, placed where it lowers the seat's
        expected round score most, by the slot table (one ply of the seat's
        own choice, from what it sees: a face-down slot counts
        ``fd_value``): the active seat with a drawn card, that or discarding
        it (0); the active seat at the start of its turn, the better of
        taking the discard's top and drawing (the mean over the unseen cards
        of the best use of each); a seat whose turn is still to come in
        this cycle of turns, drawing. A seat that has had its turn in the
        cycle counts none: every seat then has counted the same number of
        turns, so the estimates' difference does not swing with whose turn
        it is (the slot table, by progress alone, does not know how many
        turns each seat has left)."""
        if state.phase < TURN:
            return 0.0
        low = VALUES[0]
        slots = []
        for i in state.lay.area[seat]:
            if state.val[i] is not None:
                v = state.upv[i]
                slots.append(fd_value if v is None else row[v - low])
        if not slots:
            return 0.0
        worst = max(slots)  # the most a placed card can take away

        def use(card: int, may_discard: bool) -> float:
            best = worst - row[card - low]
            return -max(best, 0.0) if may_discard else -best

        draw = sum(c * use(low + k, True) for k, c in enumerate(unseen) if c) / left if left else 0.0
        if seat != state.active:
            # a turn still to come in this cycle of turns (the round's first
            # seat, ``(round - 1) mod n``, starts each cycle)
            first = (state.round - 1) % state.n
            return draw if (seat - first) % state.n > (state.active - first) % state.n else 0.0
        if state.phase == DRAWN and state.drawn is not None:
            return use(state.drawn, True)
        if state.phase == TURN and state.discard:
            return min(use(state.discard[-1], False), draw)
        return draw

    def pairwise(self, state: AllegraState) -> list[list[float]]:
        """``p[s][o]``: the probability that seat ``s`` finishes above ``o``."""
        banked, est = outcome_features(self, state)
        a, b = self.outcome.get(outcome_bucket(state), (0.0, 0.0))
        n = state.n
        return [
            [_sigmoid(a * (banked[o] - banked[s]) + b * (est[o] - est[s])) if o != s else 0.0 for o in range(n)]
            for s in range(n)
        ]

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        p = self.pairwise(state)
        return mean_over_others(state.n, forfeited, p)


# -- allegra-ender@1: who is doubled decides the round -----------------------
_ENDER_PATH = Path(__file__).with_name("allegra-ender-1.json")
# The quantiles at which the round's raw-score difference is integrated
# (midpoints of QUANTILES equal slices of the normal).
QUANTILES = 12
_NORMAL = statistics.NormalDist()
_Z = [_NORMAL.inv_cdf((k + 0.5) / QUANTILES) for k in range(QUANTILES)]


def raw_estimates(state: AllegraState) -> tuple[list[float], list[int]]:
    """Each seat's expected raw score for the round under way, and its
    count of face-down cards. The score: the cards its area holds (a
    face-down one at the mean of the unseen cards), less what the card it
    may use next saves when put in place of its worst one (as
    ``allegra-area@3``'s card term, by face values: the active seat's drawn
    card, or the better of the discard's top and drawing; a seat whose turn
    is still to come in this cycle of turns, drawing), so that the estimate
    does not swing with whose turn it is or with the card just drawn."""
    low = VALUES[0]
    unseen = unseen_counts(state)
    val, upv = state.val, state.upv
    left = sum(unseen)
    mu = sum((low + k) * c for k, c in enumerate(unseen)) / left if left else _MEAN
    n = state.n
    first = (state.round - 1) % n  # the seat that starts each cycle of turns
    est: list[float] = []
    fds: list[int] = []
    for s in range(n):
        total = 0.0
        fd = 0
        worst = None
        for i in state.lay.area[s]:
            if val[i] is None:
                continue
            v = upv[i]
            x = mu if v is None else float(v)
            fd += v is None
            total += x
            if worst is None or x > worst:
                worst = x
        if worst is not None and state.phase >= TURN:
            drawing = 0.0
            if left:
                for k, c in enumerate(unseen):
                    if c and worst > low + k:
                        drawing += c * (worst - low - k)
                drawing /= left
            if s != state.active:
                if (s - first) % n > (state.active - first) % n:
                    total -= drawing
            elif state.drawn is not None:
                total -= max(worst - state.drawn, 0.0)
            elif state.phase == TURN:
                top = worst - state.discard[-1] if state.discard else -math.inf
                total -= max(top, drawing)
        est.append(total)
        fds.append(fd)
    return est, fds


class EnderAllegraValue(ValueFunction):
    """``allegra-ender@1``: the rank points, from the one thing that
    decides most Allegra matches between players of like strength: which
    round enders are doubled. Measured on greedy play (docs/luck.md), a
    round's raw scores differ between the seats by about 5 points, its
    scored ones by about 30: the ender not strictly lowest is doubled, and
    the doubling is most of a match's spread.

    Per pair of seats ``s``, ``o``: the raw-score difference of the round
    under way is normal around ``raw_estimates``' difference, with the
    fitted variance ``raw_var`` by progress (the fewest face-down cards any
    area holds); the round's ender is the known one, or each seat with
    weight ``exp(-ender_slope * (its face-down cards - progress))``;
    ``s`` finishes above ``o`` when the difference of the totals, the
    ender's doubling applied where the raw difference says it is not
    lowest against the other seat of the pair, plus the rounds still to be
    dealt (normal, ``round_var`` each), favours ``s``. The raw difference
    is integrated at ``QUANTILES`` points. Rank points as the mean over the
    other seats. Fitted once by benchmarks/luck_fit.py ``allegra-ender`` on
    seeds no measurement plays."""

    name = "allegra-ender"
    version = 1

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        if table is None:
            table = json.loads(_ENDER_PATH.read_text(encoding="utf-8"))
        # per progress: (slope of the final raw difference on the estimated
        # one, the variance around that, and the final raw score's line
        # on the estimate: intercept, slope)
        self.raw = {int(p): tuple(float(x) for x in row) for p, row in table["raw"].items()}
        self.raw_default = self.raw[max(self.raw)]
        self.round_var = float(table["round_var"])
        self.ender_slope = float(table["ender_slope"])

    def ender_weights(self, state: AllegraState, fds: list[int]) -> list[float]:
        """The probability that each seat ends the round under way."""
        if state.ender is not None:
            return [1.0 if s == state.ender else 0.0 for s in range(state.n)]
        prog = min(fds)
        w = [math.exp(-self.ender_slope * (fd - prog)) for fd in fds]
        total = sum(w)
        return [x / total for x in w]

    def above(
        self, gap: float, m: float, sd: float, later_sd: float, dbl_s: float, dbl_o: float, p_s: float, p_o: float
    ) -> float:
        """P(``s`` finishes above ``o``): ``gap`` is o's total so far minus
        s's, the raw difference ``D = raw_s - raw_o`` ~ N(m, sd²), ``dbl_s``
        what doubling adds to s's score if it ends and is not lower than o
        (and ``dbl_o`` for o), ``p_s``, ``p_o`` the chances they end."""
        p_none = max(0.0, 1.0 - p_s - p_o)
        if later_sd <= 0.0:  # the last round: exact, from the normal's distribution function
            zero = _below(0.0, m, sd)
            return (
                p_none * _below(gap, m, sd)
                + p_s * (_below(min(0.0, gap), m, sd) + max(0.0, _below(gap - dbl_s, m, sd) - zero))
                + p_o * (max(0.0, _below(gap, m, sd) - zero) + _below(min(0.0, gap + dbl_o), m, sd))
            )
        out = 0.0
        for z in _Z:
            d = m + sd * z
            margin = gap - d  # positive: s ahead
            p = p_none * _ncdf(margin, later_sd)
            if p_s:
                p += p_s * _ncdf(margin - (dbl_s if d >= 0 else 0.0), later_sd)
            if p_o:
                p += p_o * _ncdf(margin + (dbl_o if d <= 0 else 0.0), later_sd)
            out += p
        return out / QUANTILES

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        n = state.n
        totals = [float(t) for t in state.totals]
        if state.phase <= 1:  # between rounds: only the rounds still to deal
            var = [(ROUNDS - state.round + 1) * self.round_var / 2] * n
            return points(totals, var, forfeited, True)
        est, fds = raw_estimates(state)
        ends = self.ender_weights(state, fds)
        beta, var, a, b = self.raw.get(min(fds), self.raw_default)
        sd = math.sqrt(var)
        final = [max(a + b * e, 0.0) for e in est]  # the expected raw score once the round is scored
        later_sd = math.sqrt((ROUNDS - state.round) * self.round_var)
        above = [[0.5] * n for _ in range(n)]
        for s in range(n):
            for o in range(s + 1, n):
                gap, m = totals[o] - totals[s], beta * (est[s] - est[o])
                p = self.above(gap, m, sd, later_sd, final[s], final[o], ends[s], ends[o])
                above[s][o] = p
                above[o][s] = 1.0 - p
        return mean_over_others(n, forfeited, above)


def _below(x: float, m: float, sd: float) -> float:
    """P(N(m, sd²) < x)."""
    return phi((x - m) / sd)


def _ncdf(x: float, sd: float) -> float:
    """P(x + N(0, sd²) > 0)."""
    if sd <= 1e-6:
        return 1.0 if x > 0 else 0.0 if x < 0 else 0.5
    return phi(x / sd)


# -- allegra-net@1: learned from the outcome of play ---------------------------
_NET_PATH = Path(__file__).with_name("allegra-net-1.json")


def _net_model(table: dict[str, Any]) -> NetModel:
    return NetModel(
        [float(x) for x in table["gap"]],
        [[float(x) for x in row] for row in table["own"]],
        [[float(x) for x in row] for row in table["other"]],
        [[float(x) for x in row] for row in table["context"]],
        [float(x) for x in table["bias"]],
        [float(x) for x in table["out"]],
    )


@functools.cache
def _record_model() -> NetModel:
    """The weights of record, read once a process: every match's luck
    builds an adapter, and parsing the file was 4% of its CPU. The model
    is only read, so one is shared."""
    return _net_model(json.loads(_NET_PATH.read_text(encoding="utf-8")))


class NetAllegraValue(ValueFunction):
    """``allegra-net@1``: seat ``s`` finishes above ``o`` with the
    probability a small network gives from what both seats' areas show
    (cardroom.luck.kernel.seat_inputs: scores so far, the areas' expected
    sums with a face-down card at the unseen mean, face-down and empty
    slots, triples in the making, whose turn and the card it may use, the
    ender, the turns still to come, the round and its progress); rank
    points as the mean over the other seats. Fitted by
    benchmarks/luck_fit.py ``allegra-net`` to who finished above whom from
    every state of matches of greedy-family play (seeds
    ``derive(36000, 'allegra-net', i)``), so that ``V`` is close to the
    expected result under that play, and so moves little at the players'
    own moves."""

    name = "allegra-net"
    version = 1

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        record = table is None
        self.model = _record_model() if table is None else _net_model(table)
        # the weights of record: their literal form (cardroom.luck.nets, the same floats), else the reference's loops
        self.evaluate = allegra_net_1 if record else self.model.value

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        if state.is_terminal():
            return terminal_points(state, forfeited)
        return self.evaluate(state, forfeited)


class DrawnNetAllegraValue(NetAllegraValue):
    """``allegra-net@2``: ``allegra-net@1``'s very network and weights (no
    refit), but every chance step's ``E[V]`` is the mean of ``V`` over
    4 outcomes (``draws``) drawn from the step's true distribution (decision
    281), not over all of a card's up to 13 values: about 3x fewer ``V``
    a match. Still unbiased: the draws are seeded by the label, the event's
    place and the cards revealed before the step (``revealed_key``: each
    match draws its own numbers), so they are independent of its outcome;
    their noise adds about the credited luck's variance over ``draws`` to
    a match's adjusted result (0.022 / 4 against a payoff's 0.244:
    docs/luck.md). 4 was set by that arithmetic, not tuned on any
    measurement's seeds."""

    version = 2
    draws = 4


class LookaheadAllegraValue(NetAllegraValue):
    """``allegra-look@1``: ``allegra-net@1``'s network, evaluated where the
    built-in greedy policy would take the game before the next card is
    drawn: from the state, the seats to move play the greedy bot's choice
    (ties to the first) for up to 3 decisions, stopping before a draw from
    the deck, at a round's end, where several seats answer at once, and
    after a decision that turns a card up (decision 285). A drawn card's luck then
    includes what the drawer will do with it, which the network alone
    learns poorly (docs/luck.md: ``V`` moved at the players' own moves as
    much as at the cards).

    The lookahead reads cards no one has seen (a swap into a face-down
    slot shows the card it replaces), so it ``reads_hidden``: its
    expectations are exact and each outcome's card is taken from a place
    drawn uniformly among those holding it (``outcomes_hidden_exact``),
    which keeps every step's correction at expectation 0. Costly: the
    greedy bot's choice at every alternative (docs/luck.md gives the
    figure); a named alternative, not the one of record."""

    name = "allegra-look"
    version = 1
    reads_hidden = True  # (the card a swap turns up)
    LIMIT = 3

    def __init__(self) -> None:
        super().__init__()
        from bots.allegra_greedy import choose  # the built-in bot's very policy

        self.choose = choose

    def __call__(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        ahead = play_ahead(state, forfeited, self.choose, self.LIMIT, _allegra_verdict, _round_of)
        return super().__call__(ahead, forfeited)


def _allegra_verdict(state: AllegraState, action: dict[str, Any]) -> str:
    """The lookahead stops before a draw from the deck, and after a decision that turns a card up."""
    if action["type"] == "draw":
        return "stop"
    return "last" if _turns_up(state, action) else "go"


def _round_of(state: AllegraState) -> int:
    return state.round


def _turns_up(state: AllegraState, action: dict[str, Any]) -> bool:
    """Whether ``action`` turns a face-down card up (shows a card no one has seen)."""
    kind = action["type"]
    if kind in ("swap", "take_discard", "reveal", "place"):
        slots = [action["slot"]]
    elif kind == "discard":
        slots = [action["flip"]] if action["flip"] is not None else []
    elif kind == "exchange":
        slots = [action["take"], action["put"]]
    else:
        return False
    for slot in slots:
        i = _slot(slot)[1]
        if state.upv[i] is None and state.val[i] is not None:
            return True
    return False


# -- the alternative outcomes (locations of cards: cardroom.luck.kernel.Loc) --


def _resample(base: AllegraState, piles: list[list], rng: random.Random, after) -> AllegraState:
    """``base`` with each pile's cards dealt anew among its places."""
    alt = base.clone()
    for pile in piles:
        values = [card_at(alt, loc) for loc in pile]
        rng.shuffle(values)
        for loc, v in zip(pile, values):
            put_card(alt, loc, v)
    return after(alt)


def _same(state: AllegraState) -> AllegraState:
    return state


def _resample_drawn(base: AllegraState, piles: list[list], rng: random.Random, after) -> AllegraState:
    """As ``_resample``, each pile's values sorted before they are shuffled:
    the draw then depends on which cards a pile holds, not on where they
    lie (so not on the actual outcome)."""
    alt = base.clone()
    for pile in piles:
        values = sorted(card_at(alt, loc) for loc in pile)
        rng.shuffle(values)
        for loc, v in zip(pile, values):
            put_card(alt, loc, v)
    return after(alt)


class OutcomeDraw:
    """Draws the card at ``loc`` (one of ``pile``) from the true
    distribution, uniform over the pile's cards, and builds only that
    outcome's state: ``exact_outcomes``' state for the drawn value (swapped
    into ``loc`` from the first place in the pile holding it), ``after``
    applied. The value is drawn from the pile's values in sorted order, so
    the draws are the same whatever the actual card. Drawing the actual
    card gives ``actual`` itself, the state after the actual outcome (the
    same state: the estimator then does not evaluate it again); drawing a
    value again gives the state built for it the first time (the same
    object, so the estimator does not evaluate its ``V`` twice either)."""

    def __init__(self, base: AllegraState, loc: Loc, pile: list[Loc], after, actual: AllegraState) -> None:
        self.base, self.loc, self.after, self.actual = base, loc, after, actual
        counts, self.where = pile_counts(base, pile)
        self.values = sorted(counts)
        self.counts = [counts[v] for v in self.values]
        self.total = len(pile)
        self.built: dict[int, AllegraState] = {}

    def __call__(self, rng: random.Random) -> AllegraState:
        r = rng.randrange(self.total)
        k = 0
        while r >= self.counts[k]:
            r -= self.counts[k]
            k += 1
        value = self.values[k]
        actual = card_at(self.base, self.loc)
        if value == actual:
            return self.actual
        if value in self.built:
            return self.built[value]
        alt = self.base.clone()
        put_card(alt, self.where[value], actual)
        put_card(alt, self.loc, value)
        alt = self.built[value] = self.after(alt)
        return alt


def revealed_key(ctx: Context, base: AllegraState, locs: list[Loc]) -> str:
    """The seed of a drawn step's draws (beside the label and the event's
    place): the cards revealed in the replay before this step, so that each
    match draws its own numbers, never from this step's outcome; this
    step's cards are then added for the steps after it."""
    before = ctx.extra.get("revealed", "r")
    ctx.extra["revealed"] = before + "," + ",".join(str(card_at(base, loc)) for loc in locs)
    return before


def outcomes_hidden_exact(
    base: AllegraState, loc: Loc, pile: list[Loc], after, rng: random.Random
) -> tuple[list[tuple[float, AllegraState]], int]:
    """``exact_outcomes`` for a value function that reads cards no one has
    seen yet (``reads_hidden``): each value is swapped into ``loc`` from a
    place drawn uniformly among the pile's places holding it (``rng``:
    independent of where the cards lie), not from the first. Then the rest
    of the pile is as likely to lie in any order as the true distribution
    says given that value (for a place taken by a fixed rule it is not: the
    copy moved is always the one lying first), so ``E[V]`` stays exact
    whatever hidden card ``V`` reads (decision 285). The probabilities and
    the order of the values are ``exact_outcomes``'s."""
    actual = card_at(base, loc)
    places: dict[int, list[Loc]] = {}
    for other in pile:
        places.setdefault(card_at(base, other), []).append(other)
    total = len(pile)
    out: list[tuple[float, AllegraState]] = []
    actual_at = -1
    for value in sorted(places):
        alt = base.clone()
        if value != actual:
            held = places[value]
            put_card(alt, held[rng.randrange(len(held))], actual)
            put_card(alt, loc, value)
        else:
            actual_at = len(out)
        out.append((len(places[value]) / total, after(alt)))
    return out, actual_at


def _exact_step(
    index: int,
    post: AllegraState,
    base: AllegraState,
    loc: Loc,
    pile: list[Loc],
    after,
    key: str | None = None,
    places_seed: str | None = None,
) -> Step:
    if key is not None:  # the value function draws its expectations: a sampler, no outcome built before it is drawn
        return Step(index, post, sample=OutcomeDraw(base, loc, pile, after, post), key=key)
    if places_seed is not None:  # V reads unseen cards: each outcome's card from a place drawn uniformly
        exact, actual_at = outcomes_hidden_exact(base, loc, pile, after, random.Random(places_seed))
    else:
        exact, actual_at = exact_outcomes(base, loc, pile, after)
    return Step(index, post, exact=exact, actual_at=actual_at)


class AllegraAdapter(Adapter):
    def __init__(self, value: ValueFunction | None = None) -> None:
        # allegra-net@2 is the value function of record (decision 284):
        # allegra-area@2 added variance to results; @2 removes a little, at
        # about a tenth of a match's CPU (its expectations drawn)
        self.value = DrawnNetAllegraValue() if value is None else value

    def step(
        self, pre: AllegraState, event: dict[str, Any], post: AllegraState, index: int, ctx: Context
    ) -> Step | None:
        action = event["action"]
        draws = self.value.draws  # (then its steps are seeded by the cards revealed before them)
        places_seed = None
        if self.value.reads_hidden:
            if draws:
                raise ValueError(f"{self.value.label} reads hidden cards: its expectations must be exact, not drawn")
            # where each outcome's card comes from: fixed by the event's place alone (decision 285)
            places_seed = f"cardroom-luck:{self.value.label}:{index}:places"
        if event["by"] == CHANCE:
            if action["type"] == "deal":
                ctx.extra["reshuffled"] = False
                # the discard pile's first card, from the whole deal
                pile = [("d", 0)] + face_down_locations(post) + deck_locations(len(post.deck))
                key = revealed_key(ctx, post, [("d", 0)]) if draws else None
                return _exact_step(index, post, post, ("d", 0), pile, _same, key, places_seed)
            ctx.extra["reshuffled"] = True  # a reshuffle: its top card is drawn at once
            pile = [("x", 0)] + deck_locations(len(post.deck))
            key = revealed_key(ctx, post, [("x", 0)]) if draws else None
            return _exact_step(index, post, post, ("x", 0), pile, _same, key, places_seed)
        seat = event["by"]
        ended = post.round != pre.round or post.is_terminal()
        kind = action["type"]
        if ended:
            known = face_down_locations(pre)  # every face-down card is turned up as the round ends
        elif kind == "draw":
            known = [("k", len(pre.deck) - 1)] if pre.deck else []
        elif kind in ("reveal", "take_discard", "swap", "place"):
            known = [_slot(action["slot"])]
        elif kind == "discard":
            known = [_slot(action["flip"])] if action["flip"] is not None else []
        elif kind == "exchange":
            known = [_slot(action["take"]), _slot(action["put"])]
        else:
            known = []
        val, upv = pre.val, pre.upv
        known = [loc for loc in known if loc[0] == "k" or (upv[loc[1]] is None and val[loc[1]] is not None)]
        if not known:
            return None
        face_down = known if ended else face_down_locations(pre)  # (most events reveal nothing: not built for them)
        deck = deck_locations(len(pre.deck))
        if ctx.extra.get("reshuffled"):
            piles = [face_down, deck]
        else:
            piles = [face_down + deck]

        def after(alt: AllegraState) -> AllegraState:
            alt.apply(seat, action)
            return alt

        key = revealed_key(ctx, pre, known) if draws else None
        if len(known) == 1:
            loc = known[0]
            pile = piles[-1] if loc[0] == "k" else piles[0]  # (the deck is the last pile)
            return _exact_step(index, post, pre, loc, pile, after, key, places_seed)
        if key is not None:
            return Step(index, post, sample=lambda rng: _resample_drawn(pre, piles, rng, after), key=key)
        return Step(index, post, sample=lambda rng: _resample(pre, piles, rng, after))


def _slot(slot: list[int]) -> tuple[str, int]:
    s, r, c = slot
    return ("s", s * CELLS + r * COLS + c)


__all__ = [
    "AllegraAdapter", "AllegraValue", "DrawnNetAllegraValue", "EnderAllegraValue", "FittedAllegraValue",
    "LookaheadAllegraValue", "NetAllegraValue", "OutcomeAllegraValue",
]  # fmt: skip
