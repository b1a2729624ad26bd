"""Playing matches: claim with a lease, run through the sandboxed runner,
record the result and apply ratings exactly once.

A platform failure (worker killed, database down, sandbox unusable) never
becomes a result: the match goes back to the queue and, after
CARDROOM_MATCH_MAX_ATTEMPTS, is marked failed. A bot's own failure is a
result: a forfeit, recorded like any other.
"""

from __future__ import annotations

import gzip
import json
import logging
import secrets
import socket
import tempfile
import threading
import time as time_module
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import models, transaction
from django.utils import timezone

from cardroom.players import TimeControl
from cardroom.runner import BotSpecError, MatchRecord, run_match
from ladder.models import BotVersion, Match, Participant
from ladder.services.ratings import apply_match_ratings

log = logging.getLogger("cardroom.matches")


class PlatformError(Exception):
    """Something on our side stopped a match; it is retried, never scored."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{threading.get_native_id()}"


@dataclass(frozen=True)
class Claim:
    match_id: int
    token: str


def create_match(*, ladder, versions: list[BotVersion], seed: int | None = None) -> Match:
    """Queue a ladder match; seats follow the order of ``versions``."""
    match = Match.objects.create(
        ladder=ladder,
        kind=Match.Kind.LADDER,
        game=ladder.game,
        options=ladder.options,
        num_players=len(versions),
        seed=secrets.randbelow(2**62) if seed is None else seed,
    )
    Participant.objects.bulk_create(
        Participant(match=match, seat=seat, bot_id=v.bot_id, version=v) for seat, v in enumerate(versions)
    )
    return match


def claim_match(match_id: int, worker: str | None = None) -> Claim | None:
    """Take a queued match for this worker: running, with a fresh lease.
    None when it is not queued (already done, taken, or cancelled)."""
    token = secrets.token_hex(16)
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or match.status != Match.Status.QUEUED:
            return None
        now = timezone.now()
        match.status = Match.Status.RUNNING
        match.attempts += 1
        match.lease_token = token
        match.lease_expires = now + timedelta(seconds=settings.CARDROOM_MATCH_LEASE_SECONDS)
        match.worker = worker or worker_name()
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


class _LeaseKeeper(threading.Thread):
    """Renews the lease every third of its length while the match runs."""

    def __init__(self, claim: Claim):
        super().__init__(daemon=True, name=f"lease-{claim.match_id}")
        self.claim = claim
        self.stop = threading.Event()
        self.lost = False

    def run(self) -> None:
        from django.db import connection

        interval = max(1.0, settings.CARDROOM_MATCH_LEASE_SECONDS / 3)
        try:
            while not self.stop.wait(interval):
                try:
                    if not renew_lease(self.claim):
                        self.lost = True
                        return
                except Exception:  # database briefly away: try again next time
                    log.warning("lease renewal failed", extra={"match_id": self.claim.match_id}, exc_info=True)
        finally:
            connection.close()


def _launcher_factory(versions: list[BotVersion]):
    from cardroom.launch import PlainLauncher
    from cardroom.sandbox import SandboxUnavailable, get_launcher

    mode = settings.CARDROOM_SANDBOX or None
    try:
        launcher = get_launcher(mode)
    except SandboxUnavailable as exc:
        raise PlatformError(f"the sandbox is unusable: {exc}") from None
    if isinstance(launcher, PlainLauncher) and not settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS:
        uploaded = [v for v in versions if not v.bot.builtin]
        if uploaded:
            raise PlatformError(
                "CARDROOM_SANDBOX=none, and CARDROOM_ALLOW_UNSANDBOXED_UPLOADS is not set: "
                f"refusing to run uploaded bots ({', '.join(v.bot.name for v in uploaded)}) without a sandbox"
            )
    return lambda: launcher


def _materialize(version: BotVersion, workdir: Path) -> str:
    """Copy a version's package out of storage (it may be an object store)."""
    target = workdir / f"v{version.pk}" / Path(version.filename).name
    target.parent.mkdir(parents=True)
    with version.package.open("rb") as src, open(target, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    return str(target)


def play(match: Match, participants: list[Participant]) -> MatchRecord:
    """Run the match through the runner (and the sandbox)."""
    versions = [p.version for p in participants]
    ladder = match.ladder
    time = (
        TimeControl(ladder.startup_ms, ladder.per_move_ms, ladder.overage_ms, ladder.total_ms)
        if ladder is not None
        else TimeControl()
    )
    launcher = _launcher_factory(versions)
    with tempfile.TemporaryDirectory(prefix=f"cardroom-m{match.pk}-") as tmp:
        specs = [_materialize(v, Path(tmp)) for v in versions]
        names = [f"{v.bot.name} v{v.number}" for v in versions]
        try:
            return run_match(
                match.game,
                specs,
                seed=match.seed,
                options=match.options,
                time=time,
                launcher=launcher,
                match_id=str(match.pk),
                names=names,
            )
        except BotSpecError as exc:  # a stored package that no longer loads is our problem
            raise PlatformError(str(exc)) from None


def record_result(claim: Claim, record: MatchRecord) -> bool:
    """Store replay, logs and result, and apply ratings — once. False (and
    nothing written) when this worker no longer holds the match."""
    replay_bytes = gzip.compress(json.dumps(record.replay, separators=(",", ":")).encode(), mtime=0)
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=claim.match_id)
        if match.status != Match.Status.RUNNING or match.lease_token != claim.token:
            log.warning("result discarded: lease lost", extra={"match_id": match.pk})
            return False
        match.replay.save(f"match-{match.pk}.json.gz", ContentFile(replay_bytes), save=False)
        forfeits = {f.seat: f for f in record.forfeits}
        participants = list(match.participants.order_by("seat"))
        for p in participants:
            p.score = record.result.scores[p.seat]
            p.rank = record.result.ranks[p.seat]
            forfeit = forfeits.get(p.seat)
            if forfeit:
                p.forfeit_reason, p.forfeit_event, p.forfeit_detail = forfeit.reason, forfeit.event, forfeit.detail[:2000]
            text = record.logs.get(p.seat, "").encode()
            p.log.save(f"match-{match.pk}-seat-{p.seat}.log.gz", ContentFile(gzip.compress(text, mtime=0)), save=False)
            p.log_size = len(text)
            p.save()
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.num_events = len(record.replay["events"])
        match.lease_expires = None
        match.error = ""
        match.save()
        if match.kind == Match.Kind.LADDER:
            apply_match_ratings(match, participants)
    return True


