"""The match lifecycle in-process (fast): claim with a lease, record once,
reap expired leases, platform failures that never become results, the
unsandboxed-uploads refusal, stale-message re-sending, a database that goes
away while a result is recorded, and validation's verdicts.

Tests that run a match through ``run_queued_match`` (its lease keeper uses a
second database connection), use threads, or break the connection are
transactional: the services commit, run real bot processes (the plain
launcher, or in-process built-ins) and send real task messages to the broker
in CELERY_BROKER_URL. The rest run inside a test transaction (faster), with
on-commit callbacks captured and executed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from cardroom.runner import run_match
from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating, RatingChange
from ladder.selectors import match_limits
from ladder.services import bots as bot_services
from ladder.services import leases, reaper, validation
from ladder.services import matches as m
from tests.ladder import factories
from tests.ladder.worker_fixtures import BOTS

committed = pytest.mark.django_db(transaction=True)
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def broker():
    """The messages these tests send land in the test broker's database;
    emptied before and after."""
    from django.conf import settings

    redis_broker = settings.CELERY_BROKER_URL.startswith("redis")
    if redis_broker:
        from tests.ladder.worker_fixtures import flush_broker

        flush_broker()
    yield redis_broker
    if redis_broker:
        flush_broker()


def queued(broker_is_redis: bool) -> int | None:
    from tests.ladder.worker_fixtures import queue_length

    return queue_length() if broker_is_redis else None


def builtin(game: str, name: str) -> BotVersion:
    return BotVersion.objects.select_related("bot").get(bot__game=game, bot__name=name, bot__builtin=True, status="active")


def builtin_match(ladder: Ladder | None = None, seed: int = 11) -> Match:
    ladder = ladder or factories.ladder("allegory", 2)
    return m.create_match(ladder=ladder, versions=[builtin(ladder.game, "greedy"), builtin(ladder.game, "random")], seed=seed)


def owner():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create(username=factories.unique("owner"))  # no password: no slow hashing


def uploaded_version(game: str = "allegory", data: bytes | None = None, filename: str = "bot.py", activate: bool = True) -> BotVersion:
    b = bot_services.create_bot(owner=owner(), game=game, name=factories.unique("bot-"))
    v = bot_services.upload_version(bot=b, filename=filename, data=data or factories.bot_program())
    if activate:
        bot_services.activate_version(v)
    return BotVersion.objects.select_related("bot").get(pk=v.pk)


def in_process_record(match: Match):
    """The match played by in-process built-ins (no launcher at all)."""
    return run_match(match.game, ["builtin:greedy", "builtin:random"], seed=match.seed, options=match.options, match_id=str(match.pk))


def expire(match: Match) -> None:
    Match.objects.filter(pk=match.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))


def nothing_recorded(match: Match) -> None:
    assert not Participant.objects.filter(match=match, score__isnull=False).exists()
    assert not Participant.objects.filter(match=match).exclude(forfeit_reason="").exists()
    assert not RatingChange.objects.filter(match=match).exists()
    assert not Match.objects.get(pk=match.pk).replay


def games(ladder: Ladder) -> dict[int, int]:
    return dict(Rating.objects.filter(ladder=ladder).values_list("bot_id", "games"))


# -- claims and leases ------------------------------------------------------------


def test_claim_is_exclusive(settings):
    match = builtin_match()
    claim = m.claim_match(match.pk, worker="w1")
    assert claim is not None
    assert m.claim_match(match.pk, worker="w2") is None
    match.refresh_from_db()
    assert (match.status, match.attempts, match.worker, match.lease_token) == ("running", 1, "w1", claim.token)
    lease = (match.lease_expires - timezone.now()).total_seconds()
    assert 0 < lease <= settings.CARDROOM_MATCH_LEASE_SECONDS
    assert leases.renew_lease(claim)
    assert not leases.renew_lease(m.Claim(match.pk, "not-the-token"))


@committed
def test_concurrent_claims_only_one_wins():
    match = builtin_match()
    barrier = threading.Barrier(4)
    results = []

    def claim(i):
        try:
            barrier.wait()
            results.append(m.claim_match(match.pk, worker=f"w{i}"))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert len([c for c in results if c is not None]) == 1
    assert Match.objects.get(pk=match.pk).attempts == 1


def test_a_stale_claim_records_nothing_and_a_result_counts_once():
    match = builtin_match()
    ladder = match.ladder
    before = games(ladder)
    stale = m.claim_match(match.pk, worker="first")
    record = in_process_record(match)
    expire(match)
    assert reaper.reap_expired_leases() == [match.pk]
    fresh = m.claim_match(match.pk, worker="second")
    assert fresh is not None and fresh.token != stale.token

    assert m.record_result(stale, record) is False  # the lease was lost: nothing written
    nothing_recorded(match)
    assert Match.objects.get(pk=match.pk).status == Match.Status.RUNNING
    assert games(ladder) == before

    assert m.record_result(fresh, record) is True
    assert m.record_result(fresh, record) is False  # the same result again: once only
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 2 and match.replay
    assert RatingChange.objects.filter(match=match).count() == 2
    after = games(ladder)
    for p in match.participants.all():
        assert after[p.bot_id] == before.get(p.bot_id, 0) + 1


def test_the_reaper_requeues_an_expired_lease_then_fails_the_match(settings, broker, django_capture_on_commit_callbacks):
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 3
    match = builtin_match()
    healthy = builtin_match(seed=12)
    assert m.claim_match(healthy.pk, worker="alive") is not None  # its lease is fresh: left alone
    for attempt in (1, 2, 3):
        assert m.claim_match(match.pk, worker=f"doomed-{attempt}") is not None
        expire(match)
        with django_capture_on_commit_callbacks(execute=True):
            assert reaper.reap_expired_leases() == [match.pk]
        match.refresh_from_db()
        assert match.attempts == attempt
        assert "lease of worker doomed-" in match.error
        assert match.lease_token == "" and match.lease_expires is None
        if attempt < 3:
            assert match.status == Match.Status.QUEUED
            assert match.enqueued is not None  # a new message went out
        else:
            assert match.status == Match.Status.FAILED and match.finished is not None
    assert queued(broker) in (None, 2)  # re-queued twice, failed the third time
    assert Match.objects.get(pk=healthy.pk).status == Match.Status.RUNNING
    nothing_recorded(match)
    assert reaper.reap_expired_leases() == []


@committed
def test_a_platform_failure_is_retried_and_never_scored(settings, broker):
    settings.CARDROOM_SANDBOX = "bogus"
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 2
    match = builtin_match()
    before = games(match.ladder)

    outcome = m.run_queued_match(match.pk, worker="w")
    assert outcome == m.RunOutcome.PLATFORM_FAILURE
    match.refresh_from_db()
    assert match.status == Match.Status.QUEUED and match.attempts == 1
    assert "not a sandbox mode" in match.error
    assert match.enqueued > timezone.now()  # sent again, after a back-off
    nothing_recorded(match)
    assert games(match.ladder) == before

    assert m.run_queued_match(match.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED and match.attempts == 2
    nothing_recorded(match)
    assert games(match.ladder) == before
    assert queued(broker) in (None, 1)  # one message (with a countdown) after the first failure, none after the last


@committed
def test_a_bot_that_cannot_even_be_started_is_a_platform_failure(settings, monkeypatch):
    """An OSError from spawning the process is ours, not the bot's crash."""
    settings.CARDROOM_SANDBOX = "none"
    monkeypatch.setenv("CARDROOM_BOT_PYTHON", "/nonexistent/python3")
    match = builtin_match()
    assert m.run_queued_match(match.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    match.refresh_from_db()
    assert match.status == Match.Status.QUEUED and "could not start a bot process" in match.error
    nothing_recorded(match)


@committed
def test_no_sandbox_refuses_uploaded_bots_but_plays_builtins(settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = False
    ladder = factories.ladder("allegory", 2)
    mine = uploaded_version()
    refused = m.create_match(ladder=ladder, versions=[mine, builtin("allegory", "random")])
    assert m.run_queued_match(refused.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    refused.refresh_from_db()
    assert refused.status == Match.Status.QUEUED
    assert "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS" in refused.error and mine.bot.name in refused.error
    nothing_recorded(refused)

    builtins_only = builtin_match(ladder)
    assert m.run_queued_match(builtins_only.pk, worker="w") == "finished"
    assert RatingChange.objects.filter(match=builtins_only).count() == 2

    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True  # said in so many words: allowed
    allowed = m.create_match(ladder=ladder, versions=[mine, builtin("allegory", "greedy")])
    assert m.run_queued_match(allowed.pk, worker="w") == "finished"
    allowed.refresh_from_db()
    assert allowed.status == Match.Status.FINISHED and allowed.num_events > 0


@committed
def test_with_no_sandbox_policy_registered_no_bot_starts(monkeypatch):
    """The worker side's sandbox policy (ladder.worker.sandbox) is what
    starts bots; without one, a match is a platform failure (retried,
    never scored), not a match played outside the sandbox."""
    monkeypatch.setattr(m, "_launcher_policy", None)
    match = builtin_match()
    assert m.run_queued_match(match.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    match.refresh_from_db()
    assert match.status == Match.Status.QUEUED and match.error_kind == Match.ErrorKind.SANDBOX
    assert "no sandbox policy" in match.error
    nothing_recorded(match)


def test_resend_stale_queued(broker):
    old = builtin_match(seed=1)
    fresh = builtin_match(seed=2)
    running = builtin_match(seed=3)
    long_ago = timezone.now() - timedelta(minutes=10)
    Match.objects.filter(pk__in=[old.pk, running.pk]).update(enqueued=long_ago)
    Match.objects.filter(pk=fresh.pk).update(enqueued=timezone.now())
    m.claim_match(running.pk, worker="w")
    never_sent = builtin_match(seed=4)
    Match.objects.filter(pk=never_sent.pk).update(enqueued=None, created=long_ago)

    assert reaper.resend_stale_queued(older_than_seconds=120) == [old.pk, never_sent.pk]
    assert Match.objects.get(pk=old.pk).enqueued > long_ago
    assert queued(broker) in (None, 2)
    assert reaper.resend_stale_queued(older_than_seconds=120) == []  # just sent


def _break_connection_while(record_attempt):
    """Make the database unusable for this process for a moment."""
    if connection.vendor == "postgresql":
        import psycopg

        pid = connection.cursor().connection.info.backend_pid
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        params.pop("prepare_threshold", None)
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])  # a server-side kill, as in a restart
        return record_attempt()
    # SQLite: another process holds the write lock; our first attempt gives up quickly.
    connection.ensure_connection()
    connection.connection.execute("PRAGMA busy_timeout = 100")
    holder = sqlite3.connect(connection.settings_dict["NAME"], timeout=5, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(1.0, holder.close)  # closing ends its transaction: the lock goes
    release.start()
    try:
        return record_attempt()
    finally:
        release.cancel()
        holder.close()


@committed
def test_database_away_while_recording_is_retried_not_replayed(caplog):
    match = builtin_match()
    claim = m.claim_match(match.pk, worker="w")
    record = in_process_record(match)
    with caplog.at_level(logging.WARNING, logger="cardroom.matches"):
        assert _break_connection_while(lambda: m.record_result_retrying(claim, record, first_delay=0.2)) is True
    assert any("database unavailable while recording" in r.getMessage() for r in caplog.records)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 1
    assert RatingChange.objects.filter(match=match).count() == 2


def test_validation_uses_the_strictest_time_limits_of_its_ladders():
    Ladder.objects.filter(game="allegory", players_per_match=2).update(per_move_ms=700, total_ms=90_000)
    Ladder.objects.create(name="fast allegory", game="allegory", players_per_match=2, per_move_ms=300, total_ms=120_000)
    check = Match(kind=Match.Kind.VALIDATION, game="allegory", num_players=2, seed=1)
    limits = match_limits.time_control(check)
    assert (limits.per_move_ms, limits.total_ms) == (300, 90_000)


# -- validation ----------------------------------------------------------------------


@committed
def test_validation_activates_a_good_version_after_every_player_count(settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True
    Ladder.objects.exclude(game="allegory").update(active=False)
    version = uploaded_version(activate=False)
    assert validation.validate_version(version.pk, "w") == BotVersion.Status.ACTIVE
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE and version.bot.current_version_id == version.pk
    assert "passed: 2-player" in version.validation_log and "passed: 4-player" in version.validation_log
    checks = Match.objects.filter(validation_of=version)
    assert sorted(checks.values_list("num_players", flat=True)) == [2, 4]
    # The new version sits last, against the built-ins (one of which twice).
    four = checks.get(num_players=4)
    assert list(four.participants.order_by("seat").values_list("version_id", flat=True))[-1] == version.pk
    assert not RatingChange.objects.filter(match__in=checks).exists()
    assert validation.validate_version(version.pk, "w") == BotVersion.Status.ACTIVE  # a duplicate message: no-op
    assert checks.count() == 2


@committed
def test_validation_fails_a_crashing_version_with_its_stderr(settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True
    Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
    version = uploaded_version(data=(BOTS / "crash_bot.py").read_bytes(), filename="crash_bot.py", activate=False)
    assert validation.validate_version(version.pk, "w") == BotVersion.Status.FAILED
    version.refresh_from_db()
    assert version.status == BotVersion.Status.FAILED
    log = version.validation_log
    assert "forfeit (crash) at event" in log and "what to do:" in log
    assert "crash_bot: about to divide by zero" in log and "ZeroDivisionError" in log
    assert Bot.objects.get(pk=version.bot_id).current_version_id is None


@committed
def test_validation_fails_a_version_that_stops_reading_its_input(settings):
    """A version that shrinks its stdin pipe and stops draining it (while
    still answering) once froze the validating worker in a blocking write:
    now it forfeits on its own clock and the verdict is drawn."""
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True
    # Validation then plays one 2-player match, with this ladder's short
    # clock: the staller's forfeit comes in about a second, not eleven.
    Ladder.objects.exclude(game="allegra", players_per_match=2).update(active=False)
    Ladder.objects.filter(game="allegra", players_per_match=2).update(per_move_ms=300, overage_ms=700)
    staller = Path(__file__).resolve().parents[1] / "sandbox" / "hostile" / "pipe_staller.py"
    version = uploaded_version(game="allegra", data=staller.read_bytes(), filename="pipe_staller.py", activate=False)
    started = time.monotonic()
    assert validation.validate_version(version.pk, "w") == BotVersion.Status.FAILED
    assert time.monotonic() - started < 120
    version.refresh_from_db()
    assert "forfeit (timeout) at event" in version.validation_log, version.validation_log
    assert "did not take its act message in time" in version.validation_log, version.validation_log
    assert "keep reading stdin" in version.validation_log


@committed
def test_validation_under_a_platform_failure_never_fails_the_version(settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = False  # uploads refused: a platform problem
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 1
    Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
    version = uploaded_version(activate=False)
    with pytest.raises(validation.ValidationRetry, match="CARDROOM_ALLOW_UNSANDBOXED_UPLOADS"):
        validation.validate_version(version.pk, "w")
    version.refresh_from_db()
    assert version.status == BotVersion.Status.PENDING
    assert "platform problem" in version.validation_log and "not your bot's fault" in version.validation_log
    assert list(Match.objects.filter(validation_of=version).values_list("status", flat=True)) == ["cancelled"]
    assert validation.validate_version(version.pk, "w", resume=True) == BotVersion.Status.PENDING  # resume never restarts

    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True  # the platform is fixed: the retry starts over
    assert validation.validate_version(version.pk, "w") == BotVersion.Status.ACTIVE
    assert Match.objects.filter(validation_of=version, status="finished").count() == 1


@committed
def test_a_validation_match_reaped_from_a_dead_worker_is_resumed(settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True
    Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
    version = uploaded_version(activate=False)
    check = validation._create_validation_match(version, 2)
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALIDATING)
    assert m.claim_match(check.pk, worker="dead") is not None
    expire(check)
    assert reaper.reap_expired_leases() == [check.pk]  # sends validate_version(resume=True)
    assert validation.validate_version(version.pk, "w", resume=True) == BotVersion.Status.ACTIVE
    check.refresh_from_db()
    assert check.status == Match.Status.FINISHED and check.attempts == 2


def test_revalidate_stale_resends_only_idle_pending_versions(broker):
    idle = uploaded_version(activate=False)
    busy = uploaded_version(activate=False)
    young = uploaded_version(activate=False)
    long_ago = timezone.now() - timedelta(hours=1)
    BotVersion.objects.filter(pk__in=[idle.pk, busy.pk]).update(created=long_ago)
    validation._create_validation_match(busy, 2)  # queued: in hand
    assert validation.revalidate_stale() == [idle.pk]
    assert young.pk not in validation.revalidate_stale()


@committed
def test_lease_keeper_renews_while_a_match_plays(settings):
    settings.CARDROOM_MATCH_LEASE_SECONDS = 3
    match = builtin_match()
    claim = m.claim_match(match.pk, worker="w")
    first = Match.objects.get(pk=match.pk).lease_expires
    keeper = leases.LeaseKeeper(claim)
    keeper.start()
    try:
        time.sleep(2.3)
        assert Match.objects.get(pk=match.pk).lease_expires > first
        assert not keeper.lost
        Match.objects.filter(pk=match.pk).update(lease_token="someone-else")
        deadline = time.monotonic() + 5
        while not keeper.lost and time.monotonic() < deadline:
            time.sleep(0.1)
        assert keeper.lost
    finally:
        keeper.finish()
