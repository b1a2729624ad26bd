"""Allegory (cardroom's first game): see docs/rules-allegory.md."""

from engine.allegory.game import AllegoryGame, AllegoryState

__all__ = ["AllegoryGame", "AllegoryState"]
