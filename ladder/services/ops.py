"""Operations: worker heartbeats and the operator's status figures.

Heartbeats
    Each worker process that plays matches (a Celery prefork pool process,
    or the worker itself with ``--pool solo``) runs a small daemon thread
    that writes its ``WorkerHeartbeat`` row every CARDROOM_HEARTBEAT_SECONDS
    (10 s): name, host, pid, when it started, when it was last seen, the match
    it is playing, how many it has finished and its sandbox mode. The thread
    is started by ``config.celery`` (``worker_process_init``, and on the first
    task of a process otherwise); ``run_queued_match`` tells it when a match
    starts and ends (and it writes at once then). A database that is away
    only makes a beat fail: the thread keeps going. The row's ``name`` is the
    worker string a match records in ``Match.worker``, so the reaper can tell
    a worker that died (its heartbeat stopped: ``worker_lost``) from a live
    one that lost its lease (``lease_expired``).

Status
    ``status()`` computes the figures of the status page and of
    ``/ops/status.json``: queue lengths, running matches, finish rates,
    platform failures by kind in the last 24 hours, workers alive, and each
    ladder's queue.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from cardroom import scratch
from ladder.services.connections import close_connection

log = logging.getLogger("cardroom.ops")

# A worker is alive when its heartbeat is younger than this.
ALIVE_SECONDS = 30
# Heartbeat rows of workers gone this long are deleted by the reaper.
FORGET_AFTER = timedelta(days=1)
# A heartbeat is written at most this often (seconds), however many matches
# start and end in between.
MIN_GAP = 1.0

def heartbeat_interval() -> float:
    return float(settings.CARDROOM_HEARTBEAT_SECONDS)


# -- heartbeats -------------------------------------------------------------------

# The Celery node name (``demo@host``), set in the worker's main process
# before the pool forks (config.celery), so every pool process knows it.
node_name: str | None = None


def process_worker_name(pid: int | None = None) -> str:
    """What this process records as ``Match.worker`` (ladder.tasks._worker)."""
    return f"{node_name or socket.gethostname()} pid {pid or os.getpid()}"


class Heartbeat(threading.Thread):
    """One worker process's heartbeat thread."""

    def __init__(self, name: str, sandbox: str = "", interval: float | None = None):
        super().__init__(daemon=True, name="cardroom-heartbeat")
        self.worker = name[:200]
        self.hostname = socket.gethostname()[:200]
        self.pid = os.getpid()
        self.started_at = timezone.now()
        self.sandbox = sandbox[:SANDBOX_TEXT]
        self.interval = interval or heartbeat_interval()
        self.current_match: int | None = None
        self.matches_done = 0
        self.beats = 0
        self.last_beat = 0.0
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._lock = threading.Lock()

    # called by the process that plays matches
    def match_started(self, match_id: int) -> None:
        with self._lock:
            self.current_match = match_id
        self._wake.set()

    def match_ended(self, match_id: int, finished: bool) -> None:
        with self._lock:
            if self.current_match == match_id:
                self.current_match = None
            if finished:
                self.matches_done += 1
        self._wake.set()

    def set_sandbox(self, sandbox: str) -> None:
        self.sandbox = sandbox[:SANDBOX_TEXT]
        self._wake.set()

    def beat(self) -> bool:
        """Write the row now (one UPDATE; an INSERT the first time); False
        (logged, not raised) if the database is away. The thread keeps its
        own connection open between beats, and drops it after a failure."""
        from django.db import IntegrityError

        from ladder.models import WorkerHeartbeat

        with self._lock:
            current, done = self.current_match, self.matches_done
        fields = {
            "hostname": self.hostname,
            "pid": self.pid,
            "started": self.started_at,
            "last_seen": timezone.now(),
            "current_match_id": current,
            "matches_done": done,
            "sandbox": self.sandbox,
        }
        try:
            try:
                if not WorkerHeartbeat.objects.filter(name=self.worker).update(**fields):
                    WorkerHeartbeat.objects.create(name=self.worker, **fields)
            except IntegrityError:  # the match was deleted meanwhile (a foreign key), or a twin row appeared
                fields["current_match_id"] = None
                WorkerHeartbeat.objects.update_or_create(name=self.worker, defaults=fields)
            self.beats += 1
            self.last_beat = time.monotonic()
            return True
        except Exception as exc:
            log.warning("heartbeat not written: %s", str(exc)[:200], extra={"worker": self.worker})
            close_connection()
            return False

    def run(self) -> None:

        try:
            while not self._halt.is_set():
                self._wake.clear()
                self.beat()
                woken = self._wake.wait(self.interval)
                if woken and not self._halt.is_set():
                    # A match started or ended: say so soon, but at most once
                    # a MIN_GAP (matches of a fraction of a second would
                    # otherwise write twice each).
                    time.sleep(max(0.0, MIN_GAP - (time.monotonic() - self.last_beat)))
        finally:
            close_connection()

    def stop(self, remove: bool = True) -> None:
        """A clean shutdown: the row goes (a worker that vanishes without
        this keeps its row, and shows as dead on the status page)."""
        self._halt.set()
        self._wake.set()
        self.join(timeout=5)
        if remove:

            from ladder.models import WorkerHeartbeat

            try:
                WorkerHeartbeat.objects.filter(name=self.worker, pid=self.pid).delete()
            except Exception:
                pass
            finally:
                close_connection()


