"""Reads for the "Play against a bot" pages (ladder.web.play): the
opponents a person may choose, and the person's own casual match as the
replay viewer draws it, from their seat.

The match in play is drawn from the events the worker has recorded so far
(CasualSeat.events, chance events included), re-played by the engine and
turned into frames of the person's own seat view (ladder.web.frames): a
frame holds exactly what that seat knew at that moment, so nothing hidden
(the deck, another seat's face-down cards or Moral) reaches the page.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import QuerySet

from bots import DESCRIPTIONS
from engine.replay import FORMAT, VERSION
from ladder import selectors as core_selectors
from ladder.models import Bot, BotVersion, CasualSeat, Match
from ladder.services.match_kinds import policy_for
from ladder.web import frames

# The opponents' menu lists at most this many uploaded bots per game (the
# highest rated first would need a ladder; by name is what a person scans).
OPPONENT_BOTS = 200


def builtin_opponents(game: str) -> list[dict[str, str]]:
    """The built-in bots installed for ``game`` that can play, as the API
    names them (builtin:NAME)."""
    bots = Bot.objects.filter(game=game, builtin=True, current_version__status=BotVersion.Status.ACTIVE).order_by(
        "name"
    )
    return [
        {"value": f"builtin:{b.name}", "label": f"{b.name} (built-in: {DESCRIPTIONS.get(b.name, b.description)})"}
        for b in bots
    ]


def uploaded_opponents(game: str) -> QuerySet[Bot]:
    """The game's uploaded bots that can play now: an active current
    version, not withdrawn (the bots the ladder matches)."""
    return (
        Bot.objects.filter(
            game=game, builtin=False, withdrawn__isnull=True, current_version__status=BotVersion.Status.ACTIVE
        )
        .select_related("owner")
        .order_by("name")[:OPPONENT_BOTS]
    )


def opponent_choices(games: list[str]) -> dict[str, list[dict[str, str]]]:
    """Per game: the built-ins, then the uploaded bots (value: the bot's id)."""
    return {
        game: builtin_opponents(game)
        + [{"value": str(b.pk), "label": f"{b.name} (by {b.owner.username})"} for b in uploaded_opponents(game)]
        for game in games
    }


def my_casual_matches(user, limit: int = 8) -> list[CasualSeat]:
    """The user's latest casual matches (open ones first), to go back to."""
    seats = [m.casual_seat for m in core_selectors.casual_matches_of(user)[:limit]]
    open_first = (Match.Status.QUEUED, Match.Status.RUNNING)
    return sorted(seats, key=lambda s: s.match.status not in open_first)


def casual_seat_of(user, match_id: int) -> CasualSeat | None:
    """The user's own seat in casual match ``match_id`` (None: no such match,
    or not theirs: another person's hand is never shown)."""
    seat = core_selectors.casual_seat(match_id) if user.is_authenticated else None
    return seat if seat is not None and seat.user_id == user.pk else None


def person_seat(match: Match) -> CasualSeat | None:
    """The person's seat of a casual match (public once the match is shown:
    who sat there, the score, the rank, a forfeit), None for other matches."""
    return core_selectors.casual_seat(match.pk) if policy_for(match.kind).has_person_seat else None


def seat_players(seat: CasualSeat) -> list[dict[str, Any]]:
    """Per seat, the name the table shows: the person's, or the bot's with its version."""
    return [
        {
            "seat": p["seat"],
            "name": f"{p['name']} (you)" if p["human"] else f"{p['name']} v{p['version']}",
            "you": p["human"],
        }
        for p in core_selectors.casual_players(seat)
    ]


def live_frames(seat: CasualSeat, start: int = 0) -> dict[str, Any]:
    """The person's view of their match so far, from frame ``start`` on (the
    page asks only for the events it has not drawn yet), and who sits where.
    Once the match has its replay, the frames come from it, with the result
    (a seat that forfeited is sent no ``end``, and its events stop there)."""
    match = seat.match
    players = seat_players(seat)
    result = None
    events = list(seat.events or [])
    if match.replay:
        try:
            stored = json.loads(core_selectors.replay_bytes(match))
        except OSError:  # the file is missing from storage: the events the seat saw
            stored = None
        if stored is not None:
            events, result = stored["events"], stored["result"]
    doc = {
        "format": FORMAT, "version": VERSION, "game": match.game, "options": match.options or {},
        "num_players": match.num_players, "seed": match.seed or 0, "players": players,
        "events": events, "result": result or {},
    }  # fmt: skip
    names = [f"Seat {p['seat']} · {p['name']}" for p in players]
    built = frames.build_frames(doc, seat.seat, names, start) if events else []
    out: dict[str, Any] = {
        "game": match.game,
        "num_players": match.num_players,
        "seat": seat.seat,
        "status": match.status,
        "players": players,
        "names": names,
        "count": len(events),
        "start": start,
        "frames": built,
        "result": result,
    }
    if match.game == "allegory":
        out["card_tales"] = frames.allegory_card_tales()
    return out
