"""A seat's observation written into flat buffers: the fast form of
``cardroom_sdk.envs``'s codecs (``allegory_codec.encode``/``action_mask``,
``allegra_codec.encode``/``action_mask``), compiled with the rules
(engine/form.py lists this module), pure Python where they are not.

The codecs' functions are the readable reference. These write the same
values, in the same order, from the same input (a seat's own observation,
what bot protocol v1 sends, and its legal actions), into a buffer the codec
made: a ``memoryview`` of a zeroed float32 array (observation) or int8 array
(mask). Buffers are written one element at a time through the buffer
protocol, not through numpy's indexing, which costs several times more a
store; no numpy here, so mypyc compiles every line. The buffer is zeros,
so a flag, count or score that is 0 is not written (the reference's store
of 0.0 changes nothing; a store is a few tens of nanoseconds). Equality with the reference, array for array at every step of
many random games, is tested in tests/sdk/research_conformance.py
(``fast_codecs``); tests/engine/differential.py holds the compiled form to
this one.

A mask writer returns -1 when an action is not one of the position's
indices; the codec then asks its reference, which says why.
"""

from __future__ import annotations

from typing import Any, Final

from engine.allegory.game import CARD_ID, CHIPS_PER_PLAYER, THEMES
from engine.allegory.game import PHASE_NAMES as ALLEGORY_PHASES
from engine.allegra.game import CARD_COUNTS, COLS, ROUNDS, ROWS
from engine.allegra.game import PHASE_NAMES as ALLEGRA_PHASE_NAMES

MAX_PLAYERS: Final = 6

# Every index of an array, as a Python int made once. A store through the
# buffer protocol takes its index as a Python int, which mypyc makes afresh
# from a native one above 256 (an allocation, and a third of a store's 30
# ns); the stores of the hot loops (the seats' blocks) read it from here.
_INDEX: Final[list[object]] = list(range(2048))

# -- Allegory (allegory_codec's layout) --------------------------------------
MAX_POOL: Final = 6
MAX_CHIPS: Final[int] = CHIPS_PER_PLAYER * MAX_PLAYERS
NUM_CARDS: Final[int] = len(CARD_ID)
_PHASE_AT: Final[dict[str, int]] = {name: i for i, name in enumerate(ALLEGORY_PHASES)}
_THEME_AT: Final[dict[str, int]] = {name: i for i, name in enumerate(THEMES)}
_ROUND_AT: Final[int] = len(ALLEGORY_PHASES)
_MORAL_AT: Final[int] = _ROUND_AT + 2
_BID_AT: Final[int] = _MORAL_AT + len(THEMES)
_POOL_AT: Final[int] = _BID_AT + 2
_SLOT: Final[int] = NUM_CARDS + 2
_LEFT_AT: Final[int] = _POOL_AT + MAX_POOL * _SLOT
_PLAYERS_AT: Final[int] = _LEFT_AT + 1
_PLAYER: Final[int] = 8 + NUM_CARDS
ALLEGORY_OBS_SIZE: Final[int] = _PLAYERS_AT + MAX_PLAYERS * _PLAYER
REST, CLAIM, TAKE, CHIP, BID = 0, 1, 7, 13, 19  # the first index of each kind of action
ALLEGORY_ACTIONS: Final[int] = 19 + MAX_CHIPS  # BID + MAX_CHIPS


