"""A worker that cannot reach its database takes no message until it can.

Every task a worker runs needs the database (a match is claimed there, the
scheduler's tasks are nothing but queries). A worker that cannot reach it
(a wrong DATABASE_URL, a database down or cut off) would otherwise take
message after message and fail each one: a match task is retried later
(a new message, with a countdown, that a worker then holds in memory), a
scheduler task is lost. Issue 36 saw a worker started with a wrong URL take
321 messages in 40 s.

``DatabaseGate`` is a consumer bootstep (Celery's "Extensions and
Bootsteps"), added to every worker of the app by ``config.celery``. When the
consumer starts, before it takes any message, it checks the database; a
thread then checks again every CARDROOM_WORKER_DB_CHECK_SECONDS. While the
database does not answer, the worker cancels its consumers (Celery's
``cancel_task_queue``, what ``celery control cancel_consumer`` does): it
takes nothing, and what waits stays in the broker for the workers that
can. Once it answers again, the worker consumes its queues again
(``add_task_queue``). Matches it is playing carry on (their own retries
record the result or re-queue them).

The consumer's queues are changed only on the consumer's own thread: from
the worker's event loop timer (Redis: every pool runs the event loop), or
through ``call_soon`` from the timer's thread where there is no event loop
(the embedded SQLite broker). The check itself (a connection and
``SELECT 1``, a few seconds' timeout) runs in the thread, never in the loop.
"""

from __future__ import annotations

import logging
import threading

from celery import bootsteps

log = logging.getLogger("cardroom.worker")

# How long a check waits for PostgreSQL to accept the connection.
CONNECT_TIMEOUT_SECONDS = 3


def _check_interval() -> float:
    from django.conf import settings

    return float(getattr(settings, "CARDROOM_WORKER_DB_CHECK_SECONDS", 5))


def _new_connection():
    """A connection of its own (Django's are per thread, and this one must
    not be the tasks'), with a short connect timeout on PostgreSQL."""
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.utils import load_backend

    db = connections.settings[DEFAULT_DB_ALIAS]
    if db["ENGINE"] == "django.db.backends.postgresql":
        db = {**db, "OPTIONS": {**db.get("OPTIONS", {}), "connect_timeout": CONNECT_TIMEOUT_SECONDS}}
    return load_backend(db["ENGINE"]).DatabaseWrapper(db, DEFAULT_DB_ALIAS)


def database_error(connection=None) -> str | None:
    """None when the database answers ``SELECT 1``; else what went wrong.
    ``connection`` is kept open for the next check (closed after an error);
    without one, a connection is opened and closed here."""
    own = connection is None
    conn = _new_connection() if own else connection
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return None
    except Exception as exc:
        own = True  # a broken connection is not kept
        return f"{type(exc).__name__}: {exc}".strip()[:500]
    finally:
        if own:
            try:
                conn.close()
            except Exception:
                pass


class DatabaseGate(bootsteps.StartStopStep):
    """Consumes the worker's queues only while the database answers."""

    requires = ("celery.worker.consumer.tasks:Tasks",)
    label = "database gate"

    def __init__(self, c, **kwargs):
        super().__init__(c, **kwargs)
        self.consumer = c
        self.queues: list[str] | None = None  # what the worker was started to consume
        self.paused = False
        self.error: str | None = None  # the latest check's (the thread writes, the loop reads)
        self.interval = _check_interval()
        self.thread: threading.Thread | None = None
        self.timer_entry = None
        self.halt = threading.Event()

    def include_if(self, c) -> bool:
        return _check_interval() > 0

    def start(self, c) -> None:
        """Also after every reconnection to the broker (the consumer starts
        again): the queues of the first start are the ones to gate."""
        if self.queues is None:
            self.queues = sorted(c.app.amqp.queues.consume_from)
        self.error = database_error()
        self.apply(c)  # before the event loop runs: not one message taken
        if c.hub is not None:  # the loop's own timer: apply() runs on the loop's thread
            self.timer_entry = c.timer.call_repeatedly(self.interval, self.apply, (c,))
        else:  # a timer thread: hand apply() to the loop
            self.timer_entry = c.timer.call_repeatedly(self.interval, c.call_soon, (self.apply, c))
        if self.thread is None:
            self.thread = threading.Thread(target=self.watch, name="cardroom-db-gate", daemon=True)
            self.thread.start()

    def stop(self, c) -> None:
        if self.timer_entry is not None:
            try:
                c.timer.cancel(self.timer_entry)
            except Exception:
                pass
            self.timer_entry = None

    def shutdown(self, c) -> None:
        self.stop(c)
        self.halt.set()

    def watch(self) -> None:
        """The thread: check every interval, on a connection kept open
        (opened at once: one long-lived session of the worker's, not one
        appearing later)."""
        conn = None
        while True:
            kept = conn is not None
            conn = conn or _new_connection()
            error = database_error(conn)
            if error is not None and kept:
                # The server may have ended just this idle session (a
                # restart, a failover, an idle timeout): a fresh one decides.
                conn = _new_connection()
                error = database_error(conn)
            if error is not None:
                conn = None  # closed by database_error
            self.error = error
            if self.halt.wait(self.interval):
                break
        if conn is not None:
            conn.close()

    def apply(self, c) -> None:
        """On the consumer's thread: pause or resume after the latest check."""
        error = self.error
        if c.task_consumer is None:
            return
        if error is not None and not self.paused:
            self.paused = True
            log.error(
                "the database does not answer: this worker takes no message until it does (checked every %g s): %s",
                self.interval, error, extra={"queues": ",".join(self.queues or [])},
            )  # fmt: skip
            for queue in self.queues or []:
                c.cancel_task_queue(queue)
        elif error is None and self.paused:
            self.paused = False
            log.warning("the database answers again: this worker takes messages again", extra={"queues": ",".join(self.queues or [])})
            for queue in self.queues or []:
                c.add_task_queue(queue)
