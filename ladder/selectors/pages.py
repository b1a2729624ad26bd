"""Reads shaped for the web pages. Every query here is bounded: its cost does
not grow with the number of bots or matches beyond what an index covers
(a page of a leaderboard, the last N rating changes of one rating, the last
500 matches of one bot), so the pages stay fast on a big ladder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import F, FloatField, Prefetch, QuerySet
from django.db.models.functions import Cast, Lower, NullIf
from django.utils import timezone

from ladder import caching
from ladder import selectors as core_selectors
from ladder.models import Bot, BotVersion, Ladder, Match, MatchLuck, Participant, Rating, RatingChange, TournamentEntry

PAGE_SIZE = 50
TREND_GAMES = 10
CHART_CHANGES = 500  # rating changes read for a chart (the most recent games)
CHART_POINTS = 240  # at most this many points drawn
H2H_MATCHES = 500  # head-to-head: over the bot's last N ladder matches
H2H_OPPONENTS = 10
RECENT_MATCHES = 20


def _url_prefix(name: str) -> str:
    """'/bots/' for 'web-bot': links in long lists are made by string
    concatenation (a reverse() per row is a measurable share of a page)."""
    from django.urls import reverse

    return reverse(name, args=[0])[: -len("0/")]


# ---------------------------------------------------------------------------
# Home
# ---------------------------------------------------------------------------


def live_counts() -> dict[str, int]:
    """Bots, matches finished today (UTC), matches queued; cached briefly.
    Casual matches (a person's seat) are the person's own, in no count, as
    they are in no list (decision 130)."""
    key = "web:live-counts"
    counts = cache.get(key)
    if counts is None:
        today = timezone.make_aware(datetime.combine(timezone.now().date(), time.min), timezone.get_current_timezone())
        matches = Match.objects.exclude(kind=Match.Kind.CASUAL)
        counts = {
            "bots": Bot.objects.count(),
            "today": matches.filter(finished__gte=today, status=Match.Status.FINISHED).count(),
            "queued": matches.filter(status=Match.Status.QUEUED).count(),
            "running": matches.filter(status=Match.Status.RUNNING).count(),
        }
        cache.set(key, counts, 10)
    return counts


# Match lists read only what they show (a Match row is wide).
_SEATS = Prefetch(
    "participants",
    queryset=Participant.objects.select_related("bot")
    .only("id", "match_id", "seat", "bot_id", "score", "rank", "forfeit_reason", "bot__id", "bot__name")
    .order_by("seat"),
)
_LIST_FIELDS = (
    "id",
    "ladder_id",
    "status",
    "kind",
    "game",
    "num_players",
    "created",
    "finished",
    "ladder__id",
    "ladder__name",
)


def latest_matches(limit: int = 10, ladder: Ladder | None = None) -> list[Match]:
    qs = Match.objects.filter(status=Match.Status.FINISHED, kind=Match.Kind.LADDER)
    if ladder is not None:
        qs = qs.filter(ladder=ladder)
    return list(qs.select_related("ladder").only(*_LIST_FIELDS).prefetch_related(_SEATS).order_by("-id")[:limit])


def active_ladders_with_top(top: int = 5) -> list[tuple[Ladder, list[Rating]]]:
    out = []
    for ladder in Ladder.objects.filter(active=True).order_by("game", "players_per_match", "name"):
        out.append((ladder, list(ranked(ladder)[:top])))
    return out


# ---------------------------------------------------------------------------
# Leaderboard
# ---------------------------------------------------------------------------

SORTS: dict[str, tuple[str, ...]] = {
    # key -> ordering (the tie-breaks keep every order total and stable)
    "rank": ("-elo", "-ordinal", "bot_id"),
    "elo": ("-elo", "-ordinal", "bot_id"),
    "ordinal": ("-ordinal", "-elo", "bot_id"),
    "games": ("-games", "-elo", "bot_id"),
    "winrate": ("-win_rate", "-elo", "bot_id"),
    "forfeits": ("-forfeits", "-elo", "bot_id"),
    "bot": ("bot_name_lower", "bot_id"),
    "owner": ("owner_name_lower", "-elo", "bot_id"),
}


def _reverse(order: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(o[1:] if o.startswith("-") else f"-{o}" for o in order)


def ranked(ladder: Ladder) -> QuerySet[Rating]:
    """The ladder's standings, best Elo first (ties: OpenSkill ordinal, then
    the older bot)."""
    return core_selectors.listed(ladder).select_related("bot", "bot__owner").order_by("-elo", "-ordinal", "bot_id")


def listed_count(ladder: Ladder) -> int:
    """How many bots the leaderboard lists (cached briefly: it changes only
    when a bot plays its first game or a version is activated)."""
    key = caching.listed_count_key(ladder.pk)
    count = cache.get(key)
    if count is None:
        count = core_selectors.listed(ladder).count()
        cache.set(key, count, 30)
    return count


POSITIONS_SECONDS = 30


def elo_positions(ladder: Ladder) -> dict[int, int]:
    """{rating id: place in the Elo order} for every listed bot, from one
    narrow query along the (ladder, -elo) index, cached for
    POSITIONS_SECONDS (the leaderboard refreshes at that pace too): the rank
    shown beside another sort, and on a bot's page, may be that old."""
    key = caching.elo_positions_key(ladder.pk)
    positions = cache.get(key)
    if positions is None:
        ids = core_selectors.listed(ladder).order_by("-elo", "-ordinal", "bot_id").values_list("id", flat=True)
        positions = {pk: i + 1 for i, pk in enumerate(ids)}
        cache.set(key, positions, POSITIONS_SECONDS)
    return positions


