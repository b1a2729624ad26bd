"""The Celery app: `celery -A config worker` and `celery -A config beat`.

Settings come from Django's settings (the CELERY_* names): late acks,
a worker process that dies hands its message back (reject on worker lost),
prefetch 1 (a worker holds no message it is not playing), the Redis
visibility timeout in CELERY_VISIBILITY_TIMEOUT. The lease reaper
(ladder.tasks.reap_expired_leases, on the beat schedule) is what re-runs a
match whose worker was killed: it does not wait for the broker's visibility
timeout. The scheduler's tasks go to a queue of their own, which a worker
of its own takes (`-Q scheduler`, decision 194). Every worker takes no
message while it cannot reach its database (config.dbgate, decision 196).
"""

import os

from celery import Celery
from celery.signals import (
    celeryd_after_setup,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)

from config.dbgate import DatabaseGate

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("cardroom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    # (The queues, and the routes to them, are CELERY_TASK_QUEUES and
    # CELERY_TASK_ROUTES in config.settings: a worker without -Q consumes all.)
    # A lost broker connection does not cancel a running match: its result is
    # recorded under its lease, and a redelivered duplicate cannot claim it.
    worker_cancel_long_running_tasks_on_connection_loss=False,
)
app.autodiscover_tasks(["ladder"])
# A worker takes no message while it cannot reach the database (config.dbgate).
app.steps["consumer"].add(DatabaseGate)


@app.on_after_configure.connect
def _transport_options(sender, source, **kwargs) -> None:
    """Transport options fit for the broker in use. Redis takes the
    visibility timeout; the SQLAlchemy transport (the embedded default,
    ``sqla+sqlite://``) passes every option it does not know to
    ``sqlalchemy.create_engine``, which refuses ``visibility_timeout``, and its
    SQLite file is shared by the web app, the worker and the scheduler, so it
    gets a generous busy timeout instead."""
    url = str(source.get("broker_url") or "")
    options = dict(source.get("broker_transport_options") or {})
    if url.startswith(("sqla+", "sqlalchemy+")):
        options.pop("visibility_timeout", None)
        if "sqlite" in url.split("://", 1)[0]:
            options.setdefault("connect_args", {"timeout": 30})
    source["broker_transport_options"] = options


@celeryd_after_setup.connect
def remember_node_name(sender, instance=None, **kwargs) -> None:
    """The node name (``worker@host``) of this worker, known to every pool
    process forked after this: it names their heartbeats and Match.worker."""
    from ladder.services import ops

    ops.node_name = str(sender)


def _sweep_scratch() -> None:
    """Remove the match folders of worker processes that died (a live one's
    stay: ladder.services.ops.sweep_scratch); a failure is logged, and the
    worker starts all the same."""
    import logging

    from ladder.services import ops

    try:
        ops.sweep_scratch()
    except Exception as exc:
        logging.getLogger("cardroom.worker").error("match folders of dead workers not swept: %s", exc)


@worker_init.connect
def start_worker(**kwargs) -> None:
    """Once when a worker starts, before its pool (a solo pool plays in this
    process): sweep what dead workers left."""
    _sweep_scratch()


@worker_process_init.connect
def start_worker_process(sender=None, **kwargs) -> None:
    """In each pool process (where bots are started): sweep the match folders
    of dead processes (a pool process killed mid-match is replaced by a new
    one), say whether the sandbox works (an unusable sandbox is a platform
    failure of every match, retried then failed, never a silent fallback),
    and start the heartbeat thread."""
    import logging

    from django.conf import settings

    from ladder.services import ops

    if sender and not ops.node_name:
        ops.node_name = str(sender)
    _sweep_scratch()
    log = logging.getLogger("cardroom.worker")
    mode = ops.sandbox_mode()
    try:
        from cardroom.sandbox import get_launcher

        launcher = get_launcher(settings.CARDROOM_SANDBOX or None)
    except Exception as exc:
        log.error("the sandbox is unusable: every match will fail (and be retried) until it is fixed: %s", exc)
    else:
        if not launcher.isolated and not settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS:
            log.warning(
                "CARDROOM_SANDBOX=none: matches with uploaded bots are refused "
                "(CARDROOM_ALLOW_UNSANDBOXED_UPLOADS=1 allows them, on a trusted set-up only)"
            )
        elif not launcher.isolated:
            log.warning("CARDROOM_SANDBOX=none with CARDROOM_ALLOW_UNSANDBOXED_UPLOADS: uploaded bots run WITHOUT isolation")
        elif "NOT in force" in mode:  # CARDROOM_SANDBOX_WEAK_LIMITS=1
            log.warning("sandbox: %s: bots run without the limits not in force", mode)
        else:
            log.info("sandbox: %s", mode)
    hb = ops.start_heartbeat(sandbox=mode)
    log.info("heartbeat started", extra={"worker": hb.worker, "interval_s": hb.interval})


def _drop_unusable_connections() -> None:
    """What Django does around each web request: close this thread's database
    connection if it is broken (the database restarted, say) or older than
    CONN_MAX_AGE, so the next query opens a fresh one. (Celery's own fix-up
    would close it after every task; CELERY_DB_REUSE_MAX stops that.)"""
    from django.db import close_old_connections

    close_old_connections()


def _scheduler_task(task) -> bool:
    from django.conf import settings

    route = settings.CELERY_TASK_ROUTES.get(getattr(task, "name", ""), {})
    return route.get("queue") == settings.CARDROOM_QUEUES["scheduler"]


@task_prerun.connect
def before_task(task_id=None, task=None, args=None, kwargs=None, **_) -> None:
    """The heartbeat of a process that no worker_process_init reached (a
    threads pool, say) starts with its first task; the match id of a
    ``play_match`` goes on every log line until the task ends."""
    from ladder.logging import current_match_id
    from ladder.services import ops

    eager = task is not None and bool(getattr(task.request, "is_eager", False))
    if not eager:
        _drop_unusable_connections()
    if not eager and ops.current_heartbeat() is None and not _scheduler_task(task):
        # (never in a process that runs tasks eagerly, nor for the scheduler's
        # tasks: the scheduler worker plays no match, and counts for no share)
        ops.start_heartbeat(sandbox=ops.sandbox_mode())
    if task is not None and task.name == "ladder.tasks.play_match" and args:
        try:
            token = current_match_id.set(int(args[0]))
        except (TypeError, ValueError):
            return
        task.request.cardroom_log_token = token


@task_postrun.connect
def after_task(task_id=None, task=None, **_) -> None:
    from ladder.logging import current_match_id

    if task is not None and not getattr(task.request, "is_eager", False):
        _drop_unusable_connections()

    token = getattr(task.request, "cardroom_log_token", None) if task is not None else None
    if token is not None:
        try:
            current_match_id.reset(token)
        except ValueError:  # set in another context: just clear it
            current_match_id.set(None)
        task.request.cardroom_log_token = None


@worker_process_shutdown.connect
def stop_worker_process(**kwargs) -> None:
    """A pool process that exits cleanly takes its heartbeat row with it (a
    killed one leaves it, and the status page shows it dead)."""
    from ladder.services import ops

    ops.stop_heartbeat(remove=True)


@worker_shutdown.connect
def stop_worker(**kwargs) -> None:
    from ladder.services import ops

    ops.stop_heartbeat(remove=True)  # (a solo pool's heartbeat runs in this process)
