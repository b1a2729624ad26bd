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

``send_match`` is the services' way to send a match (ladder.services.matches
and ladder.services.tournaments both call it; neither reaches into the other).
"""

from __future__ import annotations

from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.utils import timezone

from ladder.models import Match

PLAY_MATCH = "ladder.tasks.play_match"
VALIDATE_VERSION = "ladder.tasks.validate_version"
PLAY_CASUAL_MATCH = "ladder.tasks.play_casual_match"


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


def send_match(match_id: int, countdown: int = 0) -> None:
    """Send the task message that plays the match (a ladder or event match)
    or the validation it belongs to, to the queue of its kind; stamp
    ``enqueued`` (ladder.services.matches re-sends a stale one)."""
    row = Match.objects.filter(pk=match_id).values("kind", "validation_of_id").first()
    if row is None:
        return
    Match.objects.filter(pk=match_id).update(enqueued=timezone.now() + timedelta(seconds=countdown))
    if row["kind"] == Match.Kind.VALIDATION:
        validate_version(row["validation_of_id"], resume=True, countdown=countdown)
    elif row["kind"] == Match.Kind.TOURNAMENT:
        play_tournament_match(match_id, countdown=countdown)
    elif row["kind"] == Match.Kind.CASUAL:
        play_casual_match(match_id, countdown=countdown)
    else:
        play_match(match_id, countdown=countdown)
