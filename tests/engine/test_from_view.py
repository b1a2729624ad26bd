"""``from_view``: a state rebuilt from a spectator's full view is the same
state (same views for every seat, same legal actions, same future)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.allegory.game import AllegoryState
from engine.allegra.game import AllegraState
from engine.core import EngineError


def rebuild(state):
    view = state.observation(None)
    if isinstance(state, AllegoryState):
        return AllegoryState.from_view(state.game, view)
    return AllegraState.from_view(state.game, view, final_queue=list(state.queue), held_public=state.held_public)


def step(state, rng, events):
    if state.is_chance_node():
        event = state.sample_chance(rng)
        state.apply_chance(event)
    else:
        seat = rng.choice(state.to_act())
        event = (seat, state.random_action(seat, rng))
        state.apply(*event)
    events.append(event)


def replay(state, events):
    for event in events:
        if isinstance(event, tuple):
            state.apply(*event)
        else:
            state.apply_chance(event)


@settings(max_examples=30, deadline=None)
@given(
    game=st.sampled_from(["allegory", "allegra"]),
    n=st.integers(2, 6),
    unique=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_state_rebuilt_from_its_full_view_plays_on_identically(game, n, unique, seed):
    rng = random.Random(seed)
    g = engine.new_game(game, n, {"unique_morals": unique} if game == "allegory" else None)
    state = g.new_initial_state()
    checked = 0
    while not state.is_terminal():
        if not state.is_chance_node() and rng.random() < 0.05:
            copy = rebuild(state)
            checked += 1
            for seat in range(n):
                assert copy.observation(seat) == state.observation(seat)
                assert copy.legal_actions(seat) == state.legal_actions(seat)
            assert copy.observation(None) == state.observation(None)
            # the same events from here on give the same game
            ahead, events = state.clone(), []
            while not ahead.is_terminal():
                step(ahead, rng, events)
            replay(copy, events)
            assert copy.observation(None) == ahead.observation(None)
            assert copy.result().as_dict() == ahead.result().as_dict()
        step(state, rng, [])
    assert rebuild(state).observation(None) == state.observation(None)


def allegra_midgame(seed=3, n=3):
    rng = random.Random(seed)
    state = engine.new_game("allegra", n).new_initial_state()
    while state.is_chance_node() or state.observation(None)["phase"] == "reveal":
        step(state, rng, [])
    return state


def test_a_view_that_no_state_has_is_refused():
    state = allegra_midgame()
    view = state.observation(None)
    duplicated = dict(view, discard=view["discard"] + [view["discard"][-1]])
    with pytest.raises(EngineError, match="exactly once"):
        AllegraState.from_view(state.game, duplicated)
    wrong_turn = dict(view, to_act=[(view["active"] + 1) % 3])
    with pytest.raises(EngineError, match="act"):
        AllegraState.from_view(state.game, wrong_turn)
    with pytest.raises(EngineError, match="not in phase"):
        AllegraState.from_view(state.game, dict(view, phase="deal"))

    g = engine.new_game("allegory", 3)
    s = g.new_initial_state()
    s.apply_chance(s.sample_chance(random.Random(1)))
    view = s.observation(None)
    with pytest.raises(EngineError, match="exactly once"):
        AllegoryState.from_view(g, dict(view, deck=view["deck"][1:]))
    with pytest.raises(EngineError, match="Moral"):
        AllegoryState.from_view(g, dict(view, morals=["owl", "owl", "owl"]))
