"""Every read of the ladder (HackSoft style): querysets shaped for their
pages, with a query count that does not grow with the page size."""

from __future__ import annotations

import gzip

from django.db.models import Prefetch, Q, QuerySet

from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating


def ladders() -> QuerySet[Ladder]:
    return Ladder.objects.all().order_by("game", "players_per_match", "name")


def standings(ladder: Ladder) -> QuerySet[Rating]:
    """The bots on a ladder by Elo (the ones whose bot can play, or has played)."""
    return (
        Rating.objects.filter(ladder=ladder)
        .filter(Q(games__gt=0) | Q(bot__current_version__status="active"))
        .select_related("bot", "bot__owner")
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
    return bot.versions.order_by("-number")


_PARTICIPANTS = Prefetch(
    "participants",
    queryset=Participant.objects.select_related("bot", "bot__owner", "version").order_by("seat"),
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
