"""Every read of the ladder (HackSoft style): querysets shaped for their
pages, with a query count that does not grow with the page size."""

from __future__ import annotations

import datetime
import gzip
import json

from django.db import connections
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from cardroom.tournament.standings import rank_points
from ladder.models import Bot, BotVersion, CasualSeat, Ladder, Match, MatchLuck, Participant, Rating
from ladder.selectors import duplicate_sets


def ladders() -> QuerySet[Ladder]:
    return Ladder.objects.all().order_by("game", "players_per_match", "name")


_STANDING_FIELDS = ("bot", "elo", "ordinal", "mu", "sigma", "games", "wins", "forfeits", "provisional")


def standings(ladder: Ladder) -> QuerySet:
    """The bots on a ladder by Elo (the ones whose bot can play, or has played),
    as rows: dicts of ``_STANDING_FIELDS`` (``bot`` is the bot's id). A page
    of them gets its bots' names from with_bot_names().

    Shaped for big ladders (bench_api: 10,000 bots): the filter and the order
    need the rating row only, so a page, even a deep one, is read from the
    (ladder, -elo) index without joining every row before it; the page's bots
    and owners come in one more query. "Can play" is asked only of this
    ladder's bots without games, in one uncorrelated subquery (asking it of
    every bot cost 10-15 ms a request; a correlated EXISTS is estimated so
    dear that PostgreSQL JIT-compiles the COUNT: 20 ms more). Rows, not
    models: models and DRF's fields were most of a page's time."""
    return listed(ladder).order_by("-elo", "-ordinal", "bot_id").values(*_STANDING_FIELDS)


def listed(ladder: Ladder) -> QuerySet[Rating]:
    """The ratings a leaderboard lists, on the web and the API alike: bots
    that have played here, or whose current version is active; withdrawn
    bots never. Written so that PostgreSQL filters the ratings alone (the few
    never-played active bots are one hashed subquery), and can walk the
    (ladder, -elo) index for the Elo order."""
    never_played_active = Rating.objects.filter(
        ladder=ladder, games=0, bot__current_version__status=BotVersion.Status.ACTIVE
    ).values("bot_id")
    return (
        Rating.objects.filter(ladder=ladder)
        .filter(Q(games__gt=0) | Q(bot_id__in=never_played_active))
        .exclude(bot_id__in=withdrawn_bots(ladder.game))
    )


def withdrawn_bots(game: str) -> QuerySet:
    """The ids of the game's withdrawn bots (few: one hashed subquery), which
    current standings leave out."""
    return Bot.objects.filter(game=game, withdrawn__isnull=False).order_by().values("pk")


def with_bot_names(rows: list[dict]) -> list[dict]:
    """Gives each row with a ``bot`` (id) its ``bot_name`` and ``owner_name``
    (the owner's username), in one query for them all."""
    ids = {row["bot"] for row in rows}
    names = {}
    if ids:
        names = {
            pk: (name, owner)
            for pk, name, owner in Bot.objects.filter(pk__in=ids)
            .order_by()
            .values_list("id", "name", "owner__username")
        }
    for row in rows:
        row["bot_name"], row["owner_name"] = names[row["bot"]]
    return rows


def bots(game: str | None = None, owner: str | None = None) -> QuerySet[Bot]:
    qs = Bot.objects.select_related("owner", "current_version").order_by("game", "name")
    if game:
        qs = qs.filter(game=game)
    if owner:
        qs = qs.filter(owner__username=owner)
    return qs


def versions(bot: Bot) -> QuerySet[BotVersion]:
    return bot.versions.select_related("bot").order_by("-number")


