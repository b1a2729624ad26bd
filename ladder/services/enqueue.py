"""Handing work to the workers: the one place the services send task messages.

The flow is one way: ``ladder.tasks`` imports the services, and the services
never import the tasks. They send a task message by its name through the
Celery app, and the queue it goes to comes from the routes in
``config.settings`` (CELERY_TASK_ROUTES: ladder matches to the ladder queue,
validations to the validation queue).
"""

from __future__ import annotations

from celery import current_app

PLAY_MATCH = "ladder.tasks.play_match"
VALIDATE_VERSION = "ladder.tasks.validate_version"


def send(task_name: str, args: tuple = (), kwargs: dict | None = None, countdown: int = 0, **routing) -> None:
    """``routing``: Celery's queue and priority, where a message does not
    follow its task's route (tournament matches)."""
    options = {"countdown": countdown, **routing} if countdown else dict(routing)
    if current_app.conf.task_always_eager:
        # send_task ignores eager mode: run the registered task here instead.
        current_app.tasks[task_name].apply_async(args, kwargs or {}, **options)
    else:
        current_app.send_task(task_name, args=args, kwargs=kwargs or {}, **options)


def play_match(match_id: int, countdown: int = 0) -> None:
    send(PLAY_MATCH, (match_id,), countdown=countdown)


def play_tournament_match(match_id: int, countdown: int = 0) -> None:
    """The same task as a ladder match, on the tournaments' queue with their priority."""
    from django.conf import settings

    send(
        PLAY_MATCH, (match_id,), countdown=countdown,
        queue=settings.CARDROOM_TOURNAMENT_QUEUE, priority=settings.CARDROOM_TOURNAMENT_PRIORITY,
    )  # fmt: skip


def validate_version(version_id: int, resume: bool = False, countdown: int = 0) -> None:
    send(VALIDATE_VERSION, (version_id,), {"resume": True} if resume else {}, countdown=countdown)