def position_of(rating: Rating) -> int | None:
    """The rating's place in its ladder's Elo order (None if not listed)."""
    return elo_positions(rating.ladder).get(rating.pk)


@dataclass
class StandingsPage:
    rows: list[Rating]
    total: int
    page: int
    pages: int
    sort: str
    descending: bool


def standings_page(ladder: Ladder, sort: str = "rank", page: int = 1, descending: bool = True) -> StandingsPage:
    """One page of the leaderboard. ``position`` is the bot's place in the
    Elo order (ties broken by OpenSkill ordinal, then age), whatever the sort.

    Two steps: the page's ids (and positions) from a narrow query over the
    ratings, then those rows with their bots and owners."""
    if sort not in SORTS:
        sort = "rank"
    total = listed_count(ladder)
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)
    order = SORTS[sort] if descending else _reverse(SORTS[sort])
    narrow = core_selectors.listed(ladder)
    if sort == "winrate":
        narrow = narrow.annotate(win_rate=Cast(F("wins"), FloatField()) / NullIf(F("games"), 0))
    elif sort == "bot":
        narrow = narrow.annotate(bot_name_lower=Lower("bot__name"))
    elif sort == "owner":
        narrow = narrow.annotate(owner_name_lower=Lower("bot__owner__username"))
    window = slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)
    if sort in ("rank", "elo") and descending:
        ids = list(narrow.order_by(*order).values_list("id", flat=True)[window])
        positions = {pk: window.start + i + 1 for i, pk in enumerate(ids)}
    else:
        ids = list(narrow.order_by(*order).values_list("id", flat=True)[window])
        positions = elo_positions(ladder)
    by_id = Rating.objects.select_related("bot", "bot__owner").in_bulk(ids)
    rows = [by_id[pk] for pk in ids]
    for r in rows:
        r.position = positions.get(r.pk)
    attach_trends(rows)
    return StandingsPage(rows, total, page, pages, sort, descending)


