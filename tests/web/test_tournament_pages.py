"""The events' pages in a real headless Chromium: the event page's live
progress bar, standings, crosstable and deal table, a link to a replay the
viewer plays; the staff-only new-event form."""

from __future__ import annotations

import time

import pytest

from ladder.models import Match, Tournament
from ladder.services import matches as match_services
from ladder.services import tournaments
from tests.web import factories as f
from tests.web.conftest import login, snap

pytestmark = pytest.mark.django_db(transaction=True)


def staff():
    boss = f.user()
    boss.is_staff = True
    boss.save()
    return boss


def play(t: Tournament, count: int) -> None:
    ids = Match.objects.filter(tournament_slot__tournament=t, status=Match.Status.QUEUED).order_by("id").values_list("pk", flat=True)
    for match_id in list(ids)[:count]:
        assert match_services.run_queued_match(match_id, "web-test") == "finished"


def test_event_page_shows_live_progress_standings_deals_and_replays(web):
    t = tournaments.create_tournament(
        user=staff(), name="Winter duplicate", game="allegra", format="duplicate",
        bots=[f.builtin("allegra", "greedy"), f.builtin("allegra", "random")], table_size=2, deals=2, seed=5,
    )  # fmt: skip
    play(t, 2)
    web.goto("/tournaments/")
    web.click("text=Winter duplicate")
    web.wait_for_url(f"**/tournaments/{t.pk}/")
    bar = web.locator("[data-testid=event-progress]")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("2", "4")
    assert web.inner_text("[data-testid=event-progress-text]") == "2 of 4 (50.0%)"
    rows = web.locator("[data-testid=event-standings] tbody tr")
    assert rows.count() == 2
    assert {rows.nth(i).locator("td").nth(1).inner_text() for i in range(2)} == {"greedy v1", "random v1"}
    assert web.locator("[data-testid=event-crosstable]").is_visible()
    # matches go deal by deal: both rotations of deal 0 are in
    assert web.locator("[data-testid=event-deals] thead th").all_text_contents() == ["Mean rank on the deal", "deal 0", "vs field"]
    snap(web, "event-half")

    # the rest is played; the page follows without a reload
    play(t, 2)
    # (polled with evaluate: wait_for_function evaluates a string, which the CSP refuses)
    deadline = time.monotonic() + 30
    while web.get_attribute("[data-testid=event-progress]", "value") != "4":
        assert time.monotonic() < deadline, "the progress bar did not reach 4 of 4 without a reload"
        web.wait_for_timeout(200)
    assert web.inner_text("[data-testid=event-status]") == "finished"
    assert web.inner_text("[data-testid=event-progress-text]") == "4 of 4 (100.0%)"
    assert web.locator("[data-testid=event-deals] thead th").all_text_contents()[1:3] == ["deal 0", "deal 1"]

    web.reload()  # the match list is not live
    links = web.locator("[data-testid=event-matches] a:text('replay')")
    assert links.count() == 4
    first = Match.objects.filter(tournament_slot__tournament=t).order_by("tournament_slot__number").first()
    links.first.click()
    web.wait_for_url(f"**/matches/{first.pk}/")
    web.wait_for_selector("#replay[data-event]")
    assert web.locator("[data-testid=grids] .agrid[data-seat]").count() == 2  # the viewer plays it
    snap(web, "event-replay")

    # the columns are explained one link away
    web.go_back()
    web.click("[data-testid=standings-help]")
    web.wait_for_url("**/docs/tournaments/#standings")
    assert "head-to-head" in web.inner_text("[data-testid=doc]")


def test_staff_create_an_event_from_the_form_and_others_may_not(web, client):
    boss = staff()
    greedy, rand = f.builtin("allegory", "greedy"), f.builtin("allegory", "random")
    client.force_login(f.user())
    assert client.get("/tournaments/new/").status_code == 403
    login(web, boss.username, f.PASSWORD)
    web.goto("/tournaments/new/")
    web.fill("#id_name", "Club night")
    web.select_option("#id_game", "allegory")
    web.select_option("#id_format", "round-robin")
    web.check(f"[name=bots][value='{greedy.pk}']")
    web.check(f"[name=bots][value='{rand.pk}']")
    web.fill("#id_table_size", "3")
    web.click("[data-testid=new-event] button[type=submit]")
    assert "a table of 3 needs at least 3 entries" in web.inner_text("[data-testid=new-event]")
    web.fill("#id_table_size", "2")
    web.fill("#id_deals", "3")
    web.click("[data-testid=new-event] button[type=submit]")
    web.wait_for_url("**/tournaments/*/")
    t = Tournament.objects.get(name="Club night")
    assert t.total_matches == 3 and t.created_by == boss
    assert web.inner_text("[data-testid=event-progress-text]") == "0 of 3 (0.0%)"
    web.click("button:text('Pause')")
    web.wait_for_selector("button:text('Resume')")
    t.refresh_from_db()
    assert t.status == Tournament.Status.PAUSED
