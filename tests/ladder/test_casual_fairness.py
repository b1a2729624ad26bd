"""Casual play that scales and is fair (issue 36, finding 1; decisions
202-205): the per-address limit, the fair order in which waiting matches
start, and, on a real casual worker, holders who keep their matches open
by answering once a move clock cannot keep a new person out, and cannot
hold a place past the total clock.

The suite holds 12 matches (4 accounts, 3 each, answering late in each
4 s move clock) on a worker of 64 threads:
the mechanism at a scale this shared machine runs in seconds. The figures
at 200 held matches, the worker's memory among them, are
``benchmarks/casual_load.py --held 200``'s (decision 202)."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from ladder.models import CasualSeat, Match
from ladder.services import casual
from tests.ladder import factories as f
from tests.ladder.worker_fixtures import celery_workers_fixture, wait_until  # noqa: F401 (the fixture celery_workers)

GAME = {"game": "allegory", "num_players": 2, "opponents": ["builtin:greedy"], "seat": 0}
# The holders' game: long enough (about 160 decisions of the person's, the
# first legal action each time) that only a clock ends it.
LONG_GAME = {**GAME, "game": "allegra"}


def start(user, address: str, status: int = 201, game: dict = GAME) -> dict:
    r = Client().post(
        "/api/play/", game, content_type="application/json", HTTP_AUTHORIZATION=f"Token {f.token(user)}", REMOTE_ADDR=address
    )
    assert r.status_code == status, r.content
    return r.json()


# -- without a worker ----------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.usefixtures("fresh_limits")
def test_one_network_holds_a_limited_number_of_open_matches_whatever_its_accounts(settings):
    settings.CARDROOM_CASUAL_OPEN_PER_USER = 3
    settings.CARDROOM_CASUAL_OPEN_PER_ADDRESS = 4
    alice, bob, carol = f.user("alice"), f.user("bob"), f.user("carol")
    first = [start(alice, "203.0.113.7")["id"] for _ in range(3)]
    start(bob, "203.0.113.7")
    refused = start(bob, "203.0.113.7", 429)
    assert refused["quota"] == "casual_matches_per_address" and refused["limit"] == 4
    assert "CARDROOM_CASUAL_OPEN_PER_ADDRESS" in refused["error"] and "203.0.113.7" not in refused["error"]
    start(bob, "203.0.113.8")  # the next address is another network
    # IPv6: one subscriber's /64 is one network, whichever host in it.
    for host in ("1", "2", "3", "4"):
        start(carol if host != "4" else f.user(), f"2001:db8:5:6::{host}")
    start(f.user(), "2001:db8:5:6:ffff::9", 429)
    start(f.user(), "2001:db8:5:7::1")
    # The table keeps a keyed digest, never the address.
    keys = set(CasualSeat.objects.values_list("address_key", flat=True))
    assert len(keys) == 4 and not any("203.0" in k or "2001" in k for k in keys)
    # A match that ends frees its place.
    Match.objects.filter(pk=first[0]).update(status=Match.Status.FINISHED)
    start(bob, "203.0.113.7")


@pytest.mark.django_db
def test_waiting_matches_start_round_robin_across_people_and_networks():
    """fair_order: the person with the fewest running first, then the
    network with the fewest, then each person's turn (a person's second
    match goes behind the first matches of those who were waiting)."""
    alice, bob, carol, dave = (f.user(n) for n in ("alice", "bob", "carol", "dave"))

    def queued(user, address):
        return casual.start(user=user, address=address, **GAME).pk

    a1, a2, a3 = (queued(alice, "192.0.2.1") for _ in range(3))
    b1 = queued(bob, "192.0.2.2")
    c1 = queued(carol, "192.0.2.3")
    assert casual.fair_order() == [a1, a2, a3, b1, c1]  # nobody has played: the oldest first

    # alice's first starts: her next two now wait behind bob's and carol's first.
    Match.objects.filter(pk=a1).update(status=Match.Status.RUNNING, started=timezone.now())
    assert casual.fair_order() == [b1, c1, a2, a3]
    # ... even once her first has ended (her turn came when it started).
    Match.objects.filter(pk=a1).update(status=Match.Status.FINISHED)
    assert casual.fair_order()[:2] == [b1, c1]

    # dave shares carol's network, and carol's match runs: however long he
    # has waited, he comes after those whose network plays nothing...
    Match.objects.filter(pk=c1).update(status=Match.Status.RUNNING, started=timezone.now())
    d1 = queued(dave, "192.0.2.3")
    Match.objects.filter(pk=d1).update(created=timezone.now() - timedelta(hours=1))
    assert casual.fair_order() == [b1, a2, a3, d1]
    # ... but before any person who has a match running.
    Match.objects.filter(pk=a2).update(status=Match.Status.RUNNING, started=timezone.now())
    assert casual.fair_order() == [b1, d1, a3]


# -- on a real casual worker -----------------------------------------------------------------

CASUAL = {"pool": "threads", "queues": "casual"}
# The holders answer each move once half this clock is gone (late, with
# room for a loaded machine's slow request).
MOVE_SECONDS = 4
TOTAL_SECONDS = 20


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="runs on the PostgreSQL pass only")
def test_holders_answering_once_a_move_clock_keep_no_one_out_and_hold_no_place_past_the_total_clock(celery_workers, settings):
    settings.CARDROOM_CASUAL_OPEN_PER_USER = 3
    settings.CARDROOM_CASUAL_OPEN_PER_ADDRESS = 6
    celery_workers.start(
        "casual", **CASUAL, concurrency=64, CARDROOM_CASUAL_POLL_SECONDS="0.05", CARDROOM_MATCH_LEASE_SECONDS="6",
        CARDROOM_CASUAL_MOVE_SECONDS=str(MOVE_SECONDS), CARDROOM_CASUAL_TOTAL_SECONDS=str(TOTAL_SECONDS),
    )  # fmt: skip
    holders = [f.user(f"holder{i}") for i in range(4)]
    held = [start(user, f"198.51.100.{i // 2 + 1}", game=LONG_GAME)["id"] for i, user in enumerate(holders) for _ in range(3)]
    # Each account is at its limit, and each holders' network at its own.
    assert start(holders[0], "198.51.100.1", 429)["quota"] == "casual_matches"
    assert start(f.user("holder9"), "198.51.100.1", 429)["quota"] == "casual_matches_per_address"

    stop = threading.Event()
    answers = []

    def hold():
        # Each page keeps asking for its seat (the idle clock), and each
        # move is answered late in its clock, as the holders did.
        tokens = {u.pk: f.token(u) for u in holders}
        client = Client()
        try:
            hold_on(client, tokens)
        finally:
            connection.close()  # this thread's own

    def hold_on(client, tokens):
        while not stop.wait(0.2):
            now = timezone.now()
            CasualSeat.objects.filter(pk__in=held).update(last_poll=now)
            due = CasualSeat.objects.filter(
                pk__in=held, answer__isnull=True, move_deadline__lt=now + timedelta(seconds=MOVE_SECONDS * 0.5)
            ).exclude(message="")
            for seat in due:
                act = json.loads(seat.message)
                if act["type"] == "act":
                    r = client.post(
                        f"/api/play/{seat.pk}/action/", {"action": act["legal"][0], "decision": seat.decision},
                        content_type="application/json", HTTP_AUTHORIZATION=f"Token {tokens[seat.user_id]}",
                    )  # fmt: skip
                    answers.append(r.status_code)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        wait_until(
            lambda: CasualSeat.objects.filter(pk__in=held, match__status="running").exclude(message="").count() == len(held),
            60, "every held match to await its holder", celery_workers,
        )  # fmt: skip
        time.sleep(MOVE_SECONDS * 1.5)  # through a move clock: each seat answered, nothing forfeited
        assert Match.objects.filter(pk__in=held, status="running").count() == len(held)
        assert answers.count(200) >= len(held), answers

        # A new person's match starts at once: the held ones cost threads, and there are plenty.
        newcomer = f.user("newcomer")
        began = time.monotonic()
        mine = start(newcomer, "192.0.2.99")["id"]
        seat = wait_until(lambda: CasualSeat.objects.filter(pk=mine).exclude(message="").first(), 10, "the newcomer's first move", celery_workers)
        waited = time.monotonic() - began
        assert json.loads(seat.message)["type"] == "act" and waited < 10
        assert Match.objects.filter(pk__in=held, status="running").count() == len(held)  # still held meanwhile

        # No place is held past the total clock, however each move is answered.
        wait_until(
            lambda: not Match.objects.filter(pk__in=held, status__in=["queued", "running"]).exists(),
            TOTAL_SECONDS + 30, "the held matches to end on the total clock", celery_workers,
        )  # fmt: skip
    finally:
        stop.set()
        holder.join(timeout=10)
    ended = CasualSeat.objects.filter(pk__in=held)
    assert {s.match.status for s in ended} == {"finished"}
    assert all(s.forfeit_reason == "timeout" and f"{TOTAL_SECONDS} s for the whole match" in s.forfeit_detail for s in ended), [
        s.forfeit_detail for s in ended
    ]


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="runs on the PostgreSQL pass only")
def test_a_full_worker_starts_the_waiting_matches_in_the_fair_order(celery_workers):
    """One thread, four matches queued before the worker starts (alice's two
    first): alice's second starts after bob's and carol's first. Each ends
    at its first move (no page asks for it: the idle forfeit)."""
    alice, bob, carol = f.user("alice"), f.user("bob"), f.user("carol")
    a1, a2 = start(alice, "192.0.2.1")["id"], start(alice, "192.0.2.1")["id"]
    b1, c1 = start(bob, "192.0.2.2")["id"], start(carol, "192.0.2.3")["id"]
    CasualSeat.objects.update(last_poll=timezone.now() - timedelta(minutes=5))
    celery_workers.start("casual", **CASUAL, concurrency=1, CARDROOM_CASUAL_IDLE_SECONDS="1", CARDROOM_CASUAL_POLL_SECONDS="0.05")
    wait_until(lambda: Match.objects.filter(kind="casual", status="finished").count() == 4, 90, "the four matches", celery_workers)
    assert list(Match.objects.filter(kind="casual").order_by("started").values_list("pk", flat=True)) == [a1, b1, c1, a2]
