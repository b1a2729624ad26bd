"""Playing matches: claim with a lease, run through the sandboxed runner,
record the result and apply ratings exactly once.

A platform failure (worker killed, database down, sandbox unusable) never
becomes a result: the match goes back to the queue and, after
CARDROOM_MATCH_MAX_ATTEMPTS, is marked failed. A bot's own failure is a
result: a forfeit, recorded like any other.

How a match is delivered:

* ``match_kinds.send_match`` sends the task message (``play_match`` for a
  ladder or event match, ``validate_version`` for a validation match:
  validation matches are played, and their verdict drawn, by the validation
  task) and stamps ``enqueued``. What differs by the kind of a match (its
  time control, attempts, queue, what a result or a failure does) is its
  policy's (ladder.services.match_kinds); this module treats all alike.
* ``claim_match`` (ladder.services.leases) turns a queued match into a
  running one with a lease; only one claim can succeed, so a duplicate
  message is harmless.
* while it plays, ``LeaseKeeper`` renews the lease every third of its length;
  if the lease is lost (the reaper gave the match to someone else) the match
  is abandoned at its next event.
* ``record_result`` stores replay, logs, scores and ratings in one
  transaction, and only while the claim's token is still the match's.
* the reaper (ladder.services.reaper, periodic) re-queues running matches
  whose lease lapsed, and re-sends queued matches whose message may have
  been lost.
* every platform failure records its kind in ``Match.error_kind``
  (``Match.ErrorKind``: the status page counts them).
* while a match plays, the worker's heartbeat names it, and every log line
  carries its ``match_id`` (``ladder.logging.match_context``).
"""

from __future__ import annotations

import gzip
import json
import logging
import secrets
import time as time_module
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from cardroom.launch import Launcher
from cardroom.players import Player
from cardroom.runner import BotSpecError, MatchCeilingExceeded, MatchRecord, run_match
from cardroom.scratch import owned_folder
from ladder import caching
from ladder.models import BotVersion, Match, Participant
from ladder.selectors import match_limits
from ladder.services import match_kinds, ops
from ladder.services.connections import DB_ERRORS, close_connection, database_away, retry_while_database_away
from ladder.services.fairshare import seat_charges
from ladder.services.leases import Claim, LeaseKeeper, LeaseLost, claim_match
from ladder.services.luck import keep_luck
from ladder.services.match_kinds import policy_for

log = logging.getLogger("cardroom.matches")

# Seconds before a match that failed for a platform reason is tried again
# (doubling per attempt, capped): a broken sandbox is not hammered.
RETRY_BACKOFF_SECONDS = 5
RETRY_BACKOFF_MAX_SECONDS = 60


class PlatformError(Exception):
    """Something on our side stopped a match; it is retried, never scored.
    ``kind`` is what ``Match.error_kind`` records."""

    def __init__(self, message: str, kind: Match.ErrorKind = Match.ErrorKind.INTERNAL):
        super().__init__(message)
        self.kind = kind


class RunOutcome(StrEnum):
    """What ``run_queued_match`` did with a match (the tasks log it)."""

    NOT_QUEUED = "not queued"  # already taken, done or cancelled, or not startable now: the message is dropped
    FINISHED = "finished"  # played and recorded
    LEASE_LOST = "lease lost"  # the reaper gave it to another worker: abandoned, nothing recorded
    PLATFORM_FAILURE = "platform failure"  # re-queued, or failed after its last attempt (Match.error_kind says why)