def allegory_encode_into(out: Any, obs: dict[str, Any], pending: list[int] | None) -> None:
    """``allegory_codec.encode(obs, pending)`` written into ``out`` (zeros)."""
    seat: int = obs["seat"]
    n: int = obs["num_players"]
    phase: str = obs["phase"]
    out[_PHASE_AT[phase]] = 1.0
    if obs["round_kind"] == "prologue":
        out[_ROUND_AT] = 1.0
    out[_ROUND_AT + 1] = min(int(obs["round"]), 100) / 100
    moral = obs.get("moral")
    if moral is not None:
        out[_MORAL_AT + _THEME_AT[moral]] = 1.0
    high_bid = obs["high_bid"]
    if high_bid:
        out[_BID_AT] = high_bid / MAX_CHIPS
    out[_BID_AT + 1] = obs["deck_size"] / NUM_CARDS
    placed = 0
    if pending:
        for chips in pending:
            placed += chips
    i = 0
    for slot in obs["pool"]:
        base = _POOL_AT + i * _SLOT
        out[_INDEX[base + CARD_ID[slot["card"]]]] = 1.0
        chips = slot["chips"]
        if chips:
            out[_INDEX[base + NUM_CARDS]] = chips / MAX_CHIPS
        if pending and pending[i]:
            out[_INDEX[base + NUM_CARDS + 1]] = pending[i] / MAX_CHIPS
        i += 1
    players = obs["players"]
    winner = obs["winner"]
    if phase == "distribute":
        out[_INDEX[_LEFT_AT]] = (players[winner]["bid"] - placed) / MAX_CHIPS
    to_act = obs["to_act"]
    high_bidder = obs["high_bidder"]
    for rel in range(n):
        s = (seat + rel) % n
        p = players[s]
        base = _PLAYERS_AT + rel * _PLAYER
        out[_INDEX[base]] = 1.0
        chips = p["chips"]
        if chips:
            out[_INDEX[base + 1]] = chips / MAX_CHIPS
        bid = p["bid"]
        if bid:
            out[_INDEX[base + 2]] = bid / MAX_CHIPS
        if p["rested"]:
            out[_INDEX[base + 3]] = 1.0
        if high_bidder == s:
            out[_INDEX[base + 4]] = 1.0
        if s in to_act:
            out[_INDEX[base + 5]] = 1.0
        if winner == s:
            out[_INDEX[base + 6]] = 1.0
        out[_INDEX[base + 7]] = p["cards"] / 10
        for cards in p["tales"].values():
            for name in cards:
                out[_INDEX[base + 8 + CARD_ID[name]]] = 1.0


def allegory_pending_into(out: Any, obs: dict[str, Any], pending: list[int]) -> None:
    """Over ``out``, an array ``allegory_encode_into`` wrote of ``obs`` with
    other chips placed (or none): what ``pending`` changes, so that ``out``
    is then ``allegory_codec.encode(obs, pending)`` (a distribute placed one
    chip a step changes nothing else)."""
    placed = 0
    i = 0
    for chips in pending:
        out[_POOL_AT + i * _SLOT + NUM_CARDS + 1] = chips / MAX_CHIPS
        placed += chips
        i += 1
    if obs["phase"] == "distribute":
        out[_LEFT_AT] = (obs["players"][obs["winner"]]["bid"] - placed) / MAX_CHIPS


def allegory_mask_into(out: Any, obs: dict[str, Any], legal: list[dict[str, Any]], pending: list[int] | None) -> int:
    """``allegory_codec.action_mask(obs, legal, pending)`` written into
    ``out`` (zeros): 0, or -1 when an action has no index here."""
    if not legal:
        return 0
    position: dict[str, int] = {}
    i = 0
    for slot in obs["pool"]:
        position[slot["card"]] = i
        i += 1
    placed = 0
    if pending:
        for chips in pending:
            placed += chips
    for action in legal:
        kind = action["type"]
        if kind == "bid":
            amount = action["amount"]
            if not isinstance(amount, int):
                return -1
            bid: int = amount  # a native int from here: the comparisons and sum are C's, not Python's
            if not 1 <= bid <= MAX_CHIPS:
                return -1
            out[BID + bid - 1] = 1
        elif kind == "rest":
            if "claim" in action:
                at = position.get(action["claim"], -1)
                if at < 0:
                    return -1
                out[CLAIM + at] = 1
            else:
                out[REST] = 1
        elif kind == "take":
            at = position.get(action["card"], -1)
            if at < 0:
                return -1
            out[TAKE + at] = 1
        elif kind == "distribute":
            if action["total"] > placed:
                for j in range(len(action["cards"])):
                    out[CHIP + j] = 1
        else:
            return -1
    return 0


