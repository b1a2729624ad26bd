"""Allegra for learning agents: a seat's observation as a fixed-shape array,
and a fixed Discrete action space mapped exactly to protocol actions.

Both are built from the seat's own observation (what bot protocol v1 sends),
never from the engine's state, so nothing hidden can reach a learner.

Slots are named relative to a seat's *area*: area index 0-11 is its own grid
(row-major, ``row * 4 + col``), 12-14 rows 0-2 of the shared last column of
its left-hand neighbour (seat + 1). Action indices (``NUM_ACTIONS`` = 310):

* 0 draw, 1 knock, 2 pass, 3 ``{"type": "discard", "flip": null}``
* 4 + a reveal, 19 + a take_discard, 34 + a swap, 49 + a discard flipping,
  each at area index a of the acting seat
* 64 + a place at area index a of the knocker's area
* 79 + k give to the seat k places to the left (1 <= k <= 5)
* 85 + 15 q + r exchange: take area index q of the knocker, put at area
  index r of the acting seat
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import arrays as _arrays
from engine.allegra.game import CARD_COUNTS, COLS, PHASE_NAMES, ROUNDS, ROWS

MAX_PLAYERS = 6
CELLS = ROWS * COLS
AREA = CELLS + ROWS
VALUES = sorted(CARD_COUNTS)
NUM_VALUES = len(VALUES)
DRAW, KNOCK, PASS, DISCARD = 0, 1, 2, 3
REVEAL, TAKE, SWAP, FLIP, PLACE, GIVE, EXCHANGE = 4, 19, 34, 49, 64, 79, 85
NUM_ACTIONS = EXCHANGE + AREA * AREA
_PHASES = sorted(set(PHASE_NAMES), key=PHASE_NAMES.index)
_CELL = 2 + NUM_VALUES  # empty, face down, value one-hot
_SEAT = CELLS * _CELL + 10  # grid; to act, active, knocker, knocked, ender, score, 3 round scores, present
OBS_SIZE = (
    len(_PHASES) + ROUNDS + 4  # phase, round; deck size, final turns, turn/limit, held shown
    + 2 * (NUM_VALUES + 1)  # top of the discard pile, the drawn card (one-hot, or none)
    + 2 * NUM_VALUES  # counts of the discard pile and of the cards removed by triples
    + (NUM_VALUES + 1)  # the held card (one-hot, or "?")
    + MAX_PLAYERS * CELLS  # the placed slot
    + MAX_PLAYERS * _SEAT
)  # fmt: skip
_TOTAL = {v: c for v, c in CARD_COUNTS.items()}


def area_index(n: int, owner: int, slot: list[int]) -> int:
    """Area index of ``slot`` ([seat, row, col]) in ``owner``'s area."""
    seat, row, col = slot
    if seat == owner:
        return row * COLS + col
    if seat == (owner + 1) % n and col == COLS - 1:
        return CELLS + row
    raise ValueError(f"slot {slot} is not in seat {owner}'s area")


