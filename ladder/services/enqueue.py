"""Handing work to the workers: the one place the services send task messages.

The flow is one way: ``ladder.tasks`` imports the services, and the services
never import the tasks. They send a task message by its name through the
Celery app, and the queue it goes to comes from the routes in
``config.settings`` (CELERY_TASK_ROUTES: ladder matches to the ladder queue,
validations to the validation queue, event matches to the events' queue,
casual matches to the casual queue).

No message carries a priority: kombu's Redis transport serves every queue's
priority-0 messages before any queue's priority 3 (its BRPOP lists the keys
priority by priority), which would put the queues' rotation, and so their
shares (docs/operations.md, "Queues and their shares"), out of force.

Which message plays a match, and so its queue, is its kind's policy's
(ladder.services.match_kinds.send_match, the services' way to send a
match); this module holds the messages themselves.

``without_message`` is what makes a re-send idempotent: of the matches whose
message looks stale, only those with no message still waiting in the broker
are sent again (decision 197), so a match waiting its turn in a long queue
is never sent twice.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from celery import current_app
from django.conf import settings
from django.utils import timezone

from ladder.models import Match

PLAY_MATCH = "ladder.tasks.play_match"
VALIDATE_VERSION = "ladder.tasks.validate_version"
PLAY_CASUAL_MATCH = "ladder.tasks.play_casual_match"

log = logging.getLogger("cardroom.enqueue")

T = TypeVar("T")


def send(task_name: str, args: tuple = (), kwargs: dict | None = None, countdown: int = 0, **routing) -> None:
    """``routing``: Celery's queue, where a message does not follow its
    task's route (event matches: the ladder's task on the events' queue)."""
    options = {"countdown": countdown, **routing} if countdown else dict(routing)
    if current_app.conf.task_always_eager:
        # send_task ignores eager mode: run the registered task here instead.
        current_app.tasks[task_name].apply_async(args, kwargs or {}, **options)
    else:
        current_app.send_task(task_name, args=args, kwargs=kwargs or {}, **options)


def play_match(match_id: int, countdown: int = 0) -> None:
    send(PLAY_MATCH, (match_id,), countdown=countdown)


def play_tournament_match(match_id: int, countdown: int = 0) -> None:
    """The same task as a ladder match, on the events' queue."""
    send(PLAY_MATCH, (match_id,), countdown=countdown, queue=settings.CARDROOM_TOURNAMENT_QUEUE)


def validate_version(version_id: int, resume: bool = False, countdown: int = 0) -> None:
    send(VALIDATE_VERSION, (version_id,), {"resume": True} if resume else {}, countdown=countdown)


def play_casual_match(match_id: int, countdown: int = 0) -> None:
    """To the casual queue (its route), which only the casual worker
    consumes. Never run eagerly: the match waits on its person for minutes,
    and a request that sent it must not (it stays queued instead)."""
    if current_app.conf.task_always_eager:
        return
    send(PLAY_CASUAL_MATCH, (match_id,), countdown=countdown)


def stamp_enqueued(match_id: int, countdown: int = 0) -> None:
    """When the match's message was sent (to take effect after ``countdown``):
    a queued match whose message is stale is sent again."""
    Match.objects.filter(pk=match_id).update(enqueued=timezone.now() + timedelta(seconds=countdown))


def _task_and_argument(raw: bytes | str) -> tuple[str, int | None] | None:
    """(task name, first positional argument) of one message as kombu
    stores it on Redis and in SQL (a JSON envelope, the body in base64)."""
    try:
        message = json.loads(raw)
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return message["headers"]["task"], (args[0] if args else None)
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _waiting_messages() -> list[bytes | str] | None:
    """Every message waiting in our queues (taken ones are not: a worker
    holds them); None when the broker cannot be read here."""
    url = settings.CELERY_BROKER_URL
    queues = sorted(set(settings.CARDROOM_QUEUES.values()) | {settings.CARDROOM_CASUAL_QUEUE})
    try:
        if url.startswith(("redis://", "rediss://", "unix://")):
            import redis

            client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
            try:
                pipe = client.pipeline(transaction=True)  # one snapshot of every queue
                for queue in queues:
                    pipe.lrange(queue, 0, -1)
                return [raw for found in pipe.execute() for raw in found]
            finally:
                client.close()
        if url.startswith(("sqla+", "sqlalchemy+")):
            from sqlalchemy import bindparam, create_engine, text

            engine = create_engine(url.split("+", 1)[1], connect_args={"timeout": 10} if "sqlite" in url else {})
            query = text(
                "SELECT m.payload FROM kombu_message m JOIN kombu_queue q ON q.id = m.queue_id WHERE m.visible AND q.name IN :queues"
            ).bindparams(bindparam("queues", expanding=True))
            try:
                with engine.connect() as conn:
                    return [row[0] for row in conn.execute(query, {"queues": queues})]
            finally:
                engine.dispose()
    except Exception as exc:
        log.warning("the broker's queues cannot be read: stale matches are sent again regardless: %s", str(exc)[:200])
    return None


def without_message(matches: list[T], key: Callable[[T], tuple[str, int | None]]) -> list[T]:
    """Of ``matches``, those whose message no longer waits in the broker
    (``key``: the task name and first argument of a match's message): lost
    (a broker restarted without its data, a worker that died holding it) or
    never sent. The broker is read once (every queue, in one transaction on
    Redis); where it cannot be read, every match is returned (re-sent: a
    duplicate is harmless, only one claim succeeds)."""
    if not matches:
        return []
    waiting = _waiting_messages()
    if waiting is None:
        return list(matches)
    held = {message for raw in waiting if (message := _task_and_argument(raw)) is not None}
    return [m for m in matches if key(m) not in held]
