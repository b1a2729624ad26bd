"""Observability, in-process: the status figures and their two views, the
heartbeat thread, the platform-failure kinds, and match ids on log lines."""

from __future__ import annotations

import json
import logging
import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils import timezone

from ladder.logging import JsonFormatter, match_context
from ladder.models import BotVersion, Match, WorkerHeartbeat
from ladder.services import match_kinds, ops, reaper
from ladder.services import matches as m
from tests.ladder import factories

URLS = override_settings(ROOT_URLCONF="tests.ops.urls")
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """No task message leaves these tests (re-queueing sends one)."""
    monkeypatch.setattr(match_kinds, "send_match", lambda match_id, countdown=0: None)
    monkeypatch.setattr(ops, "broker_queue_length", lambda queue="celery": 3)
    cache.clear()


def builtin(game: str, name: str) -> BotVersion:
    return BotVersion.objects.select_related("bot").get(bot__game=game, bot__name=name, bot__builtin=True, status="active")


def new_match(seed: int = 1) -> Match:
    ladder = factories.ladder("allegory", 2)
    return m.create_match(ladder=ladder, versions=[builtin("allegory", "greedy"), builtin("allegory", "random")], seed=seed)


def staff_client() -> Client:
    user = factories.user()
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def beat(name: str, seconds_ago: float = 0, match: Match | None = None, done: int = 0) -> WorkerHeartbeat:
    now = timezone.now()
    return WorkerHeartbeat.objects.create(
        name=name, hostname="host-a", pid=4242, started=now - timedelta(minutes=5),
        last_seen=now - timedelta(seconds=seconds_ago), current_match=match, matches_done=done, sandbox="bwrap",
    )  # fmt: skip


# -- the figures ----------------------------------------------------------------------


def test_status_counts_queue_running_rates_failures_workers_and_ladders():
    ladder = factories.ladder("allegory", 2)
    bots = [builtin("allegory", "greedy").bot, builtin("allegory", "random").bot]
    for seed in range(3):
        factories.finished_match(ladder, bots, seed=seed)
    old = factories.finished_match(ladder, bots, seed=9)
    Match.objects.filter(pk=old.pk).update(finished=timezone.now() - timedelta(minutes=30))
    queued = [new_match(seed) for seed in (10, 11)]
    running = factories.running_match(ladder, bots, seed=12)
    failed = new_match(13)
    Match.objects.filter(pk=failed.pk).update(status="failed", error_kind="sandbox", finished=timezone.now(), attempts=3)
    retried = new_match(14)
    Match.objects.filter(pk=retried.pk).update(error_kind="worker_lost", started=timezone.now())
    beat("w1@host pid 1", 2, running, done=7)
    beat("w2@host pid 2", 120)

    doc = ops.status()
    assert doc["matches"]["queued"] == len(queued) + 1  # and the retried one
    assert doc["matches"]["running"] == 1
    assert doc["matches"]["finished_last_minute"] == 3
    assert doc["matches"]["finished_last_hour"] == 4
    assert doc["matches"]["per_minute_last_hour"] == round(4 / 60, 2)
    assert doc["matches"]["failed_last_24h"] == 1
    assert doc["failures_last_24h"]["sandbox"] == {"total": 1, "failed": 1}
    assert doc["failures_last_24h"]["worker_lost"] == {"total": 1, "failed": 0}
    assert set(doc["failures_last_24h"]) >= set(Match.ErrorKind.values)
    assert doc["workers"] == {"alive": 1, "dead": 1, "busy": 1, "alive_after_seconds": ops.ALIVE_SECONDS}
    assert doc["broker"]["queue_length"] == 3
    assert doc["broker"]["scheduler_queue_length"] == 3
    row = next(lad for lad in doc["ladders"] if lad["id"] == ladder.pk)
    assert row["queued"] == 3 and row["running"] == 1 and row["finished_last_hour"] == 4

    detailed = ops.status(with_workers=True)["workers"]["list"]
    assert [(w["name"], w["alive"], w["current_match"], w["matches_done"]) for w in detailed] == [
        ("w1@host pid 1", True, running.pk, 7),
        ("w2@host pid 2", False, None, 0),
    ]


