"""A worker SIGKILLed in the middle of a match: the match is re-run by another
worker, with exactly one result and one rating change per participant.

What delivers the match again is the lease reaper, not the broker: worker A
took the message (late ack) and died with it unacknowledged; Redis would hand
it back only after the visibility timeout (an hour by default). Worker B runs
with CARDROOM_MATCH_LEASE_SECONDS=3: once A's lease has lapsed the test sends
``ladder.tasks.reap_expired_leases`` (the periodic task beat sends every
REAPER_INTERVAL seconds) to B, which re-queues the match (attempt 2) and sends
a fresh ``play_match`` message that B consumes. Then the test hands A's old
message back to the queue (what Redis does after the visibility timeout): B
receives that duplicate, cannot claim the finished match, and nothing changes.
"""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from ladder.models import BotVersion, Match, Participant, Rating, RatingChange
from ladder.services import bots as bot_services
from ladder.services import match_kinds
from ladder.services import matches as match_services
from ladder.tasks import reap_expired_leases
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    cardroom_verify,
    celery_workers_fixture,
    only_ladders,
    queue_length,
    restore_unacked,
    task_ids,
    unacked_count,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]

LEASE = "3"


def test_a_match_whose_worker_is_killed_is_rerun_once_by_another(celery_workers, tmp_path):
    ladder = only_ladders("allegory", [2], startup_ms=5000, per_move_ms=1000, overage_ms=5000, total_ms=60000)[2]
    owner = factories.user()
    slow_bot = bot_services.create_bot(owner=owner, game="allegory", name="slowpoke")
    slow = bot_services.upload_version(bot=slow_bot, filename="slow_bot.py", data=(BOTS / "slow_bot.py").read_bytes())
    bot_services.activate_version(slow)  # validation is not what this test is about
    greedy = BotVersion.objects.get(bot__game="allegory", bot__name="greedy", status="active")
    slow = BotVersion.objects.select_related("bot").get(pk=slow.pk)
    match = match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=12345)
    bot_ids = [slow.bot_id, greedy.bot_id]

    worker_a = celery_workers.start("killed", CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    match_kinds.send_match(match.pk)

    def running_on_a():
        m = Match.objects.get(pk=match.pk)
        return m.status == Match.Status.RUNNING and m.worker.startswith(worker_a.node) and m

    wait_until(running_on_a, 30, "worker A to start the match", celery_workers, interval=0.05)
    time.sleep(1.5)  # well into the match (the slow bot takes 0.2 s a move)
    first = Match.objects.get(pk=match.pk)
    assert first.status == Match.Status.RUNNING and first.attempts == 1
    assert first.lease_expires > timezone.now()  # A keeps renewing its lease
    worker_a.kill()

    # Nothing of the interrupted attempt was recorded.
    assert not Participant.objects.filter(match=match, score__isnull=False).exists()
    assert not RatingChange.objects.filter(match=match).exists()
    assert unacked_count() == 1  # A's message: taken, never acknowledged
    assert queue_length() == 0  # ... and not back in the queue

    worker_b = celery_workers.start("rescuer", CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    wait_until(
        lambda: Match.objects.get(pk=match.pk).lease_expires < timezone.now(), 15, "A's lease to lapse", celery_workers
    )
    assert Match.objects.get(pk=match.pk).status == Match.Status.RUNNING  # nobody re-ran it yet
    reap_expired_leases.delay()

    def finished():
        m = Match.objects.get(pk=match.pk)
        assert m.status != Match.Status.FAILED, m.error
        return m.status == Match.Status.FINISHED and m

    done = wait_until(finished, 90, "worker B to re-run the match", celery_workers)
    assert done.attempts == 2
    assert done.worker.startswith(worker_b.node)
    assert "lease" in done.error.lower() or done.error == ""  # cleared on success
    assert "reaped expired leases" in worker_b.log()  # the reaper delivered it

    def exactly_once():
        assert RatingChange.objects.filter(match=match).count() == 2
        for bot_id in bot_ids:
            assert RatingChange.objects.filter(match=match, participant__bot_id=bot_id).count() == 1
            assert Rating.objects.get(ladder=ladder, bot_id=bot_id).games == 1
        parts = list(Participant.objects.filter(match=match).order_by("seat"))
        assert len(parts) == 2 and all(p.score is not None and p.rank is not None for p in parts)
        assert all(p.elo_before is not None and p.elo_after is not None for p in parts)

    exactly_once()

    # The broker's redelivery of A's message (after its visibility timeout)
    # is a duplicate that cannot claim the finished match.
    [original] = task_ids(worker_a.log(), "ladder.tasks.play_match")
    assert original not in task_ids(worker_b.log(), "ladder.tasks.play_match")
    restore_unacked()
    wait_until(
        lambda: original in task_ids(worker_b.log(), "ladder.tasks.play_match", "succeeded in [0-9.]+s: 'not queued'"),
        30, "B to drop the duplicate", celery_workers,
    )  # fmt: skip
    assert Match.objects.get(pk=match.pk).attempts == 2
    exactly_once()

    replay = tmp_path / "replay.json"
    from ladder.selectors import replay_bytes

    replay.write_bytes(replay_bytes(Match.objects.get(pk=match.pk)))
    verified = cardroom_verify(replay)
    assert verified.returncode == 0, verified.stdout + verified.stderr
