"""The database connection of a worker thread: closed without fuss, and
waited for while it is away (a restart, a failover)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection

# What the database raises while it is away: the one test of "is the
# database away?" (the tasks retry on these, the services wait them out).
DB_ERRORS = (OperationalError, InterfaceError)

T = TypeVar("T")


def close_connection() -> None:
    """Close this thread's connection (a fresh one is opened on next use).
    A broken connection may fail to close: it is dropped anyway."""
    try:
        connection.close()
    except Exception:
        connection.connection = None


def database_away(exc: BaseException) -> bool:
    return isinstance(exc, DB_ERRORS)


def retry_while_database_away(
    action: Callable[[], T], *, attempts: int, first_delay: float, what: str, log: logging.Logger, extra: dict
) -> T:
    """``action()``; while the database is away, close the broken connection
    and try again after a back-off (doubling, at most 10 s), ``attempts``
    times in all. The last failure, and any other error, propagates.
    ``what`` ("recording", "re-queueing") names the attempt in the log."""
    delay = first_delay
    for attempt in range(attempts):
        try:
            return action()
        except Exception as exc:
            if not database_away(exc):
                raise
            close_connection()
            if attempt == attempts - 1:
                raise
            log.warning(
                f"database unavailable while {what}; retrying",
                extra={**extra, "attempt": attempt + 1, "error": str(exc)[:200]},
            )
            time.sleep(delay)
            delay = min(delay * 2, 10)
    raise AssertionError("attempts must be at least 1")
