"""The engine answers for its games' length: ``Game.max_game_length()``
(OpenSpiel's name) bounds the decisions of every game, and
``max_decisions_per_seat()`` those of one seat, from the rules' numbers
(docs/decisions/235-the-engine-bounds-a-game-s-length.md)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import engine
from cardroom.bench import play_random_game

REPLAYS = Path(__file__).resolve().parents[1] / "data" / "replays"


@pytest.mark.parametrize("game_id", engine.game_ids())
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_random_games_stay_within_the_bound(game_id, n):
    game = engine.new_game(game_id, n)
    bound = game.max_game_length()
    for seed in range(3):
        assert play_random_game(game, random.Random(seed)) <= bound

def test_the_longest_allegra_game_is_within_the_bound_and_the_bound_is_not_silly():
    replay = json.loads((REPLAYS / "allegra-2p-turn-limit.json").read_text())
    decisions = sum(1 for e in replay["events"] if e["by"] != "chance")
    bound = engine.new_game("allegra", 2).max_game_length()
    assert decisions <= bound < 3 * decisions


def test_the_bounds_grow_with_the_players():
    for game_id in engine.game_ids():
        lengths = [engine.new_game(game_id, n).max_game_length() for n in (2, 3, 4, 6)]
        assert lengths == sorted(set(lengths))
    assert engine.new_game("allegra", 4).max_decisions_per_seat() > engine.new_game("allegra", 2).max_decisions_per_seat()
    assert engine.new_game("allegory", 2).max_decisions_per_seat() is None  # the time control bounds a seat
