"""Luck-adjusted results from replays (issue 37, docs/luck.md): no Django."""

from __future__ import annotations

from typing import Any

import engine
from engine.form import load_with_engine

# first: the value functions' arithmetic (cardroom.luck.kernel) runs compiled
# with the engine where it was built with it, else as its .py (decision 270)
KERNEL_FORM, KERNEL_FORM_WHY = load_with_engine("cardroom.luck.kernel", engine.ENGINE_FORM)

from cardroom.luck.estimator import LuckReport, Policy, SeatLuck, luck_with  # noqa: E402
from cardroom.luck.games import adapter_for  # noqa: E402

__all__ = ["KERNEL_FORM", "LuckReport", "Policy", "SeatLuck", "adapter_for", "luck_of"]


def luck_of(doc: dict[str, Any], policies: dict[int, Policy] | None = None) -> LuckReport:
    """The luck of every seat in a replay document, with its game's model
    (a replay that does not verify raises ReplayError); ``policies``, the
    seats whose policy is known, adds their action luck."""
    return luck_with(doc, adapter_for, policies)
