"""Every read of the ladder (HackSoft style): querysets shaped for their
pages, with a query count that does not grow with the page size."""

from __future__ import annotations

import gzip

from django.db.models import Prefetch, Q, QuerySet

from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating


def ladders() -> QuerySet[Ladder]:
    return Ladder.objects.all().order_by("game", "players_per_match", "name")


# A bot as lists show it: its name and its owner's username, nothing more
# (loading whole bots and users, with their dates, was a third of the time a
# page of matches took in bench_api).
_BOT_NAMES = Bot.objects.select_related("owner").only("id", "name", "owner_id", "owner__id", "owner__username")


def standings(ladder: Ladder) -> QuerySet[Rating]:
    """The bots on a ladder by Elo (the ones whose bot can play, or has played).

    Shaped for big ladders (bench_api: 10,000 bots): the filter and the order
    need the rating row only, so a page, even a deep one, is read from the
    (ladder, -elo) index without joining every row before it; the page's bots
    and owners come in one more query. "Can play" is asked only of this
    ladder's bots without games, in one uncorrelated subquery (asking it of
    every bot cost 10-15 ms a request; a correlated EXISTS is estimated so
    dear that PostgreSQL JIT-compiles the COUNT: 20 ms more)."""
    waiting = Rating.objects.filter(
        ladder=ladder, games=0, bot__current_version__status=BotVersion.Status.ACTIVE
    ).values("bot_id")
    return (
        Rating.objects.filter(ladder=ladder)
        .filter(Q(games__gt=0) | Q(bot_id__in=waiting))
        .prefetch_related(Prefetch("bot", queryset=_BOT_NAMES))
        .order_by("-elo", "-ordinal", "bot_id")
    )


def bots(game: str | None = None, owner: str | None = None) -> QuerySet[Bot]:
    qs = Bot.objects.select_related("owner", "current_version").order_by("game", "name")
    if game:
        qs = qs.filter(game=game)
    if owner:
        qs = qs.filter(owner__username=owner)
    return qs


def versions(bot: Bot) -> QuerySet[BotVersion]:
    return bot.versions.select_related("bot").order_by("-number")


# A page of matches in four queries whatever its size: the matches, their
# participants, those bots with their owners, those versions. Each is a
# primary-key (or match_id) lookup; joining the participants to bots and
# versions in one query made PostgreSQL hash-join whole tables (10,000 bots:
# 25-45 ms a page in bench_api, against a few ms for the lookups).
_PARTICIPANTS = Prefetch(
    "participants",
    queryset=Participant.objects.order_by("seat").prefetch_related(
        Prefetch("bot", queryset=_BOT_NAMES),
        Prefetch("version", queryset=BotVersion.objects.only("id", "bot_id", "number", "status")),
    ),
)


def matches(ladder: int | None = None, bot: int | None = None, status: str | None = None) -> QuerySet[Match]:
    qs = Match.objects.select_related("ladder").prefetch_related(_PARTICIPANTS).order_by("-id")
    if ladder is not None:
        qs = qs.filter(ladder_id=ladder)
    if bot is not None:
        qs = qs.filter(pk__in=Participant.objects.filter(bot_id=bot).values("match_id"))
    if status:
        qs = qs.filter(status=status)
    return qs


def match(match_id: int) -> Match | None:
    """Just the match row (replay and log downloads)."""
    return Match.objects.filter(pk=match_id).first()


def participant(match: Match, seat: int) -> Participant | None:
    return match.participants.select_related("bot").filter(seat=seat).first()


def match_detail(match_id: int) -> Match | None:
    return matches().filter(pk=match_id).first()


def replay_bytes(match: Match) -> bytes | None:
    if not match.replay:
        return None
    with match.replay.open("rb") as f:
        return gzip.decompress(f.read())


def log_text(participant: Participant) -> str:
    if not participant.log:
        return ""
    with participant.log.open("rb") as f:
        return gzip.decompress(f.read()).decode("utf-8", errors="replace")
