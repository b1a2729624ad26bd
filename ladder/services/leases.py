"""Leases: how a worker holds a match while it plays it.

``claim_match`` turns a queued match into a running one with a lease (a
random token and an expiry); only one claim can succeed, so a duplicate
message is harmless. While it plays, ``LeaseKeeper`` renews the lease every
third of its length; if the lease is lost (the reaper gave the match to
someone else) the match is abandoned at its next event, and a result is
recorded only under the claim's token (ladder.services.matches).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ladder.models import Match
from ladder.services.connections import close_connection
from ladder.services.match_kinds import policy_for

log = logging.getLogger("cardroom.matches")


class LeaseLost(Exception):
    """The match was given to another worker while this one played it."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_native_id()}"


@dataclass(frozen=True)
class Claim:
    match_id: int
    token: str


def claim_match(match_id: int, worker: str | None = None) -> Claim | None:
    """Take a queued match for this worker: running, with a fresh lease.
    None when it is not queued (already done, taken, or cancelled)."""
    token = secrets.token_hex(16)
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or match.status != Match.Status.QUEUED:
            return None
        if not policy_for(match.kind).may_start(match):
            # the message is dropped; whatever allows it again sends another
            Match.objects.filter(pk=match.pk).update(enqueued=None)
            return None
        now = timezone.now()
        match.status = Match.Status.RUNNING
        match.attempts += 1
        match.lease_token = token
        match.lease_expires = now + timedelta(seconds=settings.CARDROOM_MATCH_LEASE_SECONDS)
        match.worker = (worker or worker_name())[:200]
        match.started = now
        match.save(update_fields=["status", "attempts", "lease_token", "lease_expires", "worker", "started"])
    return Claim(match_id, token)


def renew_lease(claim: Claim) -> bool:
    """Extend the lease; False if this worker no longer holds the match."""
    expires = timezone.now() + timedelta(seconds=settings.CARDROOM_MATCH_LEASE_SECONDS)
    return bool(
        Match.objects.filter(pk=claim.match_id, status=Match.Status.RUNNING, lease_token=claim.token).update(
            lease_expires=expires
        )
    )


class LeaseKeeper(threading.Thread):
    """Renews the lease every third of its length while the match runs (and
    while its result is recorded); ``lost`` once the match is not ours."""

    def __init__(self, claim: Claim):
        super().__init__(daemon=True, name=f"lease-{claim.match_id}")
        self.claim = claim
        self.stop = threading.Event()
        self.lost = False
        # No renewal past this (time.monotonic()): a match that overruns its
        # time control by far is stuck (a platform bug), and a lapsed lease
        # lets the reaper hand it to another worker.
        self.deadline: float | None = None

    def run(self) -> None:

        interval = max(1.0, settings.CARDROOM_MATCH_LEASE_SECONDS / 3)
        try:
            while not self.stop.wait(interval):
                if self.deadline is not None and time.monotonic() > self.deadline:
                    log.error("match overran its time control: lease no longer renewed", extra={"match_id": self.claim.match_id})
                    return
                try:
                    if not renew_lease(self.claim):
                        # Not ours any more, or no longer running: also when
                        # our own result has just been recorded. Whoever acts
                        # on it says whether the attempt was lost (the event
                        # check in play, or record_result).
                        self.lost = True
                        log.info("lease not renewed: the match no longer runs under this claim", extra={"match_id": self.claim.match_id})
                        return
                except Exception:  # database briefly away: try again next time
                    log.warning("lease renewal failed", extra={"match_id": self.claim.match_id}, exc_info=True)
                    close_connection()
        finally:
            close_connection()

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=10)
