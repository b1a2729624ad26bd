"""The greedy Allegra bot: stronger than random, legal, protocol-clean."""

from __future__ import annotations

import ast
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

from engine.allegra import AllegraGame

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "bots" / "allegra_greedy.py"


def load_bot():
    spec = importlib.util.spec_from_file_location("allegra_greedy_under_test", BOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play(bot, n, seed, bot_seats, wire=False):
    """One game: ``bot_seats`` play the greedy bot, the others uniformly at
    random over the legal actions. Returns the final state."""
    rng = random.Random(seed)
    bot_rngs = {s: random.Random(seed * 31 + s) for s in bot_seats}
    state = AllegraGame(n).new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = rng.choice(state.to_act())
        if seat in bot_seats:
            legal = state.legal_actions(seat)
            obs = state.observation(seat)
            if wire:  # exactly what the bot reads on stdin
                obs, legal = json.loads(json.dumps(obs)), json.loads(json.dumps(legal))
            action = bot.choose(obs, legal, bot_rngs[seat])
            assert action in legal
        else:
            action = state.random_action(seat, rng)  # uniform over the legal actions
        state.apply(seat, action)
        decisions += 1
        assert decisions < 20_000, "the game does not end"
    return state


def test_greedy_beats_three_random_players():
    bot = load_bot()
    ranks = []
    for game in range(60):
        seat = random.Random(game).randrange(4)
        state = play(bot, 4, 1000 + game, {seat})
        ranks.append(state.result().ranks[seat])
    assert sum(ranks) / len(ranks) < 1.8


def test_greedy_plays_legally_with_every_player_count_and_against_itself():
    bot = load_bot()
    for n in range(2, 7):
        play(bot, n, n, set(range(n)), wire=True)  # all greedy: the rounds still end
        play(bot, n, 10 + n, {0}, wire=True)


def test_greedy_is_one_standard_library_file_with_the_starter_loop():
    tree = ast.parse(BOT.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= set(sys.stdlib_module_names)

    def run_source(path):
        src = path.read_text(encoding="utf-8")
        return src[src.index("# --- protocol v1 loop") :]

    assert run_source(BOT) == run_source(ROOT / "bots" / "random_bot.py")


def test_greedy_speaks_protocol_v1():
    state = AllegraGame(3).new_initial_state()
    rng = random.Random(7)
    state.apply_chance(state.sample_chance(rng))
    lines = [
        {
            "type": "start",
            "protocol": 1,
            "game": "allegra",
            "seat": 0,
            "num_players": 3,
            "match_id": "t",
            "options": {},
            "time": {"per_move_ms": 1000, "total_ms": 60000},
        },
        {"type": "act", "observation": state.observation(0), "legal": state.legal_actions(0), "time_left_ms": 60000},
        {"type": "end", "observation": state.observation(0), "result": {}},
    ]
    proc = subprocess.run(
        [sys.executable, str(BOT)],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[0] == {"type": "ready"}
    assert replies[1]["type"] == "action" and replies[1]["action"] in state.legal_actions(0)
    assert len(replies) == 2
