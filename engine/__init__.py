"""cardroom's rules engine: Allegory and Allegra in pure Python.

Use ``engine.new_game("allegra", 4)`` (or ``engine.get_game_class``) and the
state API in ``engine.core``. Nothing here imports Django.

The same rules also run compiled (mypyc) where ``make setup`` built them;
``ENGINE_FORM`` says which form this process runs and ``ENGINE_FORM_WHY``
why (``engine/form.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import form as _form

# first: the form is chosen before any rules module is imported
ENGINE_FORM, ENGINE_FORM_WHY = _form.load()

from engine.core import (  # noqa: E402
    CHANCE,
    Action,
    EngineError,
    Game,
    GameNotFoundError,
    GameOptionError,
    IllegalActionError,
    PlayerCountError,
    Result,
    State,
    competition_ranks,
)


def _registry() -> dict[str, type[Game]]:
    # Imported lazily so that importing ``engine.core`` alone stays cheap.
    from engine.allegory import AllegoryGame
    from engine.allegra import AllegraGame

    return {AllegoryGame.id: AllegoryGame, AllegraGame.id: AllegraGame}


def game_ids() -> list[str]:
    return sorted(_registry())


def game_choices() -> list[tuple[str, str]]:
    """Every game as (id, name), in id order: the choices of forms, the API
    and the command line."""
    games = _registry()
    return [(game_id, games[game_id].name) for game_id in sorted(games)]


def get_game_class(game_id: str) -> type[Game]:
    games = _registry()
    try:
        return games[game_id]
    except (KeyError, TypeError):
        raise GameNotFoundError(f"unknown game {game_id!r} (games: {', '.join(sorted(games))})") from None


def new_game(game_id: str, num_players: int, options: Mapping[str, Any] | None = None) -> Game:
    return get_game_class(game_id)(num_players, options)


__all__ = [
    "CHANCE",
    "ENGINE_FORM",
    "ENGINE_FORM_WHY",
    "Action",
    "EngineError",
    "Game",
    "GameNotFoundError",
    "GameOptionError",
    "IllegalActionError",
    "PlayerCountError",
    "Result",
    "State",
    "competition_ranks",
    "game_choices",
    "game_ids",
    "get_game_class",
    "new_game",
]
