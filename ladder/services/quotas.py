"""Per-user quotas: what one account may take of the platform.

| quota | setting (default) | checked when |
|---|---|---|
| ``bots`` | CARDROOM_QUOTA_BOTS (10) | a bot is created |
| ``versions_per_day`` | CARDROOM_QUOTA_VERSIONS_PER_DAY (20; 0: no uploads) | a version is uploaded (last 24 hours) |
| ``stored_bytes`` | CARDROOM_QUOTA_STORED_BYTES (50 MiB) | a version is uploaded (all its versions' packages) |
| ``queued_matches`` | CARDROOM_QUOTA_QUEUED_MATCHES (10) | a version is uploaded (its validation matches still to play); matchmaking also queues no more ladder matches than this for one owner |

The checks run in the service layer, so the API and the web forms refuse
alike; a refusal (QuotaExceeded) names the quota, its limit and what to do.
The callers hold the owner's row lock (``lock_owner``), so two requests at
once cannot both pass. Staff accounts are exempt (operators' own uploads).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum
from django.utils import timezone

from cardroom.sizes import format_size
from ladder.models import Bot, BotVersion, Ladder, Match
from ladder.services.errors import QuotaExceeded

DAY = timedelta(hours=24)
WAITING = (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING)


def lock_owner(owner) -> None:
    """Serialise one user's quota-checked writes (call inside a transaction)."""
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()


def _exempt(owner) -> bool:
    return bool(getattr(owner, "is_staff", False))


def check_new_bot(owner) -> None:
    if _exempt(owner):
        return
    limit = settings.CARDROOM_QUOTA_BOTS
    have = Bot.objects.filter(owner=owner).count()
    if have >= limit:
        raise QuotaExceeded(
            "bots",
            limit,
            f"quota reached (bots per user): you have {have} bots and the limit is {limit}. "
            "Upload a new version of one of your bots instead, or ask the operators for a higher limit.",
            retry_later=False,
        )


def validation_matches_waiting(owner) -> int:
    """Validation matches the owner's pending and validating versions have
    still to play: those queued or running, or, for a version whose matches
    are not created yet, one per player count of its game's ladders."""
    waiting = (
        BotVersion.objects.filter(bot__owner=owner, status__in=WAITING)
        .annotate(
            live=Count("validation_matches", filter=Q(validation_matches__status__in=[Match.Status.QUEUED, Match.Status.RUNNING])),
            made=Count("validation_matches"),
        )
        .values_list("bot__game", "live", "made")
    )
    return sum(live if made else validation_matches_per_version(game) for game, live, made in waiting)


def validation_matches_per_version(game: str) -> int:
    """One validation match per player count of the game's active ladders
    (ladder.selectors.validation_player_counts)."""
    return Ladder.objects.filter(game=game, active=True).values("players_per_match").distinct().count() or 1


def check_upload(owner, game: str, size: int) -> None:
    """May ``owner`` store one more version (``size`` bytes) of a ``game`` bot?"""
    if _exempt(owner):
        return
    now = timezone.now()
    per_day = settings.CARDROOM_QUOTA_VERSIONS_PER_DAY
    if per_day <= 0:
        # 0 lets nobody upload: waiting would not help, so not retry_later (decision 29)
        raise QuotaExceeded(
            "versions_per_day",
            per_day,
            "quota reached (versions a day): this server accepts no uploads (the limit is 0 versions a day). "
            "Test locally with `cardroom play`, and ask the operators when uploads open.",
            retry_later=False,
        )
    recent = BotVersion.objects.filter(bot__owner=owner, created__gte=now - DAY)
    uploaded = recent.count()
    if uploaded >= per_day:
        oldest = recent.order_by("created").values_list("created", flat=True).first()
        again = (oldest + DAY).strftime("%Y-%m-%d %H:%M UTC")
        raise QuotaExceeded(
            "versions_per_day",
            per_day,
            f"quota reached (versions a day): you uploaded {uploaded} versions in the last 24 hours and the limit "
            f"is {per_day}. You can upload again at {again}; meanwhile, test locally with `cardroom play`.",
            retry_later=True,
        )
    max_bytes = settings.CARDROOM_QUOTA_STORED_BYTES
    stored = BotVersion.objects.filter(bot__owner=owner).aggregate(n=Sum("size"))["n"] or 0
    if stored + size > max_bytes:
        raise QuotaExceeded(
            "stored_bytes",
            max_bytes,
            f"quota reached (stored bytes): your bot packages take {format_size(stored)}, and this one ({format_size(size)}) "
            f"would bring them to {format_size(stored + size)}, over the limit of {format_size(max_bytes)}. Upload a smaller package "
            "(leave tests, data and caches out of it), or ask the operators to remove old versions.",
            retry_later=False,
        )
    max_queued = settings.CARDROOM_QUOTA_QUEUED_MATCHES
    waiting = validation_matches_waiting(owner)
    adds = validation_matches_per_version(game)
    if waiting + adds > max_queued:
        raise QuotaExceeded(
            "queued_matches",
            max_queued,
            f"quota reached (matches queued): your versions waiting for validation have {waiting} matches still "
            f"to play, and this upload would add {adds}, over the limit of {max_queued}. Wait until they are "
            "validated (your bot's page shows their progress), then upload again.",
            retry_later=True,
        )
