"""gunicorn's settings for cardroom behind the proxy (deploy/nginx):

    gunicorn config.wsgi:application --config python:config.gunicorn

Sync workers, because nginx stands in front: it reads each request whole
before passing it on and takes each response whole, so a worker never waits
on a client, only on its own work (the app is CPU-bound on two cores: the
ORM, templates, JSON, password hashes; threads would share one GIL and a
worker's database connection). A half-open or slow client costs an nginx
connection, not a worker. Facing clients directly, sync workers are what
four half-open requests stalled (issue 11): never publish gunicorn's port.

Every value can be changed from the environment (docs/operations.md).
"""

from __future__ import annotations

import os

# Loopback by default (the embedded default and the local proxy); the web
# container binds its internal address (GUNICORN_BIND=0.0.0.0:8000) on the
# compose network, which publishes only the proxy's ports.
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1) + 1))
worker_class = "sync"
# A request that takes longer is a bug or an attack: the worker is killed and
# replaced (nginx's proxy_read_timeout, 35 s, waits a little longer).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 30
# Connections come from nginx, which buffers: no keep-alive needed.
keepalive = 2
# Recycle workers now and then (memory held by a big page is returned).
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
max_requests_jitter = 500
backlog = 2048
# The request line and headers nginx passes on stay within these.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
accesslog = "-"
logger_class = "ladder.hosting.gunicorn.JsonLogger"
