"""One game's trace, to hold the compiled engine equal to the reference.

``trace_game`` plays a seeded random game and yields a record of everything
a caller can see at every step: the state's every field, whose turn it is,
the chance event drawn, the acting seat's legal actions, its random and
default actions, and the result. In the "observed" games it also yields
every seat's and the spectator's observation and legal actions, the
arrays ``engine.arrays`` writes of them (the fast form of the SDK's codecs;
tests/sdk/research_conformance.py holds it to the codecs themselves), a world
sampled with ``cardroom_sdk.sample_world``, and the engine's answer to bad
input (junk actions, wrong or ill-typed seats: the error's type and message,
and that the state did not change). Two processes, one per form of the
engine (``CARDROOM_ENGINE``), hash the same games; tests/engine/
test_engine_forms.py compares the digests.

    CARDROOM_ENGINE=reference python -m tests.engine.differential allegra 4 7
    CARDROOM_ENGINE=compiled  python -m tests.engine.differential allegra 4 7

print one game's records (game, players, seed), to diff where they differ.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import engine  # noqa: E402
from engine.form import state_fields  # noqa: E402

# (game, players, options): every table the engine supports
TABLES: list[tuple[str, int, dict | None]] = [
    ("allegory", n, {"unique_morals": um}) for n in range(2, 7) for um in (False, True)
] + [("allegra", n, None) for n in range(2, 7)]
GAMES_PER_TABLE = 100
OBSERVED_GAMES = 3  # of those, the first ones also get the observed records
FIELDS_EVERY = 16  # steps between two records of every field (and at the end)
LEGAL_EVERY = 3  # steps between two records of the legal actions (every step when observed)
PROBE_EVERY = 4  # steps between two bad-input probes of an observed game
WORLD_EVERY = 10  # steps between two sampled worlds of an observed game
FIRST_SEED = 10_000  # other games than tests/engine/engine_digests.py's

# bad input for apply (every phase refuses each of these)
JUNK_ACTIONS: list[Any] = [
    None, [], "draw", 3, {}, {"type": 5}, {"type": "draw", "extra": 1}, {"type": "bid", "amount": True},
    {"type": "bid", "amount": 10**6}, {"type": "rest", "claim": 7}, {"type": "take", "card": "nothing"},
    {"type": "distribute", "chips": {"nothing": 1}}, {"type": "take_discard", "slot": [0, 0]},
    {"type": "swap", "slot": [9, 9, 9]}, {"type": "swap", "slot": ["0", 0, 0]},
    {"type": "discard", "flip": [0, 0, 0]}, {"type": "exchange", "take": [0, 0, 0], "put": "x"},
    {"type": "give", "to": True}, {"type": "place", "slot": [0, 0, 0], "more": None}, {"type": "knock", "x": 1},
]  # fmt: skip
BAD_SEATS: list[Any] = [-1, 7, True, False, "0", None, 1.0, [0]]
# seats that can never act (True and 1.0 equal seat 1: Allegra lets them)
FOREIGN_SEATS: list[Any] = [-1, 7, "0", None, [0]]


def _fields(state) -> str:
    # every field but the game and Allegra's shared table layout (objects)
    return repr([(name, getattr(state, name)) for name in state_fields(state) if name not in ("game", "lay")])


def _outcome(method, *args) -> Any:
    try:
        return ["ok", method(*args)]
    except engine.EngineError as exc:  # the engine's answer: the same words in both forms
        return ["error", type(exc).__name__, str(exc)]
    except Exception as exc:  # Python's own (a float seat as an index): the same kind of error
        return ["error", type(exc).__name__]


def _tried(state, before: str, method: str, *args) -> Any:
    """``method`` on a copy of ``state``: the outcome, and whether the copy
    is unchanged (it must be when the input was refused)."""
    copy = state.clone()
    return [_outcome(getattr(copy, method), *args), _fields(copy) == before]


def _arrays(game_id: str, state, n: int, to_act: list[int]) -> list[Any]:
    """Every seat's observation array and mask as ``engine.arrays`` writes
    them (bytes), with an Allegory distribute half placed where one is due,
    and Allegra's action mapping of the legal actions and of some indices."""
    from engine import arrays

    if game_id == "allegory":
        size, actions = arrays.ALLEGORY_OBS_SIZE, arrays.ALLEGORY_ACTIONS
    else:
        size, actions = arrays.ALLEGRA_OBS_SIZE, arrays.ALLEGRA_ACTIONS
    shown = []
    for seat in range(n):
        obs = state.observation(seat)
        legal = state.legal_actions(seat) if seat in to_act else []
        out, mask = array("f", bytes(4 * size)), array("b", bytes(actions))
        if game_id == "allegory":
            pending = [i % 2 for i in range(len(obs["pool"]))] if obs["phase"] == "distribute" else None
            written = [
                arrays.allegory_encode_into(out, obs, pending),
                arrays.allegory_mask_into(mask, obs, legal, pending),
            ]
            if pending is not None:  # the same chips written over the array of none
                over = array("f", bytes(4 * size))
                arrays.allegory_encode_into(over, obs, None)
                arrays.allegory_pending_into(over, obs, pending)
                written.append(over == out)
        else:
            written = [arrays.allegra_encode_into(out, obs, FRACTIONS), arrays.allegra_mask_into(mask, obs, legal)]
            # the action mapping both ways: the legal actions, then every 7th index
            written.append([arrays.allegra_index(obs, action) for action in legal])
            written.append([arrays.allegra_action(obs, i) for i in range(0, arrays.ALLEGRA_ACTIONS, 7)])
        shown.append([written, out.tobytes(), mask.tobytes()])
    return shown


