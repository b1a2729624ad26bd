"""A scheduler that is never late (issue 36, 2), on real Redis and PostgreSQL
with real Celery workers and the real scheduler (beat):

- a worker killed while every worker plays a long match: its match is dealt
  again (back in the queue, its message waiting) within a lease plus 30 s,
  because the reaper's messages have their own queue and consumer, and the
  scheduler's queue stays short all the while;
- a stale match whose message still waits in the broker is not sent again;
  one whose message was lost is sent once;
- a worker that cannot reach its database takes no message, and takes them
  once it can.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from ladder.models import BotVersion, Match
from ladder.services import bots as bot_services
from ladder.services import match_kinds, reaper
from ladder.services import matches as match_services
from ladder.services.enqueue import _task_and_argument
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    beat_process,
    broker_url,
    celery_workers_fixture,
    database_url,
    flush_broker,
    only_ladders,
    queue_length,
    require_redis_broker,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCHEDULER_TASKS = {
    "ladder.tasks.top_up_queues", "ladder.tasks.reap_expired_leases", "ladder.tasks.start_due_events",
    "ladder.tasks.refresh_adjusted_rankings",
}  # fmt: skip
LEASE = 4
THINK = 3.0  # seconds the slow bot sleeps a move: a match of a minute and more


def _messages(queue: str) -> list[str]:
    import redis

    return [_task_and_argument(raw)[0] for raw in redis.Redis.from_url(broker_url()).lrange(queue, 0, -1)]


def _slow_version(think: float) -> BotVersion:
    bot = bot_services.create_bot(owner=factories.user(), game="allegory", name=f"slow-{uuid.uuid4().hex[:6]}")
    source = (BOTS / "slow_bot.py").read_bytes().replace(b"SLEEP = 0.2", f"SLEEP = {think}".encode())
    version = bot_services.upload_version(bot=bot, filename="slow_bot.py", data=source)
    bot_services.activate_version(version)  # validation is not what this is about
    return BotVersion.objects.select_related("bot").get(pk=version.pk)


def test_the_scheduler_has_its_own_queue_and_its_messages_expire_within_their_period():
    from config.celery import app

    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert app.amqp.router.route({}, entry["task"])["queue"].name == "scheduler"
        assert entry["options"]["expires"] == entry["schedule"].total_seconds()
    assert {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()} == SCHEDULER_TASKS


def test_a_killed_workers_match_is_dealt_again_within_a_lease_and_30_s_while_every_worker_plays_long_matches(
    celery_workers, tmp_path
):
    ladder = only_ladders("allegory", [2], startup_ms=5000, per_move_ms=int(THINK * 1000) + 3000, overage_ms=5000, total_ms=600_000)[2]
    slow = _slow_version(THINK)
    greedy = BotVersion.objects.get(bot__game="allegory", bot__name="greedy", status="active")
    # Three long matches for two workers: both play one, the third waits in
    # the ladder queue (where the reaper's messages used to wait too).
    long_ones = [match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=i).pk for i in range(3)]
    for pk in long_ones:
        match_kinds.send_match(pk)
    env = {"CARDROOM_MATCH_LEASE_SECONDS": str(LEASE), "CARDROOM_HEARTBEAT_SECONDS": "1", "CARDROOM_QUEUE_TARGET": "0"}
    periods = {"MATCHMAKING_INTERVAL": "1", "REAPER_INTERVAL": "2", "EVENT_START_INTERVAL": "1"}
    with beat_process(tmp_path, **env, **periods) as beat_log:
        celery_workers.start("sched", pool="threads", queues="scheduler", **env)
        a = celery_workers.start("a", **env)  # no -Q: every queue, as the compose worker
        b = celery_workers.start("b", **env)

        def both_playing():
            running = dict(Match.objects.filter(pk__in=long_ones, status=Match.Status.RUNNING).values_list("worker", "pk"))
            on_a = [pk for w, pk in running.items() if w.startswith(a.node)]
            return len(running) == 2 and on_a and on_a[0]

        victim = wait_until(both_playing, 90, "both workers to play a long match", celery_workers)
        time.sleep(1.0)
        a.kill()  # SIGKILL, pool and bots: a lost machine
        killed_at = time.monotonic()
        longest_scheduler_queue = 0

        def dealt_again():
            nonlocal longest_scheduler_queue
            longest_scheduler_queue = max(longest_scheduler_queue, queue_length("scheduler"))
            m = Match.objects.get(pk=victim)
            return m.status == Match.Status.QUEUED and m

        again = wait_until(dealt_again, LEASE + 30, f"the killed worker's match to be dealt again\n{beat_log()}", celery_workers)
        took = time.monotonic() - killed_at
        assert again.error_kind == "worker_lost" and again.attempts == 1, (again.error_kind, again.attempts)
        # dealt: its message waits in the broker (sent once the re-queue committed)
        wait_until(lambda: match_kinds.without_message([(victim, again.kind, None)]) == [], 10, "its new message", celery_workers)
        # The other worker still plays its long match: the reaper did not wait for it.
        assert Match.objects.filter(pk__in=long_ones, status=Match.Status.RUNNING, worker__startswith=b.node).count() == 1
        # Beat sent a message a second all along; the scheduler's queue stayed
        # short, and none of them went to the ladder's queue.
        assert longest_scheduler_queue <= 3, longest_scheduler_queue
        assert not SCHEDULER_TASKS & set(_messages("celery"))
        b.kill()  # its match is not this test's: no warm shutdown to wait for
    print(f"dealt again {took:.1f} s after the kill (lease {LEASE} s); the scheduler's queue held at most {longest_scheduler_queue}")


@pytest.mark.any_database
def test_a_stale_match_is_sent_again_only_when_its_message_no_longer_waits():
    require_redis_broker()
    flush_broker()
    try:
        ladder = only_ladders("allegory", [2])[2]
        versions = list(BotVersion.objects.filter(bot__game="allegory", bot__builtin=True, status="active")[:2])
        match = match_services.create_match(ladder=ladder, versions=versions)
        match_kinds.send_match(match.pk)
        long_ago = timezone.now() - timedelta(seconds=settings.CARDROOM_RESEND_STALE_SECONDS + 60)
        Match.objects.filter(pk=match.pk).update(enqueued=long_ago)  # waited its turn for long
        for _ in range(3):  # the reaper, again and again
            assert reaper.resend_stale_queued() == []
        assert queue_length("celery") == 1
        flush_broker()  # the message is lost (a broker restarted without its data)
        assert reaper.resend_stale_queued() == [match.pk]
        Match.objects.filter(pk=match.pk).update(enqueued=long_ago)
        assert reaper.resend_stale_queued() == []
        assert queue_length("celery") == 1  # sent once
    finally:
        flush_broker()


def test_a_worker_that_cannot_reach_its_database_takes_no_message_until_it_can(celery_workers):
    """The worker's DATABASE_URL names a role the database does not know
    (it refuses the connection); once the role exists, it is right. Then
    the role may not log in any more, its sessions ended (the database gone
    from under a running worker): it stops, and starts again once it may."""
    if connection.vendor != "postgresql":
        pytest.skip("a role is PostgreSQL's")
    ladder = only_ladders("allegory", [2], startup_ms=5000, per_move_ms=1000, overage_ms=2000, total_ms=20000)[2]
    versions = list(BotVersion.objects.filter(bot__game="allegory", bot__builtin=True, status="active")[:2])
    queued = [match_services.create_match(ladder=ladder, versions=versions, seed=i).pk for i in range(3)]
    for pk in queued[:2]:
        match_kinds.send_match(pk)
    role = f"cardroom_gate_{uuid.uuid4().hex[:8]}"
    url = database_url().replace("://postgres@", f"://{role}@", 1)
    assert role in url
    try:
        worker = celery_workers.start("gated", CARDROOM_WORKER_DB_CHECK_SECONDS="1", DATABASE_URL=url)
        assert "takes no message until it does" in worker.log()  # before it was ready
        time.sleep(3)  # three checks
        assert queue_length("celery") == 2
        assert "received" not in worker.log()
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE ROLE "{role}" LOGIN IN ROLE postgres')  # its tables' owner's rights
        done = lambda n: Match.objects.filter(pk__in=queued, status=Match.Status.FINISHED).count() == n  # noqa: E731
        wait_until(lambda: done(2), 60, "the worker to play the matches once it reaches the database", celery_workers)
        assert "takes messages again" in worker.log()

        with connection.cursor() as cursor:
            cursor.execute(f'ALTER ROLE "{role}" NOLOGIN')
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role])
        stopped = lambda: worker.log().count("takes no message until it does") == 2  # noqa: E731
        wait_until(stopped, 15, "the worker to stop taking messages", celery_workers)
        match_kinds.send_match(queued[2])
        time.sleep(3)
        assert queue_length("celery") == 1
        with connection.cursor() as cursor:
            cursor.execute(f'ALTER ROLE "{role}" LOGIN')
        wait_until(lambda: done(3), 60, "the worker to play the match once it may log in again", celery_workers)
        worker.stop()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role])
            cursor.execute(f'DROP ROLE IF EXISTS "{role}"')