# A page of matches in two queries whatever its size: the matches (with their
# ladder's name), then their participants, each with its bot's name, its
# owner's username and its version's number as scalar subqueries: primary-key
# lookups, a few per row. (Joining the participants to bots, users and
# versions made PostgreSQL hash-join whole tables: 10,000 bots, 9 ms a page
# and growing with the tables.) Both are read as rows (dicts) of the columns
# the API shows: building a page of 100 matches as models (300 of them, with
# prefetch_related) and serializing them with DRF's fields cost ~90 ms of
# Python in bench_api.
_MATCH_FIELDS = (
    "id",
    "ladder",
    "kind",
    "game",
    "options",
    "num_players",
    "seed",
    "status",
    "attempts",
    "num_events",
    "created",
    "started",
    "finished",
    "rating_sequence",
    "duplicate_set",
    "set_rotation",
)
_PARTICIPANT_FIELDS = (
    "match",
    "seat",
    "bot",
    "version",
    "score",
    "rank",
    "forfeit_reason",
    "forfeit_event",
    "elo_before",
    "elo_after",
    "mu_before",
    "mu_after",
    "sigma_before",
    "sigma_after",
)


def matches(ladder: int | None = None, bot: int | None = None, status: str | None = None) -> QuerySet:
    """Matches, newest first, as rows: dicts of ``_MATCH_FIELDS`` (``ladder``
    is the ladder's id) and ``ladder_name``. A page of them gets its seats
    from with_participants(). Casual matches are in no list (decision 130):
    each is reached by its id."""
    qs = (
        Match.objects.exclude(kind=Match.Kind.CASUAL)
        .order_by("-id")
        .values(*_MATCH_FIELDS, ladder_name=F("ladder__name"), set_open=duplicate_sets.set_open())
    )
    if ladder is not None:
        qs = qs.filter(ladder_id=ladder)
    if bot is not None:
        qs = qs.filter(pk__in=Participant.objects.filter(bot_id=bot).values("match_id"))
    if status:
        qs = qs.filter(status=status)
    return qs


def match_row(match_id: int) -> dict | None:
    """One row of matches() by id (a match page), or None: read with SQL
    written out once, for the same reason as the seats below (the values()
    queryset and its get() were most of what a match page's miss cost)."""
    m, lad = Match._meta.db_table, Ladder._meta.db_table
    columns = ", ".join(f"m.{Match._meta.get_field(name).column}" for name in _MATCH_FIELDS)
    with connections[Match.objects.db].cursor() as cursor:
        # set_open: a rotation of its duplicate set is still to play (duplicate_sets.set_open)
        cursor.execute(f"SELECT {columns}, l.name, EXISTS (SELECT 1 FROM {m} o WHERE o.duplicate_set_id = m.duplicate_set_id"
                       f" AND o.status IN (%s, %s)) FROM {m} m LEFT JOIN {lad} l ON l.id = m.ladder_id WHERE m.id = %s",
                       [*duplicate_sets.OPEN, match_id])  # fmt: skip
        found = cursor.fetchone()
    if found is None:
        return None
    row = dict(zip((*_MATCH_FIELDS, "ladder_name", "set_open"), found))
    row["set_open"] = bool(row["set_open"])  # (SQLite's is 0 or 1)
    # What the ORM's converters would do: the JSON column arrives as text
    # (PostgreSQL's jsonb as Django loads it, SQLite's text), SQLite's
    # datetimes naive (they are UTC) or as text.
    if isinstance(row["options"], str):
        row["options"] = json.loads(row["options"])
    for name in ("created", "started", "finished"):
        value = row[name]
        if isinstance(value, str):
            value = parse_datetime(value)
        if value is not None and timezone.is_naive(value):
            value = value.replace(tzinfo=datetime.UTC)
        row[name] = value
    return row


def _participants_sql(count: int) -> str:
    """The seats of ``count`` matches, by seat: the columns of
    ``_PARTICIPANT_FIELDS`` and the three names, each a primary-key lookup
    (a scalar subquery: see above). Written out once rather than built by
    the ORM each time: building and compiling that queryset (three
    subqueries) was two thirds of a match page's CPU time."""
    p, b, u, v = (m._meta.db_table for m in (Participant, Bot, Bot.owner.field.related_model, BotVersion))
    columns = ", ".join(f"p.{Participant._meta.get_field(name).column}" for name in _PARTICIPANT_FIELDS)
    return (
        f"SELECT {columns}, (SELECT b.name FROM {b} b WHERE b.id = p.bot_id),"
        f" (SELECT u.username FROM {b} b JOIN {u} u ON u.id = b.owner_id WHERE b.id = p.bot_id),"
        f" (SELECT v.number FROM {v} v WHERE v.id = p.version_id)"
        f" FROM {p} p WHERE p.match_id IN ({', '.join(['%s'] * count)}) ORDER BY p.seat"
    )


