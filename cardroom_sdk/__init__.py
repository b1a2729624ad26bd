"""cardroom_sdk: what a Python bot needs beyond the standard library.

Three functions (docs/sdk.md):

* ``run(choose)`` speaks bot protocol v1 on stdin/stdout and calls
  ``choose(observation, legal)`` (or ``choose(observation, legal, context)``)
  for every decision;
* ``new_game(game, num_players, options=None)`` is the rules engine's Game,
  for simulating: ``game.new_initial_state()``, and on a State
  ``legal_actions(seat)``, ``apply(seat, action)``, ``is_chance_node()``,
  ``sample_chance(rng)``, ``apply_chance(event)``, ``to_act()``,
  ``random_action(seat, rng)``, ``clone()``, ``is_terminal()``, ``result()``,
  ``observation(seat)``;
* ``sample_world(observation, rng=None, history=None)`` is an engine State
  that agrees with everything the seat knows, drawn at random among all such
  states: the hidden cards are dealt from the cards the seat cannot account
  for.

Nothing here imports Django; the SDK needs only the ``engine`` package.
"""

from __future__ import annotations

from cardroom_sdk.protocol import Context, private_rng, run
from cardroom_sdk.worlds import sample_world
from engine import CHANCE, Action, EngineError, Game, IllegalActionError, Result, State, game_ids
from engine import new_game as _engine_new_game

__version__ = "1"


def new_game(game: str, num_players: int, options: dict | None = None) -> Game:
    """The engine's Game ``game`` ("allegory" or "allegra") for
    ``num_players`` seats with ``options`` (a bot's ``start`` message has
    all three). Raises ``engine.EngineError`` subclasses on a bad game,
    player count or option."""
    return _engine_new_game(game, num_players, options)


__all__ = [
    "CHANCE",
    "Action",
    "Context",
    "EngineError",
    "Game",
    "IllegalActionError",
    "Result",
    "State",
    "game_ids",
    "new_game",
    "private_rng",
    "run",
    "sample_world",
]
