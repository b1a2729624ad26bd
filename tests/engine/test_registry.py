"""The engine's registry answers what the rest of cardroom asks of the
games: their ids and names (forms, the API, the command line) and which way
their scores rank (the standings' margins)."""

from __future__ import annotations

import random

import pytest

import engine
from cardroom.bench import play_out


def test_the_choices_are_the_registry_in_id_order():
    assert [game_id for game_id, _name in engine.game_choices()] == engine.game_ids() == sorted(engine.game_ids())
    for game_id, name in engine.game_choices():
        assert engine.get_game_class(game_id).name == name


@pytest.mark.parametrize("game_id", engine.game_ids())
def test_a_game_says_which_way_its_scores_rank(game_id):
    lower_wins = engine.get_game_class(game_id).lower_scores_win
    for seed in range(5):
        state = engine.new_game(game_id, 4).new_initial_state()
        play_out(state, random.Random(seed))
        result = state.result()
        best = min(result.scores) if lower_wins else max(result.scores)
        assert [s for s, r in zip(result.scores, result.ranks) if r == 1] == [best] * result.ranks.count(1)
