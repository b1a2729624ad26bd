"""The luck estimator's inner loops, typed for mypyc: the value functions'
arithmetic and the building of Allegra's alternative outcomes.

The luck estimator spends most of its time evaluating ``V`` (about 2,300
times an Allegra match, 14 per chance step: decision 270), so the value
functions' inner loops live here and are compiled with the engine
(``engine/form.py`` lists this module; ``scripts/build_engine.py`` builds
it; ``CARDROOM_ENGINE=reference`` runs this file as it is). The classes
that name and version the value functions (cardroom/luck/allegra.py,
allegory.py) call into it.

Both forms must give the very same floats: the operations and their order
are those of the versions of record, sums are written as loops (Python's
``sum`` of floats is compensated from 3.12 on, a loop is the same
everywhere), and tests/luck/test_luck_forms.py compares the two forms'
luck on many replays bit for bit. Reads only the state and the tables it
is given; no import of the rest of cardroom (mypyc compiles what this
imports' types name, and the engine is compiled in the same build).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, cast

from engine.allegory.game import CARD_TALE, CARD_THEME, CARD_VALUE, CARDS_TO_END, SET_BONUS, THEMES, AllegoryState
from engine.allegra.game import AREA_SIZE, CARD_COUNTS, CARDS, MAX_SLOTS, ROUNDS, AllegraState

ALL_SUM: Final = sum(CARDS)
ALL_COUNT: Final = len(CARDS)
MEAN_CARD: Final = ALL_SUM / ALL_COUNT
FD: Final = 99  # the key of a face-down card in allegra-area@2's fitted table
# the card values from the lowest, and how many cards of each the deck holds
VALUES: Final[list[int]] = list(range(min(CARD_COUNTS), max(CARD_COUNTS) + 1))
VALUE_COUNTS: Final[list[int]] = [CARD_COUNTS.get(v, 0) for v in VALUES]
SQRT2: Final = math.sqrt(2.0)


def phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / SQRT2))


def forfeit_share(s_out: bool, o_out: bool) -> float:
    """``s`` above ``o`` when either has forfeited: a forfeit loses to every
    seat that has not forfeited, and ties with one that has."""
    return 0.5 if s_out == o_out else (0.0 if s_out else 1.0)


def mean_over_others(n: int, forfeited: frozenset[int], above: list[list[float]]) -> list[float]:
    """Rank points: per seat ``s``, the mean over the other seats ``o`` of
    ``above[s][o]`` (the probability ``s`` finishes above ``o``), a forfeit
    losing to every seat that has not forfeited."""
    out: list[float] = []
    for s in range(n):
        p = 0.0
        s_out = s in forfeited
        for o in range(n):
            if o == s:
                continue
            o_out = o in forfeited
            p += forfeit_share(s_out, o_out) if s_out or o_out else above[s][o]
        out.append(p / (n - 1))
    return out


def points(totals: list[float], var: list[float], forfeited: frozenset[int], lower_is_better: bool) -> list[float]:
    """Rank points when each seat's total is normal around ``totals`` with
    variance ``var``: ``s`` finishes above ``o`` with the normal probability
    of their difference (``mean_over_others``, without its table: this is
    the value functions' inner loop)."""
    n = len(totals)
    out: list[float] = []
    for s in range(n):
        p = 0.0
        s_out = s in forfeited
        for o in range(n):
            if o == s:
                continue
            o_out = o in forfeited
            if s_out or o_out:
                p += forfeit_share(s_out, o_out)
                continue
            d = totals[o] - totals[s] if lower_is_better else totals[s] - totals[o]
            sd = math.sqrt(var[s] + var[o])
            p += phi(d / sd) if sd > 0 else (1.0 if d > 0 else 0.5 if d == 0 else 0.0)
        out.append(p / (n - 1))
    return out


# -- Allegra ------------------------------------------------------------------


def unseen_counts(state: AllegraState) -> list[int]:
    """How many cards of each value (from the lowest) no one has seen yet."""
    low = VALUES[0]
    unseen = list(VALUE_COUNTS)
    for v in state.upv:
        if v is not None:
            unseen[v - low] -= 1
    for v in state.discard:
        unseen[v - low] -= 1
    for v in state.removed:
        unseen[v - low] -= 1
    drawn = state.drawn
    if drawn is not None:
        unseen[drawn - low] -= 1
    held = state.held
    if held is not None:
        unseen[held - low] -= 1
    return unseen


def progress(state: AllegraState) -> int:
    """How far the round has gone: the fewest face-down cards any area holds
    (the round's end comes when one area has none)."""
    least = state._area_fd(0)
    for s in range(1, state.n):
        fd = state._area_fd(s)
        if fd < least:
            least = fd
    return least


def double_ender(state: AllegraState, out: list[float]) -> list[float]:
    """The round's estimates with its ender doubled unless strictly lowest (or at most 0)."""
    e = state.ender
    if e is not None and out[e] > 0:
        for s in range(state.n):
            if s != e and out[s] < out[e]:
                out[e] *= 2
                break
    return out


class AreaModel:
    """``allegra-area@2``'s fitted tables and its evaluation
    (cardroom.luck.allegra.FittedAllegraValue names and documents it)."""

    def __init__(
        self, final: dict[tuple[int, int], float], drawn: dict[int, float], top: dict[int, float],
        spread: dict[int, float], round_var: float,
    ) -> None:  # fmt: skip
        self.final = final
        self.drawn = drawn
        self.top = top
        self.spread = spread
        self.round_var = round_var
        self.rows: dict[int, list[float]] = {}

    def final_of(self, prog: int, holding: int) -> float:
        got = self.final.get((prog, holding))
        if got is None:  # a cell seen too rarely to fit: the card as it is
            return float(holding) if holding != FD else MEAN_CARD
        return got

    def row(self, prog: int) -> list[float]:
        """``final`` at one progress as a list by card value (from the lowest)."""
        row = self.rows.get(prog)
        if row is None:
            row = [self.final_of(prog, v) for v in VALUES]
            self.rows[prog] = row
        return row

    def fd_value(self, prog: int, row: list[float], unseen: list[int], left: int) -> float:
        """What a face-down slot is expected to hold: ``final`` over the unseen cards."""
        if not left:
            return self.final_of(prog, FD)
        total = 0.0
        for k in range(len(unseen)):
            total += unseen[k] * row[k]
        return total / left

    def area_sums(self, state: AllegraState, row: list[float], fd_value: float) -> list[float]:
        """Each seat's area: what its slots are expected to hold when the round is scored."""
        low = VALUES[0]
        val, upv = state.val, state.upv
        out: list[float] = []
        for area in state.lay.area:
            est = 0.0
            for i in area:
                if val[i] is not None:
                    v = upv[i]
                    est += fd_value if v is None else row[v - low]
            out.append(est)
        return out

    def card_term(self, state: AllegraState, seat: int, prog: int) -> float:
        """The active seat's usable card (drawn, or the discard's top at the
        start of its turn): a fitted slope per progress times its distance
        from the mean card; 0 for the other seats."""
        if seat != state.active:
            return 0.0
        drawn = state.drawn
        if state.phase >= 4 and drawn is not None:
            return self.drawn.get(prog, 0.0) * (drawn - MEAN_CARD)
        if state.phase == 3 and state.discard:
            return self.top.get(prog, 0.0) * (state.discard[-1] - MEAN_CARD)
        return 0.0

    def round_estimate(self, state: AllegraState) -> list[float]:
        """Each seat's expected score for the round under way (doubling included)."""
        unseen = unseen_counts(state)
        left = 0
        for c in unseen:
            left += c
        prog = progress(state)
        row = self.row(prog)
        out = self.area_sums(state, row, self.fd_value(prog, row, unseen, left))
        for s in range(state.n):
            out[s] += self.card_term(state, s, prog)
        return double_ender(state, out)

    def value(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        """``V`` of a state that is not terminal."""
        n = state.n
        totals = [float(t) for t in state.totals]
        if state.phase <= 1:
            return points(totals, [(ROUNDS - state.round + 1) * self.round_var] * n, forfeited, True)
        later = (ROUNDS - state.round) * self.round_var + self.spread.get(progress(state), self.round_var)
        est = self.round_estimate(state)
        for s in range(n):
            totals[s] += est[s]
        return points(totals, [later] * n, forfeited, True)


# -- allegra-net@1: a value learned from the outcome of real play -------------
# Each seat's inputs (NET_SEAT of them) and the state's (NET_CONTEXT), in
# the order the fitted weights read them; every one scaled to about [-1, 1].
NET_SEAT: Final = 13
NET_CONTEXT: Final = 6


def seat_inputs(state: AllegraState) -> tuple[list[list[float]], list[float]]:
    """``allegra-net@1``'s inputs: per seat, and of the whole state. Reads
    only what has been revealed (a face-down card counts the mean of the
    unseen cards, as every value function here). Per seat: its score so far
    (the others' difference is taken per pair), its area's expected sum
    (face-up cards, face-down ones at the unseen mean), its face-down and
    empty slots, its worst face-up card, its lines holding two equal face-up
    cards (a triple in the making), whether it is the active seat and the
    card it may use (the drawn card, or the discard's top at the start of
    its turn) against the unseen mean, whether it has ended the round, and
    whether its turn is still to come (this cycle of turns, or the final
    turns), and what the card it may use next saves put in place of its
    worst card (as ``allegra-ender@1``'s estimate). The state's: rounds still to deal, how far the round has gone,
    between rounds, an ender known, the unseen mean, the discard's top."""
    n = state.n
    low = VALUES[0]
    unseen = unseen_counts(state)
    left = 0
    weighted = 0
    for k in range(len(unseen)):
        left += unseen[k]
        weighted += unseen[k] * (low + k)
    mu = weighted / left if left else MEAN_CARD
    between = state.phase <= 1
    val, upv = state.val, state.upv
    active = state.active
    first = (state.round - 1) % n  # the seat that starts each cycle of turns
    ender = state.ender
    card = 0.0
    has_card = 0.0
    if not between:
        if state.drawn is not None and state.phase >= 4:
            card, has_card = state.drawn - mu, 1.0
        elif state.phase == 3 and state.discard:
            card, has_card = state.discard[-1] - mu, 1.0
    seats: list[list[float]] = []
    for s in range(n):
        est = 0.0
        fd = 0
        empty = 0
        worst = -2.0
        if not between:
            for i in state.lay.area[s]:
                v = val[i]
                if v is None:
                    empty += 1
                    continue
                u = upv[i]
                if u is None:
                    fd += 1
                    est += mu
                else:
                    est += u
                    if u > worst:
                        worst = float(u)
        pairs = 0 if between else line_pairs(state, s)
        if between:
            to_come = 0.0
        elif ender is not None:
            to_come = 1.0 if s in state.queue else 0.0
        else:
            to_come = 1.0 if (s - first) % n > (active - first) % n else 0.0
        is_active = 1.0 if (s == active and not between) else 0.0
        # what the card it may use next saves, put in place of its worst
        # card (a face-down one counting the unseen mean): the active seat's
        # drawn card, or the better of the discard's top and drawing; a
        # seat whose turn is still to come, drawing
        high = worst if worst > mu or fd == 0 else mu
        save = 0.0
        if not between and empty < AREA_SIZE:
            if is_active and state.drawn is not None and state.phase >= 4:
                save = max(high - state.drawn, 0.0)
            elif is_active or to_come:
                drawing = 0.0
                if left:
                    for k in range(len(unseen)):
                        if unseen[k] and high > low + k:
                            drawing += unseen[k] * (high - low - k)
                    drawing /= left
                save = drawing
                if is_active and state.phase == 3 and state.discard and high - state.discard[-1] > save:
                    save = high - state.discard[-1]
        seats.append(
            [
                state.totals[s] / 40.0,
                est / 40.0,
                fd / 8.0,
                empty / 8.0,
                (worst if worst > -2.0 else mu) / 10.0,
                pairs / 4.0,
                is_active,
                is_active * card / 6.0,
                is_active * has_card,
                1.0 if s == ender else 0.0,
                to_come,
                1.0 if (s == active and ender is not None and not between) else 0.0,
                save / 6.0,
            ]
        )
    top = (state.discard[-1] - mu) / 6.0 if (state.discard and not between) else 0.0
    context = [
        (ROUNDS - state.round + (1 if between else 0)) / 2.0,
        0.0 if between else progress(state) / 8.0,
        1.0 if between else 0.0,
        1.0 if ender is not None else 0.0,
        (mu - MEAN_CARD) / 2.0,
        top,
    ]
    return seats, context


def line_pairs(state: AllegraState, seat: int) -> int:
    """The lines of a seat's area (3 rows of 5, 5 columns of 3) holding two
    equal face-up cards beside each other with a face-down one next to them:
    where a triple may come."""
    upv, val = state.upv, state.val
    area = state.lay.area[seat]
    count = 0
    for w in range(0, len(LINE_WINDOWS), 3):
        count += window_pair(upv, val, area[LINE_WINDOWS[w]], area[LINE_WINDOWS[w + 1]], area[LINE_WINDOWS[w + 2]])
    return count


def _line_windows() -> list[int]:
    """The 14 windows of three slots ``line_pairs`` reads, as places in a
    seat's area, three by three: the area as a 3 x 5 grid, the
    neighbour's column 3 (area places 12-14) then the own columns 0..3
    (row r's at 4r..4r+3); each row's three windows, then each column."""
    grid: list[int] = []
    for r in range(3):
        grid.append(12 + r)
        for c in range(4):
            grid.append(r * 4 + c)
    out: list[int] = []
    for r in range(3):
        for c in range(3):
            out += [grid[r * 5 + c], grid[r * 5 + c + 1], grid[r * 5 + c + 2]]
    for c in range(5):
        out += [grid[c], grid[5 + c], grid[10 + c]]
    return out


LINE_WINDOWS: Final[list[int]] = _line_windows()


def window_pair(upv: list[int | None], val: list[int | None], a: int, b: int, c: int) -> int:
    """1 when two of three slots hold the same face-up value and the third is face down."""
    x, y, z = upv[a], upv[b], upv[c]
    if x is None and val[a] is not None:
        return 1 if y is not None and y == z else 0
    if y is None and val[b] is not None:
        return 1 if x is not None and x == z else 0
    if z is None and val[c] is not None:
        return 1 if x is not None and x == y else 0
    return 0


class NetModel:
    """``allegra-net@1``'s fitted weights and its evaluation (a one-hidden-
    layer network; cardroom.luck.allegra.NetAllegraValue names and
    documents it). Seat ``s`` finishes above ``o`` with probability
    ``σ(g(s, o) − g(o, s))``, ``g(s, o) = w · tanh(gap·(totals_o −
    totals_s)/40 + A·seat_s + B·seat_o + C·context + b)``: the two seats'
    order reversed gives the complement, so the seats' values always add
    up to the same and their luck to 0."""

    def __init__(
        self, gap: list[float], own: list[list[float]], other: list[list[float]], context: list[list[float]],
        bias: list[float], out: list[float],
    ) -> None:  # fmt: skip
        self.gap = gap  # per hidden unit
        self.own = own  # [unit][input]
        self.other = other
        self.context = context
        self.bias = bias
        self.out = out

    def project(self, weights: list[list[float]], x: list[float]) -> list[float]:
        out: list[float] = []
        for row in weights:
            t = 0.0
            for k in range(len(row)):
                t += row[k] * x[k]
            out.append(t)
        return out

    def value(self, state: AllegraState, forfeited: frozenset[int]) -> list[float]:
        """``V`` of a state that is not terminal."""
        n = state.n
        seats, context = seat_inputs(state)
        base = self.project(self.context, context)
        hidden = len(self.bias)
        for h in range(hidden):
            base[h] += self.bias[h]
        own = [self.project(self.own, x) for x in seats]
        other = [self.project(self.other, x) for x in seats]
        gap, out = self.gap, self.out
        above = [[0.5] * n for _ in range(n)]
        for s in range(n):
            for o in range(s + 1, n):
                d = (state.totals[o] - state.totals[s]) / 40.0
                z = 0.0
                for h in range(hidden):
                    z += out[h] * (
                        math.tanh(gap[h] * d + own[s][h] + other[o][h] + base[h])
                        - math.tanh(-gap[h] * d + own[o][h] + other[s][h] + base[h])
                    )
                p = sigmoid(z)
                above[s][o] = p
                above[o][s] = 1.0 - p
        return mean_over_others(n, forfeited, above)


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


# -- Allegra's alternative outcomes ------------------------------------------
# A card's location in a state: ("s", i) table slot i; ("k", j) state.deck[j]
# (the top is the end); ("d", j) state.discard[j]; ("x", 0) the drawn card.
Loc = tuple[str, int]


def card_at(state: AllegraState, loc: Loc) -> int:
    kind, j = loc
    if kind == "s":
        return cast(int, state.val[j])
    if kind == "k":
        return state.deck[j]
    if kind == "d":
        return state.discard[j]
    return cast(int, state.drawn)


def put_card(state: AllegraState, loc: Loc, value: int) -> None:
    kind, j = loc
    if kind == "s":
        state.val[j] = value
    elif kind == "k":
        state.deck[j] = value
    elif kind == "d":
        state.discard[j] = value
    else:
        state.drawn = value


# Every place's Loc made once, so that a pile is a list of these (the deck's
# a slice) rather than of tuples made anew for every event: building a pile
# of about 90 places took 16 µs, as long as tallying it did before.
DECK_LOCS: Final[list[Loc]] = [("k", j) for j in range(len(CARDS))]
SLOT_LOCS: Final[list[Loc]] = [("s", i) for i in range(MAX_SLOTS)]


def deck_locations(cards: int) -> list[Loc]:
    """The places of a deck of ``cards`` cards, the bottom first."""
    return DECK_LOCS[:cards]


def face_down_locations(state: AllegraState) -> list[Loc]:
    val, upv = state.val, state.upv
    return [SLOT_LOCS[i] for i in range(state.lay.N) if upv[i] is None and val[i] is not None]


def pile_counts(base: AllegraState, pile: list[Loc]) -> tuple[dict[int, int], dict[int, Loc]]:
    """How many of a pile's cards hold each value, and the first place in
    the pile holding it (where an outcome's value is swapped from); both
    keyed by value from the lowest. Tallied by value in lists (``card_at``
    inlined): the pile may hold a hundred places."""
    low = VALUES[0]
    tally = [0] * len(VALUES)
    first = [0] * len(VALUES)
    deck, val, discard = base.deck, base.val, base.discard
    for i in range(len(pile)):
        kind, j = pile[i]
        if kind == "k":
            v = deck[j]
        elif kind == "s":
            v = cast(int, val[j])
        elif kind == "d":
            v = discard[j]
        else:
            v = cast(int, base.drawn)
        k = v - low
        if not tally[k]:
            first[k] = i
        tally[k] += 1
    counts: dict[int, int] = {}
    where: dict[int, Loc] = {}
    for k in range(len(VALUES)):
        if tally[k]:
            counts[low + k] = tally[k]
            where[low + k] = pile[first[k]]
    return counts, where


def exact_outcomes(
    base: AllegraState, loc: Loc, pile: list[Loc], after: Callable[[AllegraState], AllegraState]
) -> tuple[list[tuple[float, AllegraState]], int]:
    """Every value the card at ``loc`` (one of ``pile``) could have been,
    with its probability: ``base`` with that value swapped into ``loc`` from
    another card of the pile, then ``after`` applied; and the place in that
    list of the actual value (whose state is the actual one)."""
    actual = card_at(base, loc)
    counts, where = pile_counts(base, pile)
    total = len(pile)
    out: list[tuple[float, AllegraState]] = []
    actual_at = -1
    for value in sorted(counts):
        alt = base.clone()
        if value != actual:
            put_card(alt, where[value], actual)
            put_card(alt, loc, value)
        else:
            actual_at = len(out)
        out.append((counts[value] / total, after(alt)))
    return out, actual_at


# -- Allegory -----------------------------------------------------------------

# allegory-tales@1's weights: the built-in greedy bot's
W_SECOND: Final = 0.30
W_THIRD: Final = 0.10
EMPTY_TALE: Final = 6.0
PAIR: Final = 0.8
CHIP: Final = 0.12
POOL_SHARE: Final = 0.5
SPREAD_START: Final = 5.0
SPREAD_END: Final = 1.0


class Tales:
    """One seat's Tales tallied once, so that its smoothed score with each
    Pool card added (``worth``) costs the card, not the seat's whole hand.
    The score is the same float as tallying the hand with the card in it
    (its terms are added in the same order: the themes' terms in the order
    each theme is first met, Tale by Tale, the added card after its Tale's
    cards)."""

    def __init__(self, state: AllegoryState, seat: int) -> None:
        self.totals = [0, 0, 0]
        self.sizes = [0, 0, 0]
        self.counts = [0] * len(THEMES)  # cards by theme
        self.order: list[int] = []  # the themes, in the order first met
        self.first_tale = [3] * len(THEMES)  # the Tale each theme is first met in (3: none)
        self.upto = [0, 0, 0]  # how many themes are first met in Tales up to each one
        self.has_moral = [False, False, False]
        self.moral = state.morals[seat]
        self.moral_tales = 0
        self.chips = state.chips[seat]
        tales = state.tales[seat]
        for t in range(3):
            for c in tales[t]:
                self.totals[t] += CARD_VALUE[c]
                self.sizes[t] += 1
                theme = CARD_THEME[c]
                if not self.counts[theme]:
                    self.order.append(theme)
                    self.first_tale[theme] = t
                self.counts[theme] += 1
                if theme == self.moral:
                    self.has_moral[t] = True
            self.upto[t] = len(self.order)
            self.moral_tales += self.has_moral[t]

    def worth(self, extra: int = -1, chips: int = 0) -> float:
        """The seat's smoothed score, with the card ``extra`` (and its
        ``chips``) added when given."""
        totals, sizes = self.totals, self.sizes
        t0, t1, t2 = totals[0], totals[1], totals[2]
        empty0, empty1, empty2 = sizes[0] == 0, sizes[1] == 0, sizes[2] == 0
        moral_tales = self.moral_tales
        theme = -1
        tale = 3
        if extra >= 0:
            tale = CARD_TALE[extra]
            theme = CARD_THEME[extra]
            if tale == 0:
                t0 += CARD_VALUE[extra]
                empty0 = False
            elif tale == 1:
                t1 += CARD_VALUE[extra]
                empty1 = False
            else:
                t2 += CARD_VALUE[extra]
                empty2 = False
            if theme == self.moral and not self.has_moral[tale]:
                moral_tales += 1
        a, b, c = t0, t1, t2  # sorted
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
        if a > b:
            a, b = b, a
        score = a + W_SECOND * b + W_THIRD * c - EMPTY_TALE * (int(empty0) + int(empty1) + int(empty2))
        counts, order = self.counts, self.order
        if theme >= 0 and self.first_tale[theme] > tale:  # first met now: after the themes of the Tales up to its own
            k = self.upto[tale]
            for i in range(k):
                score += theme_term(counts[order[i]])
            score += theme_term(counts[theme] + 1)
            for i in range(k, len(order)):
                if order[i] != theme:
                    score += theme_term(counts[order[i]])
        else:
            for x in order:
                score += theme_term(counts[x] + 1 if x == theme else counts[x])
        return score + moral_tales + CHIP * (self.chips + chips)


def theme_term(count: int) -> float:
    """What a theme's cards add: 2 per set of three, ``PAIR`` for a pair left over."""
    return 2 * (count // 3) + (PAIR if count % 3 == 2 else 0.0)


def tales_worth(state: AllegoryState, seat: int, extra: int = -1, chips: int = 0) -> float:
    """A seat's smoothed score, with the card ``extra`` (and its ``chips``) added when given."""
    return Tales(state, seat).worth(extra, chips)


def tales_value(state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
    """``allegory-tales@1``'s ``V`` of a state that is not terminal."""
    n = state.n
    worths: list[float] = []
    for s in range(n):
        tales = Tales(state, s)
        base = tales.worth()
        best = 0.0
        for card, chips in zip(state.pool, state.pchips):
            gain = tales.worth(card, chips) - base
            if gain > best:
                best = gain
        worths.append(base + POOL_SHARE * best)
    most = 0
    for x in state.ncards:
        if x > most:
            most = x
    left = max(0, CARDS_TO_END - most) / CARDS_TO_END
    spread = SPREAD_END + (SPREAD_START - SPREAD_END) * left
    var = [spread * spread / 2] * n  # the difference's spread is ``spread``
    return points(worths, var, forfeited, False)


# -- Allegory: allegory-net@1, a value learned from play ----------------------
# (cardroom.luck.allegory.NetAllegoryValue names and documents it; the weights
# are fitted by benchmarks/luck_fit.py allegory-net.) Its features read only
# what the chance model has revealed: every seat's Tales, Moral and chips, the
# Pool, the bids, and the cards still unseen as a multiset (the deck's order
# and which card is where in it are never read).

NET_SEAT_FEATURES: Final = 24
NET_SHARED_FEATURES: Final = 10


def unseen_by_tale(state: AllegoryState) -> tuple[list[int], list[int]]:
    """Per Tale, how many cards no one has seen yet belong to it, and their values' sum."""
    count = [0, 0, 0]
    total = [0, 0, 0]
    for c in state.deck:  # as a multiset: only which cards, never where
        t = CARD_TALE[c]
        count[t] += 1
        total[t] += CARD_VALUE[c]
    return count, total


def net_seat_features(
    state: AllegoryState, seat: int, unseen_count: list[int], unseen_total: list[int], claimable: list[bool]
) -> list[float]:
    """One seat's features for allegory-net@1 (``NET_SEAT_FEATURES`` of them)."""
    tales = Tales(state, seat)
    totals, sizes = tales.totals, tales.sizes
    low, mid, high = 0, 1, 2  # the Tales by total, lowest first (ties by Tale)
    if totals[low] > totals[mid]:
        low, mid = mid, low
    if totals[mid] > totals[high]:
        mid, high = high, mid
    if totals[low] > totals[mid]:
        low, mid = mid, low
    empty = int(sizes[0] == 0) + int(sizes[1] == 0) + int(sizes[2] == 0)
    sets = 0
    pairs = 0
    for x in tales.order:
        k = tales.counts[x]
        sets += k // 3
        if k % 3 == 2:
            pairs += 1
    base = tales.worth()
    best = 0.0
    second = 0.0
    best_claim = 0.0
    for i in range(len(state.pool)):
        gain = tales.worth(state.pool[i], state.pchips[i]) - base
        if gain > best:
            second = best
            best = gain
        elif gain > second:
            second = gain
        if claimable[i] and gain > best_claim:
            best_claim = gain
    n = state.n
    cur = state.cur
    lows = unseen_count[low]
    return [
        float(totals[low]),
        float(totals[mid]),
        float(totals[high]),
        float(sizes[low]),
        float(empty),
        float(empty == 0),
        float(sets),
        float(pairs),
        float(tales.moral_tales),
        float(totals[low] + SET_BONUS * sets + tales.moral_tales),
        float(state.chips[seat]),
        float(state.ncards[seat]),
        base,
        best,
        second,
        best_claim,
        float(state.bids[seat]),
        float(state.rested[seat]),
        float(state.hbidder == seat),
        float(cur == seat and 0 < state.phase < 4),
        float(state.winner == seat and state.phase > 1),
        float((seat - cur) % n) / n,
        float(lows),
        unseen_total[low] / lows if lows else 0.0,
    ]


def net_shared_features(state: AllegoryState) -> list[float]:
    """What the seats share, for allegory-net@1 (``NET_SHARED_FEATURES`` of them)."""
    most = 0
    for x in state.ncards:
        if x > most:
            most = x
    pool_chips = 0
    for k in state.pchips:
        pool_chips += k
    phase = state.phase
    return [
        float(phase == 1),
        float(phase == 2),
        float(phase == 3),
        float(CARDS_TO_END - most),
        float(len(state.deck)),
        float(state.round == 1),
        float(state.high),
        float(pool_chips),
        float(len(state.pool)),
        float(state.n),
    ]


def net_claimable(state: AllegoryState) -> list[bool]:
    """Which Pool cards a Resting seat may claim (the engine's rule, read not called)."""
    pc = state.pchips
    most = 0
    for k in pc:
        if k > most:
            most = k
    story = state.round > 1 and most > 0
    return [story and k == most for k in pc]


class AllegoryNet:
    """allegory-net@1's weights and evaluation: a one-hidden-layer network
    of the pair (seat ``s``, seat ``o``) and the shared features gives the
    log-odds that ``s`` finishes above ``o``; ``above[s][o]`` is the mean
    of its probability and one minus the pair's other way round (so the
    two add up to 1), and ``V_s`` the mean over the other seats (rank
    points). The first layer is split by its inputs (``own``: s's
    features, ``other``: o's, ``shared``), each seat's parts computed once,
    in one pass over its features (the weights flat, unit by unit: this
    loop is most of ``V``'s cost). The inputs' standardisation is folded
    into the weights."""

    def __init__(
        self, own: list[list[float]], other: list[list[float]], shared: list[list[float]], bias: list[float],
        out: list[float], out_bias: float,
    ) -> None:  # fmt: skip
        self.own = [w for row in own for w in row]  # unit h's weight on feature i at h * NET_SEAT_FEATURES + i
        self.other = [w for row in other for w in row]
        self.shared = [w for row in shared for w in row]
        self.bias = bias
        self.out = out
        self.out_bias = out_bias
        self.hidden = len(bias)
        if self.hidden % 4:
            raise ValueError("allegory-net's hidden units come in fours (value() takes them four at a time)")

    def value(self, state: AllegoryState, forfeited: frozenset[int]) -> list[float]:
        """``V`` of a state that is not terminal."""
        n = state.n
        hidden = self.hidden
        count, total = unseen_by_tale(state)
        claimable = net_claimable(state)
        g = net_shared_features(state)
        shared: list[float] = []
        for h in range(hidden):
            acc = self.bias[h]
            at = h * NET_SHARED_FEATURES
            for i in range(NET_SHARED_FEATURES):
                acc += self.shared[at + i] * g[i]
            shared.append(acc)
        own: list[list[float]] = []  # own[s][h]: unit h's input from s as the first of the pair, the shared part in it
        other: list[list[float]] = []
        wa, wb = self.own, self.other
        for s in range(n):
            x = net_seat_features(state, s, count, total, claimable)
            at_x: list[int] = []  # the features that are not 0 (most flags are not set): only they add anything
            nonzero: list[float] = []
            for i in range(NET_SEAT_FEATURES):
                if x[i] != 0.0:
                    at_x.append(i)
                    nonzero.append(x[i])
            m = len(at_x)
            a: list[float] = []
            b: list[float] = []
            # four units at a time (each feature read once for the four;
            # each unit's sum still in the features' order)
            for h in range(0, hidden, 4):
                a0, a1, a2, a3 = shared[h], shared[h + 1], shared[h + 2], shared[h + 3]
                b0 = b1 = b2 = b3 = 0.0
                at0 = h * NET_SEAT_FEATURES
                at1 = at0 + NET_SEAT_FEATURES
                at2 = at1 + NET_SEAT_FEATURES
                at3 = at2 + NET_SEAT_FEATURES
                for j in range(m):
                    xi = nonzero[j]
                    i = at_x[j]
                    a0 += wa[at0 + i] * xi
                    b0 += wb[at0 + i] * xi
                    a1 += wa[at1 + i] * xi
                    b1 += wb[at1 + i] * xi
                    a2 += wa[at2 + i] * xi
                    b2 += wb[at2 + i] * xi
                    a3 += wa[at3 + i] * xi
                    b3 += wb[at3 + i] * xi
                a += [a0, a1, a2, a3]
                b += [b0, b1, b2, b3]
            own.append(a)
            other.append(b)
        out = self.out
        p = [[0.0] * n for _ in range(n)]  # p[s][o]: the network's probability that s finishes above o
        for s in range(n):
            a = own[s]
            for o in range(n):
                if o == s:
                    continue
                b = other[o]
                z = self.out_bias
                for h in range(hidden):
                    u = a[h] + b[h]
                    if u > 0.0:
                        z += out[h] * u
                p[s][o] = clamped_logistic(z)
        return pair_points(n, forfeited, p)


def clamped_logistic(z: float) -> float:
    """allegory-net@1's probability from its log-odds ``z``, clamped to ±40."""
    if z > 40.0:
        z = 40.0
    elif z < -40.0:
        z = -40.0
    return 1.0 / (1.0 + math.exp(-z))


def pair_points(n: int, forfeited: frozenset[int], p: list[list[float]]) -> list[float]:
    """Rank points from a network's ``p[s][o]`` (the probability that ``s``
    finishes above ``o``): ``above[s][o]`` the mean of it and one minus the
    pair the other way round (so the two add up to 1)."""
    above = [[0.0] * n for _ in range(n)]
    for s in range(n):
        for o in range(n):
            if o != s:
                above[s][o] = 0.5 * (p[s][o] + (1.0 - p[o][s]))
    return mean_over_others(n, forfeited, above)