def attach_trends(ratings: list[Rating], games: int = TREND_GAMES) -> None:
    """Each rating gets ``trend`` (the Elo before its last ``games`` games,
    then after each, oldest first) and ``trend_delta`` (the Elo change over
    those games): one query, ``games`` rows per rating, each read from the
    (rating, id) index."""
    if not ratings:
        return
    table = RatingChange._meta.db_table
    ids = [r.pk for r in ratings]
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT t.rating_id, t.id, t.elo_before, t.elo_after FROM unnest(%s::bigint[]) AS r(id) "
            f"CROSS JOIN LATERAL (SELECT rating_id, id, elo_before, elo_after FROM {table} "
            f"WHERE rating_id = r.id ORDER BY rating_id DESC, id DESC LIMIT {int(games)}) t"
        )
        params: list = [ids]
    else:
        part = (
            f"SELECT * FROM (SELECT rating_id, id, elo_before, elo_after FROM {table} "
            f"WHERE rating_id = %s ORDER BY rating_id DESC, id DESC LIMIT {int(games)}) t{{n}}"
        )
        sql = " UNION ALL ".join(part.format(n=i) for i in range(len(ids)))
        params = ids
    by_rating: dict[int, list[tuple[int, Decimal, Decimal]]] = {r.pk: [] for r in ratings}
    with connection.cursor() as cur:
        cur.execute(sql, params)
        for rating_id, change_id, before, after in cur.fetchall():
            if not isinstance(before, Decimal):  # SQLite hands back floats or strings
                before, after = Decimal(str(before)), Decimal(str(after))
            by_rating[rating_id].append((change_id, before, after))
    for r in ratings:
        changes = sorted(by_rating[r.pk])
        if changes:
            r.trend = [float(changes[0][1])] + [float(after) for _id, _before, after in changes]
            r.trend_delta = changes[-1][2] - changes[0][1]
        else:
            r.trend = []
            r.trend_delta = None


# ---------------------------------------------------------------------------
# Bot page
# ---------------------------------------------------------------------------


def bot_detail(bot_id: int) -> Bot | None:
    return Bot.objects.select_related("owner", "current_version").filter(pk=bot_id).first()


def bot_ratings(bot: Bot) -> list[Rating]:
    """The bot's rating on every ladder of its game, with its position there."""
    ratings = list(
        Rating.objects.filter(bot=bot).select_related("ladder").order_by("ladder__players_per_match", "ladder_id")
    )
    for r in ratings:
        shown = r.games > 0 or (
            bot.current_version is not None and bot.current_version.status == BotVersion.Status.ACTIVE
        )
        r.position = position_of(r) if shown else None
        r.win_rate = (r.wins / r.games) if r.games else None
    return ratings


def bot_versions(bot: Bot, limit: int = 30) -> list[BotVersion]:
    return list(bot.versions.order_by("-number")[:limit])


