"""Fault injection against real processes: Celery workers and the Celery
scheduler (beat) on a private PostgreSQL cluster and a private Redis, both
started, stopped and restarted by these tests (never the machine's own).

(a) a worker SIGKILLed in the middle of a match: another worker plays it
    again; one result, one rating change per seat;
(b) Redis restarted (no persistence) while matches are queued: every queued
    message is lost, the reaper's ``resend_stale_queued`` sends them again,
    and every match ends finished;
(c) PostgreSQL stopped for a few seconds while matches play: workers retry
    (lease renewal, heartbeat, recording, Celery's autoretry) and every match
    completes;
(d) a worker frozen (SIGSTOP) in the middle of a match: its lease lapses, the
    reaper re-queues the match, another worker plays it; when the frozen
    worker wakes up its attempt is thrown away.

After each, every match is finished, each with one rating change per seat,
and every ladder's Elo ratings still add up to 1500 times its rated bots.

Recovery is tuned fast through the environment: leases of 3 s (renewed each
second), heartbeats each second, matchmaking and the reaper each second,
stale queued messages re-sent after 4 s.

These need PostgreSQL: on the SQLite pass of scripts/test.sh they skip. The
test process itself uses plain SQL on the private database (its own Django
connection stays on pytest's test database); the Django side of the set-up
runs in a subprocess (tests/ops/fault_tools.py).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from tests.ladder.worker_fixtures import CELERY, CeleryWorker, _die_with_parent, sandbox_mode
from tests.ops.private_services import PrivatePostgres, PrivateRedis, missing_binaries
from tests.ops.procs import ROOT, kill_marked, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

TEMPLATE = "cardroom_faults_tpl"
ELO_START = Decimal("1500.00")


def _needs_postgres() -> None:
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.skip(
            "the fault-injection tests need PostgreSQL (DATABASE_URL is "
            f"{engine.rsplit('.', 1)[-1]}): they run in the PostgreSQL pass of scripts/test.sh"
        )
    missing = missing_binaries()
    if missing:
        message = f"the fault-injection tests start their own PostgreSQL and Redis: {', '.join(missing)} not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


class Stack:
    """The private PostgreSQL and Redis, and a template database (migrated,
    prepared) that each scenario copies."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.marker = ("CARDROOM_FAULTS_TEST", uuid.uuid4().hex)
        self.pg = PrivatePostgres(self.marker)
        self.redis = PrivateRedis(tmp / "redis", self.marker)
        mode = sandbox_mode()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "faults-tests-not-a-secret",
            "CELERY_BROKER_URL": self.redis.url,
            "CARDROOM_VAR_DIR": str(tmp / "var"),
            "CARDROOM_MEDIA_ROOT": str(tmp / "media"),
            "CARDROOM_SANDBOX": mode,
            "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS": "1" if mode == "none" else "0",
            "CARDROOM_MATCH_LEASE_SECONDS": "3",
            "CARDROOM_HEARTBEAT_SECONDS": "1",
            "CARDROOM_RESEND_STALE_SECONDS": "4",
            "CARDROOM_QUEUE_TARGET": "3",
            "MATCHMAKING_INTERVAL": "1",
            "REAPER_INTERVAL": "1",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "INFO",
            self.marker[0]: self.marker[1],
        }
        self.env.pop("CACHE_URL", None)

    def up(self) -> Stack:
        self.pg.init()
        self.pg.start()
        self.redis.start()
        self.pg.psql(f"CREATE DATABASE {TEMPLATE}")
        self.manage(TEMPLATE, "migrate", "--noinput", "-v", "0")
        self.manage(TEMPLATE, "shell", "-c", "from tests.ops.fault_tools import prepare; prepare()")
        return self

    def manage(self, db: str, *argv: str) -> str:
        env = {**self.env, "DATABASE_URL": self.pg.url(db)}
        result = subprocess.run(
            [sys.executable, "manage.py", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
        )
        assert result.returncode == 0, f"manage.py {' '.join(argv)}:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def down(self) -> None:
        # PostgreSQL first, by pg_ctl: once SIGKILLed, its postmaster would be
        # a zombie of this process (the sandbox's probe makes it a child
        # subreaper), which pg_ctl takes for alive and waits a minute on.
        self.pg.destroy()
        self.redis.stop()
        kill_marked(self.marker[0] + "=" + self.marker[1])  # whatever else the scenarios left


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    _needs_postgres()
    stack = Stack(tmp_path_factory.mktemp("faults"))
    try:
        yield stack.up()
    finally:
        stack.down()


class Scenario:
    """One scenario's database (a copy of the template), workers and beat."""

    def __init__(self, stack: Stack, name: str, **env: str):
        self.stack = stack
        self.db = "faults_" + re.sub(r"[^a-z0-9]+", "_", name.lower())[:40]
        self.dir = stack.tmp / self.db
        self.dir.mkdir()
        self.env = {**stack.env, "DATABASE_URL": stack.pg.url(self.db), **{k: str(v) for k, v in env.items()}}
        self.workers: list[CeleryWorker] = []
        self.beat: subprocess.Popen | None = None
        stack.pg.psql(f"DROP DATABASE IF EXISTS {self.db} WITH (FORCE)")
        stack.pg.psql(f"CREATE DATABASE {self.db} TEMPLATE {TEMPLATE}")
        stack.redis.client().flushall()

    # -- processes
    def worker(self, name: str) -> CeleryWorker:
        worker = CeleryWorker(name, self.dir / f"worker-{name}.log", self.env)
        self.workers.append(worker)
        return worker.start()

    def start_beat(self) -> None:
        self._beat_out = open(self.dir / "beat.log", "wb")
        self.beat = subprocess.Popen(
            [CELERY, "-A", "config", "beat", "--loglevel", "INFO", "--schedule", str(self.dir / "beat-schedule")],
            cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=self._beat_out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )  # fmt: skip

    def stop(self) -> None:
        if self.beat is not None and self.beat.poll() is None:
            os.killpg(self.beat.pid, signal.SIGKILL)
            self.beat.wait()
        for worker in self.workers:
            worker.stop(timeout=0)  # the scenario is over: killed, no warm shutdown to wait for

    def logs(self) -> str:
        text = "\n".join(w.log_tail(4000) for w in self.workers)
        beat = self.dir / "beat.log"
        if beat.exists():
            text += "\n--- beat ---\n" + beat.read_text(errors="replace")[-2000:]
        return text

    def worker_logs(self) -> str:
        return "\n".join(w.log() for w in self.workers)

    # -- the database, in plain SQL
    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.stack.pg.url(self.db), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description is not None else []

    def one(self, sql: str, params: tuple = ()):
        found = self.rows(sql, params)
        return found[0] if found else None

    def match(self, match_id: int) -> dict:
        cols = ("id", "status", "attempts", "worker", "error", "error_kind", "lease_expires")
        row = self.one(f"SELECT {', '.join(cols)} FROM ladder_match WHERE id = %s", (match_id,))
        return dict(zip(cols, row))

    def count(self, where: str = "TRUE", params: tuple = ()) -> int:
        return self.one(f"SELECT count(*) FROM ladder_match WHERE {where}", params)[0]

    def set_ladders_active(self, active: bool) -> None:
        self.rows("UPDATE ladder_ladder SET active = %s WHERE game = 'allegory' AND players_per_match = 2", (active,))

    def slow_match(self) -> int:
        out = self.stack.manage(self.db, "shell", "-c", "from tests.ops.fault_tools import slow_match; slow_match()")
        return int(re.search(r"match=(\d+)", out).group(1))

    def drain(self, timeout: float = 120) -> None:
        """No new matches; wait until every match is finished."""
        self.set_ladders_active(False)
        wait_for(
            lambda: self.count("status IN ('queued', 'running')") == 0, timeout, "every match to finish", log=self.logs
        )

    # -- the invariants
    def assert_consistent(self) -> None:
        unfinished = self.rows("SELECT id, status, attempts, error_kind, error FROM ladder_match WHERE status <> 'finished'")
        assert unfinished == [], f"matches not finished: {unfinished}\n{self.logs()}"
        wrong = self.rows(
            """
            SELECT m.id, m.num_players,
                   (SELECT count(*) FROM ladder_ratingchange rc WHERE rc.match_id = m.id),
                   (SELECT count(*) FROM ladder_participant p WHERE p.match_id = m.id AND p.score IS NOT NULL)
            FROM ladder_match m WHERE m.kind = 'ladder'
            """
        )
        wrong = [r for r in wrong if not (r[1] == r[2] == r[3])]
        assert wrong == [], f"matches without exactly one result (id, players, rating changes, scored seats): {wrong}"
        games = self.rows(
            "SELECT r.id, r.games, (SELECT count(*) FROM ladder_ratingchange rc WHERE rc.rating_id = r.id) FROM ladder_rating r"
        )
        assert [g for g in games if g[1] != g[2]] == [], "a rating's games differ from its rating changes"
        for ladder_id, total, rated in self.rows("SELECT ladder_id, sum(elo), count(*) FROM ladder_rating GROUP BY ladder_id"):
            assert total == ELO_START * rated, f"ladder {ladder_id}: Elo sum {total} != 1500 x {rated}"
        assert self.count("kind = 'ladder' AND status = 'finished'") > 0


@pytest.fixture
def scenario_factory(stack, request):
    made: list[Scenario] = []

    def make(**env: str) -> Scenario:
        sc = Scenario(stack, request.node.name, **env)
        made.append(sc)
        return sc

    yield make
    for sc in made:
        sc.stop()
        try:
            stack.pg.psql(f"DROP DATABASE IF EXISTS {sc.db} WITH (FORCE)")
        except Exception:
            pass


def running_on(sc: Scenario, match_id: int, worker: CeleryWorker):
    m = sc.match(match_id)
    return m["status"] == "running" and m["worker"].startswith(worker.node) and m


def result_count(sc: Scenario, match_id: int) -> tuple[int, int]:
    changes = sc.one("SELECT count(*) FROM ladder_ratingchange WHERE match_id = %s", (match_id,))[0]
    scored = sc.one("SELECT count(*) FROM ladder_participant WHERE match_id = %s AND score IS NOT NULL", (match_id,))[0]
    return changes, scored


# -- (a) --------------------------------------------------------------------------


def test_a_worker_killed_mid_match_another_finishes_it_once(scenario_factory):
    sc = scenario_factory()
    sc.set_ladders_active(False)  # just the one slow match
    a = sc.worker("killed")
    sc.start_beat()
    match_id = sc.slow_match()
    wait_for(lambda: running_on(sc, match_id, a), 60, "worker A to start the match", interval=0.1, log=sc.logs)
    time.sleep(1.0)
    assert sc.match(match_id)["attempts"] == 1
    a.kill()  # SIGKILL, the whole process group: a lost machine
    assert result_count(sc, match_id) == (0, 0)

    b = sc.worker("rescuer")

    def finished():
        m = sc.match(match_id)
        assert m["status"] != "failed", m
        return m["status"] == "finished" and m

    done = wait_for(finished, 120, "worker B to play the match again", log=sc.logs)
    assert done["attempts"] == 2 and done["worker"].startswith(b.node)
    assert done["error_kind"] == "worker_lost"
    assert result_count(sc, match_id) == (2, 2)
    assert "reaped expired leases" in sc.worker_logs()
    # A's heartbeat stays behind, and goes stale: the status page shows it dead.
    seen = sc.one("SELECT last_seen FROM ladder_workerheartbeat WHERE name LIKE %s", (a.node + "%",))
    assert seen is not None
    sc.drain()
    sc.assert_consistent()


# -- (b) --------------------------------------------------------------------------


def test_redis_restart_while_matches_are_queued_loses_none(scenario_factory, stack):
    sc = scenario_factory(CARDROOM_QUEUE_TARGET="6")
    sc.worker("only")  # one worker: the queue stays full
    sc.start_beat()
    redis = stack.redis.client()
    wait_for(
        lambda: sc.count("status = 'finished'") >= 2 and redis.llen("celery") >= 3,
        90, "matches finishing, and messages waiting in Redis", log=sc.logs,
    )  # fmt: skip
    stack.redis.restart(down_seconds=1.0)  # no persistence: every message is gone
    lost = [r[0] for r in sc.rows("SELECT id FROM ladder_match WHERE status = 'queued'")]
    assert lost, "nothing was queued when Redis restarted"
    sc.set_ladders_active(False)  # no new matches: the lost ones are what must finish

    def all_lost_ones_finished():
        return sc.count("id = ANY(%s) AND status = 'finished'", (lost,)) == len(lost)

    wait_for(all_lost_ones_finished, 150, f"the queued matches {lost} to finish after the restart", log=sc.logs)
    assert "re-sent stale queued matches" in sc.worker_logs()
    sc.drain()
    sc.assert_consistent()


# -- (c) --------------------------------------------------------------------------


def test_postgres_stopped_briefly_tasks_retry_and_complete(scenario_factory, stack):
    # A longer lease: a 6 s outage is ridden out, not reaped.
    sc = scenario_factory(CARDROOM_MATCH_LEASE_SECONDS="20", CARDROOM_HEARTBEAT_SECONDS="2")
    sc.worker("one")
    sc.worker("two")
    sc.start_beat()
    wait_for(lambda: sc.count("status = 'finished'") >= 3, 90, "three finished matches", log=sc.logs)
    stack.pg.stop("fast")  # every connection cut at once
    try:
        time.sleep(6)
    finally:
        stack.pg.start()
    before = sc.count("status = 'finished'")
    wait_for(lambda: sc.count("status = 'finished'") >= before + 4, 120, "matches finishing after the outage", log=sc.logs)
    logs = sc.worker_logs()
    noticed = ["database unavailable while recording", "heartbeat not written", "lease renewal failed", "Retry in", "OperationalError"]
    assert any(n in logs for n in noticed), "the workers never noticed the outage"
    sc.drain()
    sc.assert_consistent()
    assert sc.count("status = 'failed'") == 0


# -- (d) --------------------------------------------------------------------------


def test_a_frozen_worker_s_lease_lapses_and_the_reaper_requeues_its_match(scenario_factory):
    sc = scenario_factory()
    sc.set_ladders_active(False)
    a = sc.worker("frozen")
    sc.start_beat()
    match_id = sc.slow_match()
    wait_for(lambda: running_on(sc, match_id, a), 60, "worker A to start the match", interval=0.1, log=sc.logs)
    time.sleep(1.0)
    os.killpg(a.pid, signal.SIGSTOP)  # hung: alive, holding the match, renewing nothing
    try:
        b = sc.worker("rescuer")
        reaped = wait_for(
            lambda: (m := sc.match(match_id))["attempts"] == 2 and m, 60, "the reaper to re-queue the match", log=sc.logs
        )
        assert f"the lease of worker {a.node}" in reaped["error"] or reaped["status"] == "finished"
        assert reaped["error_kind"] == "worker_lost"  # its heartbeat froze with it
        done = wait_for(
            lambda: (m := sc.match(match_id))["status"] == "finished" and m, 120, "worker B to finish it", log=sc.logs
        )
        assert done["worker"].startswith(b.node)
    finally:
        os.killpg(a.pid, signal.SIGCONT)
    # A wakes up, finds its lease gone, and its attempt counts for nothing.
    wait_for(lambda: "'lease lost'" in a.log(), 60, "worker A to drop its attempt", log=sc.logs)
    assert sc.match(match_id)["attempts"] == 2
    assert result_count(sc, match_id) == (2, 2)
    sc.drain()
    sc.assert_consistent()
