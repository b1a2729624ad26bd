"""Allegra: Golf with shared columns (rules and rulings: docs/rules-allegra.md).

The table is kept in flat lists indexed by slot number
``seat * CELLS + row * COLS + col`` (``CELLS = ROWS * COLS``). For every slot we
keep its card value (``None`` when the slot is empty) and, in a second list,
the value again when the card is face up (``None`` when it is face down or the
slot is empty); triples only look at the second list. Per-seat counters of
face-down and empty slots (own grid and own last column) make "is this area
all face up?" and "how many occupied slots?" O(1).

Every action dict handed out is a shared module-level constant: never mutate
one. Legal action order (the default policy relies on it) is documented in
``AllegraState.legal_actions``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from importlib import resources
from typing import Any, Final

from engine.core import Action, EngineError, Game, IllegalActionError, State, Unchecked

# --------------------------------------------------------------------------
# card and table data (engine/allegra/cards.json)
# --------------------------------------------------------------------------
_DATA = json.loads(resources.files(__package__).joinpath("cards.json").read_text(encoding="utf-8"))
CARD_COUNTS: Final[dict[int, int]] = {int(k): int(v) for k, v in _DATA["values"].items()}
CARDS: Final[tuple[int, ...]] = tuple(v for v in sorted(CARD_COUNTS) for _ in range(CARD_COUNTS[v]))
NUM_CARDS: Final = len(CARDS)
ROWS: Final[int] = int(_DATA["grid"]["rows"])
COLS: Final[int] = int(_DATA["grid"]["cols"])
CELLS: Final = ROWS * COLS
LAST: Final = COLS - 1  # the shared column
ROUNDS: Final[int] = int(_DATA["rounds"])
REVEALS: Final[int] = int(_DATA["reveals"])
MIN_PLAYERS: Final[int] = int(_DATA["min_players"])
MAX_PLAYERS: Final[int] = int(_DATA["max_players"])
AREA_SIZE: Final = CELLS + ROWS
# the platform's turn limit (rulings): a round with no ender ends after its
# TURN_LIMIT_PER_PLAYER * n-th turn
TURN_LIMIT_PER_PLAYER: Final = 200
# the most decisions of one turn (the bounds on a game's length): the seat
# whose turn it is draws, uses the drawn card (swap, discard or give) and
# exchanges; each other seat answers the draw (knock or pass, 3+ players),
# and the knocker given the card places it
ACTIVE_DECISIONS_PER_TURN: Final = 3
ANSWERS_PER_TURN: Final = 1
PLACES_PER_TURN: Final = 1
_SORTED_CARDS: Final = sorted(CARDS)
MAX_SLOTS: Final = MAX_PLAYERS * CELLS

# phases (internal codes and their observation names)
DEAL: Final = 0
SHUFFLE: Final = 1
REVEAL: Final = 2
TURN: Final = 3
KNOCK: Final = 4
DRAWN: Final = 5
PLACE: Final = 6
EXCHANGE: Final = 7
OVER: Final = 8
PHASE_NAMES: Final = ("deal", "deal", "reveal", "turn", "knock", "drawn", "place", "exchange", "over")

# --------------------------------------------------------------------------
# shared constant actions (never mutate)
# --------------------------------------------------------------------------


def _slot_list(i: int) -> list[int]:
    return [i // CELLS, (i % CELLS) // COLS, i % COLS]


SLOT_OF: Final[tuple[tuple[int, int, int], ...]] = tuple(tuple(_slot_list(i)) for i in range(MAX_SLOTS))  # type: ignore[misc]

DRAW: Final[Action] = {"type": "draw"}
KNOCK_A: Final[Action] = {"type": "knock"}
PASS_A: Final[Action] = {"type": "pass"}
DISCARD_NONE: Final[Action] = {"type": "discard", "flip": None}
REVEAL_A: Final = tuple({"type": "reveal", "slot": _slot_list(i)} for i in range(MAX_SLOTS))
TAKE_A: Final = tuple({"type": "take_discard", "slot": _slot_list(i)} for i in range(MAX_SLOTS))
SWAP_A: Final = tuple({"type": "swap", "slot": _slot_list(i)} for i in range(MAX_SLOTS))
FLIP_A: Final = tuple({"type": "discard", "flip": _slot_list(i)} for i in range(MAX_SLOTS))
PLACE_A: Final = tuple({"type": "place", "slot": _slot_list(i)} for i in range(MAX_SLOTS))
GIVE_A: Final = tuple({"type": "give", "to": s} for s in range(MAX_PLAYERS))
_EXCHANGE_CACHE: Final[dict[int, Action]] = {}


def exchange_action(q: int, r: int) -> Action:
    key = q * MAX_SLOTS + r
    a = _EXCHANGE_CACHE.get(key)
    if a is None:
        a = _EXCHANGE_CACHE[key] = {"type": "exchange", "take": _slot_list(q), "put": _slot_list(r)}
    return a


# --------------------------------------------------------------------------
# table layout per player count
# --------------------------------------------------------------------------


class Layout:
    """Precomputed geometry for ``n`` seats (shared by every state)."""

    def __init__(self, n: int):
        self.n = n
        self.N = N = n * CELLS
        self.nb = tuple((s + 1) % n for s in range(n))  # left-hand neighbour: its last column is in my area
        areas = []
        for s in range(n):
            j = self.nb[s]
            own = [s * CELLS + i for i in range(CELLS)]
            col = [j * CELLS + r * COLS + LAST for r in range(ROWS)]
            areas.append(tuple(own + col))
        self.area = tuple(areas)
        self.in_area = tuple(bytes(1 if i in set(a) else 0 for i in range(N)) for a in areas)
        lines: list[tuple[int, ...]] = []
        seen = set()
        for s in range(n):
            j = self.nb[s]
            cand = []
            for r in range(ROWS):
                cand.append((j * CELLS + r * COLS + LAST,) + tuple(s * CELLS + r * COLS + c for c in range(COLS)))
            cand.append(tuple(j * CELLS + r * COLS + LAST for r in range(ROWS)))
            for c in range(COLS):
                cand.append(tuple(s * CELLS + r * COLS + c for r in range(ROWS)))
            for line in cand:
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
        self.lines = tuple(lines)
        slot_lines: list[list[tuple[tuple[int, ...], int, int]]] = [[] for _ in range(N)]
        for line in lines:
            for p, i in enumerate(line):
                slot_lines[i].append((line, p, len(line) - 1))
        self.slot_lines = tuple(tuple(x) for x in slot_lines)
        # turn order of the final turns when seat a triggers the end and seat e is the ender
        self.single = tuple((s,) for s in range(n))
        self.prev = tuple((s - 1) % n for s in range(n))
        self.order_from = tuple(tuple((a + k) % n for k in range(n)) for a in range(n))

    def __reduce__(self) -> tuple[Any, ...]:
        return (layout, (self.n,))  # one layout a player count, shared again after unpickling


_LAYOUTS: Final[dict[int, Layout]] = {}


def layout(n: int) -> Layout:
    lay = _LAYOUTS.get(n)
    if lay is None:
        lay = _LAYOUTS[n] = Layout(n)
    return lay


def _illegal(seat: Any, action: Any, reason: str) -> IllegalActionError:
    return IllegalActionError(seat, action, reason)


# --------------------------------------------------------------------------
# the game
# --------------------------------------------------------------------------


class AllegraGame(Game):
    id = "allegra"
    name = "Allegra"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    option_specs = {}
    lower_scores_win = True  # the lowest total wins

    def new_initial_state(self) -> AllegraState:
        return AllegraState(self)

    def max_turns_per_seat(self) -> int:
        """The most turns one seat takes in a round: the turn limit ends a
        round with no ender after its TURN_LIMIT_PER_PLAYER * n-th turn, and
        an ender's round after at most n - 1 more turns."""
        return TURN_LIMIT_PER_PLAYER + 1

    def max_game_length(self) -> int:
        n = self.num_players
        per_turn = ACTIVE_DECISIONS_PER_TURN + (n - 1) * ANSWERS_PER_TURN + PLACES_PER_TURN
        return ROUNDS * (REVEALS * n + n * self.max_turns_per_seat() * per_turn)

    def max_decisions_per_seat(self) -> int:
        # its reveals, its own turns, and in the others' turns an answer
        # and a place each
        own = self.max_turns_per_seat()
        others = (self.num_players - 1) * own
        return ROUNDS * (REVEALS + ACTIVE_DECISIONS_PER_TURN * own + (ANSWERS_PER_TURN + PLACES_PER_TURN) * others)


