"""Open events in a real headless Chromium: the events list by open,
running and finished; the event page's start time in the reader's own time
zone; an author enters a bot, swaps it to a new version and withdraws it
with the page's forms; a bot's page lists the events it played with its
place; an ended event's archive downloads from its page."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from ladder import selectors
from ladder.models import Match
from ladder.services import bots as bot_services
from ladder.services import matches as match_services
from ladder.services import tournaments
from tests.web import factories as f
from tests.web.conftest import login

pytestmark = pytest.mark.django_db(transaction=True)


def staff():
    boss = f.user()
    boss.is_staff = True
    boss.save()
    return boss


def test_an_author_enters_swaps_and_withdraws_on_the_event_page(browser, live_server):
    author = f.user()
    bot = f.active_bot(author, "allegra", "entrant")
    starts = (timezone.now() + timedelta(days=2)).replace(hour=18, minute=30, second=0, microsecond=0)
    t = tournaments.create_tournament(user=staff(), name="Open winter", game="allegra", format="swiss", table_size=2, starts=starts)
    # a reader in New York sees the start in New York's time
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=live_server.url, locale="en-US", timezone_id="America/New_York")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto("/tournaments/")
        row = page.locator("[data-testid=events-open] tbody tr")
        assert row.count() == 1 and "Open winter" in row.inner_text()
        shown = row.locator("time[data-local-time]")
        assert shown.get_attribute("datetime") == starts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert "1:30 PM" in shown.inner_text() and "EST" in shown.inner_text()  # 18:30 UTC
        assert shown.get_attribute("title").endswith("18:30 UTC")

        login(page, author.username, f.PASSWORD)
        page.goto(f"/tournaments/{t.pk}/")
        assert "No entries yet." in page.inner_text("main")
        page.select_option("#entry-bot", str(bot.pk))
        page.click("[data-testid=entry-form] button[type=submit]")
        assert "entrant v1 is entered in Open winter." in page.inner_text(".messages")
        cells = page.locator("[data-testid=event-entries] tbody tr td")
        assert [cells.nth(i).inner_text() for i in range(3)] == ["entrant", author.username, "v1"]

        # a new version: the page offers the swap, which the entry then holds
        newer = bot_services.upload_version(bot=bot, filename="entrant.py", data=f.program("random", "allegra"))
        bot_services.activate_version(newer)
        page.reload()
        page.click("[data-testid=entry-swap]")
        assert "Open winter now holds entrant v2." in page.inner_text(".messages")
        assert page.locator("[data-testid=event-entries] tbody tr td").nth(2).inner_text() == "v2"
        assert [e["version"] for e in selectors.tournament_entries(t)] == [newer.pk]

        page.once("dialog", lambda dialog: dialog.accept())
        page.click("[data-testid=entry-withdraw]")
        assert "entrant is withdrawn from Open winter." in page.inner_text(".messages")
        assert page.locator("[data-testid=event-entries]").count() == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_a_bots_page_lists_its_events_with_its_place_and_the_archive_downloads(web, settings):
    settings.CARDROOM_SANDBOX = "none"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True
    author = f.user()
    mine = f.active_bot(author, "allegra", "placed")
    t = tournaments.create_tournament(
        user=staff(), name="Autumn cup", game="allegra", format="round-robin",
        bots=[mine, f.builtin("allegra", "greedy")], table_size=2, deals=2, seed=3,
    )  # fmt: skip
    for match_id in Match.objects.filter(tournament_slot__tournament=t).order_by("pk").values_list("pk", flat=True):
        assert match_services.run_queued_match(match_id, "web-test") == "finished"
    place = next(r["place"] for r in selectors.tournament_standings(t)["standings"] if r["bot"] == mine.pk)

    web.goto(f"/bots/{mine.pk}/")
    cells = web.locator("[data-testid=bot-events] tbody tr td")
    assert [cells.nth(i).inner_text() for i in range(5)] == ["Autumn cup", "v1", f"{place} of 2", "2", "final"]
    cells.first.locator("a").click()
    web.wait_for_url(f"**/tournaments/{t.pk}/")
    with web.expect_download() as download:
        web.click("[data-testid=event-archive]")
    archive = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read()))
    names = sorted(archive.namelist())
    assert names == ["replays/match-0000.json", "replays/match-0001.json", "standings.json"]
    doc = json.loads(archive.read("standings.json"))
    assert doc["standings"] == selectors.tournament_standings(t)["standings"]
    assert [m["replay"] for m in doc["matches"]] == ["replays/match-0000.json", "replays/match-0001.json"]
    first = Match.objects.get(pk=doc["matches"][0]["match"])
    assert json.loads(archive.read("replays/match-0000.json")) == json.loads(selectors.replay_bytes(first))
    assert datetime.fromisoformat(doc["event"]["finished"]) <= datetime.now(UTC)
