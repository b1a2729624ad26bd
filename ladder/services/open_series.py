"""The standing open event series (decision 208): the site keeps one open
event of each configured game taking entries at all times, so a new author
always has something to enter. Each starts at the next boundary of the
series' period (by default every day at 00:00 UTC); the scheduler's
``start_due_events`` sweep starts the one whose time has come and, in the
same sweep, opens the next. The site's own account creates them, with the
built-in bots named in the settings as their first entries.

Settings (``config.settings``): ``CARDROOM_OPEN_SERIES`` (the off switch),
``CARDROOM_OPEN_SERIES_HOURS`` (the period), ``_GAMES``, ``_PLAYERS`` (table
size), ``_FORMAT``, ``_DEALS``, ``_HOUSE_BOTS``."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from ladder.models import Bot, BotVersion, Tournament
from ladder.services import tournaments
from ladder.services.bots import SYSTEM_USERNAME, game_label, system_user
from ladder.services.errors import ServiceError

log = logging.getLogger("cardroom.tournaments")

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # boundaries are whole periods from here (a Saturday, 00:00 UTC)


def period() -> timedelta:
    return timedelta(hours=float(settings.CARDROOM_OPEN_SERIES_HOURS))


def next_start(now: datetime | None = None) -> datetime:
    """The first boundary of the period late enough for an event opened now
    (at least CARDROOM_EVENT_MIN_LEAD_SECONDS ahead)."""
    now = now or timezone.now()
    earliest = now + timedelta(seconds=int(settings.CARDROOM_EVENT_MIN_LEAD_SECONDS))
    step = period()
    periods = -(-(earliest - EPOCH) // step)  # ceiling division of timedeltas
    return EPOCH + periods * step


def event_name(game: str, starts: datetime) -> str:
    # to the second when a period is not whole minutes: the name tells the events apart
    at = starts.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S" if starts.second else "%Y-%m-%d %H:%M")
    return f"Open {game_label(game)} {at} UTC"


def keep_open(now: datetime | None = None) -> list[int]:
    """Open the series' next event of each game unless it is already there
    (by its name, which carries its start: any number of sweeps, racing or
    not, open it once). The ids of the events opened by this call."""
    if not settings.CARDROOM_OPEN_SERIES:
        return []
    starts = next_start(now)
    opened = []
    for game in settings.CARDROOM_OPEN_SERIES_GAMES:
        name = event_name(game, starts)
        if Tournament.objects.filter(name=name).exists():
            continue
        house = list(
            Bot.objects.filter(
                game=game, builtin=True, name__in=settings.CARDROOM_OPEN_SERIES_HOUSE_BOTS, withdrawn__isnull=True,
                current_version__status=BotVersion.Status.ACTIVE,
            ).order_by("name")
        )  # fmt: skip
        try:
            t = tournaments.create_tournament(
                user=system_user(),
                name=name,
                game=game,
                format=settings.CARDROOM_OPEN_SERIES_FORMAT,
                bots=house,
                table_size=int(settings.CARDROOM_OPEN_SERIES_PLAYERS),
                deals=int(settings.CARDROOM_OPEN_SERIES_DEALS),
                starts=starts,
            )
        except IntegrityError:
            continue  # another sweep opened it between the check and the insert
        except ServiceError as exc:  # any refusal of create_tournament
            # Never a failing sweep: the events due to start were started
            # first, and the next sweep tries again.
            if "already an event named" not in str(exc):
                log.warning("open series: event not opened", extra={"game": game, "reason": str(exc)})
            continue
        log.info("open series: event opened", extra={"tournament": t.pk, "game": game, "starts": starts.isoformat()})
        opened.append(t.pk)
    return opened


def summary(now: datetime | None = None) -> dict | None:
    """What the events page says of the series (no database read): its
    games, its period and when the open events start (when the next open)."""
    if not settings.CARDROOM_OPEN_SERIES:
        return None
    hours = float(settings.CARDROOM_OPEN_SERIES_HOURS)
    every = "day" if hours == 24 else f"{hours:g} hours" if hours != 1 else "hour"
    return {
        "games": [game_label(game) for game in settings.CARDROOM_OPEN_SERIES_GAMES],
        "every": every,
        "starts": next_start(now),
        "format": settings.CARDROOM_OPEN_SERIES_FORMAT,
        "players": int(settings.CARDROOM_OPEN_SERIES_PLAYERS),
    }


def open_events() -> list[Tournament]:
    """The series' events taking entries (soonest first), for the events page."""
    if not settings.CARDROOM_OPEN_SERIES:
        return []
    return list(
        Tournament.objects.filter(status=Tournament.Status.OPEN, created_by__username=SYSTEM_USERNAME).order_by("starts", "game")
    )
