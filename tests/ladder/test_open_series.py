"""The standing open event series (decision 208): a fresh site always has an
open event of each configured game to enter, opened by the scheduler's
start_due_events sweep (ladder.services.open_series), and the events page
says how one appears and when the next opens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from ladder.models import Tournament
from ladder.services import open_series, tournaments
from ladder.tasks import start_due_events
from tests.ladder import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]


def series_events():
    return list(Tournament.objects.filter(created_by__username="cardroom").order_by("game", "starts"))


def test_the_scheduler_sweep_keeps_one_open_event_of_each_game_with_the_house_bots(settings):
    settings.CARDROOM_OPEN_SERIES_GAMES = ["allegory", "allegra"]
    assert series_events() == []
    start_due_events()
    events = series_events()
    assert [(t.game, t.status, t.format, t.table_size) for t in events] == [
        ("allegory", "open", "swiss", 2), ("allegra", "open", "swiss", 2),
    ]  # fmt: skip
    # the next day boundary (00:00 UTC) at least the minimum lead ahead
    starts = events[0].starts
    assert (starts.hour, starts.minute, starts.second) == (0, 0, 0) and events[1].starts == starts
    assert timedelta(seconds=settings.CARDROOM_EVENT_MIN_LEAD_SECONDS) <= starts - timezone.now() <= timedelta(days=1, minutes=1)
    assert events[1].name == f"Open Allegra {starts.astimezone(UTC):%Y-%m-%d} 00:00 UTC"
    assert sorted(events[1].entries.values_list("bot__name", flat=True)) == ["greedy", "random"]
    # every later sweep finds them there
    start_due_events()
    assert open_series.keep_open() == [] and len(series_events()) == 2

    # a newcomer enters a bot of their own
    author = factories.user()
    mine = factories.active_bot(author, game="allegra")
    response = factories.client(author).post(f"/api/tournaments/{events[1].pk}/entries/", {"bot": mine.pk}, format="json")
    assert response.status_code == 201, response.content

    # at the start time the event starts and the same sweep opens the next
    later = starts + timedelta(seconds=1)
    assert tournaments.start_due(later) == [events[0].pk, events[1].pk]
    opened = open_series.keep_open(later)
    nxt = Tournament.objects.filter(pk__in=opened).order_by("game")
    assert [(t.game, t.status, t.starts) for t in nxt] == [("allegory", "open", starts + timedelta(days=1)), ("allegra", "open", starts + timedelta(days=1))]
    events[1].refresh_from_db()
    assert events[1].status == "running" and events[1].entries.count() == 3


def test_the_period_game_and_format_come_from_the_settings_and_it_can_be_off(settings):
    settings.CARDROOM_OPEN_SERIES_HOURS = 6
    settings.CARDROOM_OPEN_SERIES_GAMES = ["allegory"]
    settings.CARDROOM_OPEN_SERIES_FORMAT = "round-robin"
    settings.CARDROOM_OPEN_SERIES_PLAYERS = 3
    now = datetime(2031, 3, 4, 13, 59, 30, tzinfo=UTC)
    assert open_series.next_start(now) == datetime(2031, 3, 4, 18, 0, tzinfo=UTC)
    settings.CARDROOM_EVENT_MIN_LEAD_SECONDS = 60  # 30 s before a boundary is too late for it
    assert open_series.next_start(datetime(2031, 3, 4, 17, 59, 30, tzinfo=UTC)) == datetime(2031, 3, 5, 0, 0, tzinfo=UTC)
    [t] = Tournament.objects.filter(pk__in=open_series.keep_open())
    assert (t.game, t.format, t.table_size, t.starts.hour % 6) == ("allegory", "round-robin", 3, 0)

    settings.CARDROOM_OPEN_SERIES = False
    Tournament.objects.all().delete()
    start_due_events()
    assert series_events() == [] and open_series.summary() is None
    page = factories.client().get("/tournaments/").content.decode()
    assert 'data-testid="open-series"' not in page


def test_the_events_page_says_how_an_open_event_appears_and_when_the_next_opens(settings):
    settings.CARDROOM_OPEN_SERIES_GAMES = ["allegory", "allegra"]
    page = factories.client().get("/tournaments/").content.decode()  # a fresh site: no event at all yet
    starts = open_series.next_start()
    assert "Every day the site opens a swiss event for each of Allegory and Allegra (tables of 2)" in page
    assert f"The current ones start <time datetime=\"{starts:%Y-%m-%dT%H:%M:%SZ}\"" in page
    assert "the next ones open then" in page


def test_a_withdrawn_house_bot_is_left_out_and_a_bad_setting_never_fails_the_sweep(settings):
    from ladder.models import Bot

    settings.CARDROOM_OPEN_SERIES_GAMES = ["allegra"]
    Bot.objects.filter(game="allegra", builtin=True, name="greedy").update(withdrawn=timezone.now())
    [t] = Tournament.objects.filter(pk__in=open_series.keep_open())
    assert list(t.entries.values_list("bot__name", flat=True)) == ["random"]
    # tables too large to draw (caught at start-up; here changed at run time): nothing opened, the sweep goes on
    Tournament.objects.all().delete()
    settings.CARDROOM_OPEN_SERIES_PLAYERS = 9
    assert start_due_events() == [] and series_events() == []
