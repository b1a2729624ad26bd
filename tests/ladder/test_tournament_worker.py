"""An event played by real Celery workers (PostgreSQL + Redis), on the
tournaments' own queue: a worker SIGKILLed in the middle of the event loses
nothing; every match is recorded exactly once; ladder ratings stay as they
were. The lease reaper (sent as the periodic task beat sends it) re-queues
the interrupted match and feeds the event again."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from ladder import selectors
from ladder.models import BotVersion, Match, Participant, Rating, RatingChange, Tournament, TournamentMatch
from ladder.services import bots as bot_services
from ladder.services import tournaments
from ladder.tasks import reap_expired_leases
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    celery_workers_fixture,
    queue_length,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]

LEASE = "3"
QUEUES = "celery,tournaments,scheduler"  # the reaper the test sends goes to the scheduler queue


def test_an_event_survives_a_worker_killed_mid_event(celery_workers, settings):
    owner = factories.user()
    boss = factories.user()
    boss.is_staff = True
    boss.save()
    slow_bot = bot_services.create_bot(owner=owner, game="allegory", name="slowpoke")
    slow = bot_services.upload_version(bot=slow_bot, filename="slow_bot.py", data=(BOTS / "slow_bot.py").read_bytes())
    bot_services.activate_version(slow)
    slow_bot.refresh_from_db()
    greedy = BotVersion.objects.get(bot__game="allegory", bot__name="greedy", status="active").bot
    rand = BotVersion.objects.get(bot__game="allegory", bot__name="random", status="active").bot
    ratings_before = list(Rating.objects.order_by("pk").values_list("pk", "elo", "mu", "sigma", "games"))

    worker_a = celery_workers.start("killed", queues=QUEUES, CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    t = tournaments.create_tournament(
        user=boss, name="kill cup", game="allegory", format="round-robin", bots=[slow_bot, greedy, rand],
        table_size=2, deals=2, seed=99, startup_ms=5000, per_move_ms=1000, overage_ms=5000, total_ms=60000,
    )  # fmt: skip
    assert t.total_matches == 6
    ids = list(Match.objects.filter(tournament_slot__tournament=t).values_list("pk", flat=True))
    # its messages went to the tournaments' queue, not the ladder's
    assert queue_length("celery") == 0

    def slow_match_running_on_a():
        return Match.objects.filter(
            pk__in=ids, status=Match.Status.RUNNING, worker__startswith=worker_a.node, participants__bot=slow_bot
        ).first()

    interrupted = wait_until(slow_match_running_on_a, 120, "worker A to play a match of the slow bot", celery_workers, interval=0.05)
    time.sleep(1.0)  # into the match (the slow bot takes 0.2 s a move)
    worker_a.kill()
    assert Match.objects.get(pk=interrupted.pk).status == Match.Status.RUNNING
    assert not Participant.objects.filter(match=interrupted, score__isnull=False).exists()
    done_before = Match.objects.filter(pk__in=ids, status=Match.Status.FINISHED).count()
    assert done_before < 6

    worker_b = celery_workers.start("rescuer", queues=QUEUES, CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    wait_until(
        lambda: Match.objects.get(pk=interrupted.pk).lease_expires < timezone.now(), 15, "A's lease to lapse", celery_workers
    )
    reap_expired_leases.delay()

    def all_finished():
        statuses = list(Match.objects.filter(pk__in=ids).values_list("status", flat=True))
        assert Match.Status.FAILED not in statuses
        return all(s == Match.Status.FINISHED for s in statuses)

    wait_until(all_finished, 240, "worker B to finish the event", celery_workers)
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    again = Match.objects.get(pk=interrupted.pk)
    assert again.attempts == 2 and again.worker.startswith(worker_b.node)
    # exactly once: one result per seat, one slot per match, nothing rated
    for match_id in ids:
        parts = list(Participant.objects.filter(match_id=match_id))
        assert len(parts) == 2 and all(p.score is not None and p.rank is not None for p in parts)
        assert all(p.elo_before is None and p.elo_after is None for p in parts)
    assert TournamentMatch.objects.filter(tournament=t).count() == 6
    assert not RatingChange.objects.exists()
    assert list(Rating.objects.order_by("pk").values_list("pk", "elo", "mu", "sigma", "games")) == ratings_before
    doc = selectors.tournament_standings(t)
    assert doc["matches_played"] == 6
    assert sum(r["matches"] for r in doc["standings"]) == 12
