"""The standing open event series with the real scheduler (`celery -A config
beat`) and a real worker on the scheduler's and the events' queues: on a
site with no event at all, an open event appears by itself; at its start it
is drawn and played (the house bots and a newcomer's bot), and the next one
of the series is already open (decision 208)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from ladder.models import Tournament
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    beat_process,
    celery_workers_fixture,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PERIOD_SECONDS = 12
SERIES = {
    "CARDROOM_OPEN_SERIES_HOURS": str(PERIOD_SECONDS / 3600),
    "CARDROOM_OPEN_SERIES_GAMES": "allegra",
    "CARDROOM_EVENT_MIN_LEAD_SECONDS": "2",
}


def test_a_fresh_site_always_has_an_open_event_and_the_next_opens_when_one_starts(celery_workers, settings, tmp_path):
    settings.CARDROOM_EVENT_MIN_LEAD_SECONDS = 2
    assert not Tournament.objects.exists()
    celery_workers.start("series", queues="celery,tournaments,scheduler", **SERIES)
    with beat_process(tmp_path, EVENT_START_INTERVAL="1", MATCHMAKING_INTERVAL="3600", REAPER_INTERVAL="3600", **SERIES) as beat:

        def open_one():
            return Tournament.objects.filter(status="open", created_by__username="cardroom").order_by("starts").first()

        first = wait_until(open_one, 30, f"the scheduler to open the series' first event\n{beat()}", celery_workers)
        assert first.game == "allegra" and first.starts > timezone.now()
        author = factories.user()
        mine = factories.active_bot(author, game="allegra")
        entered = factories.client(author).post(f"/api/tournaments/{first.pk}/entries/", {"bot": mine.pk}, format="json")
        if entered.status_code == 409:  # its entries closed while we made the bot: enter the next one
            first = wait_until(lambda: open_one() if open_one().pk != first.pk else None, 30, "the next event", celery_workers)
            entered = factories.client(author).post(f"/api/tournaments/{first.pk}/entries/", {"bot": mine.pk}, format="json")
        assert entered.status_code == 201, entered.content

        def next_open():
            first.refresh_from_db()
            following = open_one()
            return first.status != "open" and following is not None and following.pk != first.pk and following

        following = wait_until(next_open, PERIOD_SECONDS + 30, f"the event to start and the next to open\n{beat()}", celery_workers)
        assert following.starts - first.starts == timezone.timedelta(seconds=PERIOD_SECONDS)
        assert first.status in ("running", "finished") and first.entries.count() == 3  # greedy, random and the newcomer's

        def played():
            first.refresh_from_db()
            return first.status == "finished"

        wait_until(played, 120, "the worker to play the event", celery_workers)
