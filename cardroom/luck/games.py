"""Each game's luck model: its chance steps and value function (the
adapters of cardroom.luck.allegra and cardroom.luck.allegory)."""

from __future__ import annotations

from cardroom.luck.allegory import AllegoryAdapter
from cardroom.luck.allegra import AllegraAdapter
from cardroom.luck.estimator import Adapter
from engine import get_game_class
from engine.replay import ReplayError

ADAPTERS = {"allegory": AllegoryAdapter, "allegra": AllegraAdapter}


def adapter_for(game: str) -> Adapter:
    if game not in ADAPTERS:
        get_game_class(game)  # raises GameNotFoundError naming the games
        raise ReplayError(f"no luck model for game {game!r}")
    return ADAPTERS[game]()