def with_participants(rows: list[dict]) -> list[dict]:
    """Gives each match row of matches() its ``participants``, by seat (one
    query for them all): dicts of ``_PARTICIPANT_FIELDS`` but ``match``
    (``bot`` is the bot's id), with ``bot_name``, ``owner_name`` and
    ``version_number``."""
    by_id: dict[int, dict] = {}
    for row in rows:
        row["participants"] = []
        by_id[row["id"]] = row
    if not by_id:
        return rows
    names = (*_PARTICIPANT_FIELDS, "bot_name", "owner_name", "version_number")
    with connections[Participant.objects.db].cursor() as cursor:
        cursor.execute(_participants_sql(len(by_id)), list(by_id))
        for values in cursor.fetchall():
            p = dict(zip(names, values))
            by_id[p.pop("match")]["participants"].append(p)
    _with_luck(by_id)
    return rows


def seat_payoffs(ranks: list[int]) -> list[float]:
    """Each seat's payoff, the rank points ``(k - p)/(k - 1)`` of its place
    ``p`` at a table of ``k``, ties sharing (what luck adjusts, decision 184)."""
    return [float(x) for x in rank_points(ranks)]


def _with_luck(by_id: dict[int, dict]) -> None:
    """Each match row gets ``luck_value_function`` (None when its luck is not
    known) and each of its seats ``payoff`` (rank points, once every seat is
    ranked), ``luck`` and ``adjusted`` (None when the luck is not known):
    one query for the page."""
    known = {
        match_id: (value_function, values)
        for match_id, value_function, values in MatchLuck.objects.filter(match_id__in=list(by_id), error="")
        .exclude(luck=None)
        .values_list("match_id", "value_function", "luck")
    }
    for match_id, row in by_id.items():
        seats = row["participants"]
        ranks = [p["rank"] for p in seats]
        payoffs: list = seat_payoffs(ranks) if seats and None not in ranks else [None] * len(seats)
        value_function, luck = known.get(match_id, (None, None))
        if luck is None or len(luck) != len(seats) or None in payoffs:
            value_function, luck = None, [None] * len(seats)
        row["luck_value_function"] = value_function
        for p, payoff, x in zip(seats, payoffs, luck):
            p["payoff"], p["luck"] = payoff, x
            p["adjusted"] = None if x is None else payoff - x


def match(match_id: int) -> Match | None:
    """Just the match row (replay and log downloads)."""
    return Match.objects.filter(pk=match_id).first()


def participant(match: Match, seat: int) -> Participant | None:
    return match.participants.select_related("bot").filter(seat=seat).first()


def casual_seat(match_id: int) -> CasualSeat | None:
    """A casual match's human seat, with its match (None: no such casual match)."""
    return CasualSeat.objects.select_related("match", "user").filter(pk=match_id).first()


def casual_players(seat: CasualSeat) -> list[dict]:
    """Who sits where in a casual match: the person's seat and each bot's."""
    players = [{"seat": seat.seat, "name": seat.user.username, "bot": None, "version": None, "human": True}]
    for p in seat.match.participants.select_related("bot", "version").order_by("seat"):
        players.append(
            {"seat": p.seat, "name": p.bot.name, "bot": p.bot_id, "version": p.version.number, "human": False}
        )
    return sorted(players, key=lambda row: row["seat"])


def casual_matches_of(user) -> QuerySet[Match]:
    """The user's casual matches, newest first, with their seats."""
    return Match.objects.filter(casual_seat__user=user).select_related("casual_seat").order_by("-id")


def open_casual_matches(user) -> QuerySet[Match]:
    """The user's casual matches still queued or running, newest first."""
    return Match.objects.filter(
        casual_seat__user=user, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).order_by("-id")


def replay_gz(match: Match) -> bytes | None:
    """The replay as stored: gzip-compressed JSON."""
    if not match.replay:
        return None
    with match.replay.open("rb") as f:
        return f.read()


def replay_bytes(match: Match) -> bytes | None:
    data = replay_gz(match)
    return None if data is None else gzip.decompress(data)


