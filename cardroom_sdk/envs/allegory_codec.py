"""Allegory for learning agents: a seat's observation as a fixed-shape
array, and a fixed Discrete action space mapped exactly to protocol actions.

Both are built from the seat's own observation (what bot protocol v1 sends),
never from the engine's state, so nothing hidden can reach a learner.

Action indices (``NUM_ACTIONS`` = 109, the same for 2 to 6 players):

* 0: ``{"type": "rest"}``
* 1 + i (i < 6): ``{"type": "rest", "claim": <card at Pool position i>}``
* 7 + i: ``{"type": "take", "card": <card at Pool position i>}``
* 13 + i: one Lore chip of the pending ``distribute`` onto Pool position i
  (protocol form ``{"type": "distribute", "chips": {<card>: 1}}``); the
  environment collects the winning bid's chips one step at a time and sends
  the whole ``distribute`` when the last chip is placed (docs/decisions/107-research-interfaces-allegory-s-distribute-is-one.md)
* 19 + a - 1 (1 <= a <= 90): ``{"type": "bid", "amount": a}``

Pool positions are the order of ``observation["pool"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import arrays as _arrays
from engine.allegory.game import CARD_ID, CARD_NAME, CHIPS_PER_PLAYER, PHASE_NAMES, THEMES

MAX_PLAYERS = 6
MAX_POOL = 6
MAX_CHIPS = CHIPS_PER_PLAYER * MAX_PLAYERS
NUM_CARDS = len(CARD_NAME)
REST, CLAIM, TAKE, CHIP, BID = 0, 1, 7, 13, 19
NUM_ACTIONS = BID + MAX_CHIPS

_PLAYER = 8 + NUM_CARDS  # present, chips, bid, rested, high bidder, to act, winner, cards; tale cards
OBS_SIZE = (
    len(PHASE_NAMES) + 2 + len(THEMES) + 2  # phase, prologue, round; moral; high bid, deck size
    + MAX_POOL * (NUM_CARDS + 2)  # per Pool position: card, chips, chips of the pending distribute
    + 1  # chips left to distribute
    + MAX_PLAYERS * _PLAYER
)  # fmt: skip


def encode(obs: dict[str, Any], pending: list[int] | None = None) -> np.ndarray:
    """``obs`` (a seat's observation) as a float32 vector of ``OBS_SIZE`` in
    [0, 1]. Seats are relative: block 0 is the observing seat, block k the
    seat k places to its left. ``pending`` is the environment's distribute in
    progress (chips per Pool position placed so far), the seat's own choices."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    seat, n = obs["seat"], obs["num_players"]
    out[PHASE_NAMES.index(obs["phase"])] = 1
    k = len(PHASE_NAMES)
    out[k] = obs["round_kind"] == "prologue"
    out[k + 1] = min(obs["round"], 100) / 100
    k += 2
    if obs.get("moral") is not None:
        out[k + THEMES.index(obs["moral"])] = 1
    k += len(THEMES)
    out[k] = obs["high_bid"] / MAX_CHIPS
    out[k + 1] = obs["deck_size"] / NUM_CARDS
    k += 2
    placed = sum(pending) if pending else 0
    for i, slot in enumerate(obs["pool"]):
        base = k + i * (NUM_CARDS + 2)
        out[base + CARD_ID[slot["card"]]] = 1
        out[base + NUM_CARDS] = slot["chips"] / MAX_CHIPS
        if pending:
            out[base + NUM_CARDS + 1] = pending[i] / MAX_CHIPS
    k += MAX_POOL * (NUM_CARDS + 2)
    if obs["phase"] == "distribute":
        winner = obs["players"][obs["winner"]]
        out[k] = (winner["bid"] - placed) / MAX_CHIPS
    k += 1
    to_act = set(obs["to_act"])
    for rel in range(n):
        s = (seat + rel) % n
        p = obs["players"][s]
        base = k + rel * _PLAYER
        out[base] = 1
        out[base + 1] = p["chips"] / MAX_CHIPS
        out[base + 2] = p["bid"] / MAX_CHIPS
        out[base + 3] = p["rested"]
        out[base + 4] = obs["high_bidder"] == s
        out[base + 5] = s in to_act
        out[base + 6] = obs["winner"] == s
        out[base + 7] = p["cards"] / 10
        for cards in p["tales"].values():
            for name in cards:
                out[base + 8 + CARD_ID[name]] = 1
    return out


# A seat's private part (OpenSpiel's private-only observation): what its own
# observation shows beyond the public one. In Allegory that is its Moral, and
# the chips of a distribute it is placing, not yet sent.
PRIVATE_SIZE = MAX_PLAYERS + len(THEMES) + MAX_POOL  # seat, Moral, pending chips per Pool position


def public_view(obs: dict[str, Any]) -> dict[str, Any]:
    """What every seat sees of the position of ``obs`` (any seat's
    observation): the same observation without its seat and its Moral (the
    Morals of every seat are public once the game is over)."""
    return {**obs, "seat": None, "moral": None}


def encode_private(private: dict[str, Any], pending: list[int] | None = None) -> np.ndarray:
    """``private`` (a seat's observation less its public view, with its
    ``seat``) as a float32 vector of ``PRIVATE_SIZE``: the seat, its Moral
    and the chips of its distribute in progress (``pending``)."""
    out = np.zeros(PRIVATE_SIZE, dtype=np.float32)
    out[private["seat"]] = 1
    if private.get("moral") is not None:
        out[MAX_PLAYERS + THEMES.index(private["moral"])] = 1
    for i, chips in enumerate(pending or ()):
        out[MAX_PLAYERS + len(THEMES) + i] = chips / MAX_CHIPS
    return out


def _pool_position(obs: dict[str, Any], name: Any) -> int:
    for i, slot in enumerate(obs["pool"]):
        if slot["card"] == name:
            return i
    raise ValueError(f"{name!r} is not in the Pool")


def action_to_protocol(obs: dict[str, Any], index: int) -> dict[str, Any]:
    """The protocol action of action ``index`` in the position ``obs``
    (a ``CHIP`` index gives the one-chip ``distribute`` step)."""
    index = int(index)
    pool = obs["pool"]
    if index == REST:
        return {"type": "rest"}
    if CLAIM <= index < TAKE and index - CLAIM < len(pool):
        return {"type": "rest", "claim": pool[index - CLAIM]["card"]}
    if TAKE <= index < CHIP and index - TAKE < len(pool):
        return {"type": "take", "card": pool[index - TAKE]["card"]}
    if CHIP <= index < BID and index - CHIP < len(pool):
        return {"type": "distribute", "chips": {pool[index - CHIP]["card"]: 1}}
    if BID <= index < NUM_ACTIONS:
        return {"type": "bid", "amount": index - BID + 1}
    raise ValueError(f"action {index} means nothing with {len(pool)} Pool cards")


def protocol_to_actions(obs: dict[str, Any], action: dict[str, Any]) -> list[int]:
    """The indices that play the protocol ``action``: one index, except for a
    ``distribute``, which is one ``CHIP`` index per chip, in Pool order."""
    kind = action.get("type")
    if kind == "rest":
        return [REST] if "claim" not in action else [CLAIM + _pool_position(obs, action["claim"])]
    if kind == "take":
        return [TAKE + _pool_position(obs, action["card"])]
    if kind == "bid":
        amount = action["amount"]
        if not (isinstance(amount, int) and 1 <= amount <= MAX_CHIPS):
            raise ValueError(f"no action bids {amount!r}")
        return [BID + amount - 1]
    if kind == "distribute":
        chips = action["chips"]
        positions = sorted((_pool_position(obs, name), count) for name, count in chips.items())
        return [CHIP + i for i, count in positions for _ in range(count)]
    raise ValueError(f"{kind!r} is not an Allegory action")


def protocol_to_action(obs: dict[str, Any], action: dict[str, Any]) -> int:
    """The single index of ``action`` (a one-chip ``distribute`` step included)."""
    indices = protocol_to_actions(obs, action)
    if len(indices) != 1:
        raise ValueError(f"{action!r} takes {len(indices)} steps (protocol_to_actions)")
    return indices[0]


def action_mask(obs: dict[str, Any], legal: list[dict[str, Any]], pending: list[int] | None = None) -> np.ndarray:
    """1 for every index legal now (``legal`` is the seat's legal actions;
    during a distribute every Pool position while chips are left)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for action in legal:
        if action["type"] == "distribute":
            if action["total"] > sum(pending or ()):
                mask[CHIP : CHIP + len(action["cards"])] = 1
        else:
            mask[protocol_to_action(obs, action)] = 1
    return mask


def add_chip(obs: dict[str, Any], pending: list[int] | None, index: int, total: int):
    """One step of a ``distribute`` of ``total`` chips: ``(pending, None)``
    with the chip of ``CHIP`` index ``index`` added to ``pending`` (chips per
    Pool position so far, None before the first), or ``(None, action)`` with
    the whole protocol ``distribute`` once the last chip is placed."""
    placed = list(pending or [0] * len(obs["pool"]))
    placed[int(index) - CHIP] += 1
    if sum(placed) < total:
        return placed, None
    return None, _distribute(obs, placed)


def chips_action(obs: dict[str, Any], indices: list[int]) -> dict[str, Any]:
    """The whole ``distribute`` that ``add_chip`` makes of the ``CHIP``
    indices ``indices`` when they are all the chips due."""
    placed = [0] * len(obs["pool"])
    for index in indices:
        placed[index - CHIP] += 1
    return _distribute(obs, placed)


def _distribute(obs: dict[str, Any], placed: list[int]) -> dict[str, Any]:
    return {"type": "distribute", "chips": {s["card"]: k for s, k in zip(obs["pool"], placed) if k}}


def policy_action(obs: dict[str, Any], legal: list[dict[str, Any]], pick) -> dict[str, Any]:
    """The protocol action an index policy plays in ``obs`` with ``legal``
    (what a bot receives): ``pick(observation_array, action_mask)`` returns
    an index and is asked exactly as the environment asks it, once a step
    (a ``distribute``: once a chip, with the chips placed so far encoded)."""
    pending = None
    while True:
        mask = action_mask(obs, legal, pending)
        index = int(pick(encode(obs, pending), mask))
        if not (0 <= index < NUM_ACTIONS and mask[index]):
            raise ValueError(f"the policy picked action {index}, which is not legal here")
        if not CHIP <= index < BID:
            return action_to_protocol(obs, index)
        pending, action = add_chip(obs, pending, index, legal[0]["total"])
        if action is not None:
            return action


def max_steps(game) -> int:
    """The most environment steps in one game (OpenSpiel's max_game_length):
    the engine's decisions, with a ``distribute`` (at most one a round, of at
    most every chip in play) taking one step a chip instead of one."""
    return game.max_game_length() + game.max_rounds() * (game.total_chips - 1)


def render(obs: dict[str, Any]) -> str:
    """The table as text (a spectator's full view shows every Moral)."""
    lines = [f"Allegory round {obs['round']} ({obs['round_kind']}), phase {obs['phase']}, to act {obs['to_act']}"]
    pool = ", ".join(f"{p['card']}({p['chips']})" for p in obs["pool"]) or "-"
    lines.append(f"Pool: {pool}   deck {obs['deck_size']}   high bid {obs['high_bid']} by {obs['high_bidder']}")
    morals = obs.get("morals")
    for p in obs["players"]:
        tales = "; ".join(f"{t}: {' '.join(cards) or '-'}" for t, cards in p["tales"].items())
        moral = f" moral {morals[p['seat']]}" if morals else ""
        state = " rested" if p["rested"] else ""
        lines.append(f"  seat {p['seat']}: {p['chips']} chips, bid {p['bid']}{state}{moral} | {tales}")
    if "scores" in obs:
        lines.append(f"Scores: {obs['scores']}")
    return "\n".join(lines)


# -- the fast forms the environments use ------------------------------------
# ``encode`` and ``action_mask`` above are the readable reference; the
# engine's ``arrays`` module writes the same arrays (compiled with the rules
# where they are; tests/sdk/research_conformance.py ``fast_codecs`` compares
# them at every step of many random games).
assert _arrays.ALLEGORY_OBS_SIZE == OBS_SIZE and _arrays.ALLEGORY_ACTIONS == NUM_ACTIONS


# The action mapping is its own fast form here (a Pool of six cards, a bid's
# amount): Allegra's, with its slots and areas, has a compiled one.
action_to_protocol_fast = action_to_protocol
protocol_to_actions_fast = protocol_to_actions


def encode_fast(obs: dict[str, Any], pending: list[int] | None = None) -> np.ndarray:
    """``encode(obs, pending)``, faster: the same array."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    _arrays.allegory_encode_into(memoryview(out), obs, pending)
    return out


def encode_chips_into(out: np.ndarray, obs: dict[str, Any], pending: list[int]) -> None:
    """Over ``out``, the array of the same observation with other chips of
    the distribute placed (or none): ``encode(obs, pending)``, made in place
    by rewriting only what the chips change."""
    _arrays.allegory_pending_into(memoryview(out), obs, pending)


def action_mask_fast(obs: dict[str, Any], legal: list[dict[str, Any]], pending: list[int] | None = None) -> np.ndarray:
    """``action_mask(obs, legal, pending)``, faster: the same array."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if _arrays.allegory_mask_into(memoryview(mask), obs, legal, pending) < 0:
        return action_mask(obs, legal, pending)  # an action with no index: the reference says why
    return mask