# -- Allegra (allegra_codec's layout) ----------------------------------------
CELLS: Final[int] = ROWS * COLS
AREA: Final[int] = CELLS + ROWS
VALUES: Final[list[int]] = sorted(CARD_COUNTS)
NUM_VALUES: Final[int] = len(VALUES)
_VALUE_AT: Final[dict[int, int]] = {v: i for i, v in enumerate(VALUES)}
# The values are consecutive (-1 to 11), so a value's position is its
# distance from the lowest: a subtraction on a native int, where a dict
# lookup hashes a boxed one (a cell or a pile's card costs a few ns, not 15).
LOWEST: Final[int] = VALUES[0]
assert VALUES == list(range(LOWEST, LOWEST + NUM_VALUES)), "Allegra's card values are consecutive"
_PHASES: Final[list[str]] = sorted(set(ALLEGRA_PHASE_NAMES), key=ALLEGRA_PHASE_NAMES.index)
_APHASE_AT: Final[dict[str, int]] = {name: i for i, name in enumerate(_PHASES)}
_AROUND_AT: Final[int] = len(_PHASES)
_DECK_AT: Final[int] = _AROUND_AT + ROUNDS
_TOP_AT: Final[int] = _DECK_AT + 4
_DRAWN_AT: Final[int] = _TOP_AT + NUM_VALUES + 1
_DISCARDS_AT: Final[int] = _DRAWN_AT + NUM_VALUES + 1
_REMOVED_AT: Final[int] = _DISCARDS_AT + NUM_VALUES
_HELD_AT: Final[int] = _REMOVED_AT + NUM_VALUES
_PLACED_AT: Final[int] = _HELD_AT + NUM_VALUES + 1
_SEATS_AT: Final[int] = _PLACED_AT + MAX_PLAYERS * CELLS
_CELL: Final[int] = 2 + NUM_VALUES
_SEAT: Final[int] = CELLS * _CELL + 10
ALLEGRA_OBS_SIZE: Final[int] = _SEATS_AT + MAX_PLAYERS * _SEAT
assert max(ALLEGORY_OBS_SIZE, ALLEGRA_OBS_SIZE) <= len(_INDEX), "_INDEX holds every index"
DRAW, KNOCK, PASS, DISCARD = 0, 1, 2, 3
REVEAL, TAKE_DISCARD, SWAP, FLIP, PLACE, GIVE, EXCHANGE = 4, 19, 34, 49, 64, 79, 85
ALLEGRA_ACTIONS: Final[int] = EXCHANGE + AREA * AREA


def _count_values(cards: list[int], counts: list[int]) -> bool:
    """Adds each card of ``cards`` to ``counts`` (by value position); False
    at a card that is no value (the reference says why)."""
    for v in cards:
        at = v - LOWEST
        if not 0 <= at < NUM_VALUES:
            return False
        counts[at] += 1
    return True


def allegra_encode_into(out: Any, obs: dict[str, Any], fractions: list[list[float]]) -> int:
    """``allegra_codec.encode(obs)`` written into ``out`` (zeros): 0, or -1
    when a pile holds more cards of a value than ``fractions`` knows, or a
    card or cell is none the reference encodes (the codec then asks the
    reference).
    ``fractions[v][c]`` is the float32 value the reference reaches after
    adding ``1 / count of value v`` ``c`` times (the codec makes it with
    numpy's own float32 sums, so the counts come out bit for bit alike)."""
    seat: int = obs["seat"]
    n: int = obs["num_players"]
    out[_APHASE_AT[obs["phase"]]] = 1.0
    out[_AROUND_AT + min(int(obs["round"]), ROUNDS) - 1] = 1.0
    out[_DECK_AT] = obs["deck_size"] / 120
    if obs["final_turns"]:
        out[_DECK_AT + 1] = 1.0
    limit = obs["turn_limit"]
    out[_DECK_AT + 2] = obs["turn"] / limit if limit else 0.0
    held = obs["held"]
    if held is not None:
        out[_DECK_AT + 3] = 1.0
    discard: list[int] = obs["discard"]
    out[_TOP_AT + (_VALUE_AT[discard[-1]] if discard else NUM_VALUES)] = 1.0
    drawn = obs["drawn"]
    out[_DRAWN_AT + (NUM_VALUES if drawn is None else _VALUE_AT[drawn])] = 1.0
    for at, cards in ((_DISCARDS_AT, discard), (_REMOVED_AT, obs["removed"])):
        counts = [0] * NUM_VALUES
        if not _count_values(cards, counts):
            return -1
        for value in range(NUM_VALUES):
            count = counts[value]
            if count:
                if count >= len(fractions[value]):
                    return -1
                out[at + value] = fractions[value][count]
    if held is not None:
        card = held["card"]
        out[_HELD_AT + (NUM_VALUES if card == "?" else _VALUE_AT[card])] = 1.0
    placed = obs["placed"]
    if placed is not None:
        s = placed[0]
        out[_PLACED_AT + ((s - seat) % n) * CELLS + placed[1] * COLS + placed[2]] = 1.0
    to_act = obs["to_act"]
    knockers = obs["knockers"]
    grids = obs["grids"]
    active, knocker, ender = obs["active"], obs["knocker"], obs["ender"]
    scores = obs["scores"]
    shown_rounds = obs["round_scores"][:ROUNDS]
    for rel in range(n):
        s = (seat + rel) % n
        base = _SEATS_AT + rel * _SEAT
        cell = base
        for row in grids[s]:
            for shown in row:
                # a value is an int: tested first, it spares most cells a
                # comparison of an int with "?" (the reference's order of
                # tests gives the same store for every cell it encodes)
                if isinstance(shown, int):
                    shown_value: int = shown
                    if not LOWEST <= shown_value < LOWEST + NUM_VALUES:
                        return -1
                    out[_INDEX[cell + 2 - LOWEST + shown_value]] = 1.0
                elif shown is None:
                    out[_INDEX[cell]] = 1.0
                elif shown == "?":
                    out[_INDEX[cell + 1]] = 1.0
                else:
                    return -1  # not a cell the reference encodes: it says why
                cell += _CELL
        base += CELLS * _CELL
        if s in to_act:
            out[_INDEX[base]] = 1.0
        if active == s:
            out[_INDEX[base + 1]] = 1.0
        if knocker == s:
            out[_INDEX[base + 2]] = 1.0
        if s in knockers:
            out[_INDEX[base + 3]] = 1.0
        if ender == s:
            out[_INDEX[base + 4]] = 1.0
        if scores[s]:
            out[_INDEX[base + 5]] = scores[s] / 100
        r = 0
        for round_scores_of in shown_rounds:
            if round_scores_of[s]:
                out[_INDEX[base + 6 + r]] = round_scores_of[s] / 100
            r += 1
        out[_INDEX[base + 9]] = 1.0
    return 0


