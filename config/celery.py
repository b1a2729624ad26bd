"""The Celery app: `celery -A config worker` and `celery -A config beat`.

Settings come from Django's settings (the CELERY_* names): late acks,
a worker process that dies hands its message back (reject on worker lost),
prefetch 1 (a worker holds no message it is not playing), the Redis
visibility timeout in CELERY_VISIBILITY_TIMEOUT. The lease reaper
(ladder.tasks.reap_expired_leases, on the beat schedule) is what re-runs a
match whose worker was killed: it does not wait for the broker's visibility
timeout.
"""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("cardroom")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_default_queue="celery",
    # A lost broker connection does not cancel a running match: its result is
    # recorded under its lease, and a redelivered duplicate cannot claim it.
    worker_cancel_long_running_tasks_on_connection_loss=False,
)
app.autodiscover_tasks(["ladder"])


@worker_process_init.connect
def report_sandbox(**kwargs) -> None:
    """Say at start-up, in each pool process (where bots are started), whether
    the sandbox works: an unusable sandbox is a platform failure of every
    match (retried, then failed), never a silent fallback."""
    import logging

    from django.conf import settings

    log = logging.getLogger("cardroom.worker")
    try:
        from cardroom.sandbox import get_launcher

        launcher = get_launcher(settings.CARDROOM_SANDBOX or None)
    except Exception as exc:
        log.error("the sandbox is unusable: every match will fail (and be retried) until it is fixed: %s", exc)
        return
    if not launcher.isolated and not settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS:
        log.warning(
            "CARDROOM_SANDBOX=none: matches with uploaded bots are refused "
            "(CARDROOM_ALLOW_UNSANDBOXED_UPLOADS=1 allows them, on a trusted set-up only)"
        )
    elif not launcher.isolated:
        log.warning("CARDROOM_SANDBOX=none with CARDROOM_ALLOW_UNSANDBOXED_UPLOADS: uploaded bots run WITHOUT isolation")
    else:
        log.info("sandbox: %s", launcher.name)
