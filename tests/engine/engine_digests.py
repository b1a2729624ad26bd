"""Digests of random games, to hold the engine equal to its recorded behaviour.

``digest_game`` plays one seeded random game (chance events from the same
rng) and hashes every event, the result and, where asked, every seat's and
the spectator's observation and legal actions at each step. The digests in
tests/data/engine_digests.json were recorded from the engine at commit
0792d29 (before the speed work of issue 22), by

    .venv/bin/python tests/engine/engine_digests.py > tests/data/engine_digests.json

so any change of behaviour since (a different event, observation, legal
action list, random choice or score) changes a digest.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import engine  # noqa: E402

# (game, players, options): every table the engine supports
TABLES = [("allegory", n, {"unique_morals": um}) for n in range(2, 7) for um in (False, True)] + [
    ("allegra", n, None) for n in range(2, 7)
]
GAMES_PER_TABLE = 500  # events and result of each
OBSERVED_GAMES = 20  # of those, the first ones also hash observations and legal actions at every step


def table_key(game_id: str, n: int, options: dict | None) -> str:
    return f"{game_id}/{n}/{json.dumps(options, sort_keys=True)}"


def digest_game(game_id: str, n: int, options: dict | None, seed: int, observe: bool) -> str:
    h = hashlib.sha256()

    def put(x) -> None:
        h.update(json.dumps(x, sort_keys=True, separators=(",", ":")).encode())
        h.update(b"\n")

    rng = random.Random(seed)
    state = engine.new_game(game_id, n, options).new_initial_state()
    while not state.is_terminal():
        if observe:
            put([state.observation(None), [state.observation(s) for s in range(n)]])
            put([state.legal_actions(s) for s in range(n)])
        if state.is_chance_node():
            chance = state.sample_chance(rng)
            put(["chance", chance])
            state.apply_chance(chance)
            continue
        to_act = state.to_act()
        seat = to_act[int(rng.random() * len(to_act))]
        action = state.random_action(seat, rng)
        put([to_act, seat, action])
        # a clone plays on identically: checked on the next step's hashes
        if observe:
            state = state.clone()
        state.apply(seat, action)
    result = state.result()
    put([result.scores, result.ranks, result.details])
    if observe:
        put(state.observation(None))
    return h.hexdigest()


def record() -> dict[str, list[str]]:
    return {
        table_key(g, n, o): [digest_game(g, n, o, seed, seed < OBSERVED_GAMES) for seed in range(GAMES_PER_TABLE)]
        for g, n, o in TABLES
    }


if __name__ == "__main__":
    json.dump(record(), sys.stdout, indent=0)
    print()