def fail_attempt(claim: Claim, error: str) -> None:
    """A platform failure: back to the queue, or failed after the last attempt."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=claim.match_id)
        if match.status != Match.Status.RUNNING or match.lease_token != claim.token:
            return
        _requeue_or_fail(match, error)


def _requeue_or_fail(match: Match, error: str) -> None:
    match.error = error[:4000]
    match.lease_token = ""
    match.lease_expires = None
    if match.attempts >= settings.CARDROOM_MATCH_MAX_ATTEMPTS:
        match.status = Match.Status.FAILED
        match.finished = timezone.now()
    else:
        match.status = Match.Status.QUEUED
    match.save(update_fields=["error", "lease_token", "lease_expires", "status", "finished"])
    if match.status == Match.Status.QUEUED:
        transaction.on_commit(lambda: _enqueue(match.pk))


def _enqueue(match_id: int) -> None:
    from ladder.tasks import play_match

    Match.objects.filter(pk=match_id).update(enqueued=timezone.now())
    play_match.delay(match_id)


def enqueue_after_commit(match_id: int) -> None:
    transaction.on_commit(lambda: _enqueue(match_id))


def resend_stale_queued(older_than_seconds: int = 120) -> list[int]:
    """Send again the queued matches whose task message may have been lost
    (a broker restarted without persistence, say). A duplicate message is
    harmless: only one claim can succeed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    stale = list(
        Match.objects.filter(status=Match.Status.QUEUED, kind=Match.Kind.LADDER)
        .filter(models.Q(enqueued__lt=cutoff) | models.Q(enqueued__isnull=True, created__lt=cutoff))
        .values_list("pk", flat=True)[:500]
    )
    for match_id in stale:
        _enqueue(match_id)
    return stale


def _record_with_retries(claim: Claim, record: MatchRecord, attempts: int = 8) -> bool:
    """The result is in memory: if the database is briefly away, keep trying
    (with backoff) rather than playing the match again."""
    from django.db import InterfaceError, OperationalError, connection

    delay = 0.5
    for attempt in range(attempts):
        try:
            return record_result(claim, record)
        except (OperationalError, InterfaceError):
            if attempt == attempts - 1:
                raise
            log.warning("database unavailable while recording; retrying", extra={"match_id": claim.match_id})
            connection.close()
            time_module.sleep(delay)
            delay = min(delay * 2, 10)
    return False


def run_queued_match(match_id: int, worker: str | None = None) -> str:
    """Claim, play and record one match. Returns what happened, for logs."""
    claim = claim_match(match_id, worker)
    if claim is None:
        return "not queued"
    keeper = _LeaseKeeper(claim)
    keeper.start()
    try:
        match = Match.objects.select_related("ladder").get(pk=match_id)
        participants = list(match.participants.select_related("version__bot").order_by("seat"))
        record = play(match, participants)
    except PlatformError as exc:
        keeper.stop.set()
        fail_attempt(claim, str(exc))
        return f"platform failure: {exc}"
    except Exception as exc:
        keeper.stop.set()
        log.exception("match crashed", extra={"match_id": match_id})
        fail_attempt(claim, f"{type(exc).__name__}: {exc}")
        return f"platform failure: {exc}"
    finally:
        keeper.stop.set()
    return "finished" if _record_with_retries(claim, record) else "lease lost"


def reap_expired_leases() -> list[int]:
    """Re-queue running matches whose worker stopped renewing the lease."""
    reaped = []
    now = timezone.now()
    for match_id in Match.objects.filter(status=Match.Status.RUNNING, lease_expires__lt=now).values_list("pk", flat=True):
        with transaction.atomic():
            match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
            if match is None or match.status != Match.Status.RUNNING or match.lease_expires >= now:
                continue
            _requeue_or_fail(match, f"the lease of worker {match.worker} expired (worker gone?)")
            reaped.append(match_id)
    return reaped


def requeue(match: Match) -> None:
    """Operator action: a failed or cancelled match goes back to the queue."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match.pk)
        if match.status not in (Match.Status.FAILED, Match.Status.CANCELLED):
            return
        match.status = Match.Status.QUEUED
        match.attempts = 0
        match.error = ""
        match.save(update_fields=["status", "attempts", "error"])
        transaction.on_commit(lambda: _enqueue(match.pk))


def cancel(match: Match) -> None:
    """Operator action: a queued match will not be played."""
    Match.objects.filter(pk=match.pk, status=Match.Status.QUEUED).update(status=Match.Status.CANCELLED)
