"""Luck-adjusted results from replays (issue 37, docs/luck.md): no Django."""

from cardroom.luck.estimator import LuckReport, SeatLuck, luck_of

__all__ = ["LuckReport", "SeatLuck", "luck_of"]
