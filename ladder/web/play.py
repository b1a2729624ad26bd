"""The "Play against a bot" pages: choosing a casual match, and the match
itself from the person's seat. Thin: the match is started and played
through the REST API (POST /api/play/, GET /api/play/{id}/, POST
/api/play/{id}/action/, ladder.api) by the page's script, so there is one
code path for the game; these views only render the pages and the seat's
frames (ladder.selectors.play)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from engine.replay import ReplayError
from ladder.selectors import play as play_selectors
from ladder.web.views import GAMES

PLAYER_COUNTS = range(2, 7)


def duration_text(seconds: int) -> str:
    """600 -> "10 minutes", 90 -> "90 seconds", 10800 -> "3 hours"."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}{'s' * (n != 1)}"
    return f"{seconds} second{'s' * (seconds != 1)}"


def _clock() -> dict:
    """The person's clock as the pages explain it (the casual settings)."""
    move, total, idle = (
        settings.CARDROOM_CASUAL_MOVE_SECONDS, settings.CARDROOM_CASUAL_TOTAL_SECONDS, settings.CARDROOM_CASUAL_IDLE_SECONDS,
    )  # fmt: skip
    return {
        "move_seconds": move, "move": duration_text(move), "total": duration_text(total), "idle": duration_text(idle),
    }  # fmt: skip


@login_required
def play_new(request: HttpRequest) -> HttpResponse:
    game = request.GET.get("game")
    return render(
        request,
        "cardroom/play_new.html",
        {
            "games": [{"id": k, **v} for k, v in GAMES.items()],
            "chosen_game": game if game in GAMES else "allegory",
            "player_counts": list(PLAYER_COUNTS),
            "opponents": play_selectors.opponent_choices(list(GAMES)),
            "mine": play_selectors.my_casual_matches(request.user),
            "clock": _clock(),
        },
    )


def _own_seat(request: HttpRequest, pk: int):
    seat = play_selectors.casual_seat_of(request.user, pk)
    if seat is None:
        raise Http404("no such casual match of yours")
    return seat


@login_required
def play_match(request: HttpRequest, pk: int) -> HttpResponse:
    seat = _own_seat(request, pk)
    return render(
        request,
        "cardroom/play.html",
        {"match": seat.match, "seat": seat, "game": GAMES[seat.match.game], "clock": _clock()},
    )


@login_required
def play_frames(request: HttpRequest, pk: int) -> HttpResponse:
    """The seat's frames so far (JSON), from ``?from=N`` on."""
    seat = _own_seat(request, pk)
    raw = request.GET.get("from", "0")
    if not raw.isdigit() or len(raw) > 7:
        return JsonResponse({"detail": f"from takes a frame number (0 or more), not {raw[:20]!r}", "field": "from"}, status=400)
    try:
        doc = play_selectors.live_frames(seat, int(raw))
    except ReplayError as exc:  # the worker recorded only engine-accepted events: a bug if it happens
        return JsonResponse({"detail": f"the match so far does not re-play: {exc}"}, status=500)
    response = JsonResponse(doc)
    response["Cache-Control"] = "no-store"
    return response
