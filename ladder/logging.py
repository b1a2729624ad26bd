"""Structured logs: one JSON object per line, with the match id when known.

Every process logs through ``JsonFormatter`` (settings.LOGGING; gunicorn's own
loggers through ``ladder.hosting.gunicorn.JsonLogger``). A log record about a
match carries ``match_id``: either given in ``extra={"match_id": …}``, or
taken from the match the current worker process (thread) is playing, which
``match_context`` sets around each match — so the lines Celery, the runner
and the sandbox write while a match plays carry it too.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
import time
from collections.abc import Iterator

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}

# The match this thread (a worker's pool process, its lease keeper) is playing.
current_match_id: contextvars.ContextVar[int | None] = contextvars.ContextVar("cardroom_match_id", default=None)


@contextlib.contextmanager
def match_context(match_id: int | None) -> Iterator[None]:
    """Log records made inside carry ``match_id`` (unless they set their own)."""
    token = current_match_id.set(int(match_id) if match_id is not None else None)
    try:
        yield
    finally:
        current_match_id.reset(token)


def _plain(value):
    """A JSON value: scalars as they are, dicts and lists when they serialise, else str()."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, (dict, list, tuple)):
        try:
            json.dumps(value)
            return value
        except (TypeError, ValueError):
            return str(value)
    return str(value)


_MATCH_TASKS = {"ladder.tasks.play_match"}
_FIRST_INT_ARG = re.compile(r"^[\[(]\s*(\d+)\s*[,\])]")


def _task_match_id(data) -> int | None:
    """The match of a ``play_match`` task, from the ``data`` Celery's worker
    attaches to its "received" / "succeeded" lines (args as a repr string)."""
    if not isinstance(data, dict) or data.get("name") not in _MATCH_TASKS:
        return None
    args = data.get("args")
    if isinstance(args, (list, tuple)) and args and isinstance(args[0], int):
        return args[0]
    found = _FIRST_INT_ARG.match(str(args or ""))
    return int(found.group(1)) if found else None


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[key] = _plain(value)
        if "match_id" not in doc:
            match_id = current_match_id.get()
            if match_id is None:
                match_id = _task_match_id(getattr(record, "data", None))
            if match_id is not None:
                doc["match_id"] = match_id
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)