def area_slot(n: int, owner: int, index: int) -> list[int]:
    if index < CELLS:
        return [owner, index // COLS, index % COLS]
    return [(owner + 1) % n, index - CELLS, COLS - 1]


def _value(v: Any) -> int:
    return VALUES.index(v)


def encode(obs: dict[str, Any]) -> np.ndarray:
    """``obs`` (a seat's observation) as a float32 vector of ``OBS_SIZE``.
    Seats are relative: block 0 is the observing seat, block k the seat k
    places to its left. Counts and scores are scaled (scores by 100, so they
    may leave [0, 1]); one-hots are 0 or 1."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    seat, n = obs["seat"], obs["num_players"]
    out[_PHASES.index(obs["phase"])] = 1
    k = len(_PHASES)
    out[k + min(obs["round"], ROUNDS) - 1] = 1
    k += ROUNDS
    out[k] = obs["deck_size"] / 120
    out[k + 1] = bool(obs["final_turns"])
    out[k + 2] = obs["turn"] / obs["turn_limit"] if obs["turn_limit"] else 0
    held = obs["held"]
    out[k + 3] = held is not None
    k += 4
    discard = obs["discard"]
    out[k + (_value(discard[-1]) if discard else NUM_VALUES)] = 1
    k += NUM_VALUES + 1
    out[k + (NUM_VALUES if obs["drawn"] is None else _value(obs["drawn"]))] = 1
    k += NUM_VALUES + 1
    for v in discard:
        out[k + _value(v)] += 1 / _TOTAL[v]
    k += NUM_VALUES
    for v in obs["removed"]:
        out[k + _value(v)] += 1 / _TOTAL[v]
    k += NUM_VALUES
    if held is not None:
        out[k + (NUM_VALUES if held["card"] == "?" else _value(held["card"]))] = 1
    k += NUM_VALUES + 1
    if obs["placed"] is not None:
        s, row, col = obs["placed"]
        out[k + ((s - seat) % n) * CELLS + row * COLS + col] = 1
    k += MAX_PLAYERS * CELLS
    to_act = set(obs["to_act"])
    knockers = set(obs["knockers"])
    for rel in range(n):
        s = (seat + rel) % n
        base = k + rel * _SEAT
        for r, row in enumerate(obs["grids"][s]):
            for c, v in enumerate(row):
                cell = base + (r * COLS + c) * _CELL
                if v is None:
                    out[cell] = 1
                elif v == "?":
                    out[cell + 1] = 1
                else:
                    out[cell + 2 + _value(v)] = 1
        base += CELLS * _CELL
        out[base] = s in to_act
        out[base + 1] = obs["active"] == s
        out[base + 2] = obs["knocker"] == s
        out[base + 3] = s in knockers
        out[base + 4] = obs["ender"] == s
        out[base + 5] = obs["scores"][s] / 100
        for r, scores in enumerate(obs["round_scores"][:ROUNDS]):
            out[base + 6 + r] = scores[s] / 100
        out[base + 9] = 1
    return out


# A seat's private part (OpenSpiel's private-only observation): what its own
# observation shows beyond the public one. In Allegra that is its own knock
# answer while the answers are secret, and the held card if it alone saw it.
PRIVATE_SIZE = MAX_PLAYERS + 1 + NUM_VALUES  # seat, knocked, the held card


def encode_private(private: dict[str, Any]) -> np.ndarray:
    """``private`` (a seat's observation less its public view, with its
    ``seat``: the keys whose values differ) as a float32 vector of
    ``PRIVATE_SIZE``."""
    out = np.zeros(PRIVATE_SIZE, dtype=np.float32)
    out[private["seat"]] = 1
    out[MAX_PLAYERS] = bool(private.get("knockers"))
    held = private.get("held")
    if held is not None and held["card"] != "?":
        out[MAX_PLAYERS + 1 + _value(held["card"])] = 1
    return out


def action_to_protocol(obs: dict[str, Any], index: int) -> dict[str, Any]:
    """The protocol action of action ``index`` in the position ``obs``."""
    index = int(index)
    seat, n = obs["seat"], obs["num_players"]
    if index == DRAW:
        return {"type": "draw"}
    if index == KNOCK:
        return {"type": "knock"}
    if index == PASS:
        return {"type": "pass"}
    if index == DISCARD:
        return {"type": "discard", "flip": None}
    for base, kind, key in ((REVEAL, "reveal", "slot"), (TAKE, "take_discard", "slot"), (SWAP, "swap", "slot"), (FLIP, "discard", "flip")):  # fmt: skip
        if base <= index < base + AREA:
            return {"type": kind, key: area_slot(n, seat, index - base)}
    if PLACE <= index < GIVE:
        if obs["knocker"] is None:
            raise ValueError("place needs a knocker")
        return {"type": "place", "slot": area_slot(n, obs["knocker"], index - PLACE)}
    if GIVE < index < EXCHANGE and index - GIVE < n:
        return {"type": "give", "to": (seat + index - GIVE) % n}
    if EXCHANGE <= index < NUM_ACTIONS and obs["knocker"] is not None:
        q, r = divmod(index - EXCHANGE, AREA)
        return {"type": "exchange", "take": area_slot(n, obs["knocker"], q), "put": area_slot(n, seat, r)}
    raise ValueError(f"action {index} means nothing here")


def protocol_to_action(obs: dict[str, Any], action: dict[str, Any]) -> int:
    """The index of the protocol ``action`` in the position ``obs``."""
    seat, n = obs["seat"], obs["num_players"]
    kind = action.get("type")
    simple = {"draw": DRAW, "knock": KNOCK, "pass": PASS}
    if kind in simple:
        return simple[kind]
    if kind == "discard":
        return DISCARD if action["flip"] is None else FLIP + area_index(n, seat, action["flip"])
    bases = {"reveal": REVEAL, "take_discard": TAKE, "swap": SWAP}
    if kind in bases:
        return bases[kind] + area_index(n, seat, action["slot"])
    if kind == "place":
        return PLACE + area_index(n, obs["knocker"], action["slot"])
    if kind == "give":
        return GIVE + (action["to"] - seat) % n
    if kind == "exchange":
        q = area_index(n, obs["knocker"], action["take"])
        return EXCHANGE + q * AREA + area_index(n, seat, action["put"])
    raise ValueError(f"{kind!r} is not an Allegra action")


def action_mask(obs: dict[str, Any], legal: list[dict[str, Any]], pending: Any = None) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for action in legal:
        mask[protocol_to_action(obs, action)] = 1
    return mask


def max_steps(game) -> int:
    """The most environment steps in one game: one a decision of the engine."""
    return game.max_game_length()


def render(obs: dict[str, Any]) -> str:
    """The table as text (a spectator's full view shows the face-down cards)."""
    top = obs["discard"][-1] if obs["discard"] else "-"
    lines = [
        f"Allegra round {obs['round']}, phase {obs['phase']}, to act {obs['to_act']}, active seat {obs['active']}",
        f"discard top {top}  deck {obs['deck_size']}  drawn {obs['drawn']}  scores {obs['scores']}",
    ]
    face_down = {tuple(s) for s in obs.get("face_down", ())}
    for s, grid in enumerate(obs["grids"]):
        cells = []
        for r, row in enumerate(grid):
            marks = []
            for c, v in enumerate(row):
                text = "." if v is None else str(v)
                marks.append(f"({text})" if (s, r, c) in face_down else text)
            cells.append(" ".join(f"{m:>4}" for m in marks))
        lines.append(f"  seat {s}: " + " | ".join(cells))
    return "\n".join(lines)


def protocol_to_actions(obs: dict[str, Any], action: dict[str, Any]) -> list[int]:
    """``[protocol_to_action(obs, action)]``: every Allegra action is one step."""
    return [protocol_to_action(obs, action)]


def policy_action(obs: dict[str, Any], legal: list[dict[str, Any]], pick) -> dict[str, Any]:
    """The protocol action an index policy plays in ``obs`` with ``legal``
    (what a bot receives): ``pick(observation_array, action_mask)`` returns
    an index, asked exactly as the environment asks it."""
    mask = action_mask(obs, legal)
    index = int(pick(encode(obs), mask))
    if not (0 <= index < NUM_ACTIONS and mask[index]):
        raise ValueError(f"the policy picked action {index}, which is not legal here")
    return action_to_protocol(obs, index)


# -- the fast forms the environments use ------------------------------------
# ``encode`` and ``action_mask`` above are the readable reference; the
# engine's ``arrays`` module writes the same arrays (compiled with the rules
# where they are; tests/sdk/research_conformance.py ``fast_codecs`` compares
# them at every step of many random games).
assert _arrays.ALLEGRA_OBS_SIZE == OBS_SIZE and _arrays.ALLEGRA_ACTIONS == NUM_ACTIONS


def _fractions() -> list[list[float]]:
    """Per value index, the float32 count ``encode`` reaches after adding
    ``1 / count`` once per card of that value, 0 to all of them (made by
    the reference's own float32 additions)."""
    table = []
    for v in VALUES:
        out = np.zeros(1, dtype=np.float32)
        row = [0.0]
        for _ in range(_TOTAL[v]):
            out[0] += 1 / _TOTAL[v]
            row.append(float(out[0]))
        table.append(row)
    return table


_FRACTIONS = _fractions()


def encode_fast(obs: dict[str, Any]) -> np.ndarray:
    """``encode(obs)``, faster: the same array."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    if _arrays.allegra_encode_into(memoryview(out), obs, _FRACTIONS) < 0:
        return encode(obs)  # more cards of a value than a deck holds: the reference's own sums
    return out


def action_mask_fast(obs: dict[str, Any], legal: list[dict[str, Any]], pending: Any = None) -> np.ndarray:
    """``action_mask(obs, legal)``, faster: the same array."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if _arrays.allegra_mask_into(memoryview(mask), obs, legal) < 0:
        return action_mask(obs, legal)  # an action with no index: the reference says why
    return mask


def action_to_protocol_fast(obs: dict[str, Any], index: int) -> dict[str, Any]:
    """``action_to_protocol(obs, index)``, faster: the same dict (the
    environments' steps make one from every index)."""
    action = _arrays.allegra_action(obs, index) if type(index) is int else None
    return action if action is not None else action_to_protocol(obs, index)  # the reference raises why


def protocol_to_actions_fast(obs: dict[str, Any], action: dict[str, Any]) -> list[int]:
    """``protocol_to_actions(obs, action)``, faster: the same index (an
    opponent's every move is read with it)."""
    index = _arrays.allegra_index(obs, action)
    return [index] if index >= 0 else protocol_to_actions(obs, action)  # an unusual spelling: the reference reads it
