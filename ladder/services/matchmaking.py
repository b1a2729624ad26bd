"""Keeping each active ladder's queue topped up with well-chosen matches.

First the bot that most needs games (fewest games queued or played recently,
then the widest OpenSkill uncertainty), then opponents near it in Elo (drawn
at random among the nearest few, so pairings vary), seats shuffled. Each match
gets its own seed.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from ladder.models import Bot, Ladder, Match, Participant, Rating
from ladder.services.matches import create_match, enqueue_after_commit
from ladder.services.ratings import ensure_ratings

RECENT = timedelta(hours=24)


def eligible_bots(ladder: Ladder) -> list[Bot]:
    return list(
        Bot.objects.filter(game=ladder.game, current_version__status="active").select_related("current_version")
    )


def pick_lineup(ladder: Ladder, rng: random.Random) -> list[Bot] | None:
    bots = eligible_bots(ladder)
    n = ladder.players_per_match
    if len(bots) < n:
        return None
    ensure_ratings(ladder, [b.pk for b in bots])
    ratings = {r.bot_id: r for r in Rating.objects.filter(ladder=ladder, bot__in=bots)}
    since = timezone.now() - RECENT
    busy = dict(
        Participant.objects.filter(match__ladder=ladder)
        .filter(Q(match__status__in=["queued", "running"]) | Q(match__finished__gte=since))
        .values_list("bot_id")
        .annotate(n=Count("id"))
    )

    def need(bot: Bot) -> tuple:
        return (busy.get(bot.pk, 0), -ratings[bot.pk].sigma, rng.random())

    first = min(bots, key=need)
    others = sorted((b for b in bots if b.pk != first.pk), key=lambda b: abs(ratings[b.pk].elo - ratings[first.pk].elo))
    pool = others[: max(2 * (n - 1), n - 1)]
    lineup = [first, *rng.sample(pool, n - 1)]
    rng.shuffle(lineup)
    return lineup


def top_up_queues(rng: random.Random | None = None) -> list[int]:
    """Create matches until every active ladder has its target queue."""
    rng = rng or random.Random()
    created: list[int] = []
    for ladder in Ladder.objects.filter(active=True):
        queued = Match.objects.filter(ladder=ladder, status=Match.Status.QUEUED).count()
        for _ in range(max(0, settings.CARDROOM_QUEUE_TARGET - queued)):
            lineup = pick_lineup(ladder, rng)
            if lineup is None:
                break
            with transaction.atomic():
                match = create_match(ladder=ladder, versions=[b.current_version for b in lineup], seed=rng.randrange(2**62))
                enqueue_after_commit(match.pk)
            created.append(match.pk)
    return created
