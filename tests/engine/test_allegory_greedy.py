"""The greedy Allegory bot clearly beats random play (a small version of the
500-game check described in docs/rules-allegory.md)."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path

from bots import allegory_greedy, random_bot
from engine.allegory import AllegoryGame

GAMES = 60


def play_one(index: int, num_players: int = 4) -> int:
    """One seeded game: the greedy bot in a rotating seat, random players in
    the others. Returns the greedy bot's rank."""
    rng = random.Random(index)
    bot_rng = random.Random(10_000 + index)
    greedy_seat = index % num_players
    state = AllegoryGame(num_players).new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        observation = state.observation(seat)
        if seat == greedy_seat:
            action = allegory_greedy.choose(observation, legal, bot_rng)
        else:
            action = random_bot.choose(observation, legal, rng)
        state.apply(seat, action)  # raises if the bot's action is illegal
    return state.result().ranks[greedy_seat]


def test_greedy_bot_beats_three_random_players():
    ranks = [play_one(i) for i in range(GAMES)]
    assert sum(ranks) / GAMES < 1.8


def test_greedy_bot_plays_legally_with_two_to_six_players():
    for n in (2, 3, 5, 6):
        for i in range(5):
            assert 1 <= play_one(i, n) <= n


def test_greedy_bot_is_one_standalone_file():
    path = Path(allegory_greedy.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"json", "os", "random", "sys"}  # os: the environment's CARDROOM_BOT_SEED
    source = path.read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":\n    run(choose)' in source


def test_greedy_bot_protocol_loop_is_the_starter_kit_loop():
    marker = "# --- protocol v1 loop"
    ours = Path(allegory_greedy.__file__).read_text(encoding="utf-8")
    starter = Path(random_bot.__file__).read_text(encoding="utf-8")
    assert ours[ours.index(marker) :] == starter[starter.index(marker) :]


def test_greedy_bot_speaks_protocol_v1_over_stdio():
    state = AllegoryGame(3).new_initial_state()
    state.apply_chance(state.sample_chance(random.Random(7)))
    messages = [
        {"type": "start", "protocol": 1, "game": "allegory", "seat": 0, "num_players": 3, "match_id": "t",
         "options": {"unique_morals": False}, "time": {"per_move_ms": 1000, "total_ms": 60000}},
        {"type": "act", "observation": state.observation(0), "legal": state.legal_actions(0), "time_left_ms": 60000},
        {"type": "end", "observation": state.observation(0), "result": {}},
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, allegory_greedy.__file__],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    ready, answer = [json.loads(line) for line in proc.stdout.splitlines()]
    assert ready == {"type": "ready"} and answer["type"] == "action"
    state.apply(0, answer["action"])
