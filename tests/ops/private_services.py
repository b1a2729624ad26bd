"""Private PostgreSQL and Redis servers for fault injection: started on free
ports with their data under a temporary folder, stopped, restarted and
removed by the tests themselves. (The machine's own PostgreSQL and Redis
are shared with other test runs: never touched here.)"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.ops.procs import free_port


def _find(binary: str) -> str | None:
    found = shutil.which(binary)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{binary}"), reverse=True)
    return candidates[0] if candidates else None


def missing_binaries() -> list[str]:
    return [b for b in ("initdb", "pg_ctl", "redis-server") if _find(b) is None]


class PrivateRedis:
    """``redis-server`` without persistence: a restart loses every message."""

    def __init__(self, workdir: Path, env_marker: tuple[str, str] | None = None):
        self.port = free_port()
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.logfile = workdir / "redis.log"
        self.proc: subprocess.Popen | None = None
        self.env = dict(os.environ)
        if env_marker:
            self.env[env_marker[0]] = env_marker[1]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        argv = [
            _find("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(self.workdir), "--logfile", str(self.logfile), "--daemonize", "no",
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=self.env)
        self._wait(up=True)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, down_seconds: float = 1.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()

    def client(self):
        import redis

        return redis.Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)

    def _wait(self, up: bool, timeout: float = 15.0) -> None:
        import redis

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.client().ping()
                if up:
                    return
            except redis.RedisError:
                if not up:
                    return
            time.sleep(0.1)
        raise AssertionError(f"private redis on port {self.port} not {'up' if up else 'down'} after {timeout} s")


class PrivatePostgres:
    """A throw-away PostgreSQL cluster (initdb) on a free port, run as the
    ``postgres`` OS user when we are root (PostgreSQL refuses to run as root)."""

    def __init__(self, env_marker: tuple[str, str] | None = None):
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="cardroom-faults-pg-"))
        self.data = self.root / "data"
        self.logfile = self.root / "postgres.log"
        self.env = dict(os.environ)
        self.env.pop("PGDATA", None)
        if env_marker:
            self.env[env_marker[0]] = env_marker[1]
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")
            os.chmod(self.root, 0o755)

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [*self.as_user, *argv], env=self.env, cwd=self.root, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}\n{self.log_tail()}")
        return result

    def init(self) -> PrivatePostgres:
        self._run(_find("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.root}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 100\n"
            )
        return self

    def start(self) -> None:
        self._run(_find("pg_ctl"), "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: every connection is cut at once (what clients see of a
        restart or a failover)."""
        self._run(_find("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def psql(self, sql: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql)

    def destroy(self) -> None:
        try:
            if self.running():
                self.stop("immediate")
        except AssertionError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return f"--- postgres log ---\n{self.logfile.read_text(errors='replace')[-chars:]}"
        except OSError:
            return ""
