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
    broker_url,
    celery_workers_fixture,
    flush_broker,
    only_ladders,
    queue_length,
    require_redis_broker,
    wait_until,
    worker_env,
)

# Which queue a message goes to, and how a worker shares itself between them,
# is the broker's business: the SQLite pass need not repeat it.
pytestmark = pytest.mark.any_database

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


def test_no_service_reaches_into_another_services_private_names():
    """The services' flow is one way through public functions: an event's
    matches are sent by ladder.services.enqueue, as the ladder's are, not
    by reaching into ladder.services.matches (which calls the events' hooks,
    so the reverse import was a circle)."""
    import ast

    services = ROOT / "ladder" / "services"
    private, from_events = [], []
    for path in sorted(services.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ladder"):
                private += [f"{path.name}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
                if path.name == "tournaments.py":
                    from_events += [f"{node.module}.{a.name}" for a in node.names]
    assert private == []
    assert not [name for name in from_events if name.startswith("ladder.services.matches") or name == "ladder.services.matches"]


def test_a_worker_started_without_queues_consumes_every_queue():
    """`celery -A config worker` (docs/operations.md; the compose worker,
    make demo's) consumes the queues the app declares: all of them."""
    from django.conf import settings

    from config.celery import app

    assert set(app.amqp.queues.consume_from) == set(settings.CARDROOM_QUEUES.values()) == {"celery", "validation", "tournaments", "mail", "scheduler"}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "-Q" not in compose["services"]["worker"]["command"]
    # ... but never the casual queue: only the casual worker takes a match that waits on a person (decision 135).
    assert settings.CARDROOM_CASUAL_QUEUE == "casual" not in app.amqp.queues.consume_from
    assert app.amqp.router.route({}, "ladder.tasks.play_casual_match")["queue"].name == "casual"


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
def test_event_matches_wait_in_their_queue_with_no_priority_to_outrank_the_rotation():
    """kombu's Redis transport keeps a queue's priority-3 messages under
    another key and lists every queue's priority-0 key first: a message sent
    with a priority is served after every other queue's plain messages. Event
    matches go to their own queue at the plain level, as ladder matches do."""
    import redis

    from ladder.services import tournaments

    require_redis_broker()
    flush_broker()
    try:
        boss = factories.user()
        boss.is_staff = True
        boss.save()
        field = [b.bot for b in _builtin_versions("allegory")][:2]
        t = tournaments.create_tournament(user=boss, name="queue cup", game="allegory", format="round-robin", bots=field, table_size=2, deals=3)
        assert queue_length("tournaments") == t.total_matches == 3
        assert queue_length("celery") == 0
        keys = {k.decode() for k in redis.Redis.from_url(broker_url()).keys("*")}
        assert not [k for k in keys if "\x06\x16" in k], keys  # kombu's separator before a priority level
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


def waiting(queue: str) -> int:
    """Messages waiting in ``queue`` at every priority level (kombu's Redis
    transport keeps each level under its own key)."""
    import redis

    client = redis.Redis.from_url(broker_url())
    return sum(client.llen(key) for key in [queue.encode(), *client.keys(queue + "\x06\x16*")])


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


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_event_takes_its_share_of_a_worker_while_the_ladder_queue_is_full(celery_workers):
    """Ladder and event queues both waiting: a worker consuming every queue
    (on real Redis) takes them in turn, so the event gets half the matches
    the docs promise it, and the ladder keeps its half."""
    from ladder.services import tournaments

    ladder = only_ladders("allegory", [2], **LIMITS)[2]
    builtins = _builtin_versions("allegory")
    ladder_ids = []
    for i in range(30):  # far more than the event: the ladder queue stays full
        match = create_match(ladder=ladder, versions=[builtins[i % 2], builtins[(i + 1) % 2]], seed=i)
        enqueue.play_match(match.pk)
        ladder_ids.append(match.pk)
    boss = factories.user()
    boss.is_staff = True
    boss.save()
    t = tournaments.create_tournament(
        user=boss, name="share cup", game="allegory", format="round-robin", bots=[v.bot for v in builtins[:2]],
        table_size=2, deals=10, seed=5, **LIMITS,
    )  # fmt: skip
    assert waiting("celery") == 30 and waiting("tournaments") == 10
    celery_workers.start("both")  # one worker, one process, every queue

    def event_over():
        t.refresh_from_db()
        return t.status == "finished"

    wait_until(event_over, 300, "the event to finish", celery_workers)
    started = list(Match.objects.exclude(started=None).order_by("started").values_list("kind", flat=True))
    first = started[:20]
    assert 8 <= first.count("tournament") <= 12, f"the first 20 matches played, by kind: {first}"
    ladder_done = Match.objects.filter(pk__in=ladder_ids, finished__lte=t.finished).count()
    assert 8 <= ladder_done <= 13, f"{ladder_done} ladder matches were played while the event's 10 were"
