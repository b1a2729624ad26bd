"""Queues: services hand work to the workers through ladder.services.enqueue
(by task name, never importing ladder.tasks), ladder matches and validations
go to queues of their own, and a worker that consumes both validates a new
version promptly while the ladder queue is full."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from ladder.models import BotVersion, Ladder, Match
from ladder.services import enqueue
from ladder.services.bots import upload_version
from ladder.services.matches import create_match
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    ROOT,
    celery_workers_fixture,
    flush_broker,
    only_ladders,
    queue_length,
    require_redis_broker,
    wait_until,
    worker_env,
)

LIMITS = {"startup_ms": 5000, "per_move_ms": 500, "overage_ms": 2000, "total_ms": 20000}


def test_the_services_never_import_the_tasks_module():
    """The flow is one way: tasks → services. Importing every service (and
    sending a message) in a fresh process leaves ladder.tasks unimported."""
    code = (
        "import sys, django; django.setup()\n"
        "from ladder.services import bots, enqueue, matches, matchmaking, ops, ratings, validation\n"
        "print('ladder.tasks' in sys.modules)\n"
    )
    env = {**worker_env(), "CELERY_BROKER_URL": "memory://"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_worker_started_without_queues_consumes_every_queue():
    """`celery -A config worker` (contract section 5; the compose worker,
    make demo's) consumes the queues the app declares: all of them."""
    from django.conf import settings

    from config.celery import app

    assert set(app.amqp.queues) == set(settings.CARDROOM_QUEUES.values()) == {"celery", "validation"}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "-Q" not in compose["services"]["worker"]["command"]


@pytest.mark.django_db
def test_ladder_matches_and_validations_go_to_their_own_queues():
    require_redis_broker()
    flush_broker()
    try:
        enqueue.play_match(10**9)
        enqueue.validate_version(10**9)
        enqueue.validate_version(10**9 + 1, resume=True)
        assert queue_length("celery") == 1
        assert queue_length("validation") == 2
    finally:
        flush_broker()


@pytest.mark.django_db(transaction=True)
def test_an_upload_queues_its_validation_in_the_validation_queue():
    require_redis_broker()
    flush_broker()
    try:
        upload_version(bot=factories.bot(game="allegory"), filename="bot.py", data=factories.RANDOM_BOT)
        assert queue_length("validation") == 1
        assert queue_length("celery") == 0
    finally:
        flush_broker()


def _builtin_versions(game: str) -> list[BotVersion]:
    return list(
        BotVersion.objects.filter(bot__game=game, bot__builtin=True, status=BotVersion.Status.ACTIVE)
        .select_related("bot")
        .order_by("bot__name")
    )


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_new_version_is_validated_while_the_ladder_queue_is_full(celery_workers):
    ladder = only_ladders("allegory", [2], **LIMITS)[2]
    builtins = _builtin_versions("allegory")
    assert len(builtins) >= 2
    queued = []
    for i in range(30):  # a full ladder queue: far more than one worker plays in the test's time
        a, b = builtins[i % len(builtins)], builtins[(i + 1) % len(builtins)]
        match = create_match(ladder=ladder, versions=[a, b], seed=i)
        queued.append(match.pk)
    for pk in queued:
        enqueue.play_match(pk)
    assert queue_length("celery") == 30
    celery_workers.start("both")  # one worker, one process, consuming every queue

    version = upload_version(bot=factories.bot(game="allegory"), filename="bot.py", data=factories.RANDOM_BOT)

    def validated():
        return BotVersion.objects.filter(pk=version.pk, status__in=["active", "failed"]).values_list("status", flat=True).first()

    status = wait_until(validated, 300, "the new version's validation", celery_workers)
    assert status == "active", BotVersion.objects.get(pk=version.pk).validation_log
    played = Match.objects.filter(pk__in=queued).exclude(status=Match.Status.QUEUED).count()
    # The worker alternates between the queues: the validation waited for at
    # most a couple of ladder matches, not for the 30 queued before it.
    assert played <= 10, f"{played} ladder matches were played before the new version was validated"
    assert Ladder.objects.get(pk=ladder.pk).active
