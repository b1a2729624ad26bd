"""Every page fits a phone's screen: in a real headless Chromium 390 px
wide, no page is wider than the viewport (a wide table or chart scrolls
inside its own box, long words wrap), so nothing of a page is reachable
only by scrolling the whole page sideways."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.models import Match
from ladder.services import matches as match_services
from ladder.services import tournaments
from tests.web import factories as f
from tests.web.conftest import PHONE, login

pytestmark = pytest.mark.django_db(transaction=True)

# What sticks out, for the failure message: the widest elements whose right
# edge is past the viewport, described by tag, class and test id.
OVERFLOW = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.querySelectorAll('body *')) {
        const box = el.getBoundingClientRect();
        if (box.right > width + 0.5 && box.width > 0) {
            out.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().replace(/\\s+/g, '.') : ''}`
                     + `${el.dataset.testid ? '[' + el.dataset.testid + ']' : ''} right=${Math.round(box.right)}`);
        }
    }
    return {scroll: document.documentElement.scrollWidth, viewport: width, sticking_out: out.slice(0, 8)};
}"""


def _width(page, path: str, ready: str | None = None) -> dict:
    page.goto(path)
    if ready:
        page.wait_for_selector(ready, timeout=30_000)
    page.wait_for_timeout(50)
    return {"path": path, **page.evaluate(OVERFLOW)}


def test_every_page_fits_a_phone_screen(browser, live_server):
    data = f.league("allegra", 2, matches=4, seed=91)
    four = f.league("allegory", 4, matches=1, owner=data["owner"], seed=92)
    owner = data["owner"]
    owner.is_staff = True  # also sees "New event"
    owner.save()
    event = tournaments.create_tournament(
        user=owner, name="Phone duplicate", game="allegra", format="duplicate",
        bots=[f.builtin("allegra", "greedy"), f.builtin("allegra", "random")], table_size=2, deals=1, seed=4,
    )  # fmt: skip
    for match_id in Match.objects.filter(tournament_slot__tournament=event).values_list("pk", flat=True):
        assert match_services.run_queued_match(match_id, "web-test") == "finished"
    bot = next(b for b in data["bots"] if not b.builtin)
    # an open event the owner's bot entered (its page: the entries and the entry forms)
    opened = tournaments.create_tournament(
        user=owner, name="Phone open", game="allegra", format="swiss", table_size=2, starts=timezone.now() + timedelta(hours=3),
    )  # fmt: skip
    tournaments.enter(opened, owner, bot)

    context = browser.new_context(viewport=PHONE, base_url=live_server.url, locale="en-GB", timezone_id="UTC")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        seen = [_width(page, "/login/"), _width(page, "/signup/")]
        login(page, owner.username, f.PASSWORD)
        page.goto("/")
        nav = page.eval_on_selector_all("nav.site-nav a[href]", "els => els.map(a => a.getAttribute('href'))")
        assert "/my/bots/" in nav and "/account/" in nav and "/docs/" in nav  # signed in
        page.goto("/docs/")
        docs = page.eval_on_selector_all("main a[href^='/docs/']:not([href*='/starter'])", "els => els.map(a => a.getAttribute('href'))")
        assert len(set(docs)) >= 7
        paths = list(dict.fromkeys([
            *nav, *docs,
            f"/ladders/{data['ladder'].pk}/", f"/bots/{bot.pk}/", f"/my/bots/{bot.pk}/",
            f"/tournaments/{event.pk}/", f"/tournaments/{opened.pk}/", "/tournaments/new/",
        ]))  # fmt: skip
        for path in paths:
            seen.append(_width(page, path))
        for match in (data["matches"][0], four["matches"][0]):
            seen.append(_width(page, f"/matches/{match.pk}/", "#replay[data-event]"))
            seen.append(_width(page, f"/matches/{match.pk}/#event=9999", "#replay[data-last='1']"))
    finally:
        context.close()
    too_wide = [s for s in seen if s["scroll"] > s["viewport"]]
    assert not too_wide, "pages wider than a 390 px phone:\n" + "\n".join(map(str, too_wide))


# The tables a phone reader came for, and the column each must show without
# scrolling sideways: their box may scroll, but the table must fit it.
FITS = """(selector) => {
    const table = document.querySelector(selector);
    if (!table) return null;
    const box = table.parentElement.getBoundingClientRect();
    return {table: Math.round(table.scrollWidth), box: Math.round(box.width), viewport: document.documentElement.clientWidth};
}"""


def test_the_match_result_and_the_event_standings_fit_a_phone_without_scrolling_sideways(browser, live_server):
    from tests.web.conftest import snap

    data = f.league("allegory", 4, matches=1, seed=93)
    owner = data["owner"]
    event = tournaments.create_tournament(
        user=owner if owner.is_staff else _staff(owner), name="Phone standings", game="allegra", format="round-robin",
        bots=[f.builtin("allegra", "greedy"), f.builtin("allegra", "random"), *[b for b in f.league("allegra", 2, matches=0, seed=94)["bots"] if not b.builtin]],
        table_size=2, deals=1, seed=5,
    )  # fmt: skip
    for match_id in Match.objects.filter(tournament_slot__tournament=event).values_list("pk", flat=True):
        assert match_services.run_queued_match(match_id, "web-test") == "finished"
    context = browser.new_context(viewport=PHONE, base_url=live_server.url, locale="en-GB", timezone_id="UTC")
    page = context.new_page()
    try:
        page.goto(f"/matches/{data['matches'][0].pk}/")
        page.wait_for_selector("#replay[data-event]")
        result = page.evaluate(FITS, "[data-testid=result]")
        snap(page, "phone-match-result")
        page.goto(f"/tournaments/{event.pk}/")
        standings = page.evaluate(FITS, "[data-testid=event-standings]")
        snap(page, "phone-event-standings")
    finally:
        context.close()
    assert result is not None and result["table"] <= result["box"] <= result["viewport"], result
    assert standings is not None and standings["table"] <= standings["box"] <= standings["viewport"], standings


def _staff(user):
    user.is_staff = True
    user.save()
    return user
