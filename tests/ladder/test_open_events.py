"""Open events: staff set an entry window, users enter their own active bots
(a version frozen at entry, swapped by entering again) and withdraw them
until the start time, then every entry, change or withdrawal is refused
with a clear 4xx; at the start the field is frozen and the schedule drawn,
exactly once. Through the REST API (docs/api.md) where a user would."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from ladder import selectors
from ladder.models import Match, Tournament, TournamentMatch
from ladder.services import bot_management, tournaments
from tests.ladder import factories
from tests.ladder.factories import assert_error

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]


def staff():
    user = factories.user()
    user.is_staff = True
    user.save()
    return user


def open_event(boss=None, **extra):
    fields = {
        "name": factories.unique("open cup "), "game": "allegra", "format": "round-robin", "table_size": 2,
        "starts": (timezone.now() + timedelta(hours=1)).isoformat(), **extra,
    }  # fmt: skip
    response = factories.client(boss or staff()).post("/api/tournaments/", fields, format="json")
    assert response.status_code == 201, response.content
    return Tournament.objects.get(pk=response.json()["id"])


def close_window(t: Tournament) -> None:
    """The start time has come (the clock moved on, not the event)."""
    Tournament.objects.filter(pk=t.pk).update(starts=timezone.now() - timedelta(seconds=1))


def test_staff_open_an_event_and_its_seed_stays_hidden_until_it_starts():
    boss = staff()
    starts = timezone.now() + timedelta(hours=2)
    body = {"name": "spring open", "game": "allegra", "format": "swiss", "table_size": 2, "starts": starts.isoformat(), "entries_per_user": 2}
    assert_error(factories.client(factories.user()).post("/api/tournaments/", body, format="json"), 403)
    response = factories.client(boss).post("/api/tournaments/", body, format="json")
    assert response.status_code == 201, response.content
    event = response.json()
    assert event["status"] == "open" and event["seed"] is None and event["entries"] == [] and event["entries_per_user"] == 2
    assert event["starts"].startswith(starts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    assert not Match.objects.filter(kind="tournament").exists()
    past = {**body, "name": "too late", "starts": (timezone.now() - timedelta(minutes=5)).isoformat()}
    assert_error(factories.client(boss).post("/api/tournaments/", past, format="json"), 400, "starts", "from 60 s to a year from now")
    limit = {**body, "name": "greedy", "entries_per_user": 99}
    assert_error(factories.client(boss).post("/api/tournaments/", limit, format="json"), 400, "entries_per_user")
    no_field = {k: v for k, v in body.items() if k != "starts"}
    assert_error(factories.client(boss).post("/api/tournaments/", {**no_field, "name": "closed"}, format="json"), 400, "bots")


def test_entry_requests_that_cannot_be_met_get_a_clear_4xx():
    t = open_event()
    alice, bob = factories.user(), factories.user()
    mine, second = factories.active_bot(alice), factories.active_bot(alice)
    url = f"/api/tournaments/{t.pk}/entries/"
    assert_error(factories.client().post(url, {"bot": mine.pk}, format="json"), 401)
    assert_error(factories.client(bob).post(url, {"bot": mine.pk}, format="json"), 403, "bot", "owner")
    assert_error(factories.client(alice).post(url, {"bot": 987654}, format="json"), 400, "bot", "no bot with id 987654")
    assert_error(factories.client(alice).post(url, {"bot": "x"}, format="json"), 400, "bot")
    assert_error(factories.client(alice).post(url, {}, format="json"), 400, "bot")
    assert_error(factories.client(alice).post("/api/tournaments/987654/entries/", {"bot": mine.pk}, format="json"), 404)
    other_game = factories.active_bot(alice, game="allegory")
    assert_error(factories.client(alice).post(url, {"bot": other_game.pk}, format="json"), 400, "bot", "plays allegory")
    no_version = factories.bot(alice)
    assert_error(factories.client(alice).post(url, {"bot": no_version.pk}, format="json"), 400, "bot", "no active version")
    withdrawn = factories.active_bot(alice)
    bot_management.withdraw(bot=withdrawn, user=alice)
    assert_error(factories.client(alice).post(url, {"bot": withdrawn.pk}, format="json"), 409, "bot", "withdrawn")

    response = factories.client(alice).post(url, {"bot": mine.pk}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["version"] == mine.current_version_id and response.json()["owner"] == alice.username
    # one entry a user (the default)
    assert_error(factories.client(alice).post(url, {"bot": second.pk}, format="json"), 409, "bot", "1 entry a user")
    assert_error(factories.client(bob).delete(f"{url}{mine.pk}/"), 403, "bot")
    assert_error(factories.client(alice).delete(f"{url}{second.pk}/"), 404, "bot", "not entered")
    assert_error(factories.client(alice).delete(f"{url}987654/"), 404)

    close_window(t)
    assert_error(factories.client(alice).post(url, {"bot": second.pk}, format="json"), 409, "tournament", "closed at its start")
    assert_error(factories.client(alice).post(url, {"bot": mine.pk}, format="json"), 409, "tournament", "closed")
    assert_error(factories.client(alice).delete(f"{url}{mine.pk}/"), 409, "tournament", "closed")
    assert [e["bot"] for e in selectors.tournament_entries(t)] == [mine.pk]

    # an event whose field staff picked takes no entries at all
    fixed = tournaments.create_tournament(
        user=staff(), name="fixed", game="allegra", format="round-robin",
        bots=[factories.active_bot(), factories.active_bot()], table_size=2,
    )  # fmt: skip
    assert_error(factories.client(alice).post(f"/api/tournaments/{fixed.pk}/entries/", {"bot": second.pk}, format="json"), 409, "tournament", "takes no entries")


def test_withdraw_and_swap_before_the_start_then_the_field_is_frozen_and_drawn_once():
    t = open_event(entries_per_user=2)
    alice, bob, carol = factories.user(), factories.user(), factories.user()
    a1, a2, b1, c1 = factories.active_bot(alice), factories.active_bot(alice), factories.active_bot(bob), factories.active_bot(carol)
    url = f"/api/tournaments/{t.pk}/entries/"
    for owner, bot in ((alice, a1), (alice, a2), (bob, b1), (carol, c1)):
        assert factories.client(owner).post(url, {"bot": bot.pk}, format="json").status_code == 201
    # alice withdraws a1; bob swaps to a new version by entering again (200)
    assert factories.client(alice).delete(f"{url}{a1.pk}/").status_code == 204
    old = b1.current_version_id
    new = factories.version(b1)
    response = factories.client(bob).post(url, {"bot": b1.pk}, format="json")
    assert response.status_code == 200 and response.json()["version"] == new.pk != old
    # carol withdraws her bot from the ladders after entering: it does not play (decision 81)
    bot_management.withdraw(bot=c1, user=carol)

    assert tournaments.start_due() == []  # not yet
    close_window(t)
    assert tournaments.start_due() == [t.pk]
    assert tournaments.start_due() == [] and not tournaments.start_event(t.pk)  # exactly once
    t.refresh_from_db()
    assert t.status == "running" and t.started is not None and t.total_matches == 1
    entries = selectors.tournament_entries(t)
    assert [(e["entry"], e["bot"], e["version"]) for e in entries] == [(0, a2.pk, a2.current_version_id), (1, b1.pk, new.pk)]
    slot = TournamentMatch.objects.get(tournament=t)
    assert sorted(p.version_id for p in slot.match.participants.all()) == sorted([a2.current_version_id, new.pk])
    # the seed stays hidden while the event plays (decision 173; tests/ladder/test_event_seed.py)
    assert factories.client().get(f"/api/tournaments/{t.pk}/").json()["seed"] is None


def test_an_event_without_enough_entries_is_cancelled_at_its_start_saying_why():
    t = open_event(table_size=3)
    alice = factories.user()
    bot = factories.active_bot(alice)
    assert factories.client(alice).post(f"/api/tournaments/{t.pk}/entries/", {"bot": bot.pk}, format="json").status_code == 201
    close_window(t)
    assert tournaments.start_due() == [t.pk]
    t.refresh_from_db()
    assert t.status == "cancelled" and t.cancelled_reason == "not started: the field must be between 2 and 1000, not 1"
    assert factories.client().get(f"/api/tournaments/{t.pk}/").json()["cancelled_reason"] == t.cancelled_reason
    assert not Match.objects.filter(kind="tournament").exists()


def test_the_site_forms_open_an_event_in_utc_and_refuse_a_late_entry_with_a_page_that_says_why(client):
    boss = staff()
    client.force_login(boss)
    when = (timezone.now() + timedelta(days=1)).replace(second=0, microsecond=0)
    form = {
        "name": "form open", "game": "allegra", "format": "round-robin", "table_size": 2, "deals": 1,
        "per_move_ms": 1000, "total_ms": 300000, "entries_per_user": 2, "starts": when.strftime("%Y-%m-%dT%H:%M"),
    }  # fmt: skip
    response = client.post("/tournaments/new/", form)
    assert response.status_code == 302, response.content.decode()[-2000:]
    t = Tournament.objects.get(name="form open")
    assert (t.status, t.starts, t.entries_per_user) == ("open", when, 2)

    author = factories.user()
    bot = factories.active_bot(author)
    client.force_login(author)
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert 'data-testid="entry-form"' in page and f'datetime="{when.strftime("%Y-%m-%dT%H:%M:%SZ")}"' in page
    assert client.post(f"/tournaments/{t.pk}/entries/", {"bot": bot.pk}).status_code == 302
    close_window(t)
    late = client.post(f"/tournaments/{t.pk}/entries/", {"bot": bot.pk, "action": "withdraw"})
    assert late.status_code == 409 and "closed at its start" in late.content.decode()
    assert client.get(f"/tournaments/{t.pk}/archive.zip").status_code == 409  # not ended: no archive yet


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_to_start_an_event_draw_it_once():
    """Two processes' sweeps (the beat task and the reaper's) at the same
    moment: the event's row lock lets one draw the schedule; the other finds
    it running and does nothing."""
    import threading

    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the row lock under test is PostgreSQL's (SQLite has none; its writers take turns at the database lock)")
    t = open_event()
    for _ in range(3):
        owner = factories.user()
        tournaments.enter(t, owner, factories.active_bot(owner))
    close_window(t)
    barrier, results = threading.Barrier(2), []

    def sweep():
        try:
            barrier.wait()
            results.append(tournaments.start_due())
        finally:
            connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results) == [[], [t.pk]]
    assert TournamentMatch.objects.filter(tournament=t).count() == 3  # one schedule, not two
    assert Match.objects.filter(kind="tournament").count() == 3


def test_an_open_events_page_says_its_format_plainly_and_nothing_played(client):
    t = open_event()
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert "round-robin ()" not in page
    assert "round-robin (pairings drawn when entries close)" in page
    progress = factories.client().get(f"/api/tournaments/{t.pk}/").json()["progress"]
    assert progress["played"] == 0 and progress["percent"] == 0.0
