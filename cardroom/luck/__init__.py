"""Luck-adjusted results from replays (issue 37, docs/luck.md): no Django."""

from __future__ import annotations

from typing import Any

from cardroom.luck.estimator import LuckReport, SeatLuck, luck_with
from cardroom.luck.games import adapter_for

__all__ = ["LuckReport", "SeatLuck", "adapter_for", "luck_of"]


def luck_of(doc: dict[str, Any]) -> LuckReport:
    """The luck of every seat in a replay document, with its game's model
    (a replay that does not verify raises ReplayError)."""
    return luck_with(doc, adapter_for)
