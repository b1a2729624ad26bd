"""A match's wall-clock ceiling, derived from its time control.

Each seat may think for at most its start-up limit plus the lesser of its
whole-match budget (``total_ms``) and ``per_move_ms`` times the most
decisions it can face (plus its overage bank); the ceiling is the sum over
the seats, the end grace, and a platform allowance (the engine, starting and
stopping the bots' processes, the sandbox).

The most decisions a seat can face is the engine's
``Game.max_decisions_per_seat()``: Allegra's follows from its turn limit;
Allegory offers none, so ``total_ms`` bounds each seat
(docs/decisions/235-the-engine-bounds-a-game-s-length.md).

When the ceiling passes (cardroom.runner), each seat that has thought for
longer than its equal share of the ceiling forfeits (timeout); if none has,
the time went elsewhere, and the match is a platform failure.
"""

from __future__ import annotations

from cardroom.players import TimeControl
from engine import new_game

# Beyond the bots' own time: the engine, the processes, the sandbox. A
# match's own overhead is a few seconds at most; this is for a loaded machine.
PLATFORM_ALLOWANCE_MS = 30_000


def decisions_bound(game_id: str, num_players: int) -> int | None:
    """The most decisions one seat can face in a match (None: no useful bound)."""
    return new_game(game_id, num_players).max_decisions_per_seat()


def seat_bound_ms(time: TimeControl, decisions: int | None) -> int:
    """The longest one seat may think in a match while it keeps to ``time``."""
    thinking = time.total_ms
    if decisions is not None:
        thinking = min(thinking, decisions * time.per_move_ms + time.overage_ms)
    return time.startup_ms + thinking


def match_ceiling_ms(game_id: str, num_players: int, time: TimeControl, allowance_ms: int = PLATFORM_ALLOWANCE_MS) -> int:
    seat = seat_bound_ms(time, decisions_bound(game_id, num_players))
    return num_players * seat + time.end_grace_ms + allowance_ms