@URLS
def test_status_json_is_public_and_counts_only():
    beat("secret-host@node pid 99", 1)
    r = Client().get("/ops/status.json")
    assert r.status_code == 200 and r["Content-Type"] == "application/json"
    assert "no-cache" in r["Cache-Control"] or "max-age=0" in r["Cache-Control"]
    body = r.json()
    assert body["workers"]["alive"] == 1 and "list" not in body["workers"]
    assert "secret-host" not in r.content.decode() and "4242" not in r.content.decode()
    assert {"matches", "failures_last_24h", "workers", "ladders", "broker"} <= set(body)

    staff = staff_client().get("/ops/status.json").json()
    assert staff["workers"]["list"][0]["name"] == "secret-host@node pid 99"
    assert Client().post("/ops/status.json").status_code == 405


@URLS
def test_status_page_is_for_staff_only():
    anonymous = Client().get("/ops/status/")
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]
    someone = Client()
    someone.force_login(factories.user())
    assert someone.get("/ops/status/").status_code == 302

    match = new_match()
    beat("w1@host pid 1", 1, match, done=3)
    beat("w9@gone pid 9", 300)
    page = staff_client().get("/ops/status/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "w1@host pid 1" in html and f"match {match.pk}" in html and "dead?" in html
    for kind in Match.ErrorKind.values:
        assert f"<td>{kind}</td>" in html


# -- platform failure kinds ---------------------------------------------------------------


def expire(match: Match) -> None:
    Match.objects.filter(pk=match.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))


def test_the_reaper_tells_a_lost_worker_from_a_live_one(settings):
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 5
    dead, hung = new_match(1), new_match(2)
    assert m.claim_match(dead.pk, worker="gone@host pid 1")
    assert m.claim_match(hung.pk, worker="alive@host pid 2")
    beat("gone@host pid 1", 120)  # stopped beating long before its lease lapsed
    beat("alive@host pid 2", 0)  # beats on, but stopped renewing the lease
    expire(dead)
    expire(hung)
    assert sorted(reaper.reap_expired_leases()) == sorted([dead.pk, hung.pk])
    dead.refresh_from_db()
    hung.refresh_from_db()
    assert dead.status == hung.status == Match.Status.QUEUED
    assert dead.error_kind == "worker_lost" and "heartbeat stopped" in dead.error
    assert hung.error_kind == "lease_expired" and "still beats" in hung.error

    never_beat = new_match(3)
    assert m.claim_match(never_beat.pk, worker="unknown")
    expire(never_beat)
    reaper.reap_expired_leases()
    assert Match.objects.get(pk=never_beat.pk).error_kind == "worker_lost"