# Allegra's discard counts: any table does to compare the forms (the codec's is float32 sums)
FRACTIONS = [[c / 16 for c in range(16)] for _ in range(20)]


def trace_game(game_id: str, n: int, options: dict | None, seed: int, observe: bool) -> Iterator[Any]:
    rng = random.Random(seed)
    probe = random.Random(seed + 1)  # bad input and sampled worlds: a stream of their own
    state = engine.new_game(game_id, n, options).new_initial_state()
    histories: list[list[dict]] = [[] for _ in range(n)]
    step = 0
    while not state.is_terminal():
        step += 1
        probing = observe and step % PROBE_EVERY == 0
        here = [_fields(state) if step % FIELDS_EVERY == 0 else None, state.is_chance_node(), state.to_act()]
        if observe:
            yield [state.observation(None), [state.observation(s) for s in range(n)]]
            yield [state.legal_actions(s) for s in range(n)]
            if not state.is_chance_node():
                yield ["arrays", _arrays(game_id, state, n, state.to_act())]
        if probing:
            yield [[_outcome(f, s) for s in BAD_SEATS] for f in (state.observation, state.legal_actions)]
        if state.is_chance_node():
            chance = state.sample_chance(rng)
            yield [*here, state.chance_kind(), _outcome(state.random_action, 0, probe), chance]
            state.apply_chance(chance)
            continue
        to_act = state.to_act()
        seat = to_act[int(rng.random() * len(to_act))]
        action = state.random_action(seat, rng)
        legal = state.legal_actions(seat) if observe or step % LEGAL_EVERY == 0 else None
        yield [*here, legal, state.default_action(seat), seat, action]
        if probing:
            before = _fields(state)
            junk = JUNK_ACTIONS[int(probe.random() * len(JUNK_ACTIONS))]
            other = (seat + 1) % n
            bad_seat = BAD_SEATS[int(probe.random() * len(BAD_SEATS))]
            foreign = FOREIGN_SEATS[int(probe.random() * len(FOREIGN_SEATS))]
            yield [
                _tried(state, before, "apply", seat, junk),
                _tried(state, before, "apply", foreign, action),
                [] if other in to_act else _tried(state, before, "apply", other, action),
                _tried(state, before, "apply_chance", {"type": "deal", "deck": []}),
                _outcome(state.random_action, bad_seat, random.Random(step)),
                _outcome(state.default_action, bad_seat),
            ]
        if observe:
            obs = state.observation(seat)
            if step % WORLD_EVERY == 0:
                from cardroom_sdk import sample_world

                world = sample_world(obs, probe, histories[seat])
                yield ["world", _fields(world), world.observation(None), world.legal_actions(seat)]
            histories[seat].append(obs)
            state = state.clone()  # the clone plays on: checked by the next records
        state.apply(seat, action)
    result = state.result()
    yield [result.scores, result.ranks, result.details, state.result({0}).ranks, _fields(state)]
    if observe:
        yield [state.observation(None), [state.observation(s) for s in range(n)]]


def digest(records: Iterator[Any]) -> str:
    # repr, not JSON: faster, and it also sees the order of a dict's keys
    h = hashlib.sha256()
    for record in records:
        h.update(repr(record).encode())
        h.update(b"\n")
    return h.hexdigest()


def digests() -> dict[str, list[str]]:
    """Every table's game digests, in this process's form."""
    out = {}
    for game_id, n, options in TABLES:
        key = f"{game_id}/{n}/{json.dumps(options, sort_keys=True)}"
        out[key] = [
            digest(trace_game(game_id, n, options, FIRST_SEED + i, i < OBSERVED_GAMES)) for i in range(GAMES_PER_TABLE)
        ]
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--digests"]:
        print(json.dumps({"form": engine.ENGINE_FORM, "digests": digests()}))
    else:
        game_id, players, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else ({"unique_morals": False} if game_id == "allegory" else None)
        for record in trace_game(game_id, players, options, seed, True):
            print(json.dumps(record, sort_keys=True, default=repr))
