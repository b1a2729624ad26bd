"""The compose stack, driven from the host: docker-compose.yml with the test
override (docker-compose.test.yml) on the private Docker daemon that
scripts/test-containers.sh (or benchmarks/compose_scale.py) started.

Everything is on the host's network, on the ports ``StackPorts`` names
(unusual ones, never the machine's own PostgreSQL 5432 or Redis 6379), so
the tests reach the proxy, the web app and PostgreSQL on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILES = ("docker-compose.yml", "docker-compose.test.yml")
DOCKER = "/usr/bin/docker"  # Debian's client, the daemon's own version


def docker_host() -> str | None:
    """The private daemon's socket (set by scripts/test-containers.sh)."""
    return os.environ.get("CARDROOM_TEST_DOCKER_HOST")


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class StackPorts:
    # Unusual defaults, each overridable; checked free before the stack
    # starts. Below Linux's ephemeral range (32768-60999): a port there can
    # be any outgoing connection's local port at that moment (one of the
    # test suite's running beside it), and the stack would not come up.
    db: int = int(os.environ.get("CARDROOM_TEST_DB_PORT", 27432))
    redis: int = int(os.environ.get("CARDROOM_TEST_REDIS_PORT", 27379))
    cache: int = int(os.environ.get("CARDROOM_TEST_CACHE_PORT", 27381))
    web: int = int(os.environ.get("CARDROOM_TEST_WEB_PORT", 27800))
    proxy: int = int(os.environ.get("CARDROOM_TEST_PROXY_PORT", 27880))

    def check_free(self) -> None:
        busy = [f"{name} {port}" for name, port in vars(self).items() if not port_is_free(port)]
        if busy:
            raise RuntimeError(f"ports in use: {', '.join(busy)} (set CARDROOM_TEST_<NAME>_PORT to others)")


@dataclass
class Stack:
    project: str = "cardroomtest"
    ports: StackPorts = field(default_factory=StackPorts)
    password: str = "compose-test-password"
    secret_key: str = "compose-test-not-a-secret"
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.ports.proxy}"

    @property
    def database_url(self) -> str:
        return f"postgres://cardroom:{self.password}@127.0.0.1:{self.ports.db}/cardroom"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_"))}
        env.update(
            {
                "DOCKER_HOST": docker_host() or "",
                "COMPOSE_PROJECT_NAME": self.project,
                "SECRET_KEY": self.secret_key,
                "POSTGRES_PASSWORD": self.password,
                "DB_PORT": str(self.ports.db),
                "REDIS_PORT": str(self.ports.redis),
                "CACHE_PORT": str(self.ports.cache),
                "WEB_PORT": str(self.ports.web),
                "PROXY_PORT": str(self.ports.proxy),
                "ALLOWED_HOSTS": "127.0.0.1,localhost",
                "CSRF_TRUSTED_ORIGINS": self.base,
                **self.extra_env,
            }
        )
        return env

    def compose(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        files = [a for f in COMPOSE_FILES for a in ("-f", f)]
        result = subprocess.run(
            [shutil.which("docker-compose") or "docker-compose", *files, *args],
            cwd=ROOT, env=self.env(), capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if check and result.returncode != 0:
            raise RuntimeError(f"docker-compose {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
        return result

    def docker(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run([DOCKER, *args], env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)} failed ({result.returncode}): {result.stderr[-3000:]}")
        return result

    # -- life cycle --------------------------------------------------------------

    def up(self, workers: int = 2, timeout: float = 300, check_ports: bool = True) -> None:
        if check_ports:
            self.ports.check_free()
        self.compose("up", "-d", "--no-build", "--scale", f"worker={workers}", timeout=timeout)
        self.wait_healthy(timeout=timeout)

    def scale_workers(self, workers: int, timeout: float = 300) -> None:
        self.compose("up", "-d", "--no-build", "--no-recreate", "--scale", f"worker={workers}", timeout=timeout)
        self.wait_healthy(timeout=timeout)

    def down(self) -> None:
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "20", check=False)

    def logs(self, *services: str, tail: int = 80) -> str:
        return self.compose("logs", "--no-color", f"--tail={tail}", *services, check=False).stdout

    def containers(self, service: str, running_only: bool = True) -> list[dict]:
        """docker inspect of the service's containers (its replicas)."""
        args = ["ps", "-q", "--filter", f"label=com.docker.compose.project={self.project}",
                "--filter", f"label=com.docker.compose.service={service}"]  # fmt: skip
        if not running_only:
            args.insert(1, "-a")
        ids = self.docker(*args).stdout.split()
        if not ids:
            return []
        return json.loads(self.docker("inspect", *ids).stdout)

    def wait_healthy(self, timeout: float = 300) -> None:
        """Every long-running service's containers up and healthy, the proxy answering."""
        deadline = time.monotonic() + timeout
        while True:
            states = {}
            for service in ("db", "redis", "cache", "web", "proxy", "worker", "scheduler", "scheduler-worker"):
                for c in self.containers(service, running_only=False):
                    health = c["State"].get("Health", {}).get("Status", "none")
                    states[c["Name"].lstrip("/")] = (c["State"]["Status"], health)
            # A worker's first health check runs a minute in (it costs a
            # Python start); until then, "starting" with its Celery node up is
            # enough, which the heartbeats show (the scheduler's worker's too).
            bad = {n: s for n, s in states.items() if s[0] != "running" or s[1] not in ("healthy", "starting")}
            if bad:
                raise RuntimeError(f"containers not running: {bad}\n{self.logs(tail=40)}")
            waiting = {n: s for n, s in states.items() if s[1] == "starting" and "worker_" not in n}
            if not waiting and self.http_ok("/api/games/"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"stack not healthy in {timeout} s: {states}\n{self.logs(tail=40)}")
            time.sleep(1)

    def http_ok(self, path: str) -> bool:
        try:
            return requests.get(self.base + path, timeout=5).status_code == 200
        except requests.RequestException:
            return False

    # -- inside the stack -----------------------------------------------------

    def manage(self, *args: str, timeout: float = 120) -> str:
        """manage.py in the (running) web container."""
        return self.compose("exec", "-T", "web", "python3", "manage.py", *args, timeout=timeout).stdout

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.database_url, connect_timeout=10) as conn:
            rows = conn.execute(query, params).fetchall()
        return rows
