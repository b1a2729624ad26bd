"""Research interfaces (the ``research`` extra: pettingzoo, gymnasium, numpy, open_spiel).

``from cardroom_sdk.envs import allegory_v1, allegra_v1`` gives the PettingZoo
AEC environments; ``cardroom_sdk.envs.gym`` the single-agent Gymnasium
wrapper; ``import cardroom_sdk.envs.openspiel`` registers the OpenSpiel games
``python_allegory`` and ``python_allegra``. Nothing else in cardroom imports this package, so the platform does
not need these libraries.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from engine import game_ids

__all__ = ["allegory_v1", "allegra_v1", "codec"]


def codec(game_id: str) -> ModuleType:
    """The codec of a game of the engine's registry: its observation array
    and action indices (``cardroom_sdk.envs.<game>_codec``)."""
    if game_id not in game_ids():
        raise ValueError(f"game must be one of {', '.join(game_ids())}, not {game_id!r}")
    return importlib.import_module(f"cardroom_sdk.envs.{game_id}_codec")


def __getattr__(name: str):
    # imported on first use, so that the codecs load without pettingzoo
    if name in ("allegory_v1", "allegra_v1"):
        return importlib.import_module(f"cardroom_sdk.envs.{name}")
    raise AttributeError(name)
