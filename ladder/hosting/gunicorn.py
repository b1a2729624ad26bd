"""gunicorn's logs as JSON lines, like every other cardroom process:

    gunicorn config.wsgi:application --logger-class ladder.hosting.gunicorn.JsonLogger --access-logfile -

Each access line carries method, path, status, duration (ms), bytes and the
client, and ``match_id`` when the path is about one match
(``/api/matches/17/replay/``, ``/matches/17/``).
"""

from __future__ import annotations

import re

from gunicorn.glogging import Logger

from ladder.logging import JsonFormatter

_MATCH_PATH = re.compile(r"/matches/(\d+)(?:/|$)")


class JsonLogger(Logger):
    def setup(self, cfg):
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                if getattr(handler, "_gunicorn", False):
                    handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time):
        if not self.access_log_enabled:
            return
        try:
            path = environ.get("PATH_INFO", "") or ""
            status = getattr(resp, "status_code", None)
            if status is None:
                status = int(str(getattr(resp, "status", "0")).split(None, 1)[0] or 0)
            extra = {
                "method": environ.get("REQUEST_METHOD", ""),
                "path": path,
                "query": environ.get("QUERY_STRING", ""),
                "status": status,
                "ms": round(request_time.total_seconds() * 1000, 1),
                "bytes": getattr(resp, "sent", None),
                "remote": environ.get("REMOTE_ADDR", ""),
                "user_agent": environ.get("HTTP_USER_AGENT", "")[:200],
            }
            found = _MATCH_PATH.search(path)
            if found:
                extra["match_id"] = int(found.group(1))
            self.access_log.info("%s %s %s", extra["method"], path, status, extra=extra)
        except Exception:
            super().access(resp, req, environ, request_time)