def _area_table(n: int, owner: int) -> list[int]:
    """The area index of each table slot (``seat * CELLS + row * COLS +
    col``) in ``owner``'s area, -1 where the slot is not in it."""
    table = [-1] * (n * CELLS)
    for a in range(CELLS):
        table[owner * CELLS + a] = a
    for r in range(ROWS):
        table[((owner + 1) % n) * CELLS + r * COLS + COLS - 1] = CELLS + r
    return table


_AREAS: Final[dict[int, list[list[int]]]] = {
    n: [_area_table(n, owner) for owner in range(n)] for n in range(2, MAX_PLAYERS + 1)
}
_SLOT_BASES: Final[dict[str, int]] = {"reveal": REVEAL, "take_discard": TAKE_DISCARD, "swap": SWAP}
_SIMPLE: Final[dict[str, int]] = {"draw": DRAW, "knock": KNOCK, "pass": PASS}


def _slot_at(table: list[int], slot: Any) -> int:
    s: int = slot[0]
    r: int = slot[1]
    c: int = slot[2]
    if not (0 <= r < ROWS and 0 <= c < COLS and 0 <= s * CELLS < len(table)):
        return -1
    return table[s * CELLS + r * COLS + c]


def allegra_mask_into(out: Any, obs: dict[str, Any], legal: list[dict[str, Any]]) -> int:
    """``allegra_codec.action_mask(obs, legal)`` written into ``out``
    (zeros): 0, or -1 when an action has no index here."""
    if not legal:
        return 0
    seat: int = obs["seat"]
    n: int = obs["num_players"]
    own = _AREAS[n][seat]
    knocker = obs["knocker"]
    theirs = _AREAS[n][knocker] if knocker is not None else None
    for action in legal:
        kind = action["type"]
        if kind in _SLOT_BASES:
            a = _slot_at(own, action["slot"])
            if a < 0:
                return -1
            out[_SLOT_BASES[kind] + a] = 1
        elif kind == "exchange":
            if theirs is None:
                return -1
            q = _slot_at(theirs, action["take"])
            a = _slot_at(own, action["put"])
            if q < 0 or a < 0:
                return -1
            out[EXCHANGE + q * AREA + a] = 1
        elif kind == "place":
            if theirs is None:
                return -1
            a = _slot_at(theirs, action["slot"])
            if a < 0:
                return -1
            out[PLACE + a] = 1
        elif kind == "discard":
            flip = action["flip"]
            if flip is None:
                out[DISCARD] = 1
            else:
                a = _slot_at(own, flip)
                if a < 0:
                    return -1
                out[FLIP + a] = 1
        elif kind == "give":
            out[GIVE + (action["to"] - seat) % n] = 1
        elif kind in _SIMPLE:
            out[_SIMPLE[kind]] = 1
        else:
            return -1
    return 0