@pytest.mark.django_db(transaction=True)
def test_platform_failures_are_classified(settings, monkeypatch):
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 5
    settings.CARDROOM_SANDBOX = "bogus"
    sandbox = new_match(1)
    assert m.run_queued_match(sandbox.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    assert Match.objects.get(pk=sandbox.pk).error_kind == "sandbox"

    settings.CARDROOM_SANDBOX = "none"
    monkeypatch.setenv("CARDROOM_BOT_PYTHON", "/nonexistent/python3")
    start = new_match(2)
    assert m.run_queued_match(start.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    assert Match.objects.get(pk=start.pk).error_kind == "bot_start"
    monkeypatch.delenv("CARDROOM_BOT_PYTHON")

    def database_gone(*args, **kwargs):
        from django.db import OperationalError

        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(m, "play", database_gone)
    db = new_match(3)
    assert m.run_queued_match(db.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    assert Match.objects.get(pk=db.pk).error_kind == "database"

    monkeypatch.setattr(m, "play", lambda *a, **k: 1 / 0)
    bug = new_match(4)
    assert m.run_queued_match(bug.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    row = Match.objects.get(pk=bug.pk)
    assert row.error_kind == "internal" and "ZeroDivisionError" in row.error

    monkeypatch.undo()
    settings.CARDROOM_SANDBOX = "none"
    monkeypatch.setattr(match_kinds, "send_match", lambda match_id, countdown=0: None)
    assert m.run_queued_match(bug.pk, worker="w") == "finished"  # the retry plays it
    row = Match.objects.get(pk=bug.pk)
    assert row.status == Match.Status.FINISHED and row.error == "" and row.error_kind == "internal"  # kept for the record


def test_resend_threshold_comes_from_the_settings(settings):
    # config/settings.py reads CARDROOM_RESEND_STALE_SECONDS from the environment (default 120).
    settings.CARDROOM_RESEND_STALE_SECONDS = 9
    assert reaper.resend_stale_seconds() == 9


# -- heartbeats ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_heartbeat_thread_reports_the_match_and_leaves_on_a_clean_stop():
    match = new_match()
    hb = ops.start_heartbeat(name="test@node pid 1", sandbox="bwrap", interval=0.2)
    try:
        assert ops.start_heartbeat() is hb  # one per process
        row = _wait(lambda: WorkerHeartbeat.objects.filter(name="test@node pid 1").first())
        assert row.sandbox == "bwrap" and row.current_match_id is None and row.matches_done == 0
        first_seen = row.last_seen
        ops.heartbeat_match_started(match.pk)
        _wait(lambda: WorkerHeartbeat.objects.filter(name=hb.worker, current_match=match).exists())
        ops.heartbeat_match_ended(match.pk, finished=True)
        row = _wait(lambda: WorkerHeartbeat.objects.filter(name=hb.worker, current_match=None, matches_done=1).first())
        assert row.last_seen > first_seen
        assert ops.worker_alive(hb.worker)
        assert ops.beating_after(hb.worker, timezone.now())
    finally:
        ops.stop_heartbeat()
    assert not WorkerHeartbeat.objects.filter(name="test@node pid 1").exists()
    assert ops.current_heartbeat() is None
    ops.heartbeat_match_started(match.pk)  # no heartbeat here: a no-op


def _wait(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_dead_workers_are_forgotten_after_a_day():
    beat("old@host pid 1", 2 * 86400)
    beat("new@host pid 2", 10)
    assert ops.forget_dead_workers() == 1
    assert list(WorkerHeartbeat.objects.values_list("name", flat=True)) == ["new@host pid 2"]


# -- logs ----------------------------------------------------------------------------


def test_log_lines_carry_the_match_id():
    formatter = JsonFormatter()

    def line(msg, **extra):
        record = logging.LogRecord("cardroom.runner", logging.INFO, __file__, 1, msg, None, None)
        for k, v in extra.items():
            setattr(record, k, v)
        return json.loads(formatter.format(record))

    assert "match_id" not in line("idle")
    with match_context(41):
        assert line("a bot wrote something")["match_id"] == 41
        assert line("explicit wins", match_id=7)["match_id"] == 7
    assert "match_id" not in line("after")
    celery_line = line("Task received", data={"id": "x", "name": "ladder.tasks.play_match", "args": "(17,)", "kwargs": "{}"})
    assert celery_line["match_id"] == 17 and celery_line["data"]["name"] == "ladder.tasks.play_match"
    assert "match_id" not in line("Task received", data={"name": "ladder.tasks.top_up_queues", "args": "()"})


def test_gunicorn_access_lines_are_json_with_the_match_id():
    import io
    from datetime import timedelta as td
    from types import SimpleNamespace

    from gunicorn.config import Config

    from ladder.hosting.gunicorn import JsonLogger

    cfg = Config()
    cfg.set("accesslog", "-")
    logger = JsonLogger(cfg)
    stream = io.StringIO()
    for handler in logger.access_log.handlers:
        handler.setStream(stream)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/matches/17/replay/", "QUERY_STRING": "", "REMOTE_ADDR": "127.0.0.1"}
    resp = SimpleNamespace(status="200 OK", status_code=200, sent=1234, headers=[], response_length=1234)
    req = SimpleNamespace(headers=[], method="GET", path="/api/matches/17/replay/", query="", version=(1, 1))
    logger.access(resp, req, environ, td(milliseconds=12))
    doc = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert doc["logger"] == "gunicorn.access" and doc["status"] == 200 and doc["match_id"] == 17
    assert doc["path"] == "/api/matches/17/replay/" and doc["ms"] == 12.0