class AllegraState(State):
    __slots__ = (
        "game", "n", "lay", "round", "phase", "active", "to_act_", "val", "upv",
        "fd_own", "fd_last", "emp_own", "emp_last", "deck", "discard", "removed",
        "drawn", "answers", "knockers", "give_ok", "knocker", "P", "held", "held_public",
        "qs", "rs", "reveal_seat", "reveal_count", "ender", "queue", "final",
        "totals", "round_scores", "raw_scores", "enders", "doubled", "turns", "turn_limit",
        "limit_ends",
    )  # fmt: skip

    def __new__(cls, *args: Any) -> AllegraState:
        # allocation alone: clone() makes a blank state this way, without __init__
        return object.__new__(cls)

    def __init__(self, game: AllegraGame):
        self.game = game
        n = self.n = game.num_players
        self.lay = layout(n)
        N = self.lay.N
        self.round = 1
        self.phase = DEAL
        self.active = 0
        self.to_act_: tuple[int, ...] = ()
        self.val: list[int | None] = [None] * N
        self.upv: list[int | None] = [None] * N
        self.fd_own = [0] * n
        self.fd_last = [0] * n
        self.emp_own = [CELLS] * n
        self.emp_last = [ROWS] * n
        self.deck: list[int] = []  # top of the deck is the END of the list
        self.discard: list[int] = []  # bottom first, top last
        self.removed: list[int] = []
        self.drawn: int | None = None
        self.answers: list[bool | None] = [None] * n
        self.knockers: list[int] = []
        self.give_ok: list[int] = []
        self.knocker: int | None = None
        self.P: int | None = None
        self.held: int | None = None
        self.held_public = False
        self.qs: list[int] = []
        self.rs: list[int] = []
        self.reveal_seat = 0
        self.reveal_count = 0
        self.ender: int | None = None
        self.queue: list[int] = []
        self.final = False
        self.totals = [0] * n
        self.round_scores: list[list[int]] = []
        self.raw_scores: list[list[int]] = []
        self.enders: list[int | None] = []
        self.doubled: list[bool] = []
        # the platform's turn limit (rulings): complete turns of this round so
        # far, and the count after which a round with no ender ends
        self.turns = 0
        self.turn_limit = TURN_LIMIT_PER_PLAYER * n
        self.limit_ends: list[bool] = []

    # -- building a state from a view -------------------------------------
    @classmethod
    def from_view(
        cls, game: AllegraGame, view: Unchecked, final_queue: Unchecked = None, held_public: Unchecked = False
    ) -> AllegraState:
        """The state a spectator's full view shows (``observation(None)``:
        every card's value, ``face_down``, the ``deck`` top first, the knock
        ``answers``), at a decision or at the end (not at a chance node).

        The view does not show three things, which are arguments here:
        ``final_queue``, during the final turns the seats still to play after
        the active one, in order (required then); ``held_public``, whether
        the knocker's held card was face up (everyone sees it) or face down
        (the knocker alone does); and the score details of earlier rounds
        (their round scores are taken as the area sums, with no ender and
        nothing doubled: only ``score_details`` shows them). The card counts,
        the table's counters, the exchange's choices and the opening reveals
        done are rebuilt from the view, which is checked (every card exactly
        once, the phase, seats and turn consistent): a view no state has
        raises EngineError.
        """
        n = game.num_players
        if view.get("game") != game.id or view.get("num_players") != n:
            raise EngineError(f"the view is not of a {n}-player {game.id} game")
        phase_name = view.get("phase")
        if phase_name not in PHASE_NAMES[REVEAL:]:
            raise EngineError(f"a state is built from a view at a decision or at the end, not in phase {phase_name!r}")
        st = cls(game)
        lay = st.lay
        try:
            st.phase = phase = PHASE_NAMES.index(phase_name)
            st.round = int(view["round"])
            st.active = a = int(view["active"])
            st.to_act_ = tuple(int(s) for s in view["to_act"])
            cells = [v for grid in view["grids"] for row in grid for v in row]
            st.val = [None if v is None else int(v) for v in cells]
            st.upv = st.val[:]
            for s_, r_, c_ in view["face_down"]:
                st.upv[s_ * CELLS + r_ * COLS + c_] = None
            st.discard = [int(v) for v in view["discard"]]
            st.deck = [int(v) for v in reversed(view["deck"])]
            st.removed = [int(v) for v in view["removed"]]
            st.drawn = None if view["drawn"] is None else int(view["drawn"])
            st.knockers = [int(k) for k in view["knockers"]] if phase != KNOCK else []
            if phase == KNOCK:
                st.answers = [None if x is None else x == "knock" for x in view["answers"]]
            st.knocker = None if view["knocker"] is None else int(view["knocker"])
            if phase == EXCHANGE:
                st.P = SLOT_OF.index(tuple(view["placed"]))
                st.held = int(view["held"]["card"])
            st.ender = None if view["ender"] is None else int(view["ender"])
            st.final = bool(view["final_turns"])
            st.totals = [int(t) for t in view["scores"]]
            st.round_scores = [[int(x) for x in r] for r in view["round_scores"]]
            st.turns = int(view["turn"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise EngineError(f"not a full Allegra view: {exc!r}") from None
        if len(st.val) != lay.N or not 0 <= a < n or len(st.totals) != n or len(st.answers) != n:
            raise EngineError("the view's table does not fit the number of players")
        if int(view.get("turn_limit", -1)) != st.turn_limit:
            raise EngineError(f"the turn limit is {st.turn_limit}, not {view.get('turn_limit')!r}")
        st._recount()
        if st.card_count() != Counter(CARDS):
            raise EngineError(f"the view does not hold each of the {NUM_CARDS} cards exactly once")
        st.raw_scores = [r[:] for r in st.round_scores]
        st.enders = [None] * len(st.round_scores)
        st.doubled = [False] * len(st.round_scores)
        st.limit_ends = [False] * len(st.round_scores)
        st.held_public = bool(held_public) if st.held is not None else False
        if phase == DRAWN:
            st.give_ok = [k for k in st.knockers if st._area_occ(k)]
        elif phase == EXCHANGE:
            k, P = st.knocker, st.P
            st.qs = [i for i in lay.area[k] if st.val[i] is not None and i != P]  # type: ignore[index]
            st.rs = [i for i in lay.area[a] if st.val[i] is not None and i != P]
        elif phase == REVEAL:
            done = sum(1 for v in st.upv if v is not None) + len(st.removed)
            st.reveal_seat, st.reveal_count = divmod(done, REVEALS)
            if st.reveal_seat != a:
                raise EngineError(f"{done} opening reveals are done: seat {st.reveal_seat} reveals, not seat {a}")
        if st.final and phase != OVER:
            if final_queue is None:
                raise EngineError("during the final turns the seats still to play (final_queue) must be given")
            st.queue = [int(s) for s in final_queue]
            if len(set(st.queue)) != len(st.queue) or st.ender in st.queue or a in st.queue:
                raise EngineError(f"final_queue {final_queue!r} does not fit ender {st.ender} and active seat {a}")
        expected = {
            REVEAL: (a,), TURN: (a,), DRAWN: (a,), EXCHANGE: (a,), OVER: (),
            PLACE: (st.knocker,),
        }.get(phase)  # fmt: skip
        if phase == KNOCK:
            expected = tuple(s for s in lay.order_from[a][1:] if st.answers[s] is None)
            if n < 3 or st.answers[a] is not None or not expected:
                raise EngineError("the knock answers do not fit the phase")
        if st.to_act_ != expected:
            raise EngineError(f"in phase {phase_name!r} seats {list(expected or ())} act, not {list(st.to_act_)}")
        return st

    # -- copying ---------------------------------------------------------
    def clone(self) -> AllegraState:
        c = AllegraState.__new__(AllegraState)
        c.game = self.game
        c.n = self.n
        c.lay = self.lay
        c.round = self.round
        c.phase = self.phase
        c.active = self.active
        c.to_act_ = self.to_act_
        c.val = self.val[:]
        c.upv = self.upv[:]
        c.fd_own = self.fd_own[:]
        c.fd_last = self.fd_last[:]
        c.emp_own = self.emp_own[:]
        c.emp_last = self.emp_last[:]
        c.deck = self.deck[:]
        c.discard = self.discard[:]
        c.removed = self.removed[:]
        c.drawn = self.drawn
        c.answers = self.answers[:]
        c.knockers = self.knockers[:]
        c.give_ok = self.give_ok[:]
        c.knocker = self.knocker
        c.P = self.P
        c.held = self.held
        c.held_public = self.held_public
        c.qs = self.qs[:]
        c.rs = self.rs[:]
        c.reveal_seat = self.reveal_seat
        c.reveal_count = self.reveal_count
        c.ender = self.ender
        c.queue = self.queue[:]
        c.final = self.final
        c.totals = self.totals[:]
        c.round_scores = [r[:] for r in self.round_scores]
        c.raw_scores = [r[:] for r in self.raw_scores]
        c.enders = self.enders[:]
        c.doubled = self.doubled[:]
        c.turns = self.turns
        c.turn_limit = self.turn_limit
        c.limit_ends = self.limit_ends[:]
        return c

    # -- whose turn ------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == OVER

    def is_chance_node(self) -> bool:
        return self.phase <= SHUFFLE

    def to_act(self) -> list[int]:
        return list(self.to_act_)

    # -- small helpers ---------------------------------------------------
    def _area_fd(self, s: int) -> int:
        return self.fd_own[s] + self.fd_last[self.lay.nb[s]]

    def _area_occ(self, s: int) -> int:
        return AREA_SIZE - self.emp_own[s] - self.emp_last[self.lay.nb[s]]

    def _can_draw(self) -> bool:
        return bool(self.deck) or len(self.discard) > 1

    def _occupied(self, s: int) -> list[int]:
        val = self.val
        return [i for i in self.lay.area[s] if val[i] is not None]

    def _face_down(self, s: int) -> list[int]:
        val, upv = self.val, self.upv
        return [i for i in self.lay.area[s] if upv[i] is None and val[i] is not None]

    def _put(self, i: int, v: int) -> int:
        """Put card ``v`` face up into occupied slot ``i``; returns the card
        that was there."""
        old = self.val[i]
        if self.upv[i] is None:  # was face down
            s = i // CELLS
            self.fd_own[s] -= 1
            if i % COLS == LAST:
                self.fd_last[s] -= 1
        self.val[i] = v
        self.upv[i] = v
        return old  # type: ignore[return-value]

    def _flip(self, i: int) -> None:
        self.upv[i] = self.val[i]
        s = i // CELLS
        self.fd_own[s] -= 1
        if i % COLS == LAST:
            self.fd_last[s] -= 1

    def _triples(self, slots: tuple[int, ...] | list[int]) -> None:
        """Remove every run of 3+ adjacent equal face-up cards through ``slots``
        (no other run can be new: the table never holds a triple between
        changes, and removing cards cannot create one)."""
        upv = self.upv
        rem: set[int] | None = None
        for x in slots:
            v = upv[x]
            if v is None:
                continue
            for line, p, last in self.lay.slot_lines[x]:
                lo = p
                while lo and upv[line[lo - 1]] == v:
                    lo -= 1
                hi = p
                while hi < last and upv[line[hi + 1]] == v:
                    hi += 1
                if hi - lo >= 2:
                    if rem is None:
                        rem = set()
                    rem.update(line[lo : hi + 1])
        if rem:
            self._remove(rem)

    def _remove(self, slots: set[int]) -> None:
        val, upv = self.val, self.upv
        for i in sorted(slots):
            self.removed.append(val[i])  # type: ignore[arg-type]
            val[i] = None
            upv[i] = None
            s = i // CELLS
            self.emp_own[s] += 1
            if i % COLS == LAST:
                self.emp_last[s] += 1

    def _all_triples(self) -> None:
        upv = self.upv
        rem: set[int] = set()
        for line in self.lay.lines:
            L = len(line)
            a = 0
            while a < L:
                v = upv[line[a]]
                b = a + 1
                if v is not None:
                    while b < L and upv[line[b]] == v:
                        b += 1
                    if b - a >= 3:
                        rem.update(line[a:b])
                a = b
        if rem:
            self._remove(rem)

    def _parse_slot(self, seat: Unchecked, action: Action, key: str) -> int:
        slot = action.get(key)
        if type(slot) is list and len(slot) == 3:
            s, r, c = slot
            if type(s) is int and type(r) is int and type(c) is int:
                if 0 <= s < self.n and 0 <= r < ROWS and 0 <= c < COLS:
                    return s * CELLS + r * COLS + c
                raise _illegal(seat, action, f"{key!r} {slot} is not a slot of this table")
            raise _illegal(seat, action, f"{key!r} must hold three integers")
        raise _illegal(seat, action, f"{key!r} must be a slot [seat, row, col]")

    # -- chance ----------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> Action:
        if self.phase == DEAL:
            deck = list(CARDS)
        elif self.phase == SHUFFLE:
            deck = self.discard[:-1]
        else:
            raise EngineError("no chance event is due")
        # a uniform shuffle: sort by independent random keys (faster than
        # rng.shuffle for 120 cards; ties have probability ~0), in the order
        # of the pairs (key, card) without making the pairs: the positions
        # sorted by card, then (a stable sort) by key
        rnd = rng.random
        keys = [rnd() for _ in deck]
        order = sorted(range(len(deck)), key=deck.__getitem__)
        order.sort(key=keys.__getitem__)
        deck = [deck[i] for i in order]
        return {"type": "deal" if self.phase == DEAL else "reshuffle", "deck": deck}

    def chance_kind(self) -> str:
        return "deal" if self.phase == DEAL else "reshuffle"

    def apply_chance(self, action: Unchecked) -> None:
        phase = self.phase
        if phase > SHUFFLE:
            raise _illegal("chance", action, "no chance event is due")
        want = "deal" if phase == DEAL else "reshuffle"
        if not isinstance(action, dict) or action.get("type") != want or set(action) != {"type", "deck"}:
            raise _illegal("chance", action, f"the chance event due is {{'type': {want!r}, 'deck': [...]}}")
        deck = action["deck"]
        if type(deck) is not list or not all(type(v) is int for v in deck):
            raise _illegal("chance", action, "the deck must be a list of card values")
        if phase == DEAL:
            if len(deck) != NUM_CARDS or sorted(deck) != _SORTED_CARDS:
                raise _illegal("chance", action, f"the deal must be a permutation of the {NUM_CARDS} cards")
            self._deal(deck)
        else:
            below = self.discard[:-1]
            if len(deck) != len(below) or Counter(deck) != Counter(below):
                raise _illegal(
                    "chance", action, "a reshuffle must be a permutation of the discard pile below its top card"
                )
            self.discard = self.discard[-1:]
            self.deck = deck[::-1]
            self.drawn = self.deck.pop()
            self._after_draw()

    def _deal(self, deck: list[int]) -> None:
        n = self.n
        N = self.lay.N
        self.val = deck[:N]  # type: ignore[assignment]
        self.upv = [None] * N
        self.fd_own = [CELLS] * n
        self.fd_last = [ROWS] * n
        self.emp_own = [0] * n
        self.emp_last = [0] * n
        self.discard = [deck[N]]
        self.deck = deck[:N:-1]
        self.removed = []
        self.drawn = None
        self.answers = [None] * n
        self.knockers = []
        self.give_ok = []
        self.knocker = self.P = self.held = None
        self.held_public = False
        self.qs = []
        self.rs = []
        self.ender = None
        self.queue = []
        self.final = False
        self.turns = 0
        self.phase = REVEAL
        self.reveal_seat = 0
        self.reveal_count = 0
        self.active = 0
        self.to_act_ = (0,)

    # -- turn flow -------------------------------------------------------
    def _begin_turn(self) -> None:
        """Start the active seat's turn (a seat with no legal turn action --
        empty area and nothing to draw -- has its turn passed)."""
        while True:
            a = self.active
            if self._can_draw() or self._area_occ(a):
                self.phase = TURN
                self.to_act_ = self.lay.single[a]
                return
            if not self._next_turn():
                return

    def _end_turn(self) -> None:
        self.drawn = None
        self.knocker = self.P = self.held = None
        if self.ender is None and self.turns + 1 < self.turn_limit:
            # fast path of _next_turn + _begin_turn for the usual case (no
            # ender yet and the turn limit not reached by this turn)
            lay = self.lay
            nb = lay.nb
            fd_own, fd_last = self.fd_own, self.fd_last
            for s in lay.order_from[self.active]:
                if fd_own[s] + fd_last[nb[s]] == 0:
                    break
            else:
                a = self.active = nb[self.active]
                self.turns += 1
                if self.deck or len(self.discard) > 1 or self.emp_own[a] + self.emp_last[nb[a]] < AREA_SIZE:
                    self.phase = TURN
                    self.to_act_ = lay.single[a]
                    return
                # the next seat cannot act: the general path passes its turn
                self.active = lay.prev[a]
                self.turns -= 1
        if self._next_turn():
            self._begin_turn()

    def _next_turn(self) -> bool:
        """After a complete turn: fix the ender if due, move to the next
        seat; returns False when the round is over. A passed turn counts
        as a turn (the turn limit counts every kind of turn once)."""
        a = self.active
        self.turns += 1
        if self.ender is None:
            nb = self.lay.nb
            fd_own, fd_last = self.fd_own, self.fd_last
            for s in self.lay.order_from[a]:
                if fd_own[s] + fd_last[nb[s]] == 0:
                    self.ender = s
                    self.final = True
                    self.queue = [t for t in self.lay.order_from[a][1:] + (a,) if t != s]
                    break
            else:
                if self.turns >= self.turn_limit:
                    # the turn limit: the round ends with no ender
                    self._end_round(at_limit=True)
                    return False
                self.active = (a + 1) % self.n
                return True
        if not self.queue:
            self._end_round()
            return False
        self.active = self.queue.pop(0)
        return True

    def _end_round(self, at_limit: bool = False) -> None:
        val, upv = self.val, self.upv
        for i in range(self.lay.N):
            if upv[i] is None and val[i] is not None:
                self._flip(i)
        self._all_triples()
        raw = []
        for s in range(self.n):
            t = 0
            for i in self.lay.area[s]:
                v = val[i]
                if v is not None:
                    t += v
            raw.append(t)
        scores = raw[:]
        e = self.ender
        dbl = False
        if e is not None and raw[e] > 0 and any(raw[s] < raw[e] for s in range(self.n) if s != e):
            scores[e] = 2 * raw[e]
            dbl = True
        self.raw_scores.append(raw)
        self.round_scores.append(scores)
        self.enders.append(e)
        self.doubled.append(dbl)
        self.limit_ends.append(at_limit)
        for s in range(self.n):
            self.totals[s] += scores[s]
        self.to_act_ = ()
        self.drawn = None
        if self.round >= ROUNDS:
            self.phase = OVER
        else:
            self.round += 1
            self.phase = DEAL

    def _after_draw(self) -> None:
        n = self.n
        a = self.active
        if n >= 3:
            self.phase = KNOCK
            self.answers = [None] * n
            self.knockers = []
            self.to_act_ = self.lay.order_from[a][1:]
        else:
            self.knockers = []
            self.give_ok = []
            self.phase = DRAWN
            self.to_act_ = (a,)

    def _enter_exchange(self) -> None:
        k, a, P = self.knocker, self.active, self.P
        val = self.val
        qs = [i for i in self.lay.area[k] if val[i] is not None and i != P]  # type: ignore[index]
        rs = [i for i in self.lay.area[a] if val[i] is not None and i != P]
        if not qs or not rs or (len(qs) == 1 and len(rs) == 1 and qs[0] == rs[0]):
            self.discard.append(self.held)  # type: ignore[arg-type]
            self.held = None
            self.qs = []
            self.rs = []
            self._end_turn()
            return
        self.qs = qs
        self.rs = rs
        self.phase = EXCHANGE
        self.to_act_ = (a,)

    # -- decisions -------------------------------------------------------
    def apply(self, seat: Unchecked, action: Unchecked) -> None:
        if seat not in self.to_act_:
            raise _illegal(seat, action, f"it is not this seat's turn (to act: {list(self.to_act_)})")
        if type(action) is not dict:
            raise _illegal(seat, action, "an action must be an object")
        t = action.get("type")
        phase = self.phase
        if phase == TURN:
            if t == "take_discard":
                if len(action) != 2:
                    raise _illegal(seat, action, "take_discard has exactly the keys type and slot")
                i = self._parse_slot(seat, action, "slot")
                val = self.val
                if not self.lay.in_area[seat][i] or val[i] is None:
                    raise _illegal(seat, action, "the slot must be an occupied slot of your area")
                # inlined _put(i, top discard): the hot path of random play
                discard = self.discard
                v = discard[-1]
                if self.upv[i] is None:  # was face down
                    s = i // CELLS
                    self.fd_own[s] -= 1
                    if i % COLS == LAST:
                        self.fd_last[s] -= 1
                discard[-1] = val[i]  # type: ignore[assignment]
                val[i] = v
                self.upv[i] = v
                self._triples((i,))
                self._end_turn()
            elif t == "draw":
                if len(action) != 1:
                    raise _illegal(seat, action, "draw has no other key")
                if self.deck:
                    self.drawn = self.deck.pop()
                    self._after_draw()
                elif len(self.discard) > 1:
                    self.phase = SHUFFLE
                    self.to_act_ = ()
                else:
                    raise _illegal(seat, action, "the deck is empty and there is nothing to reshuffle")
            else:
                raise _illegal(seat, action, "on your turn: draw or take_discard")
        elif phase == KNOCK:
            if t == "knock":
                ans = True
            elif t == "pass":
                ans = False
            else:
                raise _illegal(seat, action, "answer the draw with knock or pass")
            if len(action) != 1:
                raise _illegal(seat, action, f"{t} has no other key")
            self.answers[seat] = ans
            rest = tuple(s for s in self.to_act_ if s != seat)
            if rest:
                self.to_act_ = rest
            else:
                ks = [s for s in range(self.n) if self.answers[s]]
                self.knockers = ks
                # a knocker whose area holds no card could not place: cannot be given the card
                self.give_ok = [k for k in ks if self._area_occ(k)]
                self.phase = DRAWN
                self.to_act_ = (self.active,)
        elif phase == DRAWN:
            if t == "swap":
                if len(action) != 2:
                    raise _illegal(seat, action, "swap has exactly the keys type and slot")
                i = self._parse_slot(seat, action, "slot")
                if not self.lay.in_area[seat][i] or self.val[i] is None:
                    raise _illegal(seat, action, "the slot must be an occupied slot of your area")
                old = self._put(i, self.drawn)  # type: ignore[arg-type]
                self.discard.append(old)
                self._triples((i,))
                self._end_turn()
            elif t == "discard":
                if len(action) != 2 or "flip" not in action:
                    raise _illegal(seat, action, "discard has exactly the keys type and flip")
                if action["flip"] is None:
                    if self._area_fd(seat):
                        raise _illegal(seat, action, "you must turn a face-down slot of your area face up")
                    self.discard.append(self.drawn)  # type: ignore[arg-type]
                    self._end_turn()
                else:
                    i = self._parse_slot(seat, action, "flip")
                    if not self.lay.in_area[seat][i] or self.val[i] is None or self.upv[i] is not None:
                        raise _illegal(seat, action, "flip must be a face-down slot of your area")
                    self.discard.append(self.drawn)  # type: ignore[arg-type]
                    self._flip(i)
                    self._triples((i,))
                    self._end_turn()
            elif t == "give":
                to = action.get("to")
                if len(action) != 2 or type(to) is not int:
                    raise _illegal(seat, action, "give has exactly the keys type and to (a seat)")
                if to not in self.give_ok:
                    raise _illegal(seat, action, "you can only give the card to a seat that knocked")
                self.knocker = to
                self.phase = PLACE
                self.to_act_ = (to,)
            else:
                raise _illegal(seat, action, "with the drawn card: give, swap or discard")
        elif phase == REVEAL:
            if t != "reveal" or len(action) != 2:
                raise _illegal(seat, action, "reveal a face-down slot of your area: {'type': 'reveal', 'slot': [...]}")
            i = self._parse_slot(seat, action, "slot")
            if not self.lay.in_area[seat][i] or self.val[i] is None or self.upv[i] is not None:
                raise _illegal(seat, action, "the slot must be a face-down slot of your area")
            self._flip(i)
            self._triples((i,))
            self.reveal_count += 1
            if self.reveal_count >= REVEALS:
                self.reveal_count = 0
                self.reveal_seat += 1
                if self.reveal_seat >= self.n:
                    self.active = (self.round - 1) % self.n
                    self._begin_turn()
                    return
            # a seat with no face-down slot left in its area (cannot happen
            # with 12-card grids, kept for safety) skips its remaining reveals
            while self.reveal_seat < self.n and not self._area_fd(self.reveal_seat):
                self.reveal_count = 0
                self.reveal_seat += 1
            if self.reveal_seat >= self.n:
                self.active = (self.round - 1) % self.n
                self._begin_turn()
                return
            self.active = self.reveal_seat
            self.to_act_ = (self.reveal_seat,)
        elif phase == PLACE:
            if t != "place" or len(action) != 2:
                raise _illegal(seat, action, "place the given card: {'type': 'place', 'slot': [...]}")
            i = self._parse_slot(seat, action, "slot")
            if not self.lay.in_area[seat][i] or self.val[i] is None:
                raise _illegal(seat, action, "the slot must be an occupied slot of your area")
            self.held_public = self.upv[i] is not None
            self.held = self._put(i, self.drawn)  # type: ignore[arg-type]
            self.drawn = None
            self.P = i
            self._triples((i,))
            self._enter_exchange()
        elif phase == EXCHANGE:
            if t != "exchange" or len(action) != 3:
                raise _illegal(seat, action, "exchange has exactly the keys type, take and put")
            q = self._parse_slot(seat, action, "take")
            r = self._parse_slot(seat, action, "put")
            if q not in self.qs:
                raise _illegal(
                    seat, action, "take must be an occupied slot of the knocker's area other than the placed one"
                )
            if r not in self.rs or r == q:
                raise _illegal(
                    seat, action, "put must be an occupied slot of your area other than the placed and taken ones"
                )
            qv = self.val[q]
            self.discard.append(self._put(r, qv))  # type: ignore[arg-type]
            self._put(q, self.held)  # type: ignore[arg-type]
            self.held = None
            self.qs = []
            self.rs = []
            self._triples((q, r))
            self._end_turn()
        else:
            raise _illegal(seat, action, "no decision is due")

    # -- legal actions ---------------------------------------------------
    def legal_actions(self, seat: Unchecked) -> list[Action]:
        """Legal actions of ``seat`` in this fixed order. Area order is the
        seat's own grid row-major, then its neighbour's last column top to
        bottom.

        * reveal: face-down slots of the area, area order;
        * turn: draw (if legal), then take_discard per occupied slot, area order;
        * knock phase: knock, pass;
        * after the draw: give (ascending seat), swap (area order), discard
          (one per face-down slot in area order, or the single flip null);
        * place: the knocker's occupied slots, area order;
        * exchange: (take, put) pairs, take in the knocker's area order, put in
          the active player's area order.
        """
        if seat not in self.to_act_:
            return []
        phase = self.phase
        if phase == TURN:
            out = [DRAW] if self._can_draw() else []
            out += [TAKE_A[i] for i in self._occupied(seat)]
            return out
        if phase == KNOCK:
            return [KNOCK_A, PASS_A]
        if phase == DRAWN:
            out = [GIVE_A[k] for k in self.give_ok]
            out += [SWAP_A[i] for i in self._occupied(seat)]
            fd = self._face_down(seat)
            out += [FLIP_A[i] for i in fd] if fd else [DISCARD_NONE]
            return out
        if phase == REVEAL:
            return [REVEAL_A[i] for i in self._face_down(seat)]
        if phase == PLACE:
            return [PLACE_A[i] for i in self._occupied(seat)]
        if phase == EXCHANGE:
            return [exchange_action(q, r) for q in self.qs for r in self.rs if r != q]
        return []

    def _kth_occupied(self, s: int, k: int) -> int:
        area = self.lay.area[s]
        if self.emp_own[s] + self.emp_last[self.lay.nb[s]] == 0:
            return area[k]
        val = self.val
        for i in area:
            if val[i] is not None:
                if not k:
                    return i
                k -= 1
        raise AssertionError("no such slot")

    def _kth_face_down(self, s: int, k: int) -> int:
        val, upv = self.val, self.upv
        for i in self.lay.area[s]:
            if upv[i] is None and val[i] is not None:
                if not k:
                    return i
                k -= 1
        raise AssertionError("no such slot")

    def random_action(self, seat: Unchecked, rng: random.Random) -> Action:
        """Uniform over ``legal_actions(seat)``, without building the list."""
        if seat not in self.to_act_:
            raise EngineError(f"seat {seat} may not act now")
        phase = self.phase
        rnd = rng.random
        if phase == TURN:
            lay = self.lay
            emp = self.emp_own[seat] + self.emp_last[lay.nb[seat]]
            occ = AREA_SIZE - emp
            if self.deck or len(self.discard) > 1:
                k = int(rnd() * (occ + 1))
                if not k:
                    return DRAW
                k -= 1
            else:
                k = int(rnd() * occ)
            if not emp:
                return TAKE_A[lay.area[seat][k]]
            return TAKE_A[self._kth_occupied(seat, k)]
        if phase == KNOCK:
            return KNOCK_A if rnd() < 0.5 else PASS_A
        if phase == DRAWN:
            g = len(self.give_ok)
            occ = self._area_occ(seat)
            fd = self._area_fd(seat)
            k = int(rnd() * (g + occ + (fd or 1)))
            if k < g:
                return GIVE_A[self.give_ok[k]]
            k -= g
            if k < occ:
                return SWAP_A[self._kth_occupied(seat, k)]
            k -= occ
            return FLIP_A[self._kth_face_down(seat, k)] if fd else DISCARD_NONE
        if phase == REVEAL:
            return REVEAL_A[self._kth_face_down(seat, int(rnd() * self._area_fd(seat)))]
        if phase == PLACE:
            return PLACE_A[self._kth_occupied(seat, int(rnd() * self._area_occ(seat)))]
        if phase == EXCHANGE:
            qs, rs = self.qs, self.rs
            lq, lr = len(qs), len(rs)
            while True:
                q = qs[int(rnd() * lq)]
                r = rs[int(rnd() * lr)]
                if q != r:
                    return exchange_action(q, r)
        raise EngineError("no decision is due")

    def default_action(self, seat: Unchecked) -> Action:
        """The default policy for a forfeited seat (always makes progress:
        every turn turns a face-down card up while one is left).

        reveal: the first face-down slot; turn: draw if legal, else
        take_discard into the first face-down slot (else the first occupied
        one); after one's own draw: discard, flipping the first face-down slot
        (null if none); knock phase: pass; place: the first occupied slot;
        exchange: the first legal pair. "First" is in legal-action order.
        """
        if seat not in self.to_act_:
            raise EngineError(f"seat {seat} may not act now")
        phase = self.phase
        if phase == TURN:
            if self._can_draw():
                return DRAW
            fd = self._face_down(seat)
            return TAKE_A[fd[0] if fd else self._occupied(seat)[0]]
        if phase == KNOCK:
            return PASS_A
        if phase == DRAWN:
            fd = self._face_down(seat)
            return FLIP_A[fd[0]] if fd else DISCARD_NONE
        if phase == REVEAL:
            return REVEAL_A[self._face_down(seat)[0]]
        if phase == PLACE:
            return PLACE_A[self._occupied(seat)[0]]
        if phase == EXCHANGE:
            return self.legal_actions(seat)[0]
        raise EngineError("no decision is due")

    # -- information -----------------------------------------------------
    def observation(self, seat: Unchecked) -> dict[str, Any]:
        n = self.n
        full = seat is None
        if not full and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise EngineError(f"no seat {seat!r} at this table")
        val, upv = self.val, self.upv
        grids = []
        for s in range(n):
            rows = []
            for r in range(ROWS):
                row: list[Any] = []
                for c in range(COLS):
                    i = s * CELLS + r * COLS + c
                    v = val[i]
                    if v is None:
                        row.append(None)
                    elif upv[i] is not None or full:
                        row.append(v)
                    else:
                        row.append("?")
                rows.append(row)
            grids.append(rows)
        if self.phase == KNOCK and not full:
            knockers = [seat] if self.answers[seat] else []  # type: ignore[index]
        elif self.phase == KNOCK:
            knockers = [s for s in range(n) if self.answers[s]]
        else:
            knockers = list(self.knockers) if self.phase in (DRAWN, PLACE, EXCHANGE) else []
        held = None
        if self.held is not None and self.phase == EXCHANGE:
            show = full or self.held_public or seat == self.knocker
            held = {"seat": self.knocker, "card": self.held if show else "?"}
        obs: dict[str, Any] = {
            "game": "allegra",
            "seat": seat,
            "num_players": n,
            "round": self.round,
            "phase": PHASE_NAMES[self.phase],
            "to_act": list(self.to_act_),
            "active": self.active,
            "grids": grids,
            "discard": list(self.discard),
            "deck_size": len(self.deck),
            "drawn": self.drawn,
            "knockers": knockers,
            "knocker": self.knocker if self.phase in (PLACE, EXCHANGE) else None,
            "placed": list(SLOT_OF[self.P]) if self.P is not None and self.phase == EXCHANGE else None,
            "held": held,
            "scores": list(self.totals),
            "round_scores": [list(r) for r in self.round_scores],
            "ender": self.ender,
            "removed": list(self.removed),
            "final_turns": self.final,
            "turn": self.turns,
            "turn_limit": self.turn_limit,
        }
        if full:
            obs["deck"] = self.deck[::-1]
            obs["face_down"] = [list(SLOT_OF[i]) for i in range(self.lay.N) if val[i] is not None and upv[i] is None]
            obs["answers"] = (
                [None if a is None else ("knock" if a else "pass") for a in self.answers]
                if self.phase == KNOCK
                else None
            )
        return obs

    def ranking_keys(self) -> list[Any]:
        return [-t for t in self.totals]

    def scores(self) -> list[int]:
        return list(self.totals)

    def score_details(self) -> dict[str, Any]:
        return {
            "round_scores": [list(r) for r in self.round_scores],
            "area_sums": [list(r) for r in self.raw_scores],
            "enders": list(self.enders),
            "ender_doubled": list(self.doubled),
            "turn_limit_ends": list(self.limit_ends),
            "totals": list(self.totals),
        }

    # -- checks (tests) --------------------------------------------------
    def _recount(self) -> None:
        """Recompute the face-down / empty counters from ``val`` and ``upv``
        (for tests that set up a table directly)."""
        n = self.n
        self.fd_own = [0] * n
        self.fd_last = [0] * n
        self.emp_own = [0] * n
        self.emp_last = [0] * n
        for i in range(self.lay.N):
            s = i // CELLS
            last = i % COLS == LAST
            if self.val[i] is None:
                self.upv[i] = None
                self.emp_own[s] += 1
                self.emp_last[s] += last
            elif self.upv[i] is None:
                self.fd_own[s] += 1
                self.fd_last[s] += last
            else:
                self.upv[i] = self.val[i]

    def card_count(self) -> Counter:
        """Every card of the deck, wherever it is (grids, discard, deck,
        drawn, held, removed by triples); equals the full deck between deals."""
        c = Counter(v for v in self.val if v is not None)
        c.update(self.discard)
        c.update(self.deck)
        c.update(self.removed)
        if self.drawn is not None:
            c[self.drawn] += 1
        if self.held is not None:
            c[self.held] += 1
        return c

    def __repr__(self) -> str:
        return f"<AllegraState {self.n}p round {self.round} {PHASE_NAMES[self.phase]} to_act={list(self.to_act_)}>"