# -- Allegra's action mapping (allegra_codec.action_to_protocol and
# protocol_to_action): what an opponent's move is as an index, and the dict
# an index sends. -1 or None wherever the reference is not plainly a value
# (it raises, or reads an unusual input its own way): the codec then asks
# the reference.

_KIND_AT: Final[dict[int, str]] = {DRAW: "draw", KNOCK: "knock", PASS: "pass"}
_SLOT_KINDS: Final[list[tuple[int, str, str]]] = [
    (REVEAL, "reveal", "slot"), (TAKE_DISCARD, "take_discard", "slot"), (SWAP, "swap", "slot"), (FLIP, "discard", "flip")
]  # fmt: skip


def _area_slot(n: int, owner: int, index: int) -> list[int]:
    if index < CELLS:
        return [owner, index // COLS, index % COLS]
    return [(owner + 1) % n, index - CELLS, COLS - 1]


def allegra_action(obs: dict[str, Any], index: int) -> dict[str, Any] | None:
    """``allegra_codec.action_to_protocol(obs, index)``, or None where the
    reference raises (the index means nothing here)."""
    seat: int = obs["seat"]
    n: int = obs["num_players"]
    if index < 0:
        return None
    if index < REVEAL:
        if index == DISCARD:
            return {"type": "discard", "flip": None}
        return {"type": _KIND_AT[index]}
    for base, kind, key in _SLOT_KINDS:
        if base <= index < base + AREA:
            return {"type": kind, key: _area_slot(n, seat, index - base)}
    knocker = obs["knocker"]
    if PLACE <= index < GIVE:
        if knocker is None:
            return None
        return {"type": "place", "slot": _area_slot(n, knocker, index - PLACE)}
    if GIVE < index < EXCHANGE and index - GIVE < n:
        return {"type": "give", "to": (seat + index - GIVE) % n}
    if EXCHANGE <= index < ALLEGRA_ACTIONS and knocker is not None:
        q = (index - EXCHANGE) // AREA
        r = (index - EXCHANGE) % AREA
        return {"type": "exchange", "take": _area_slot(n, knocker, q), "put": _area_slot(n, seat, r)}
    return None


def _plain_slot(table: list[int], slot: Any) -> int:
    """``_slot_at`` of a slot that is a list of three ints; -1 for any other."""
    if type(slot) is not list or len(slot) != 3:
        return -1
    if type(slot[0]) is not int or type(slot[1]) is not int or type(slot[2]) is not int:
        return -1
    return _slot_at(table, slot)


def allegra_index(obs: dict[str, Any], action: Any) -> int:
    """``allegra_codec.protocol_to_action(obs, action)`` of an action as the
    protocol spells it (a dict, slots lists of three ints, on the table);
    -1 for anything else, which the reference reads its own way."""
    if type(action) is not dict:
        return -1
    seat: int = obs["seat"]
    n: int = obs["num_players"]
    kind = action.get("type")
    if type(kind) is not str:
        return -1
    own = _AREAS[n][seat]
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in _SLOT_BASES:
        a = _plain_slot(own, action.get("slot"))
        return _SLOT_BASES[kind] + a if a >= 0 else -1
    if kind == "discard":
        if "flip" not in action:
            return -1
        flip = action["flip"]
        if flip is None:
            return DISCARD
        a = _plain_slot(own, flip)
        return FLIP + a if a >= 0 else -1
    if kind == "give":
        to = action.get("to")
        if type(to) is not int:
            return -1
        return GIVE + (to - seat) % n
    knocker = obs["knocker"]
    if knocker is None:
        return -1
    theirs = _AREAS[n][knocker]
    if kind == "place":
        a = _plain_slot(theirs, action.get("slot"))
        return PLACE + a if a >= 0 else -1
    if kind == "exchange":
        q = _plain_slot(theirs, action.get("take"))
        a = _plain_slot(own, action.get("put"))
        return EXCHANGE + q * AREA + a if q >= 0 and a >= 0 else -1
    return -1