def log_text(participant: Participant) -> str:
    if not participant.log:
        return ""
    with participant.log.open("rb") as f:
        return gzip.decompress(f.read()).decode("utf-8", errors="replace")


def validation_player_counts(game: str) -> list[int]:
    """The player counts a new version of a ``game`` bot is validated at, in
    order: those of the game's active ladders (2 if it has none)."""
    counts = sorted(set(Ladder.objects.filter(game=game, active=True).values_list("players_per_match", flat=True)))
    return counts or [2]


def validation_progress(version: BotVersion) -> dict:
    """Where a version is in validation, for its owner's page and the API:
    ``queue_position`` (pending: 1 = next; versions uploaded earlier that are
    still pending come first), ``validation_step`` of ``validation_steps``
    and ``validation_match`` (validating: the match being played or next,
    one per player count, played in order)."""
    progress = {"queue_position": None, "validation_step": None, "validation_steps": None, "validation_match": None}
    if version.status == BotVersion.Status.PENDING:
        ahead = BotVersion.objects.filter(
            status=BotVersion.Status.PENDING, bot__builtin=False, pk__lt=version.pk
        ).count()
        progress["queue_position"] = ahead + 1
        progress["waiting"] = validation_wait_text(version, ahead + 1)
    elif version.status == BotVersion.Status.VALIDATING:
        counts = validation_player_counts(version.bot.game)
        newest: dict[int, tuple[int, str]] = {}
        for pk, players, status in (
            version.validation_matches.exclude(status=Match.Status.CANCELLED)
            .order_by("id")
            .values_list("id", "num_players", "status")
        ):
            newest[players] = (pk, status)
        progress["validation_steps"] = len(counts)
        for step, players in enumerate(counts, start=1):
            pk, status = newest.get(players, (None, Match.Status.QUEUED))
            if status != Match.Status.FINISHED or step == len(counts):
                progress["validation_step"], progress["validation_match"] = step, pk
                break
    return progress


# How many of the latest validated versions the wait estimate is taken from.
RECENT_VALIDATIONS = 20


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def recent_validation_times() -> tuple[float, float] | None:
    """Of the latest validated uploads (RECENT_VALIDATIONS): the median wait
    from upload to its first validation match's start, and the median time
    from that start to its last validation match's end (seconds); None
    before any."""
    from statistics import median

    from django.db.models import Max, Min

    rows = list(
        BotVersion.objects.filter(bot__builtin=False)
        .exclude(status__in=[BotVersion.Status.PENDING, BotVersion.Status.VALIDATING])
        .annotate(first_start=Min("validation_matches__started"), last_end=Max("validation_matches__finished"))
        .filter(first_start__isnull=False, last_end__isnull=False)
        .order_by("-pk")
        .values_list("created", "first_start", "last_end")[:RECENT_VALIDATIONS]
    )
    if not rows:
        return None
    waits = [(start - created).total_seconds() for created, start, _ in rows]
    plays = [(end - start).total_seconds() for _, start, end in rows]
    return median(waits), median(plays)


def validation_wait_text(version: BotVersion, place: int) -> str:
    """What a pending version is waiting for and roughly how long (issue 36:
    "place 1 in the queue" alone for a minute and a half under load)."""
    waited = (timezone.now() - version.created).total_seconds()
    running = Match.objects.filter(kind=Match.Kind.VALIDATION, status=Match.Status.RUNNING).count()
    busy = (
        f"{running} validation match{'es' if running != 1 else ''} {'are' if running != 1 else 'is'} being played now, "
        "and each worker finishes the match it is playing before it takes the next"
        if running
        else "every worker is busy with other matches; each finishes the one it is playing before it takes a validation"
    )
    text = f"Waiting {_duration(waited)} so far: {busy}."
    recent = recent_validation_times()
    if recent is not None:
        wait, play = recent
        # the versions ahead each take about a validation's playing time
        estimate = max(wait + (place - 1) * play - waited, 0)
        text += (
            f" Lately a version waited about {_duration(wait)} for a worker and its validation took about {_duration(play)}"
            f" (the last {RECENT_VALIDATIONS} uploads at most): "
            + (
                f"this one should start within about {_duration(estimate)}."
                if estimate >= 1
                else "this one should start any moment."
            )
        )
    return text