_heartbeat: Heartbeat | None = None


def current_heartbeat() -> Heartbeat | None:
    hb = _heartbeat
    return hb if hb is not None and hb.pid == os.getpid() and hb.is_alive() else None


def start_heartbeat(name: str | None = None, sandbox: str = "", interval: float | None = None) -> Heartbeat:
    """Start this process's heartbeat thread (once per process: a forked
    child starts its own)."""
    global _heartbeat
    hb = current_heartbeat()
    if hb is not None:
        if sandbox and not hb.sandbox:
            hb.set_sandbox(sandbox)
        return hb
    hb = Heartbeat(name or process_worker_name(), sandbox=sandbox, interval=interval)
    hb.start()
    _heartbeat = hb
    return hb


def stop_heartbeat(remove: bool = True) -> None:
    global _heartbeat
    hb = current_heartbeat()
    _heartbeat = None
    if hb is not None:
        hb.stop(remove=remove)


def heartbeat_match_started(match_id: int) -> None:
    hb = current_heartbeat()
    if hb is not None:
        hb.match_started(match_id)


def heartbeat_match_ended(match_id: int, finished: bool) -> None:
    hb = current_heartbeat()
    if hb is not None:
        hb.match_ended(match_id, finished)


def beating_after(name: str, instant) -> bool:
    """Did the worker that records itself as ``name`` (Match.worker) still
    beat at ``instant`` (give or take one heartbeat interval)? The reaper
    asks this of a lapsed lease's expiry: a worker that beat after its lease
    lapsed is alive but stopped renewing (``lease_expired``); one that did
    not is dead, frozen or cut off (``worker_lost``). (A dead worker's last
    beat is at least two thirds of a lease before the expiry: the lease is
    renewed every third of its length; so this holds while the heartbeat
    interval is shorter than that.)"""
    from ladder.models import WorkerHeartbeat

    if not name or instant is None:
        return False
    since = instant - timedelta(seconds=heartbeat_interval())
    return WorkerHeartbeat.objects.filter(name=name[:200], last_seen__gte=since).exists()


def worker_alive(name: str, now=None) -> bool:
    """Is the worker that records itself as ``name`` (Match.worker) beating?"""
    from ladder.models import WorkerHeartbeat

    if not name:
        return False
    now = now or timezone.now()
    return WorkerHeartbeat.objects.filter(name=name[:200], last_seen__gte=now - timedelta(seconds=ALIVE_SECONDS)).exists()


