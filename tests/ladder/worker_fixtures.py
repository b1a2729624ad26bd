"""Real Celery worker processes for the ladder's end-to-end tests.

``celery_workers`` (a pytest fixture: import ``celery_workers_fixture`` into
the test module, then ask for ``celery_workers``) starts
``celery -A config worker`` subprocesses that consume from the broker in
CELERY_BROKER_URL (Redis), with an environment pointing at the *test*
database (its real name, read from the live connection), the test var/media
folders and the sandbox mode these tests can use. Every worker is stopped
(or SIGKILLed) at teardown; the broker's database is flushed before and
after, so no message leaks from one test into another.

Not a conftest: test modules import what they need from here.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CELERY = str(BIN / "celery")
CARDROOM = str(BIN / "cardroom")
BOTS = Path(__file__).resolve().parent / "bots"
READY_TIMEOUT = 60.0


# -- environment ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def sandbox_mode() -> str:
    """"bwrap" when the bubblewrap sandbox works on this machine, else "none"
    (then the worker tests run uploads unsandboxed, with
    CARDROOM_ALLOW_UNSANDBOXED_UPLOADS=1, and say so)."""
    forced = os.environ.get("CARDROOM_TEST_SANDBOX")
    if forced:
        return forced
    probe = subprocess.run([sys.executable, "-m", "cardroom.sandbox"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    return "bwrap" if probe.returncode == 0 else "none"


def database_url() -> str:
    """The URL of the database this test process uses now (the test
    database, once pytest-django has set it up)."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{Path(s['NAME']).resolve()}"
    if s["ENGINE"] == "django.db.backends.postgresql":
        auth = quote(s.get("USER") or "", safe="")
        if s.get("PASSWORD"):
            auth += ":" + quote(s["PASSWORD"], safe="")
        host = s.get("HOST") or "localhost"
        port = f":{s['PORT']}" if s.get("PORT") else ""
        return f"postgres://{auth}@{host}{port}/{quote(s['NAME'], safe='')}"
    raise RuntimeError(f"no DATABASE_URL for engine {s['ENGINE']}")


def broker_url() -> str:
    from django.conf import settings

    return settings.CELERY_BROKER_URL


def require_redis_broker() -> None:
    url = broker_url()
    if not url.startswith(("redis://", "rediss://")):
        pytest.skip(f"the worker tests need a Redis broker in CELERY_BROKER_URL (got {url.split('://')[0]}://)")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.skip(f"the Redis broker in CELERY_BROKER_URL does not answer: {exc}")


def flush_broker() -> None:
    """Empty this test run's Redis database (queues, unacked messages)."""
    import redis

    redis.Redis.from_url(broker_url()).flushdb()


def queue_length(queue: str = "celery") -> int:
    import redis

    return redis.Redis.from_url(broker_url()).llen(queue)


def unacked_count() -> int:
    """Messages a worker took and never acknowledged (kombu's Redis QoS)."""
    import redis

    return redis.Redis.from_url(broker_url()).hlen("unacked")


def restore_unacked() -> None:
    """Hand every unacknowledged message back to its queue, as kombu does
    once the visibility timeout has passed (here: at once)."""
    from kombu import Connection

    with Connection(broker_url(), transport_options={"visibility_timeout": 0}) as conn:
        conn.default_channel.qos.restore_visible(num=1000, interval=1)


def task_ids(log: str, task: str, event: str = "received") -> list[str]:
    """Ids of the ``task`` messages a worker's log says it ``event``-ed."""
    import re

    return re.findall(rf"Task {re.escape(task)}\[([0-9a-f-]+)\] {event}", log)


def worker_env(**extra: str) -> dict[str, str]:
    from django.conf import settings

    mode = sandbox_mode()
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker_url(),
            "CARDROOM_VAR_DIR": str(settings.VAR_DIR),
            "CARDROOM_MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "CARDROOM_SANDBOX": mode,
            "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS": "1" if mode == "none" else "0",
            "SECRET_KEY": "tests-only-not-a-secret",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "INFO",
        }
    )
    env.update({k: str(v) for k, v in extra.items()})
    return env


# -- workers ----------------------------------------------------------------------


def _die_with_parent() -> None:  # runs in the child before exec
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: no orphan if pytest dies
    except Exception:
        pass