def progress_text(version: BotVersion, progress: dict) -> str:
    """The progress in words ("" once validation is over)."""
    if progress["queue_position"] is not None:
        place = progress["queue_position"]
        ahead = f"{place - 1} version{'s' if place != 2 else ''} ahead" if place > 1 else "next in line"
        return f"queued for validation: place {place} in the queue ({ahead}). {progress['waiting']}"
    if progress["validation_step"] is not None:
        text = f"validating: playing match {progress['validation_step']} of {progress['validation_steps']}"
        if progress["validation_match"]:
            text += f" (/matches/{progress['validation_match']}/)"
        return text
    return ""


# -- tournaments ----------------------------------------------------------------


def tournaments_list() -> QuerySet:
    from ladder.models import Tournament

    return Tournament.objects.order_by("-id")


def tournament(pk: int):
    from ladder.models import Tournament

    return Tournament.objects.filter(pk=pk).first()


def event_seed_published(t) -> bool:
    """Whether an event's seed is shown (API, pages, archive): once its last
    match has ended (decision 173). Every match's seed is derived from it,
    so shown earlier it would tell anyone the cards of the matches still to
    play. An event cancelled with a match still running waits for that match."""
    from ladder.models import Tournament

    if t.status == Tournament.Status.FINISHED:
        return True
    if t.status != Tournament.Status.CANCELLED:
        return False
    return not Match.objects.filter(
        tournament_slot__tournament=t, status__in=(Match.Status.QUEUED, Match.Status.RUNNING)
    ).exists()