def rating_history(rating: Rating, limit: int = CHART_CHANGES, points: int = CHART_POINTS) -> dict[str, Any]:
    """The last ``limit`` rating changes of a rating, downsampled to at most
    ``points`` points (each point is the last change of its bucket; version
    changes are kept exactly)."""
    fields = (
        "match_id",
        "version_id",
        "elo_before",
        "elo_after",
        "mu_before",
        "sigma_before",
        "mu_after",
        "sigma_after",
    )
    rows = [
        dict(zip(fields, row))
        for row in RatingChange.objects.filter(rating=rating)
        # rating_id first: the order of the (rating, id) index, which the
        # planner then walks (ordering by id alone, it may scan the table's
        # primary key backwards looking for this rating's rows).
        .order_by("-rating_id", "-id")
        .values_list(*fields)[:limit]
    ]
    rows.reverse()
    total = rating.games
    first_game = total - len(rows) + 1  # game number of rows[0]
    version_numbers = dict(
        BotVersion.objects.filter(pk__in={r["version_id"] for r in rows}).order_by().values_list("pk", "number")
    )
    marks = []
    prev_version = None
    for k, row in enumerate(rows):
        if row["version_id"] != prev_version:
            marks.append({"game": first_game + k, "version": version_numbers.get(row["version_id"]), "index": k})
            prev_version = row["version_id"]
    step = max(1, -(-len(rows) // points))
    sampled = []
    for k in range(0, len(rows), step):
        bucket = rows[k : k + step]
        row = bucket[-1]
        sampled.append(
            {
                "game": first_game + k + len(bucket) - 1,
                "match": row["match_id"],
                "elo": float(row["elo_after"]),
                "mu": row["mu_after"],
                "sigma": row["sigma_after"],
                "ordinal": row["mu_after"] - 3 * row["sigma_after"],
            }
        )
    start = None
    if rows:
        r0 = rows[0]
        start = {
            "game": first_game - 1, "elo": float(r0["elo_before"]), "mu": r0["mu_before"], "sigma": r0["sigma_before"],
            "ordinal": r0["mu_before"] - 3 * r0["sigma_before"],
        }  # fmt: skip
    return {"points": sampled, "marks": marks, "start": start, "shown": len(rows), "total": total, "step": step}


def recent_matches(bot: Bot, limit: int = RECENT_MATCHES, include_validation: bool = False) -> list[Participant]:
    """The bot's last matches (its seat in each, with every seat of the match)."""
    qs = (
        Participant.objects.filter(bot=bot)
        .select_related("match", "match__ladder", "version")
        .only(
            "id", "match_id", "seat", "bot_id", "version_id", "score", "rank", "forfeit_reason", "forfeit_detail",
            "forfeit_event", "log_size", "elo_before", "elo_after",
            "match__id", "match__status", "match__num_players", "match__finished", "match__kind", "match__ladder_id",
            "match__ladder__id", "match__ladder__name", "version__id", "version__number",
        )
    )  # fmt: skip
    if not include_validation:
        qs = qs.filter(match__kind=Match.Kind.LADDER)
    mine = list(qs.order_by("bot_id", "-match_id")[:limit])  # the (bot, -match) index order
    seats: dict[int, list[Participant]] = {}
    table = (
        Participant.objects.filter(match_id__in=[m.match_id for m in mine])
        .select_related("bot")
        .only("id", "match_id", "seat", "bot_id", "bot__id", "bot__name")
        .order_by("match_id", "seat")
    )
    for p in table:
        seats.setdefault(p.match_id, []).append(p)
    match_url, bot_url = _url_prefix("web-match"), _url_prefix("web-bot")
    for p in mine:
        p.match_url = f"{match_url}{p.match_id}/"
        p.table = seats.get(p.match_id, [])
        p.opponents = [o for o in p.table if o.bot_id != bot.pk]
        for o in p.opponents:
            o.url = f"{bot_url}{o.bot_id}/"
        p.elo_delta = (p.elo_after - p.elo_before) if p.elo_after is not None and p.elo_before is not None else None
    return mine


def head_to_head(bot: Bot, matches: int = H2H_MATCHES, opponents: int = H2H_OPPONENTS) -> list[dict[str, Any]]:
    """Record against the most frequent opponents over the bot's last
    ``matches`` finished ladder matches: one aggregated query."""
    p = Participant._meta.db_table
    m = Match._meta.db_table
    b = Bot._meta.db_table
    sql = f"""
        SELECT o.bot_id, ob.name, COUNT(*) AS games,
               SUM(CASE WHEN me.rank < o.rank THEN 1 ELSE 0 END) AS ahead,
               SUM(CASE WHEN me.rank = o.rank THEN 1 ELSE 0 END) AS level,
               SUM(CASE WHEN me.rank > o.rank THEN 1 ELSE 0 END) AS behind,
               MAX(me.match_id) AS last_match
        FROM (
            SELECT p.match_id, p.rank FROM {p} p
            JOIN {m} mm ON mm.id = p.match_id
            WHERE p.bot_id = %s AND p.rank IS NOT NULL AND mm.kind = 'ladder'
            ORDER BY p.bot_id, p.match_id DESC LIMIT {int(matches)}
        ) me
        JOIN {p} o ON o.match_id = me.match_id AND o.bot_id <> %s
        JOIN {b} ob ON ob.id = o.bot_id
        GROUP BY o.bot_id, ob.name
        ORDER BY games DESC, last_match DESC
        LIMIT {int(opponents)}
    """
    with connection.cursor() as cur:
        cur.execute(sql, [bot.pk, bot.pk])
        rows = cur.fetchall()
    out = []
    bot_url = _url_prefix("web-bot")
    for bot_id, name, games, ahead, level, behind, last_match in rows:
        out.append(
            {
                "bot_id": bot_id, "url": f"{bot_url}{bot_id}/", "name": name, "games": games, "ahead": ahead,
                "level": level, "behind": behind,
                "last_match": last_match, "share": ahead / games if games else 0,
            }
        )  # fmt: skip
    return out


# ---------------------------------------------------------------------------
# Match page
# ---------------------------------------------------------------------------


def match_detail(match_id: int) -> Match | None:
    seats = Prefetch(
        "participants",
        queryset=Participant.objects.select_related("bot", "bot__owner", "version").order_by("seat"),
    )
    return (
        Match.objects.select_related("ladder", "validation_of", "validation_of__bot", "duplicate_set")
        .prefetch_related(seats)
        .filter(pk=match_id)
        .first()
    )


def match_luck(match: Match, seats: list[Participant]) -> MatchLuck | None:
    """The match's kept luck (None when not known); each seat gets
    ``payoff``, ``luck`` and ``adjusted`` from it."""
    kept = MatchLuck.objects.filter(match=match, error="").exclude(luck=None).first()
    if kept is None or len(kept.luck) != len(seats) or any(p.rank is None for p in seats):
        return None
    by_seat = sorted(seats, key=lambda p: p.seat)
    for p, payoff, luck in zip(by_seat, core_selectors.seat_payoffs([p.rank for p in by_seat]), kept.luck):
        p.payoff, p.luck, p.adjusted = payoff, luck, payoff - luck
    return kept


def matches_page(
    before: int | None = None, ladder: int | None = None, bot: int | None = None, limit: int = 30
) -> list[Match]:
    """Finished and running matches, newest first, keyset-paginated by id."""
    qs = Match.objects.filter(kind=Match.Kind.LADDER).exclude(status=Match.Status.CANCELLED)
    if ladder is not None:
        qs = qs.filter(ladder_id=ladder)
    if bot is not None:
        mine = Participant.objects.filter(bot_id=bot, match__kind=Match.Kind.LADDER)
        if before is not None:
            mine = mine.filter(match_id__lt=before)
        qs = qs.filter(pk__in=list(mine.order_by("-match_id").values_list("match_id", flat=True)[:limit]))
    if before is not None:
        qs = qs.filter(pk__lt=before)
    return list(qs.select_related("ladder").only(*_LIST_FIELDS).prefetch_related(_SEATS).order_by("-id")[:limit])


# ---------------------------------------------------------------------------
# My bots
# ---------------------------------------------------------------------------


def my_bots(user) -> list[Bot]:
    bots = list(Bot.objects.filter(owner=user).select_related("current_version").order_by("game", "name"))
    if not bots:
        return bots
    latest: dict[int, BotVersion] = {}
    for v in BotVersion.objects.filter(bot__in=bots).order_by("bot_id", "-number"):
        latest.setdefault(v.bot_id, v)
    ratings: dict[int, list[Rating]] = {}
    for r in Rating.objects.filter(bot__in=bots).select_related("ladder").order_by("ladder__players_per_match"):
        ratings.setdefault(r.bot_id, []).append(r)
    for b in bots:
        b.latest_version = latest.get(b.pk)
        b.rating_list = ratings.get(b.pk, [])
    return bots


def my_recent_logs(user, limit: int = 30) -> list[Participant]:
    """The latest seats my bots played (their logs are mine to read)."""
    since = timezone.now() - timedelta(days=30)
    return list(
        Participant.objects.filter(bot__owner=user, match__status=Match.Status.FINISHED, match__created__gte=since)
        .select_related("bot", "version", "match", "match__ladder")
        .order_by("-match_id")[:limit]
    )


def bot_events(bot, limit: int = 20) -> list[dict]:
    """The events the bot entered, newest first, with its place in each
    (from the stored standings; none before an event starts)."""
    rows = []
    for e in (
        TournamentEntry.objects.filter(bot=bot)
        .select_related("tournament__stored_standings", "version")
        .order_by("-tournament_id")[:limit]
    ):
        t = e.tournament
        stored = getattr(t, "stored_standings", None)
        standings = (stored.document if stored else {}).get("standings", [])
        row = next((r for r in standings if r["bot"] == bot.pk), None)
        rows.append({
            "t": t, "version_number": e.version.number, "place": row and row["place"], "of": len(standings),
            "points_per_match": row and row["points_per_match"], "matches": row and row["matches"],
        })  # fmt: skip
    return rows
