"""The database connection of a worker thread, closed without fuss."""

from django.db import connection


def close_connection() -> None:
    """Close this thread's connection (a fresh one is opened on next use).
    A broken connection may fail to close: it is dropped anyway."""
    try:
        connection.close()
    except Exception:
        connection.connection = None