class CeleryWorker:
    """One ``celery -A config worker`` process (prefork, concurrency 1)."""

    def __init__(self, name: str, logfile: Path, env: dict[str, str], pool: str = "prefork", queues: str | None = None):
        self.name = name
        # None: no -Q, as `celery -A config worker` runs (every queue).
        self.queues = queues
        self.logfile = logfile
        self.env = env
        self.pool = pool
        self.proc: subprocess.Popen | None = None

    @property
    def node(self) -> str:
        return f"{self.name}@"

    def start(self) -> CeleryWorker:
        argv = [
            CELERY, "-A", "config", "worker",
            f"--pool={self.pool}", "--concurrency=1", *(["-Q", self.queues] if self.queues else []),
            "-n", f"{self.name}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-l", "INFO", "--logfile", str(self.logfile),
        ]  # fmt: skip
        self.logfile.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(self.logfile.with_suffix(".out"), "wb")
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker {self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            if " ready." in self.log():
                return self
            time.sleep(0.1)
        raise AssertionError(f"worker {self.name} not ready after {READY_TIMEOUT} s:\n{self.log_tail()}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once (a lost machine)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)

    def stop(self, timeout: float = 15.0) -> None:
        """Warm shutdown (SIGTERM), SIGKILL after ``timeout``."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._out.close()

    def log(self) -> str:
        text = ""
        for path in (self.logfile, self.logfile.with_suffix(".out")):
            try:
                text += path.read_text(errors="replace")
            except FileNotFoundError:
                pass
        return text

    def log_tail(self, chars: int = 6000) -> str:
        return f"--- log of worker {self.name} ---\n{self.log()[-chars:]}"


class Workers:
    """Starts workers for one test and stops them all at its end."""

    def __init__(self, logdir: Path):
        self.logdir = logdir
        self.started: list[CeleryWorker] = []

    def start(self, name: str, pool: str = "prefork", queues: str | None = None, **env: str) -> CeleryWorker:
        """``queues``: comma-separated, as ``-Q`` takes them (default: none
        given, so every queue in CELERY_TASK_QUEUES)."""
        worker = CeleryWorker(name, self.logdir / f"worker-{name}.log", worker_env(**env), pool, queues)
        self.started.append(worker)
        return worker.start()

    def logs(self) -> str:
        return "\n".join(w.log_tail() for w in self.started)

    def stop_all(self) -> None:
        for worker in self.started:
            worker.stop()


@pytest.fixture(name="celery_workers")
def celery_workers_fixture(transactional_db, tmp_path):
    """Start real workers with ``celery_workers.start(name, **env)``.
    (Depends on transactional_db: what the test writes is committed, so the
    workers see it; they are stopped before the database is flushed.)"""
    require_redis_broker()
    if sandbox_mode() != "bwrap":
        warnings.warn(
            "the bubblewrap sandbox does not work here (python -m cardroom.sandbox says why): "
            "the worker tests run uploaded bots with CARDROOM_SANDBOX=none",
            stacklevel=1,
        )
    flush_broker()
    workers = Workers(tmp_path)
    try:
        yield workers
    finally:
        workers.stop_all()
        flush_broker()


@contextlib.contextmanager
def beat_process(folder: Path, **env: str):
    """The real scheduler (`celery -A config beat`) for the length of the
    block, with ``env`` (its intervals, say) over worker_env()'s; yields a
    function that returns the end of its log."""
    log = folder / "beat.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [CELERY, "-A", "config", "beat", "-l", "INFO", "-s", str(folder / "beat-schedule"), "--pidfile="],
            cwd=ROOT, env=worker_env(**env), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )  # fmt: skip
        try:
            yield lambda: log.read_text(errors="replace")[-4000:]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# -- waiting ----------------------------------------------------------------------


def wait_until(predicate: Callable[[], object], timeout: float, what: str, workers: Workers | None = None, interval: float = 0.2):
    """Poll ``predicate`` until it returns something truthy (returned)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{workers.logs() if workers else ''}")
        time.sleep(interval)


def play_ladder_round(workers: Workers, settings, timeout: float, queue_target: int = 2) -> list[int]:
    """Start a fresh round of ladder matches (the old ones deleted, the
    queues topped up to ``queue_target``; ``settings`` is pytest-django's
    fixture, so the target is undone after the test) and wait until every
    one has finished; a failed or cancelled one fails at once with its error."""
    from ladder.models import Match
    from ladder.services import matchmaking

    Match.objects.filter(kind=Match.Kind.LADDER).delete()
    settings.CARDROOM_QUEUE_TARGET = queue_target
    created = matchmaking.top_up_queues()
    assert created

    def all_done():
        statuses = set(Match.objects.filter(pk__in=created).values_list("status", flat=True))
        assert not statuses & {"failed", "cancelled"}, list(Match.objects.filter(pk__in=created).values("pk", "status", "error"))
        return statuses == {"finished"}

    wait_until(all_done, timeout, "the ladder matches", workers)
    return created


def cardroom_verify(path: Path) -> subprocess.CompletedProcess:
    """The real CLI: ``cardroom verify FILE``."""
    return subprocess.run([CARDROOM, "verify", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)


# -- ladders for fast tests ----------------------------------------------------------


def only_ladders(game: str, players: list[int], **limits: int):
    """Deactivate every ladder but ``game``'s with these player counts, and
    give those short time limits. Returns the active ladders by player count."""
    from ladder.models import Ladder

    Ladder.objects.exclude(game=game, players_per_match__in=players).update(active=False)
    kept = Ladder.objects.filter(game=game, players_per_match__in=players)
    kept.update(active=True, **limits)
    return {lad.players_per_match: lad for lad in kept}
