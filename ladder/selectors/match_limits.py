"""The limits a match plays under, read from its kind's policy
(ladder.services.match_kinds) and the ladders: its time control and its
wall-clock ceiling. ladder.services.matches plays by them."""

from __future__ import annotations

from cardroom.ceiling import match_ceiling_ms
from cardroom.players import TimeControl
from ladder.models import Match
from ladder.services.match_kinds import policy_for


def time_control(match: Match) -> TimeControl:
    """The limits the match plays under: its kind's (a ladder's own, an
    event's own, or for a validation or casual match the strictest limits
    of the active ladders of its game and player count)."""
    return policy_for(match.kind).time_control(match)


def ceiling_ms(match: Match) -> int:
    """The match's wall-clock ceiling (cardroom.ceiling): what its seats may
    think in all under its time control, the end grace, and
    CARDROOM_MATCH_CEILING_ALLOWANCE_SECONDS for the platform's own work."""
    allowance = policy_for(match.kind).ceiling_allowance_ms()  # a casual match's has the person's clock in it
    return match_ceiling_ms(match.game, match.num_players, time_control(match), allowance)
