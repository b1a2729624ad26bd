"""Celery tasks: thin, take ids, call one service each.

Delivery is at least once (``acks_late``, and a message whose worker process
died is handed back to the broker); the services make a duplicate harmless:
only one claim of a match can succeed and a result is recorded only under
the claim's lease.

Observability: ``config.celery`` starts each worker process's heartbeat
(ladder.services.ops) and puts the match id of a ``play_match`` task on
every log line written while it runs (ladder.logging.match_context).
"""

from __future__ import annotations

import logging
import os
import socket

from celery import shared_task

from ladder.services import (
    account_email,
    adjusted,
    casual,
    matches,
    matchmaking,
    open_series,
    ops,
    reaper,
    tournaments,
    validation,
)
from ladder.services.connections import DB_ERRORS
from ladder.worker import casual as casual_worker

log = logging.getLogger("cardroom.tasks")

VALIDATION_RETRY_SECONDS = 30
# A backstop for a stuck process (a platform bug): the pool process is killed,
# and the match's lease lapses (the reaper re-queues it). Far beyond any match
# that keeps to its time control.
HARD_TIME_LIMIT = 2 * 3600


def _worker(task) -> str:
    """Who runs the match (Match.worker): the Celery node and the process,
    the name of this process's heartbeat too (ladder.services.ops)."""
    if task.request.hostname and not ops.node_name:
        ops.node_name = task.request.hostname
    return f"{task.request.hostname or ops.node_name or socket.gethostname()} pid {os.getpid()}"


# A match task: at least once, retried while the database is away.
MATCH_TASK = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "autoretry_for": DB_ERRORS,
    "retry_backoff": 5,
    "retry_backoff_max": 60,
    "max_retries": 10,
}


def _logged(match_id: int, outcome: matches.RunOutcome) -> str:
    log.info("match task done: %s", outcome.value, extra={"match_id": match_id, "outcome": outcome.name.lower()})
    return outcome.value


@shared_task(**MATCH_TASK, time_limit=HARD_TIME_LIMIT)
def play_match(self, match_id: int) -> str:
    return _logged(match_id, matches.run_queued_match(match_id, _worker(self)))


@shared_task(**MATCH_TASK)
def play_casual_match(self, match_id: int) -> str:
    """A casual match (a person against bots), on the casual queue only
    (CELERY_TASK_ROUTES): it waits on its person for minutes, on a worker
    of its own (decision 135). The message is a ticket: it starts the
    queued casual match first in the fair order (decision 203). No time
    limit here: the threads pool the casual worker runs has none; the
    match's lease stops being renewed past its ceiling instead."""
    return _logged(match_id, casual_worker.run(match_id, _worker(self)))


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True, max_retries=5, time_limit=HARD_TIME_LIMIT)
def validate_version(self, version_id: int, resume: bool = False) -> str:
    try:
        return validation.validate_version(version_id, _worker(self), resume=resume)
    except validation.ValidationRetry as exc:
        # Start over (not just resume) after the back-off.
        raise self.retry(exc=exc, args=(version_id,), kwargs={}, countdown=VALIDATION_RETRY_SECONDS) from None
    except DB_ERRORS as exc:
        raise self.retry(exc=exc, countdown=10) from None


@shared_task(ignore_result=True)
def top_up_queues() -> list[int]:
    return matchmaking.top_up_queues()


@shared_task(ignore_result=True, autoretry_for=DB_ERRORS, retry_backoff=2, max_retries=5)
def start_due_events() -> list[int]:
    """Beat sends it every EVENT_START_INTERVAL seconds (to the scheduler's
    queue, as the other periodic tasks): open events whose start time has come are drawn and started,
    each exactly once (ladder.services.tournaments.start_event); then the
    standing open series opens its next event where none is open
    (ladder.services.open_series)."""
    started = tournaments.start_due()
    open_series.keep_open()
    return started


@shared_task(ignore_result=True)
def reap_expired_leases() -> dict:
    """The recovery sweep beat sends every REAPER_INTERVAL seconds: matches
    whose lease lapsed go back to the queue; queued matches whose message is
    older than CARDROOM_RESEND_STALE_SECONDS are sent again; stuck
    validations are restarted; running events send their next matches; heartbeats of long-gone workers are dropped;
    events' standings left behind their results are stored afresh; open
    events whose start time has come start (a second path beside
    start_due_events); queued casual
    matches whose person left are cancelled."""
    return {
        "reaped": reaper.reap_expired_leases(),
        "resent": reaper.resend_stale_queued(),
        "revalidated": validation.revalidate_stale(),
        "forgotten_workers": ops.forget_dead_workers(),
        "tournaments_fed": tournaments.feed_all(),
        "standings_refreshed": tournaments.refresh_stale_standings(),
        "events_started": tournaments.start_due(),
        "casual_abandoned": casual.cancel_abandoned(),
    }


@shared_task(ignore_result=True)
def refresh_adjusted_rankings() -> list[int]:
    """Beat sends it every ADJUSTED_RANKING_INTERVAL seconds: each active
    ladder with new results or new luck since its last adjusted ranking gets
    it recomputed (ladder.services.adjusted; decision 250)."""
    return adjusted.refresh_all()


# E-mails: retried while the SMTP server is away (a message may then go out
# twice: a second reset link, harmless).
MAIL_ERRORS = (OSError, *DB_ERRORS)


@shared_task(ignore_result=True, autoretry_for=MAIL_ERRORS, retry_backoff=10, retry_backoff_max=300, max_retries=6)
def send_password_reset(email: str, domain: str, use_https: bool) -> int:
    return account_email.send_password_reset(email, domain, use_https)


@shared_task(ignore_result=True, autoretry_for=MAIL_ERRORS, retry_backoff=10, retry_backoff_max=300, max_retries=6)
def send_email_verification(user_id: int, domain: str, use_https: bool) -> bool:
    return account_email.send_verification(user_id, domain, use_https)
