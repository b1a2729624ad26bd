"""A worker plays match after match on one database connection (Celery's
Django fix-up would otherwise open a new PostgreSQL backend for every task:
a fork and a cold catalogue cache on the server that all workers share), and
a connection the server cut between two matches costs nothing: it is
noticed before the next match and replaced, with no failed attempt."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from ladder.models import BotVersion, Match
from ladder.services import match_kinds
from ladder.services import matches as match_services
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    celery_workers_fixture,
    only_ladders,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL backends (SQLite has no server)")


def make_matches(n: int) -> list[int]:
    ladder = only_ladders("allegory", [2])[2]
    greedy = BotVersion.objects.select_related("bot").get(bot__game="allegory", bot__name="greedy", status="active")
    rand = BotVersion.objects.select_related("bot").get(bot__game="allegory", bot__name="random", status="active")
    return [match_services.create_match(ladder=ladder, versions=[greedy, rand], seed=100 + i).pk for i in range(n)]


def my_backend() -> int:
    with connection.cursor() as c:
        c.execute("SELECT pg_backend_pid()")
        return c.fetchone()[0]


def backends(mine: set[int]) -> set[tuple[int, str]]:
    """The sessions on the test database now, but this test's own ``mine``
    and this thread's: (pid, start time)."""
    with connection.cursor() as c:
        c.execute(
            "SELECT pid, backend_start::text FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {row for row in c.fetchall() if row[0] not in mine}


class BackendWatcher(threading.Thread):
    """Every session that exists at some moment of the run, polled every
    20 ms (a match takes far longer, so a backend per match cannot hide)."""

    def __init__(self, mine: set[int]):
        super().__init__(daemon=True)
        self.mine = mine
        self.seen: set[tuple[int, str]] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.wait(0.02):
                self.seen |= backends(self.mine)
        finally:
            connection.close()


def finished(ids: list[int]) -> bool:
    return Match.objects.filter(pk__in=ids, status=Match.Status.FINISHED).count() == len(ids)


def test_a_worker_plays_many_matches_on_one_connection(celery_workers):
    ids = make_matches(8)
    worker = celery_workers.start("steady")
    match_kinds.send_match(ids[0])
    wait_until(lambda: finished(ids[:1]), 60, "the first match", celery_workers)
    mine = {my_backend()}
    settled = backends(mine)  # the worker's sessions once it has played: its pool process, its heartbeat

    watcher = BackendWatcher(mine)
    watcher.start()
    for pk in ids[1:]:
        match_kinds.send_match(pk)
    wait_until(lambda: finished(ids), 120, "seven more matches", celery_workers)
    watcher.stop.set()
    watcher.join()

    new = watcher.seen - settled
    assert not new, f"{len(new)} new database sessions for 7 matches ({sorted(new)}); the worker had {sorted(settled)}"
    assert worker.alive()


def test_a_connection_cut_between_matches_is_replaced_before_the_next(celery_workers):
    ids = make_matches(3)
    celery_workers.start("resilient")
    match_kinds.send_match(ids[0])
    wait_until(lambda: finished(ids[:1]), 60, "the first match", celery_workers)

    # The server ends every session of the worker (a restart, a failover, an idle timeout).
    with connection.cursor() as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
    for pk in ids[1:]:
        match_kinds.send_match(pk)
    wait_until(lambda: finished(ids), 60, "the matches after the cut", celery_workers)

    # Played at the first attempt: the dead connection was never used for a match.
    assert list(Match.objects.filter(pk__in=ids).order_by("pk").values_list("attempts", "error_kind")) == [(1, "")] * 3
