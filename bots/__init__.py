"""cardroom's built-in bots.

Each bot is one standalone protocol-v1 program in this folder (a starter kit a
bot author can copy) whose ``choose(observation, legal, rng)`` function the
platform also calls in-process for ``builtin:NAME``. The search bot
(``ismcts_bot.py``) imports ``cardroom_sdk``, as any bot may.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# name -> {game id -> module in this package}; "*" serves every game.
BUILTINS: dict[str, dict[str, str]] = {
    "random": {"*": "random_bot"},
    "greedy": {"allegory": "allegory_greedy", "allegra": "allegra_greedy"},
    "ismcts": {"*": "ismcts_bot"},
}

DESCRIPTIONS = {
    "random": "plays a uniformly random legal action",
    "greedy": "a one-move-lookahead heuristic for the game",
    "ismcts": "search over worlds sampled from what it has seen, every move tried in each, 150 ms of CPU a decision (cardroom_sdk)",
}


# Bots that think for a fixed time at every move: never validation opponents
# (validation checks that a bot plays by the protocol, and should be quick).
SEARCHING = frozenset({"ismcts"})


class UnknownBuiltinError(ValueError):
    pass


def builtin_names() -> list[str]:
    return sorted(BUILTINS)


def _module_name(name: str, game_id: str) -> str:
    games = BUILTINS.get(name)
    if games is None:
        raise UnknownBuiltinError(f"unknown built-in bot {name!r} (built-ins: {', '.join(builtin_names())})")
    module = games.get(game_id) or games.get("*")
    if module is None:
        raise UnknownBuiltinError(f"the built-in bot {name!r} does not play {game_id}")
    return module


def builtin_chooser(name: str, game_id: str) -> Callable[..., dict[str, Any]]:
    """The bot's ``choose(observation, legal, rng)`` function, fresh for each
    seat of each match where the bot keeps a state (``make_choose()``: the
    search bot remembers the seat's earlier observations)."""
    module = importlib.import_module(f"bots.{_module_name(name, game_id)}")
    return module.make_choose() if hasattr(module, "make_choose") else module.choose


def builtin_program(name: str, game_id: str) -> Path:
    """The bot's standalone protocol-v1 program file."""
    return HERE / f"{_module_name(name, game_id)}.py"
