"""The search bot, builtin:ismcts (issue 22, item 3): ISMCTS over
``cardroom_sdk.sample_world``, written only against the public SDK. It plays
whole games of both games at every table size, deterministically given its
seed and a budget in iterations, through the runner in-process and as a
sandboxed program that imports cardroom_sdk."""

from __future__ import annotations

import ast
import random
import shutil
import time
from pathlib import Path

import pytest

from bots import builtin_chooser, ismcts_bot
from cardroom.runner import run_match
from engine import new_game
from engine.replay import verify
from tests.sdk.positions import new_game as table_game
from tests.sdk.positions import play

ROOT = Path(__file__).resolve().parents[2]


def _play_with_search(game_id: str, players: int, seed: int, iterations: int) -> list[dict]:
    """A game where seat 0 searches and the others play at random; returns
    the search's actions."""
    rng = random.Random(seed)
    state = new_game(game_id, players).new_initial_state()
    history: list[dict] = []
    chosen = []
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        if seat == 0:
            obs = state.observation(0)
            action, done = ismcts_bot.decide(obs, state.legal_actions(0), random.Random(seed * 1000 + len(chosen)), history, None, iterations)
            assert done == 0 or done >= iterations
            history.append(obs)
            chosen.append(action)
        else:
            action = state.random_action(seat, rng)
        state.apply(seat, action)  # raises if the search chose an illegal action
    return chosen


@pytest.mark.parametrize("game_id", ["allegory", "allegra"])
@pytest.mark.parametrize("players", [2, 3, 6])
def test_the_search_plays_legal_moves_to_the_end(game_id, players):
    assert _play_with_search(game_id, players, seed=players, iterations=4)


def test_the_search_is_deterministic_given_its_seed_and_iterations():
    first = _play_with_search("allegory", 2, seed=9, iterations=12)
    assert _play_with_search("allegory", 2, seed=9, iterations=12) == first
    assert _play_with_search("allegory", 2, seed=10, iterations=12) != first


def test_distribute_is_searched_over_concrete_fillings():
    template = {"type": "distribute", "total": 5, "cards": ["owl:-2", "key:4", "shell:1"]}
    fillings = ismcts_bot.candidates([template])
    assert {"type": "distribute", "chips": {"owl:-2": 5}} in fillings
    assert {"type": "distribute", "chips": {"owl:-2": 2, "key:4": 2, "shell:1": 1}} in fillings
    assert all(sum(f["chips"].values()) == 5 for f in fillings)
    assert ismcts_bot.candidates([{"type": "distribute", "total": 0, "cards": ["owl:-2"]}]) == [
        {"type": "distribute", "chips": {}}
    ]


def test_the_search_bot_uses_only_the_public_sdk():
    tree = ast.parse((ROOT / "bots" / "ismcts_bot.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "json", "math", "random", "time", "cardroom_sdk"}, imported


def test_each_seat_gets_its_own_history():
    one, other = builtin_chooser("ismcts", "allegra"), builtin_chooser("ismcts", "allegra")
    assert one is not other


@pytest.mark.sandbox
def test_builtin_and_sandboxed_program_play_full_matches(tmp_path, monkeypatch):
    """builtin:ismcts in-process, and its file as an uploaded bot would run:
    in the sandbox, importing cardroom_sdk; both replays verify."""
    record = run_match("allegory", ["builtin:ismcts", "builtin:greedy"], seed=3)
    assert not record.forfeits and verify(record.replay).result.ranks == record.result.ranks
    program = tmp_path / "search_bot.py"
    source = (ROOT / "bots" / "ismcts_bot.py").read_text().replace("TIME_MS = 150", "TIME_MS = 20", 1)
    program.write_text(source)
    monkeypatch.setenv("CARDROOM_SANDBOX", "bwrap")
    record = run_match("allegra", [str(program), "builtin:random"], seed=4)
    assert not record.forfeits, record.logs
    assert verify(record.replay).result.ranks == record.result.ranks
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_the_ismcts_tree_plays_allegory_deterministically(monkeypatch):
    monkeypatch.setattr(ismcts_bot, "TREE", True)
    first = _play_with_search("allegory", 3, seed=5, iterations=6)
    assert _play_with_search("allegory", 3, seed=5, iterations=6) == first


@pytest.mark.parametrize("players", [2, 4])
def test_allegra_search_sees_the_triples_a_card_makes(players):
    """Where the search and its playouts put a card, the triples it counts
    are exactly the cards the engine removes (greedy play makes triples;
    the search once missed them and played its area worse than greedy)."""
    made = 0
    for step, (state, _histories) in enumerate(play(table_game("allegra", players), seed=players, policy="greedy")):
        if state.is_terminal() or step == 300:
            break
        seat = state.to_act()[0]
        view = state.observation(None)
        if view["phase"] not in ("turn", "drawn"):
            continue
        table = ismcts_bot.Table(view, 5.0)
        card = view["discard"][-1] if view["drawn"] is None else view["drawn"]
        for action in state.legal_actions(seat):
            if action["type"] in ("take_discard", "swap"):
                after = state.clone()
                removed = len(after.observation(None)["removed"])
                after.apply(seat, action)
                if after.is_terminal() or after.is_chance_node() or after.observation(None)["round"] != view["round"]:
                    continue  # the round ended: every card turned up, triples removed once more
                gone = len(after.observation(None)["removed"]) - removed
                assert len(table.triples(tuple(action["slot"]), card)) == gone, action
                made += gone > 0
    assert made


def test_the_cpu_budget_stops_at_its_wall_time_bound():
    """The budget is CPU time, but a busy machine cannot stretch a decision
    past its wall-time bound (which keeps the bot from forfeiting)."""
    state = new_game("allegra", 4).new_initial_state()
    rng = random.Random(1)
    while state.is_chance_node() or state.legal_actions(state.to_act()[0])[0]["type"] == "reveal":
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply(state.to_act()[0], state.random_action(state.to_act()[0], rng))
    seat = state.to_act()[0]
    started = time.perf_counter()
    _, done = ismcts_bot.decide(state.observation(seat), state.legal_actions(seat), rng, [], time_ms=60_000, wall_ms=100)
    assert done > 0 and time.perf_counter() - started < 5