def create_match(
    *, ladder, versions: list[BotVersion], seed: int | None = None, duplicate_set=None, set_rotation: int | None = None
) -> Match:
    """Queue a ladder match; seats follow the order of ``versions`` (a
    rotation of a duplicate set: ladder.services.duplicate_sets)."""
    match = Match.objects.create(
        duplicate_set=duplicate_set,
        set_rotation=set_rotation,
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


# What starts a match's bots: given the versions it plays, a factory of
# launchers (the sandbox policy). The worker side's (ladder.worker.sandbox)
# is registered when the app starts (ladder.apps); with none, no match plays.
LauncherPolicy = Callable[[list[BotVersion]], Callable[[], Launcher]]
_launcher_policy: LauncherPolicy | None = None


def use_launcher_policy(policy: LauncherPolicy) -> None:
    """Register what starts the bots of every match played from now on."""
    global _launcher_policy
    _launcher_policy = policy


def _launchers(versions: list[BotVersion]) -> Callable[[], Launcher]:
    if _launcher_policy is None:  # fail closed: never a bot started without the sandbox's say
        raise PlatformError("no sandbox policy is registered (ladder.worker.sandbox, by ladder.apps)", Match.ErrorKind.SANDBOX)
    return _launcher_policy(versions)


def _materialize(version: BotVersion, workdir: Path, seat: int) -> str:
    """Copy a version's package out of storage (it may be an object store).
    One folder per seat: a version may sit at several seats (validation)."""
    target = workdir / f"seat-{seat}-v{version.pk}" / Path(version.filename).name
    target.parent.mkdir(parents=True)
    with version.package.open("rb") as src, open(target, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    return str(target)


def max_duration_seconds(match: Match) -> float:
    """The lease is no longer renewed past this: the ceiling, then a minute
    to record the result (the runner ends the match at its ceiling, so only
    a stuck worker gets here)."""
    return match_limits.ceiling_ms(match) / 1000 + 60


def play(match: Match, participants: list[Participant], on_event=None, others: dict[int, Player] | None = None) -> MatchRecord:
    """Run the match through the runner (and the sandbox). ``others``: the
    players of the seats no participant holds (a casual match's person)."""
    others = others or {}
    versions = {p.seat: p.version for p in participants}
    launcher = _launchers(list(versions.values()))
    # A folder of this process's own (cardroom.scratch): if the worker dies
    # mid-match, the next one to start sweeps it away (ops.sweep_scratch).
    with owned_folder(ops.scratch_root(), prefix=f"cardroom-m{match.pk}-") as tmp:
        seats = range(match.num_players)
        specs: list[Any] = [others[seat] if seat in others else _materialize(versions[seat], tmp, seat) for seat in seats]
        names = [others[seat].name if seat in others else f"{versions[seat].bot.name} v{versions[seat].number}" for seat in seats]
        chance = policy_for(match.kind).chance(match)
        try:
            return run_match(
                match.game,
                specs,
                seed=match.seed,
                options=match.options,
                time=match_limits.time_control(match),
                launcher=launcher,
                match_id=str(match.pk),
                names=names,
                on_event=on_event,
                ceiling_ms=match_limits.ceiling_ms(match),
                chance=chance,
                workdir=tmp,
            )
        except BotSpecError as exc:  # a stored package that no longer loads is our problem
            raise PlatformError(str(exc), Match.ErrorKind.BOT_START) from None
        except MatchCeilingExceeded as exc:
            raise PlatformError(str(exc), Match.ErrorKind.CEILING) from None


# What record_result writes of each participant.
RESULT_FIELDS = ["score", "rank", "forfeit_reason", "forfeit_event", "forfeit_detail", "log", "log_size", "worker_ms"]


def record_result(claim: Claim, record: MatchRecord) -> bool:
    """Store replay, logs and result, and apply ratings — once. False (and
    nothing written) when this worker no longer holds the match."""
    replay_bytes = replay_file_bytes(record.replay)
    with transaction.atomic():
        # (no select_related here: FOR UPDATE cannot lock the nullable side
        # of the outer join to a validation match's missing ladder)
        match = Match.objects.select_for_update().get(pk=claim.match_id)
        if match.status != Match.Status.RUNNING or match.lease_token != claim.token:
            log.warning("result discarded: lease lost", extra={"match_id": match.pk})
            return False
        policy = policy_for(match.kind)
        if policy.name_seats(match, record.replay):
            replay_bytes = replay_file_bytes(record.replay)
        match.replay.save(f"match-{match.pk}.json.gz", ContentFile(replay_bytes), save=False)
        forfeits = {f.seat: f for f in record.forfeits}
        participants = list(match.participants.select_related("bot").order_by("seat"))
        charges: dict[int, int | None] = {p.seat: None for p in participants}
        if not policy.has_person_seat:  # a casual match waits on a person: nobody's share of the ladder's workers
            charges = seat_charges(
                record.replay["events"], record.elapsed_ms, [p.seat for p in participants if not p.bot.builtin], match.num_players
            )
        for p in participants:
            p.worker_ms = charges[p.seat]
            p.score = record.result.scores[p.seat]
            p.rank = record.result.ranks[p.seat]
            forfeit = forfeits.get(p.seat)
            if forfeit:
                p.forfeit_reason, p.forfeit_event, p.forfeit_detail = forfeit.reason, forfeit.event, forfeit.detail[:2000]
            text = record.logs.get(p.seat, "").encode()
            p.log.save(f"match-{match.pk}-seat-{p.seat}.log.gz", ContentFile(gzip.compress(text, mtime=0)), save=False)
            p.log_size = len(text)
        Participant.objects.bulk_update(participants, RESULT_FIELDS)  # one statement for every seat
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.num_events = len(record.replay["events"])
        match.lease_token = ""
        match.lease_expires = None
        match.error = ""
        match.save(update_fields=["replay", "status", "finished", "num_events", "lease_token", "lease_expires", "error"])
        policy.on_result(match, participants, record, forfeits)  # ratings, an event's standings, the person's seat
        # Standings, ladder pages, match lists and pages: cached copies go stale on commit.
        caching.bump(caching.RATINGS, caching.MATCHES)
    log.info("match finished", extra={"match_id": match.pk, "events": match.num_events, "ms": record.elapsed_ms})
    return True


def replay_file_bytes(replay: dict) -> bytes:
    """A replay as its file holds it: compact JSON, gzip-compressed."""
    return gzip.compress(json.dumps(replay, separators=(",", ":")).encode(), mtime=0)


def fail_attempt(claim: Claim, error: str, kind: Match.ErrorKind = Match.ErrorKind.INTERNAL) -> None:
    """A platform failure: back to the queue, or failed after the last attempt."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=claim.match_id)
        if match.status != Match.Status.RUNNING or match.lease_token != claim.token:
            return
        requeue_or_fail(match, error, countdown=_backoff(match.attempts), kind=kind)


def _backoff(attempts: int) -> int:
    return min(RETRY_BACKOFF_MAX_SECONDS, RETRY_BACKOFF_SECONDS * 2 ** max(0, attempts - 1))


def requeue_or_fail(match: Match, error: str, countdown: int = 0, kind: Match.ErrorKind = Match.ErrorKind.INTERNAL) -> None:
    """Record a platform failure of ``kind``; the match is queued again, or
    failed after its last attempt. ``error_kind`` stays after a retry
    finishes the match (the status page counts the failures of the last
    24 hours by kind); ``error`` is cleared then."""
    match.error = error[:4000]
    match.error_kind = kind if kind in Match.ErrorKind.values else Match.ErrorKind.INTERNAL
    match.lease_token = ""
    match.lease_expires = None
    policy = policy_for(match.kind)
    if match.attempts >= policy.max_attempts():
        match.status = Match.Status.FAILED
        match.finished = timezone.now()
        log.error(
            "match failed",
            extra={"match_id": match.pk, "attempts": match.attempts, "error_kind": match.error_kind, "error": match.error},
        )
    else:
        match.status = Match.Status.QUEUED
        log.warning(
            "match re-queued",
            extra={"match_id": match.pk, "attempts": match.attempts, "error_kind": match.error_kind, "error": match.error},
        )
    match.save(update_fields=["error", "error_kind", "lease_token", "lease_expires", "status", "finished"])
    policy.on_failure(match, countdown)  # sent again; an event's or a validation's own follow-up


def enqueue_after_commit(match_id: int) -> None:
    transaction.on_commit(lambda: match_kinds.send_match(match_id))


def record_result_retrying(claim: Claim, record: MatchRecord, attempts: int = 8, first_delay: float = 0.5) -> bool:
    """The result is in memory: if the database is briefly away, keep trying
    (with backoff, ~40 s in all) rather than playing the match again. The
    lease is checked inside each attempt, so a retry never records twice."""
    return retry_while_database_away(
        lambda: record_result(claim, record), attempts=attempts, first_delay=first_delay, what="recording", log=log,
        extra={"match_id": claim.match_id},
    )


_record_with_retries = record_result_retrying  # the old name


# What run_queued_match asks, for a match with seats no participant holds
# (a casual match's person): given the match and a test of whether its lease
# was lost, the players of those seats and a listener of the match's events.
OtherSeats = Callable[[Match, Callable[[], bool]], tuple[dict[int, Player], Callable[[int, dict], None] | None]]


def run_queued_match(
    match_id: int, worker: str | None = None, other_seats: OtherSeats | None = None, lease_keeper: Callable[[Claim], Any] | None = None
) -> RunOutcome:
    """Claim, play and record one match. Returns what happened (the tasks log it).
    ``lease_keeper``: what renews the claim's lease while the match runs
    (a thread of its own by default; the casual worker's is shared).

    Database errors while claiming propagate (the task retries); every other
    failure after the claim is a platform failure of this attempt."""
    from ladder.logging import match_context

    with match_context(match_id):
        claim = claim_match(match_id, worker)
        if claim is None:
            return RunOutcome.NOT_QUEUED
        outcome = RunOutcome.PLATFORM_FAILURE  # (an exception: the task retries, or the lease lapses)
        ops.heartbeat_match_started(match_id)
        try:
            outcome = _run_claimed(match_id, claim, other_seats, lease_keeper or LeaseKeeper)
            return outcome
        finally:
            ops.heartbeat_match_ended(match_id, outcome == RunOutcome.FINISHED)


def _run_claimed(match_id: int, claim: Claim, other_seats: OtherSeats | None, lease_keeper: Callable[[Claim], Any]) -> RunOutcome:
    keeper = lease_keeper(claim)
    keeper.start()
    try:
        outcome, kind, record = _play_and_record(match_id, claim, other_seats, keeper)
    finally:
        keeper.finish()
    if record is not None and policy_for(kind).keeps_luck:
        # After the commit, from the replay in memory: never delays or
        # loses the result, and a failure leaves it rated plainly (decision 250).
        keep_luck(match_id, record.replay)
    return outcome


def _play_and_record(
    match_id: int, claim: Claim, other_seats: OtherSeats | None, keeper: Any
) -> tuple[RunOutcome, str, MatchRecord | None]:
    """Play the claimed match and record its result: what happened, the
    match's kind and, when it finished, its record."""
    listener = None
    match_kind = ""

    def check_lease(index, event):
        if keeper.lost:
            raise LeaseLost(f"match {match_id}: the lease was lost at event {index}")
        if listener is not None:
            listener(index, event)

    try:
        match = Match.objects.select_related("ladder").get(pk=match_id)
        match_kind = match.kind
        participants = list(match.participants.select_related("version__bot").order_by("seat"))
        keeper.deadline = time_module.monotonic() + max_duration_seconds(match)
        others: dict[int, Player] = {}
        if other_seats is not None:
            others, listener = other_seats(match, lambda: keeper.lost)
        record = play(match, participants, on_event=check_lease, others=others)
    except LeaseLost:
        log.warning("match abandoned: lease lost", extra={"match_id": match_id})
        return RunOutcome.LEASE_LOST, match_kind, None
    except PlatformError as exc:
        log.warning("platform failure", extra={"match_id": match_id, "error_kind": exc.kind, "error": str(exc)[:500]})
        _fail_quietly(claim, str(exc), exc.kind)
        return RunOutcome.PLATFORM_FAILURE, match_kind, None
    except Exception as exc:
        kind = Match.ErrorKind.DATABASE if database_away(exc) else Match.ErrorKind.INTERNAL
        log.exception("match crashed", extra={"match_id": match_id, "error_kind": kind})
        if database_away(exc):
            close_connection()
        _fail_quietly(claim, f"{type(exc).__name__}: {exc}", kind)
        return RunOutcome.PLATFORM_FAILURE, match_kind, None
    try:
        recorded = record_result_retrying(claim, record)
    except Exception as exc:
        if database_away(exc):
            raise  # the database is gone for good: the lease lapses and the reaper re-queues
        log.exception("recording the result failed", extra={"match_id": match_id, "error_kind": Match.ErrorKind.INTERNAL})
        _fail_quietly(claim, f"recording the result failed: {type(exc).__name__}: {exc}", Match.ErrorKind.INTERNAL)
        return RunOutcome.PLATFORM_FAILURE, match_kind, None
    return (RunOutcome.FINISHED, match_kind, record) if recorded else (RunOutcome.LEASE_LOST, match_kind, None)


def _fail_quietly(claim: Claim, error: str, kind: Match.ErrorKind = Match.ErrorKind.INTERNAL, attempts: int = 6, first_delay: float = 0.5) -> None:
    """fail_attempt; if the database is away too, keep trying for a while
    (with backoff, ~30 s in all: the match goes back to the queue with its
    real kind as soon as the database is back), then give up: the lease
    lapses and the reaper re-queues the match."""
    try:
        retry_while_database_away(
            lambda: fail_attempt(claim, error, kind), attempts=attempts, first_delay=first_delay, what="re-queueing", log=log,
            extra={"match_id": claim.match_id, "error_kind": kind},
        )
    except DB_ERRORS:
        log.warning("could not re-queue (database away); the reaper will", extra={"match_id": claim.match_id})


def requeue(match: Match) -> None:
    """Operator action: a failed or cancelled match goes back to the queue."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match.pk)
        if match.status not in (Match.Status.FAILED, Match.Status.CANCELLED):
            return
        match.status = Match.Status.QUEUED
        match.attempts = 0
        match.error = ""
        match.finished = None
        match.save(update_fields=["status", "attempts", "error", "finished"])
        transaction.on_commit(lambda: match_kinds.send_match(match.pk))


def cancel(match: Match) -> None:
    """Operator action: a queued match will not be played."""
    if Match.objects.filter(pk=match.pk, status=Match.Status.QUEUED).update(status=Match.Status.CANCELLED):
        caching.bump(caching.MATCHES)  # (an UPDATE: no post_save)
