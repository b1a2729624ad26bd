"""Playing a bot in the browser (issue 24, items 1 and 3), in a real headless
Chromium against the live server, with a real Celery worker on the casual
queue running the built-in bots in the sandbox: a person signs in, starts
a casual match from "Play against a bot" (reached from a rules page's "How
to play"), plays it to its end by clicking the moves the page offers, sees
the result, downloads the replay (which `cardroom verify` re-plays) and
opens it in the viewer. Allegra at 3 players, begun 1366 px wide and
played on at 390 px (a knock and a give, and an exchange, happen for sure:
tests/web/play_driver.py); Allegory at 2 players, its table shown at 1366
px, played at 390 px (a distribute, with + and a typed number); each game's
table fits both widths, and no page is wider than the viewport."""

from __future__ import annotations

import json
import re
import time

import pytest

from ladder.models import CasualSeat, Match
from tests.ladder.worker_fixtures import cardroom_verify, celery_workers_fixture  # noqa: F401 (the fixture)
from tests.web import factories as f
from tests.web import play_driver as driver
from tests.web.conftest import PHONE, login, snap
from tests.web.test_phone_layout import OVERFLOW

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1366, "height": 800}
CASUAL_WORKER = {"pool": "threads", "queues": "casual", "CARDROOM_CASUAL_POLL_SECONDS": "0.02"}
# Each frame the page draws: its number, when, by whom, and how many frames were queued behind it.
WATCH_FRAMES = """() => {
    const root = document.querySelector('#play');
    window.drawnFrames = [];
    new MutationObserver(() => window.drawnFrames.push({
        i: +root.dataset.event, t: performance.now(), by: root.dataset.by, queued: +root.dataset.queued,
    })).observe(root, {attributes: true, attributeFilter: ['data-event']});
}"""


def _fits(page, where: str) -> None:
    width = page.evaluate(OVERFLOW)
    assert width["scroll"] <= width["viewport"], f"{where} is wider than the viewport: {width}"


def _the_end(page, match_id: int, tmp_path) -> dict:
    """The result on the page, the replay downloaded from it and verified."""
    seat = CasualSeat.objects.select_related("match").get(pk=match_id)
    assert seat.match.status == Match.Status.FINISHED and seat.match.kind == Match.Kind.CASUAL
    mine = page.locator("[data-testid=play-result] tr.me")
    assert mine.get_attribute("data-rank") == str(seat.rank)
    assert mine.locator("[data-score]").inner_text() == str(seat.score)
    assert "The match is over: you finished" in page.inner_text("[data-out=turn]")
    with page.expect_download() as download:
        page.click("[data-testid=replay-download]")
    path = tmp_path / f"casual-{match_id}.json"
    download.value.save_as(path)
    verified = cardroom_verify(path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    replay = json.loads(path.read_text())
    assert replay["result"]["ranks"][seat.seat] == seat.rank
    return replay


def test_a_person_plays_both_games_in_the_browser_to_the_end(web, celery_workers, tmp_path):
    celery_workers.start("casual", **CASUAL_WORKER)
    person = f.user("player")
    login(web, person.username, f.PASSWORD)
    web.set_viewport_size(WIDE)

    # The rules page's "How to play" leads to "Play against a bot", the game chosen.
    web.goto("/rules/allegra/")
    web.click("[data-testid=rules] a[href='/play/?game=allegra']")
    web.wait_for_url("**/play/?game=allegra")
    assert web.is_checked("[name=game][value=allegra]")
    assert web.locator("nav.site-nav a[href='/play/']").count() == 1

    # Allegra, 3 players, 1366 px: knock, give and exchange by clicking.
    started = time.monotonic()
    # The greedy bot draws most turns (the random one about one in sixteen:
    # one action among the slots to take the discard into), so the person
    # surely has a draw to knock at; the random bot knocks at half of hers.
    match_id = driver.start_match(web, "allegra", ["builtin:greedy", "builtin:random"], seat=0)
    web.wait_for_selector(driver.TURN, timeout=60_000)
    clock = web.inner_text("[data-out=clock]")
    assert re.match(r"Your clock: (1:00|0:[0-5]\d) for this move \(", clock), clock  # a minute a move (decision 205)
    assert web.locator("#play .choice[data-choice=reveal]").count() == 15  # the 15 slots of its area
    _fits(web, "the Allegra table at 1366 px")
    # Opened again mid-match, the page shows where the match stands (its
    # events listed, the last drawn), not its history once more.
    web.click("#play .choice[data-choice=reveal]")
    web.wait_for_selector("#play[data-state=your-turn] [data-out=moves][data-decision='2']")  # the second reveal
    web.reload()
    web.wait_for_selector(driver.TURN)
    shown = int(web.get_attribute("#play", "data-event"))
    assert shown == 1 and web.locator("#play [data-out=log] li").count() == 2  # the deal and the first reveal
    # The rest at phone width: the knock, the give and the exchange are clicked at 390 px.
    web.set_viewport_size(PHONE)
    _fits(web, "the Allegra table at 390 px")
    clicks = driver.play_to_the_end(web)
    _fits(web, "the finished Allegra match at 390 px")
    web.set_viewport_size(WIDE)
    _fits(web, "the finished Allegra match at 1366 px")
    replay = _the_end(web, match_id, tmp_path)
    mine = [e["action"]["type"] for e in replay["events"] if e["by"] == 0]
    assert {"knock", "give", "exchange", "reveal"} <= set(mine), clicks
    assert not replay["result"]["forfeits"]
    allegra_seconds = time.monotonic() - started
    snap(web, "play-allegra-over")

    # Allegory, 2 players: its table at 1366 px, then bids, a take and a
    # distribute at 390 px; the others' moves one by one.
    started = time.monotonic()
    match_id = driver.start_match(web, "allegory", ["builtin:random"], seat=1)
    _fits(web, "the Allegory table at 1366 px")
    web.set_viewport_size(PHONE)
    _fits(web, "the Allegory table at 390 px")
    web.evaluate(WATCH_FRAMES)
    clicks = driver.play_to_the_end(web, speed="250")
    replay = _the_end(web, match_id, tmp_path)
    distributes = [e["action"] for e in replay["events"] if e["by"] == 1 and e["action"]["type"] == "distribute"]
    assert distributes and clicks["distribute"] == len(distributes), clicks
    assert all(len(d["chips"]) >= 1 for d in distributes)
    _fits(web, "the finished Allegory match at 390 px")
    # Every event was drawn, in order, one at a time; another seat's move
    # stayed on the table for its time before the next one queued behind it.
    drawn = web.evaluate("window.drawnFrames")
    numbers = [d["i"] for d in drawn]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))) and numbers[-1] == len(replay["events"]) - 1
    gaps = [b["t"] - a["t"] for a, b in zip(drawn, drawn[1:], strict=False) if a["by"] != "1" and a["queued"] > 0]
    assert gaps and min(gaps) >= 240, gaps
    allegory_seconds = time.monotonic() - started

    # The replay viewer, from the person's seat, fits the phone too.
    web.click("[data-testid=replay-viewer]")
    web.wait_for_selector("#replay[data-event='0'][data-view='seat-1']")
    assert "a person" in web.inner_text("[data-testid=result]")
    _fits(web, "the casual match's replay page at 390 px")
    web.goto("/play/")
    _fits(web, "the Play against a bot form at 390 px")
    print(f"\nAllegra (3 players) {allegra_seconds:.0f} s, Allegory (2 players) {allegory_seconds:.0f} s")
