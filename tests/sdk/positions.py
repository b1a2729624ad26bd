"""Positions from real games for the SDK's tests: random or greedy play
through the engine, each seat's observations kept as it would receive them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import engine
from bots import builtin_chooser


@dataclass
class Position:
    state: engine.State  # the real state (a clone)
    seat: int
    observation: dict
    history: list[dict]  # the seat's earlier decision observations, oldest first


def new_game(game: str, n: int, unique_morals: bool = False) -> engine.Game:
    return engine.new_game(game, n, {"unique_morals": unique_morals} if game == "allegory" else None)


def play(g: engine.Game, seed: int, policy: str = "random") -> Iterator[tuple[engine.State, dict[int, list[dict]]]]:
    """Yield (state, histories) at every decision and at the end; histories
    maps each seat to the observations of its decisions so far (what
    ``run`` keeps as ``context.history``)."""
    rng = random.Random(seed)
    greedy = builtin_chooser("greedy", g.id) if policy == "greedy" else None  # "drawer": see _drawer
    state = g.new_initial_state()
    histories: dict[int, list[dict]] = {s: [] for s in range(g.num_players)}
    while True:
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        yield state, histories
        if state.is_terminal():
            return
        seat = rng.choice(state.to_act())
        observation = state.observation(seat)
        if greedy is not None:
            action = greedy(observation, state.legal_actions(seat), rng)
        elif policy == "drawer":
            action = _drawer(state, seat, observation, rng)
        else:
            action = state.random_action(seat, rng)
        histories[seat].append(observation)
        state.apply(seat, action)


def _drawer(state: engine.State, seat: int, observation: dict, rng: random.Random) -> dict:
    """Allegra play that runs the deck out: always draw, and swap the drawn
    card onto a face-up card (so no face-down card is turned and the round
    lasts until the deck must be reshuffled)."""
    legal = state.legal_actions(seat)
    if {"type": "draw"} in legal:
        return {"type": "draw"}
    grids = observation["grids"]
    face_up_swaps = [
        a for a in legal if a["type"] == "swap" and type(grids[a["slot"][0]][a["slot"][1]][a["slot"][2]]) is int
    ]
    return rng.choice(face_up_swaps or legal)


def positions(g: engine.Game, seed: int, every: float = 0.1, policy: str = "random") -> Iterator[Position]:
    """A sample of positions of one game: at each decision, with probability
    ``every``, one seat to act (any seat at the end)."""
    pick = random.Random(seed ^ 0x5EED)
    for state, histories in play(g, seed, policy):
        if state.is_terminal() or pick.random() < every:
            seat = pick.randrange(g.num_players) if state.is_terminal() else pick.choice(state.to_act())
            yield Position(state.clone(), seat, state.observation(seat), list(histories[seat]))
