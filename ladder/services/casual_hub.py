"""What a casual worker process's waiting matches share: one thread that
reads every waiting seat and renews every casual match's lease (decision
202).

A casual match is played by the runner in a thread of the casual worker, as
any match, its bots frozen between their moves. While the person thinks, the
thread sleeps on an Event and holds no database connection: the hub reads
all the waiting seats in one query every CARDROOM_CASUAL_POLL_SECONDS and
wakes the thread whose answer came, whose page went idle or whose lease was
lost; it also renews the leases of all the process's casual matches, a third
of the lease apart, over its one connection. So a waiting match costs a
sleeping thread and its frozen bots, not a connection of its own (PostgreSQL
allows 100 by default: 200 matches, each with a connection for its thread and
one for its lease keeper, would need 400), and the reads do not grow with the
number of matches waiting (one query for all).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from ladder.models import CasualSeat
from ladder.services.connections import close_connection

log = logging.getLogger(__name__)


@dataclass
class Waiter:
    """A seat awaiting its person's answer to ``decision``; what the hub
    last read of its row."""

    match_id: int
    decision: int
    woken: threading.Event = field(default_factory=threading.Event)
    answered: bool = False
    # How long the seat's page had not asked for it, when the hub last read.
    idle_for: float = 0.0


class Lease:
    """A casual match's lease, renewed by the hub: the interface of
    ladder.services.matches' own keeper (start, lost, deadline, finish)."""

    def __init__(self, claim, hub: Hub):
        self.claim = claim
        self.hub = hub
        self.lost = False
        # No renewal past this (time.monotonic()), as for any match.
        self.deadline: float | None = None
        self.overran = False

    def start(self) -> None:
        self.hub.keep(self)

    def finish(self) -> None:
        self.hub.release(self)


class StartSlot:
    """One of the few matches of this process that may be starting at once:
    from before its claim to its first wait on its person (or its end).
    Starting is the costly part (the bots' start-up in the sandbox, with a
    database connection open); a burst of hundreds (a casual worker started
    on a full queue) then holds a few connections and cores, not hundreds,
    and the fair order is taken when a slot is free (decision 202)."""

    def __init__(self, semaphore: threading.Semaphore):
        self._semaphore = semaphore
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._semaphore.release()


class Hub:
    def __init__(self):
        self._lock = threading.Lock()
        self._starting: threading.Semaphore | None = None
        self._waiters: dict[int, Waiter] = {}
        self._leases: dict[int, Lease] = {}
        self._thread: threading.Thread | None = None
        self._next_renewal = 0.0

    # -- the match threads' side

    def start_slot(self) -> StartSlot:
        """Wait for a slot to start a match in (CARDROOM_CASUAL_STARTING at once)."""
        with self._lock:
            if self._starting is None:
                self._starting = threading.Semaphore(max(1, settings.CARDROOM_CASUAL_STARTING))
        self._starting.acquire()
        return StartSlot(self._starting)

    def lease(self, claim) -> Lease:
        return Lease(claim, self)

    def keep(self, lease: Lease) -> None:
        with self._lock:
            self._leases[lease.claim.match_id] = lease
            self._start_locked()

    def release(self, lease: Lease) -> None:
        with self._lock:
            if self._leases.get(lease.claim.match_id) is lease:
                del self._leases[lease.claim.match_id]

    def wait(self, match_id: int, decision: int) -> Waiter:
        """Register the seat's wait; the caller then sleeps on ``woken``
        (close its connection first) and calls ``done`` when it stops."""
        waiter = Waiter(match_id, decision)
        with self._lock:
            self._waiters[match_id] = waiter
            self._start_locked()
        return waiter

    def done(self, waiter: Waiter) -> None:
        with self._lock:
            if self._waiters.get(waiter.match_id) is waiter:
                del self._waiters[waiter.match_id]

    def _start_locked(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="casual-hub", daemon=True)
            self._thread.start()

    # -- the hub's thread

    def _run(self) -> None:
        try:
            while self._has_work():
                self._round()
        finally:
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None

    def _has_work(self) -> bool:
        """False, and the thread ends, once no match is waiting or kept;
        its connection is closed first (the next match starts another)."""
        with self._lock:
            if self._waiters or self._leases:
                return True
        close_connection()
        with self._lock:
            if self._waiters or self._leases:
                return True
            self._thread = None
            return False

    def _round(self) -> None:
        started = time.monotonic()
        try:
            self.read_seats()
            if started >= self._next_renewal:
                self._next_renewal = started + max(1.0, settings.CARDROOM_MATCH_LEASE_SECONDS / 3)
                self.renew_leases()
        except Exception:  # the database is briefly away: the next round tries again
            log.warning("the casual hub's round failed", exc_info=True)
            close_connection()
        time.sleep(max(0.0, float(settings.CARDROOM_CASUAL_POLL_SECONDS) - (time.monotonic() - started)))

    def read_seats(self) -> None:
        with self._lock:
            waiting = dict(self._waiters)
        if not waiting:
            return
        rows: dict[int, dict[str, Any]] = {
            row["pk"]: row
            for row in CasualSeat.objects.filter(pk__in=list(waiting)).values("pk", "decision", "answer", "last_poll")
        }
        idle_s = float(settings.CARDROOM_CASUAL_IDLE_SECONDS)
        now = time.time()
        for match_id, waiter in waiting.items():
            row = rows.get(match_id)
            if row is None:
                waiter.woken.set()  # the match is gone (deleted): the thread finds out
                continue
            waiter.idle_for = now - row["last_poll"].timestamp()
            waiter.answered = row["answer"] is not None and row["decision"] == waiter.decision
            if waiter.answered or waiter.idle_for > idle_s:
                waiter.woken.set()

    def renew_leases(self) -> None:
        from ladder.services.leases import renew_lease

        with self._lock:
            leases = list(self._leases.values())
        now = time.monotonic()
        for lease in leases:
            if lease.lost:
                continue
            if lease.deadline is not None and now > lease.deadline:
                # Past its time control by far: stuck (a platform bug); the
                # lapsed lease is the reaper's, as for any match.
                if not lease.overran:
                    lease.overran = True
                    log.error("match overran its time control: lease no longer renewed", extra={"match_id": lease.claim.match_id})
                continue
            if not renew_lease(lease.claim):
                lease.lost = True
                log.info("lease not renewed: the match no longer runs under this claim", extra={"match_id": lease.claim.match_id})
                with self._lock:
                    waiter = self._waiters.get(lease.claim.match_id)
                if waiter is not None:
                    waiter.woken.set()


# One per process: the casual worker's threads share it.
hub = Hub()
