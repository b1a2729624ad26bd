"""A match's wall-clock ceiling, derived from its time control.

Each seat may think for at most its start-up limit plus the lesser of its
whole-match budget (``total_ms``) and ``per_move_ms`` times the most
decisions it can face (plus its overage bank); the ceiling is the sum over
the seats, the end grace, and a platform allowance (the engine, starting and
stopping the bots' processes, the sandbox).

The most decisions a seat can face:

* Allegra: the platform's turn limit ends a round with no ender after its
  200 × n-th turn (200 turns a seat), and an ender's round after at most
  n − 1 more turns; 3 rounds. In its own turn a seat decides at most three
  times (draw or take, then give / swap / discard, then an exchange); in
  another seat's turn at most twice (knock or pass, then place); and it
  reveals 2 cards a round.
* Allegory: no bound shorter than its time control (bids can go round many
  times), so ``total_ms`` bounds each seat.

When the ceiling passes (cardroom.runner), each seat that has thought for
longer than its equal share of the ceiling forfeits (timeout); if none has,
the time went elsewhere, and the match is a platform failure.
"""

from __future__ import annotations

from cardroom.players import TimeControl

# Beyond the bots' own time: the engine, the processes, the sandbox. A
# match's own overhead is a few seconds at most; this is for a loaded machine.
PLATFORM_ALLOWANCE_MS = 30_000


def decisions_bound(game_id: str, num_players: int) -> int | None:
    """The most decisions one seat can face in a match (None: no useful bound)."""
    if game_id == "allegra":
        from engine.allegra.game import REVEALS, ROUNDS, TURN_LIMIT_PER_PLAYER

        own_turns = TURN_LIMIT_PER_PLAYER + 1
        others_turns = TURN_LIMIT_PER_PLAYER * (num_players - 1) + num_players - 1
        return ROUNDS * (REVEALS + 3 * own_turns + 2 * others_turns)
    return None


def seat_bound_ms(time: TimeControl, decisions: int | None) -> int:
    """The longest one seat may think in a match while it keeps to ``time``."""
    thinking = time.total_ms
    if decisions is not None:
        thinking = min(thinking, decisions * time.per_move_ms + time.overage_ms)
    return time.startup_ms + thinking


def match_ceiling_ms(game_id: str, num_players: int, time: TimeControl, allowance_ms: int = PLATFORM_ALLOWANCE_MS) -> int:
    seat = seat_bound_ms(time, decisions_bound(game_id, num_players))
    return num_players * seat + time.end_grace_ms + allowance_ms
