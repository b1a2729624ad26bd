"""The reaper: the periodic sweep (ladder.tasks.reap_expired_leases, on the
beat schedule) that puts matches stuck on their way back on it.

* ``reap_expired_leases`` re-queues running matches whose lease lapsed:
  their worker died (SIGKILL, lost machine) or cannot reach the database.
  It tells a lost worker from a live one by its heartbeat
  (``ladder.services.ops``) and records which in ``Match.error_kind``.
* ``resend_stale_queued`` re-sends queued matches whose message may have
  been lost (CARDROOM_RESEND_STALE_SECONDS).

A reaped match goes back to the queue, or fails after its last attempt, the
way any platform failure does (``matches.requeue_or_fail``).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from ladder.models import Match
from ladder.services import enqueue, match_kinds, matches, ops
from ladder.services.match_kinds import policy_for

log = logging.getLogger("cardroom.matches")  # (the matches' logger, as before the move)


def reap_expired_leases() -> list[int]:
    """Re-queue running matches whose worker stopped renewing the lease."""
    reaped = []
    now = timezone.now()
    expired = list(
        Match.objects.filter(status=Match.Status.RUNNING, lease_expires__lt=now).order_by("id").values_list("pk", flat=True)
    )
    for match_id in expired:
        with transaction.atomic():
            match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
            if match is None or match.status != Match.Status.RUNNING or match.lease_expires is None or match.lease_expires >= now:
                continue
            if ops.beating_after(match.worker, match.lease_expires):
                kind, why = Match.ErrorKind.LEASE_EXPIRED, "the worker still beats, but stopped renewing the lease"
            else:
                kind, why = Match.ErrorKind.WORKER_LOST, "the worker's heartbeat stopped too: killed, frozen, or cut off"
            matches.requeue_or_fail(match, f"the lease of worker {match.worker} expired ({why})", kind=kind)
            reaped.append(match_id)
    if reaped:
        log.warning("reaped expired leases", extra={"matches": ",".join(map(str, reaped))})
    return reaped




def resend_stale_seconds() -> int:
    """How long a queued match waits for its message before it is sent again
    (CARDROOM_RESEND_STALE_SECONDS, 120 s)."""
    return int(settings.CARDROOM_RESEND_STALE_SECONDS)


def resend_stale_queued(older_than_seconds: int | None = None) -> list[int]:
    """Send again the queued matches whose task message was lost (a broker
    restarted without persistence, say): older than the threshold, and no
    longer waiting in the broker (enqueue.without_message), so a match
    waiting its turn is never sent twice."""
    if older_than_seconds is None:
        older_than_seconds = resend_stale_seconds()
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = list(
        Match.objects.filter(status=Match.Status.QUEUED, kind__in=match_kinds.kinds(resent_by_sweep=True))  # an event sends its own
        .filter(models.Q(enqueued__lt=cutoff) | models.Q(enqueued__isnull=True, created__lt=cutoff))
        .order_by("id")
        .values_list("pk", "kind", "validation_of_id")[:500]
    )
    stale = match_kinds.without_message(stale)
    messages_sent: set[tuple[str, int | None]] = set()
    resent = []
    for match_id, kind, version_id in stale:
        message = policy_for(kind).message_key(match_id, version_id)
        if message in messages_sent:  # one validation task plays all of its matches: one message
            enqueue.stamp_enqueued(match_id)
        else:
            messages_sent.add(message)
            match_kinds.send_match(match_id)
        resent.append(match_id)
    if resent:
        log.warning("re-sent stale queued matches", extra={"matches": ",".join(map(str, resent))})
    return resent
