"""Luck-adjusted results from replays (issue 37, docs/luck.md): no Django."""

from __future__ import annotations

from typing import Any

from cardroom.luck.estimator import LuckReport, Policy, SeatLuck, luck_with
from cardroom.luck.games import adapter_for

__all__ = ["LuckReport", "Policy", "SeatLuck", "adapter_for", "luck_of"]


def luck_of(doc: dict[str, Any], policies: dict[int, Policy] | None = None) -> LuckReport:
    """The luck of every seat in a replay document, with its game's model
    (a replay that does not verify raises ReplayError); ``policies``, the
    seats whose policy is known, adds their action luck."""
    return luck_with(doc, adapter_for, policies)