def forget_dead_workers(now=None) -> int:
    from ladder.models import WorkerHeartbeat

    now = now or timezone.now()
    deleted, _ = WorkerHeartbeat.objects.filter(last_seen__lt=now - FORGET_AFTER).delete()
    return deleted


# -- scratch folders ------------------------------------------------------------------


def scratch_root() -> Path:
    """Where worker processes unpack the bots of the match they play, each
    match in a folder its process owns (cardroom.scratch)."""
    return Path(settings.CARDROOM_SCRATCH_DIR)


def sweep_scratch() -> list[str]:
    """Remove the match folders of worker processes that died (on this
    host's scratch folder); a live process's are left alone. Run when a
    worker, or a pool process of one, starts (config.celery)."""
    removed = scratch.sweep(scratch_root())
    if removed:
        log.info("removed %d match folders left by workers that died", len(removed), extra={"folders": removed[:20]})
    return removed


SANDBOX_TEXT = 200  # WorkerHeartbeat.sandbox


def sandbox_mode() -> str:
    """This process's sandbox and the limits in force, as the status page
    shows it: "bwrap; limits in force: memory, pids, …" (and what is not in
    force, in the weak mode)."""
    from cardroom.sandbox import get_launcher, probe

    try:
        launcher = get_launcher(settings.CARDROOM_SANDBOX or None)
    except Exception as exc:
        return f"unusable: {exc}"[:SANDBOX_TEXT]
    if not launcher.isolated:
        return f"{launcher.name} (NOT isolated)"
    return f"{launcher.name}; {probe().limits_summary()}"[:SANDBOX_TEXT]


# -- status -------------------------------------------------------------------------


def broker_queue_length(queue: str = "celery") -> int | None:
    """Messages waiting in the broker's queue (None when the broker does not
    answer within a second or two)."""
    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith(("redis://", "rediss://", "unix://")):
            import redis

            client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
            try:
                return int(client.llen(queue))
            finally:
                client.close()
        if url.startswith(("sqla+", "sqlalchemy+")):
            from sqlalchemy import create_engine, text

            engine = create_engine(url.split("+", 1)[1], connect_args={"timeout": 2} if "sqlite" in url else {})
            try:
                with engine.connect() as conn:
                    row = conn.execute(
                        text(
                            "SELECT count(*) FROM kombu_message m JOIN kombu_queue q ON q.id = m.queue_id "
                            "WHERE q.name = :q AND m.visible"
                        ),
                        {"q": queue},
                    ).first()
                    return int(row[0]) if row else 0
            finally:
                engine.dispose()
    except Exception as exc:
        log.warning("broker queue length unavailable: %s", str(exc)[:200])
    return None


def _broker_kind(url: str) -> str:
    scheme = url.split("://", 1)[0]
    if scheme.startswith(("sqla", "sqlalchemy")):
        return "sqlalchemy"
    return scheme