def tournament_progress(t) -> dict:
    """Matches played (finished), failed, cancelled, running and still to
    play, out of the event's total."""
    from django.db.models import Count

    from ladder.models import Match

    counts = dict(
        Match.objects.filter(tournament_slot__tournament=t)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    played = counts.get(Match.Status.FINISHED, 0)
    return {
        "played": played,
        "failed": counts.get(Match.Status.FAILED, 0),
        "cancelled": counts.get(Match.Status.CANCELLED, 0),
        "running": counts.get(Match.Status.RUNNING, 0),
        "total": t.total_matches,
        # an event with no schedule yet (open) has played nothing: 0, not 100
        "percent": round(100 * played / t.total_matches, 1) if t.total_matches else 0.0,
    }


def tournament_entry_row(e) -> dict:
    """An entry as the API shows it (its bot, owner and frozen version)."""
    return {
        "entry": e.index, "bot": e.bot_id, "name": e.bot.name, "owner": e.bot.owner.username,
        "version": e.version_id, "version_number": e.version.number, "entered": e.entered,
    }  # fmt: skip


def tournament_entries(t) -> list[dict]:
    return [tournament_entry_row(e) for e in entries_in_order(t)]


def entries_in_order(t) -> QuerySet:
    """The event's entries by index, each with what its row shows (one query)."""
    return t.entries.select_related("bot__owner", "version").order_by("index")


def tournament_entries_from(t, start: int, limit: int) -> tuple[list[dict], int]:
    """``limit`` entry rows from the ``start``-th, and the field's size:
    counted only when this slice may not hold the rest (a field smaller
    than ``limit`` costs one query)."""
    rows = [tournament_entry_row(e) for e in entries_in_order(t)[start : start + limit]]
    if len(rows) < limit and (rows or start == 0):
        return rows, start + len(rows)
    return rows, t.entries.count()


def entry_choices(t, user) -> dict:
    """What the user may do on an open event's page: their entries (each
    with the bot's current version, to swap to) and the bots they may enter."""
    from ladder.models import Bot, BotVersion

    mine = list(t.entries.filter(bot__owner=user).select_related("bot__current_version", "version").order_by("index"))
    entered = {e.bot_id for e in mine}
    rows = []
    for e in mine:
        current = e.bot.current_version
        newer = (
            current if current and current.status == BotVersion.Status.ACTIVE and current.pk != e.version_id else None
        )
        rows.append(
            {"bot": e.bot_id, "name": e.bot.name, "version_number": e.version.number, "newer": newer and newer.number}
        )
    eligible = [
        b for b in Bot.objects.filter(owner=user, game=t.game, withdrawn__isnull=True, current_version__status=BotVersion.Status.ACTIVE)
        .select_related("current_version").order_by("name")
        if b.pk not in entered
    ]  # fmt: skip
    return {"my_entries": rows, "my_bots": eligible, "at_limit": len(mine) >= t.entries_per_user}


def tournament_entry(t, bot_id: int):
    from ladder.models import TournamentEntry

    return TournamentEntry.objects.filter(tournament=t, bot_id=bot_id).select_related("bot__owner", "version").first()


def tournament_standings(t) -> dict:
    """The event's stored standings (computed when its results came in,
    ladder.services.tournaments.refresh_standings: never here), with when
    they were computed and how many of the event's results they count."""
    from ladder.models import TournamentStandings

    stored = TournamentStandings.objects.filter(tournament=t).values("document", "results", "computed").first()
    if stored is None:  # (never for an event created since they are stored; the sweep fills one in)
        return {
            "standings": [],
            "crosstable": {"entries": [], "cells": None},
            "matches_played": 0,
            "results_counted": 0,
            "computed": None,
        }
    return {**stored["document"], "results_counted": stored["results"], "computed": stored["computed"]}


# Rows of the crosstable per page of the API's standings (a field of 64: 4 pages).
CROSSTABLE_ROWS = 16


def standings_pages(doc: dict) -> list[bytes]:
    """The API's standings answer for each page of the crosstable, as JSON
    bytes, from a stored document (with its ``results_counted`` and
    ``computed``): everything but ``tournament`` and ``progress``. Rendered
    when the standings are stored, with DRF's renderer, as a view would."""
    from rest_framework.renderers import JSONRenderer

    renderer = JSONRenderer()
    pages = max(1, crosstable_page(doc, 1, CROSSTABLE_ROWS)["pages"])
    return [
        renderer.render({**doc, "crosstable": crosstable_page(doc, n, CROSSTABLE_ROWS)}) for n in range(1, pages + 1)
    ]


def tournament_standings_page(t, page: int) -> tuple[bytes | None, int]:
    """(The stored bytes of the standings answer's page ``page``, or None
    past the last page; the number of pages)."""
    from ladder.models import TournamentStandingsPage

    stored = TournamentStandingsPage.objects.filter(standings_id=t.pk)
    body = stored.filter(number=page).values_list("body", flat=True).first()
    if body is not None:
        return bytes(body), page  # (at least this many: the count is only wanted past the last)
    pages = stored.count()
    if pages:
        return None, pages
    # None stored (an event older than the stored pages): rendered from its document.
    rendered = standings_pages(tournament_standings(t))
    return (rendered[page - 1] if page <= len(rendered) else None), len(rendered)


def crosstable_page(doc: dict, page: int, rows_per_page: int) -> dict:
    """One page of the crosstable's rows (entries in standings order), each
    row every cell of its entry: a field of 64 has 4,096 cells."""
    cross = doc.get("crosstable") or {}
    cells = cross.get("cells")
    order = [row["entry"] for row in doc.get("standings", [])]
    if cells is None:
        return {
            "entries": cross.get("entries", []),
            "rows": [],
            "cells": None,
            "page": 1,
            "pages": 0,
            "rows_per_page": rows_per_page,
        }
    pages = max(1, -(-len(order) // rows_per_page))
    rows = order[(page - 1) * rows_per_page : page * rows_per_page]
    return {
        "entries": cross["entries"], "rows": rows, "cells": [cells[a] for a in rows],
        "page": page, "pages": pages, "rows_per_page": rows_per_page,
    }  # fmt: skip


def tournament_matches(t) -> QuerySet:
    from ladder.models import Match

    return (
        Match.objects.filter(tournament_slot__tournament=t)
        .order_by("tournament_slot__number")
        .values(
            "id",
            "status",
            "tournament_slot__number",
            "tournament_slot__round",
            "tournament_slot__table",
            "tournament_slot__deal",
            "tournament_slot__rotation",
            "tournament_slot__seats",
            "finished",
        )  # fmt: skip
    )
