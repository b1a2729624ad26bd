"""The rate limits hold across server processes (issue 11: counts kept in
each process's memory let 60 uploads through a 30/hour limit): two real
gunicorn servers on two loopback ports, sharing the "limits" store (Redis
through CACHE_URL, as in production; or the database table of the embedded
default), hammered in turn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.ladder.worker_fixtures import broker_url, database_url
from tests.ops.procs import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_limits")]

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 4


def _redis_cache_url() -> str | None:
    url = broker_url()
    if not url.startswith("redis://"):
        return None
    return "redis" + "cache://" + url[len("redis://") :]


def _clear_redis_limits(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter("limits:*"):
        client.delete(key)


class Server:
    def __init__(self, port: int, env: dict[str, str], log: Path):
        self.port = port
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def post(self, path: str, data: dict) -> int:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def wait_up(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server on port {self.port} exited:\n{self.log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/games/", timeout=5):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"the server on port {self.port} did not answer:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


# The Redis store is the same whatever the database: the SQLite pass runs only
# the database store (the embedded default's).
@pytest.mark.parametrize("store", [pytest.param("redis", marks=pytest.mark.any_database), "database"])
def test_a_limit_holds_across_two_server_processes(store, tmp_path, settings):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),  # the test database
        "SECRET_KEY": "tests-only-not-a-secret",
        "DEBUG": "0",
        "CARDROOM_VAR_DIR": str(tmp_path / "var"),
        "THROTTLE_REGISTER": f"{LIMIT}/hour",
        "CARDROOM_TRUSTED_PROXIES": "0",
    }
    env.pop("CACHE_URL", None)
    if store == "redis":
        cache_url = _redis_cache_url()
        if cache_url is None:
            pytest.skip("no Redis broker in this run (CELERY_BROKER_URL)")
        env["CACHE_URL"] = cache_url
        _clear_redis_limits(broker_url())
    servers = [Server(free_port(), env, tmp_path / f"server-{i}.log") for i in range(2)]
    try:
        for server in servers:
            server.wait_up()
        codes = [servers[i % 2].post("/api/auth/register/", {"username": f"proc{store[0]}{i}", "password": "A-long-pass-1234"}) for i in range(4 * LIMIT)]
        assert codes[:LIMIT] == [201] * LIMIT, codes
        assert codes[LIMIT:] == [429] * (3 * LIMIT), codes  # (in memory, each process would let LIMIT through)
        # A restart does not reset the count either.
        servers[0].stop()
        servers[0] = Server(servers[0].port, env, tmp_path / "server-0b.log")
        servers[0].wait_up()
        assert servers[0].post("/api/auth/register/", {"username": f"proc{store[0]}late", "password": "A-long-pass-1234"}) == 429
    finally:
        for server in servers:
            server.stop()
        if store == "redis":
            _clear_redis_limits(broker_url())