def status(now=None, with_workers: bool = False, with_broker: bool = True) -> dict:
    """The operator's figures. Counts only, unless ``with_workers`` (staff):
    then each worker's name, host, pid and current match too."""
    from ladder.models import Ladder, Match, WorkerHeartbeat

    now = now or timezone.now()
    minute, hour, day = now - timedelta(minutes=1), now - timedelta(hours=1), now - timedelta(hours=24)
    counts = dict(
        Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    finished = Match.objects.filter(status=Match.Status.FINISHED)
    finished_minute = finished.filter(finished__gte=minute).count()
    finished_hour = finished.filter(finished__gte=hour).count()
    failed_day = Match.objects.filter(status=Match.Status.FAILED, finished__gte=day).count()

    # Platform failures by kind: matches touched in the last 24 hours whose
    # (last) platform failure was of that kind; "failed" gave up, the rest
    # were retried (and most finished).
    touched = Q(finished__gte=day) | Q(started__gte=day) | Q(status=Match.Status.QUEUED, created__gte=day)
    failures: dict[str, dict[str, int]] = {kind: {"total": 0, "failed": 0} for kind in Match.ErrorKind.values}
    rows = (
        Match.objects.exclude(error_kind="")
        .filter(touched)
        .values_list("error_kind", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for kind, st, n in rows:
        entry = failures.setdefault(kind, {"total": 0, "failed": 0})
        entry["total"] += n
        if st == Match.Status.FAILED:
            entry["failed"] += n

    beats = list(WorkerHeartbeat.objects.order_by("name"))
    alive_cutoff = now - timedelta(seconds=ALIVE_SECONDS)
    alive = [b for b in beats if b.last_seen >= alive_cutoff]

    per_ladder: dict[int, dict[str, int]] = {}
    for ladder_id, st, n in (
        Match.objects.filter(ladder__isnull=False, status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        .values_list("ladder_id", "status")
        .annotate(n=Count("id"))
        .order_by()
    ):
        per_ladder.setdefault(ladder_id, {})[st] = n
    hour_by_ladder = dict(
        finished.filter(finished__gte=hour, ladder__isnull=False).values_list("ladder_id").annotate(n=Count("id")).order_by()
    )
    ladders = [
        {
            "id": lad.pk,
            "name": lad.name,
            "game": lad.game,
            "players": lad.players_per_match,
            "active": lad.active,
            "queued": per_ladder.get(lad.pk, {}).get(Match.Status.QUEUED, 0),
            "running": per_ladder.get(lad.pk, {}).get(Match.Status.RUNNING, 0),
            "finished_last_hour": hour_by_ladder.get(lad.pk, 0),
        }
        for lad in Ladder.objects.order_by("game", "players_per_match", "name")
        if lad.active or lad.pk in per_ladder or lad.pk in hour_by_ladder
    ]
    validation_queued = Match.objects.filter(kind=Match.Kind.VALIDATION, status=Match.Status.QUEUED).count()
    casual_running = Match.objects.filter(kind=Match.Kind.CASUAL, status=Match.Status.RUNNING).count()

    doc = {
        "generated": now.isoformat(),
        "matches": {
            "queued": counts.get(Match.Status.QUEUED, 0),
            "running": counts.get(Match.Status.RUNNING, 0),
            "validation_queued": validation_queued,
            # casual matches in play: each holds a thread of the casual worker (decision 135)
            "casual_running": casual_running,
            "finished_last_minute": finished_minute,
            "finished_last_hour": finished_hour,
            "per_minute_last_hour": round(finished_hour / 60, 2),
            "failed_last_24h": failed_day,
        },
        "failures_last_24h": failures,
        "broker": {
            "kind": _broker_kind(settings.CELERY_BROKER_URL),
            "queue_length": broker_queue_length() if with_broker else None,
            # more than a few: the scheduler's worker is not running (decision 194)
            "scheduler_queue_length": broker_queue_length(settings.CARDROOM_QUEUES["scheduler"]) if with_broker else None,
        },
        "workers": {
            "alive": len(alive),
            "dead": len(beats) - len(alive),
            "busy": sum(1 for b in alive if b.current_match_id),
            "alive_after_seconds": ALIVE_SECONDS,
        },
        "ladders": ladders,
    }
    if with_workers:
        doc["workers"]["list"] = [
            {
                "name": b.name,
                "hostname": b.hostname,
                "pid": b.pid,
                "started": b.started.isoformat(),
                "last_seen": b.last_seen.isoformat(),
                "seconds_since_seen": round((now - b.last_seen).total_seconds(), 1),
                "alive": b.last_seen >= alive_cutoff,
                "current_match": b.current_match_id,
                "matches_done": b.matches_done,
                "sandbox": b.sandbox,
            }
            for b in beats
        ]
    return doc
