"""Allegra: Golf with shared columns. Rules: docs/rules-allegra.md."""

from engine.allegra.game import AllegraGame, AllegraState

__all__ = ["AllegraGame", "AllegraState"]
