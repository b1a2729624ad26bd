"""End to end in a real headless Chromium against the live server, with
matches really played (tests/web/factories.py). Every page visited must load
without a JavaScript error, a failed request or an HTTP error (the ``web``
fixture checks), and leaves its screenshots in var/screenshots/."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token

from ladder.models import BotVersion, Match, Rating
from ladder.selectors import pages as selectors
from ladder.services import bots as bot_services
from ladder.services.bots import check_package
from ladder.services.errors import ServiceError
from ladder.services.validation import validate_version
from ladder.web import views
from tests.web import factories as f
from tests.web.conftest import login, snap

pytestmark = pytest.mark.django_db(transaction=True)


def _replay(web, match_id: int) -> dict:
    response = web.request.get(f"/api/matches/{match_id}/replay/")
    assert response.ok
    return json.loads(response.body())


def _frames(web, match_id: int, view: str = "full") -> dict:
    response = web.request.get(f"/matches/{match_id}/frames/?view={view}")
    assert response.ok
    return response.json()


def _open_replay(web, match_id: int, hash_: str = "") -> None:
    """Open a match page (at ``#event=N&view=V``) and wait for the viewer."""
    web.goto(f"/matches/{match_id}/{hash_}")
    view = re.search(r"view=([a-z0-9-]+)", hash_)
    event = re.search(r"event=(\d+)", hash_)
    web.wait_for_selector(
        f"#replay[data-view='{view.group(1) if view else 'full'}'][data-event='{event.group(1) if event else 0}']",
        timeout=30_000,  # a cold server computes the frames of a whole match first
    )


def _wait_in_page(web, function: str, arg=None, timeout: float = 15) -> None:
    """Until ``function`` is true in the page. (Not Playwright's
    wait_for_function: it evaluates its predicate with eval in the page, which
    the page's Content-Security-Policy refuses; page.evaluate is not bound by it.)"""
    deadline = time.monotonic() + timeout
    while not web.evaluate(function, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting in the page for: {function}")
        time.sleep(0.1)


def _event(web) -> int:
    return int(web.get_attribute("#replay", "data-event"))


STEP_ALL = """() => {
    // Click the viewer's "step forward" button until the last event, and
    // after each step record what the page shows (the probe, a function body
    // written in here: the page's Content-Security-Policy forbids new Function).
    const root = document.querySelector('#replay');
    const forward = root.querySelector('[data-act=forward]');
    const look = function () { PROBE };
    const seen = [look()];
    while (root.dataset.last !== '1') {
        forward.click();
        seen.push(look());
    }
    return seen;
}"""


def _step_all(web, probe: str) -> list:
    """Step through the whole match in the page (the forward button, clicked
    by the page's own event loop: much faster than one browser round trip per
    event) and return what ``probe`` saw at each event."""
    return web.evaluate(STEP_ALL.replace("PROBE", probe))


def _final_scores(web) -> dict[int, int]:
    cells = web.locator("[data-testid=final] [data-final-score]")
    return {int(c.get_attribute("data-final-score")): int(c.inner_text()) for c in cells.all()}


# ---------------------------------------------------------------------------


def test_home_and_leaderboard_in_rating_order_sorted_and_refreshing(web, monkeypatch):
    data = f.league("allegra", 2, matches=10, seed=11)
    web.goto("/")
    assert web.inner_text("[data-count=today]") == "10"
    assert web.inner_text("[data-count=queued]") == "0"
    assert web.locator(".game-card").count() == 2
    snap(web, "home")

    web.click(f"text={data['ladder'].name}")
    web.wait_for_selector("[data-testid=standings]")
    rows = web.locator("[data-testid=standings] tbody tr")
    names = [r.get_attribute("data-bot") for r in rows.all()]
    elos = [float(r.get_attribute("data-elo")) for r in rows.all()]
    assert elos == sorted(elos, reverse=True)
    assert names == list(selectors.ranked(data["ladder"]).values_list("bot__name", flat=True))
    assert set(names) == {b.name for b in data["bots"]}
    snap(web, "leaderboard")

    web.click("th a[data-sort-key=games]")
    web.wait_for_url("**sort=games**")
    games = [int(t) for t in web.locator("[data-testid=standings] tbody tr td:nth-child(6)").all_inner_texts()]
    assert games == sorted(games, reverse=True)
    web.click("th a[data-sort-key=bot]")
    web.wait_for_url("**sort=bot**")
    by_name = [r.get_attribute("data-bot") for r in web.locator("[data-testid=standings] tbody tr").all()]
    assert by_name == sorted(by_name, key=str.lower)

    # A new result shows up without a reload.
    monkeypatch.setattr(views, "REFRESH_SECONDS", 1)
    cache.clear()  # (the page cached above says 30 s: a changed constant is a new release)
    web.goto(f"/ladders/{data['ladder'].pk}/")
    bot = data["bots"][2]
    before = Rating.objects.get(ladder=data["ladder"], bot=bot).games
    f.play(data["ladder"], [bot, data["bots"][3]], data["kinds"], seed=999)
    _wait_in_page(
        web,
        "([name, games]) => { const row = document.querySelector(`[data-testid=standings] tr[data-bot='${name}']`);"
        " return row && row.children[5].textContent.trim() === String(games); }",
        [bot.name, before + 1],
        timeout=10,
    )
    monkeypatch.setattr(views, "REFRESH_SECONDS", 30)
    web.goto("/")  # leave before the next refresh, so no fetch is cut short


def test_bot_page_chart_versions_and_head_to_head(web):
    data = f.league("allegory", 2, matches=10, seed=21)
    bot = next(b for b in data["bots"] if b.name == "alle-ace")
    # A second version takes over, then plays: the chart marks the change.
    v2 = bot_services.upload_version(bot=bot, filename="ace2.py", data=f.program("greedy", "allegory"))
    bot_services.activate_version(v2)
    bot.refresh_from_db()
    others = [b for b in data["bots"] if b.pk != bot.pk]
    for k in range(3):
        f.play(data["ladder"], [bot, others[k]], data["kinds"], seed=2100 + k)
    rating = Rating.objects.get(ladder=data["ladder"], bot=bot)

    web.goto(f"/bots/{bot.pk}/")
    chart = web.locator("[data-testid=rating-chart] svg.chart")
    assert chart.is_visible()
    assert int(chart.get_attribute("data-points")) == rating.games
    assert web.locator("svg.chart polyline.elo").count() == 1
    assert web.locator("svg.chart polyline.ordinal").count() == 1
    assert web.locator("svg.chart .version-mark", has_text="v2").count() == 1
    h2h = web.locator("[data-testid=h2h] tbody tr")
    assert h2h.count() >= 2
    assert web.locator("[data-testid=versions] tr[data-version]").count() == 2
    assert web.locator("[data-testid=validation-log]").count() == 0  # only the owner sees it
    snap(web, "bot")
    web.click("section[aria-labelledby=recent-h] tbody a[href^='/matches/'] >> nth=0")
    web.wait_for_selector("#replay[data-event]")


def test_allegory_replay_step_by_step_to_the_final_scores(web):
    data = f.league("allegory", 4, matches=2, seed=31)
    match = data["matches"][0]
    replay = _replay(web, match.pk)
    frames = _frames(web, match.pk)
    _open_replay(web, match.pk)
    assert web.locator("[data-testid=pool] .tcard").count() == len(frames["frames"][0]["obs"]["pool"])
    assert web.locator(".player").count() == 4
    n = len(replay["events"])
    for k in range(1, n):
        web.click("[data-act=forward]")
        assert _event(web) == k
        assert web.inner_text("[data-out=text]") == frames["frames"][k]["text"]
        if k == n // 2:
            snap(web, "replay-allegory-middle")
    assert web.get_attribute("#replay", "data-last") == "1"
    assert _final_scores(web) == dict(enumerate(replay["result"]["scores"]))
    assert web.locator(".moral[data-moral]").count() == 4  # every Moral revealed at the end
    breakdown = web.locator("[data-testid=final] table").text_content()
    assert "Lowest" in breakdown and "Sets" in breakdown and "Moral" in breakdown
    snap(web, "replay-allegory-final")

    # jump to a round, step back, play and pause
    web.select_option("[data-ctl=round]", index=2)
    assert _event(web) == frames["rounds"][2]["frame"]
    web.click("[data-act=back]")
    assert _event(web) == frames["rounds"][2]["frame"] - 1
    web.select_option("[data-ctl=speed]", "10")
    web.click("[data-act=play]")
    _wait_in_page(web, f"() => Number(document.querySelector('#replay').dataset.event) >= {frames['rounds'][2]['frame'] + 3}")
    web.click("[data-act=play]")
    assert web.get_attribute("#replay", "data-playing") is None


def test_allegra_replay_step_by_step_to_the_final_scores_and_views(web):
    data = f.league("allegra", 4, matches=1, seed=41)
    match = data["matches"][0]
    replay = _replay(web, match.pk)
    frames = _frames(web, match.pk)
    _open_replay(web, match.pk)
    assert web.locator("[data-testid=grids] .agrid[data-seat]").count() == 4
    assert web.locator("[data-testid=grids] .pcard.shared").count() == 4 * 3
    n = len(replay["events"])
    web.focus("body")
    for k in range(1, 6):  # the keyboard steps too
        web.keyboard.press("ArrowRight")
        assert _event(web) == k
    web.keyboard.press("ArrowLeft")
    assert _event(web) == 4
    web.keyboard.press("Home")
    seen = _step_all(web, "return [Number(document.querySelector('#replay').dataset.event), document.querySelector('[data-out=text]').textContent];")
    assert [e for e, _t in seen] == list(range(n))
    assert [t for _e, t in seen] == [fr["text"] for fr in frames["frames"]]
    assert _event(web) == n - 1
    web.select_option("[data-ctl=round]", index=1)
    web.click("[data-act=last]")
    assert _final_scores(web) == dict(enumerate(replay["result"]["scores"]))
    totals = {int(c.get_attribute("data-total")): int(c.inner_text()) for c in web.locator("[data-testid=scores] [data-total]").all()}
    assert totals == dict(enumerate(replay["result"]["scores"]))
    assert web.locator("[data-testid=scores] thead th").count() == 1 + 3 + 1  # player, R1-R3, total
    snap(web, "replay-allegra-final")
    web.select_option("[data-ctl=round]", index=2)
    web.click("[data-act=forward]")
    web.click("[data-act=forward]")
    snap(web, "replay-allegra-middle")
    # rounds and the view keep the event
    web.select_option("[data-ctl=round]", index=1)
    at = _event(web)
    assert at == frames["rounds"][1]["frame"]
    web.select_option("[data-ctl=view]", "seat-2")
    web.wait_for_selector("#replay[data-view='seat-2']")
    assert _event(web) == at
    assert web.locator(".agrid.me[data-seat='2']").count() == 1


def test_allegra_seat_view_hides_the_other_seats_cards(web):
    data = f.league("allegra", 2, matches=1, seed=51)
    match = data["matches"][0]
    full = _frames(web, match.pk)["frames"]
    seat = 1
    # the full view shows face-down cards' values
    _open_replay(web, match.pk, "#event=12&view=full")
    assert web.locator(".pcard[data-face=down][data-value][data-slot]").count() == len(full[12]["obs"]["face_down"]) > 0

    _open_replay(web, match.pk, f"#event=0&view=seat-{seat}")
    assert web.get_attribute("#replay", "data-view") == f"seat-{seat}"
    probe = """
        const down = [...document.querySelectorAll('[data-testid=grids] .pcard[data-face=down][data-slot]')];
        return {
          event: Number(document.querySelector('#replay').dataset.event),
          down: down.map(e => e.dataset.slot),
          leaks: [...document.querySelectorAll('.pcard[data-face=down]')].filter(e => e.textContent.trim() !== '' || e.hasAttribute('data-value')).length,
          log: document.querySelectorAll('[data-out=log] li').length,
        };"""
    seen = _step_all(web, probe)
    assert len(seen) == len(full)
    for k, state in enumerate(seen):
        assert state["event"] == k
        assert state["leaks"] == 0, k  # a face-down card is a back, with no value anywhere on it
        assert state["log"] == k + 1, k  # no later event in the page
        hidden = {",".join(map(str, sl)) for sl in full[k]["obs"]["face_down"]}
        assert hidden <= set(state["down"]), k
        if k:
            assert len(state["down"]) >= len(hidden)
    assert _final_scores(web) == {p.seat: p.score for p in match.participants.all()}
    web.fill("[data-ctl=event]", "12")
    web.dispatch_event("[data-ctl=event]", "input")
    assert _event(web) == 12
    snap(web, "replay-allegra-seat-view")


def test_allegory_seat_view_keeps_other_morals_hidden_until_the_end(web):
    data = f.league("allegory", 4, matches=1, seed=61)
    match = data["matches"][0]
    replay = _replay(web, match.pk)
    seat = 2
    morals = replay["events"][0]["action"]["morals"]
    _open_replay(web, match.pk, f"#event=0&view=seat-{seat}")
    n = len(replay["events"])
    probe = """
        const out = {};
        document.querySelectorAll('[data-moral-seat]').forEach(e => {
          const m = e.querySelector('.moral');
          out[e.dataset.moralSeat] = m ? m.dataset.moral : null;
        });
        return out;"""
    seen = _step_all(web, probe)
    assert len(seen) == n
    for k, shown in enumerate(seen):
        shown = {int(s): m for s, m in shown.items()}
        if k < n - 1:
            assert shown == {s: (morals[s] if s == seat else None) for s in range(4)}, k
        else:
            assert shown == dict(enumerate(morals))
    web.keyboard.press("Home")
    for _ in range(5):
        web.keyboard.press("ArrowRight")
    snap(web, "replay-allegory-seat-view")


def test_upload_through_the_page_and_see_validation(web):
    web.goto("/signup/")
    snap(web, "signup")
    web.fill("#id_username", "uploader")
    web.fill("#id_password1", "A-long-pass-1234")
    web.fill("#id_password2", "A-long-pass-1234")
    web.click("[data-testid=signup-form] button[type=submit]")
    web.wait_for_url("**/my/bots/")
    web.select_option("#id_game", "allegra")
    web.fill("#id_name", "web-uploader")
    web.fill("#id_description", "Uploaded through the page.")
    web.click("[data-testid=create-bot] button[type=submit]")
    web.wait_for_url("**/my/bots/*/")
    bot_id = int(web.url.rstrip("/").rsplit("/", 1)[1])

    # an upload that is refused: the service's message, exactly
    notes = b"not a bot at all\n"
    with pytest.raises(ServiceError) as refused:
        check_package("notes.txt", notes)
    web.set_input_files("input[type=file]", files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": notes}])
    web.click("[data-testid=upload-form] button[type=submit]")
    assert web.inner_text("[data-testid=upload-error]") == refused.value.message
    snap(web, "my-bot-upload-error")

    # drag and drop a real bot
    program = (f.ROOT / "bots" / "random_bot.py").read_text() + "\n# uploaded in the web test\n"
    transfer = web.evaluate_handle(
        "(text) => { const dt = new DataTransfer(); dt.items.add(new File([text], 'my_bot.py', {type: 'text/x-python'})); return dt; }",
        program,
    )
    web.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": transfer})
    assert "my_bot.py" in web.inner_text("[data-chosen]")
    web.click("[data-testid=upload-form] button[type=submit]")
    web.wait_for_selector("text=Uploaded my_bot.py as version 1")
    assert web.get_attribute("tr[data-version='1']", "data-status") in ("pending", "validating")
    version = BotVersion.objects.get(bot_id=bot_id, number=1)
    assert validate_version(version.pk) == "active"
    web.wait_for_selector("tr[data-version='1'][data-status='active']", timeout=15_000)  # the page polls
    assert "Playing version 1 on the Allegra ladders" in web.inner_text("[data-testid=bot-state]")
    assert web.locator("#versions-box section[aria-labelledby=recent-h] tbody tr").count() == 2  # its validation matches, with logs
    log = web.inner_text("tr.subrow [data-testid=validation-log]")
    assert "passed: 2-player validation match" in log and "passed: 4-player validation match" in log
    snap(web, "my-bot-validated")

    # a version that crashes fails validation, and says why
    crash = b"import sys\nsys.stderr.write('I give up\\n')\nsys.exit(3)\n"
    web.set_input_files("input[type=file]", files=[{"name": "crash.py", "mimeType": "text/x-python", "buffer": crash}])
    web.click("[data-testid=upload-form] button[type=submit]")
    web.wait_for_selector("text=Uploaded crash.py as version 2")
    v2 = BotVersion.objects.get(bot_id=bot_id, number=2)
    assert validate_version(v2.pk) == "failed"
    web.wait_for_selector("tr[data-version='2'][data-status='failed']", timeout=15_000)
    failed_log = web.locator("tr[data-version='2'] + tr.subrow [data-testid=validation-log]").inner_text()
    v2.refresh_from_db()
    assert failed_log.strip() == v2.validation_log.strip()
    assert "FAILED" in failed_log and "I give up" in failed_log

    # my bots, the logs of my bots' matches, the account page and its token
    web.goto("/my/bots/")
    assert web.locator("[data-testid=my-bots] tbody tr").count() == 1
    snap(web, "my-bots")
    web.click("text=stderr >> nth=0")  # the newest: a validation match of the crashing version
    assert "I give up" in web.inner_text("[data-testid=log-text]")
    snap(web, "bot-log")
    web.goto("/account/")
    key = Token.objects.get(user__username="uploader").key
    assert web.text_content("[data-testid=api-token]") == key
    snap(web, "account")


def test_login_logout_rules_and_match_pages(web):
    data = f.league("allegra", 2, matches=3, seed=71)
    owner = data["owner"]
    web.goto("/login/")
    snap(web, "login")
    login(web, owner.username, f.PASSWORD)
    match = next(m for m in data["matches"] if any(p.bot.owner_id == owner.pk for p in m.participants.all()))
    _open_replay(web, match.pk)
    links = web.locator("[data-testid=log-link]")
    assert links.count() == sum(1 for p in match.participants.all() if p.bot.owner_id == owner.pk)
    assert web.get_attribute("[data-testid=replay-download]", "href") == f"/api/matches/{match.pk}/replay/"
    snap(web, "match")
    links.first.click()
    web.wait_for_selector("[data-testid=log-text]")
    web.click("nav button:has-text('Log out')")
    web.wait_for_url(re.compile(r"^https?://[^/]+/$"))
    assert web.locator("a[href='/login/']").count() >= 1
    web.goto("/matches/")
    assert web.locator("table.matches tbody tr").count() == Match.objects.filter(status="finished").count()
    snap(web, "matches")
    for game in ("allegory", "allegra"):
        web.goto(f"/rules/{game}/")
        assert web.locator("[data-testid=rules] h2").count() >= 3
        snap(web, f"rules-{game}")


def test_page_scripts_work_under_the_content_security_policy(web):
    """The handlers that were inline attributes (refused by the policy) work
    from site.js: the token's confirmation, the ladder filter's auto-submit."""
    data = f.league("allegra", 2, matches=2, seed=83)
    owner = data["owner"]
    assert "script-src 'self'" in web.request.get("/").headers["content-security-policy"]
    login(web, owner.username, f.PASSWORD)
    web.goto("/account/")
    first = web.text_content("[data-testid=api-token]")
    web.once("dialog", lambda dialog: dialog.dismiss())
    web.click("button:has-text('Create a new token')")
    web.wait_for_timeout(500)
    assert web.text_content("[data-testid=api-token]") == first  # dismissed: nothing sent
    web.once("dialog", lambda dialog: dialog.accept())
    with web.expect_navigation():
        web.click("button:has-text('Create a new token')")
    assert web.text_content("[data-testid=api-token]") != first
    ladder = data["matches"][0].ladder
    web.goto("/matches/")
    with web.expect_navigation():
        web.select_option("select[name=ladder]", str(ladder.pk))
    assert f"ladder={ladder.pk}" in web.url
