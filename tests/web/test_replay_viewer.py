"""What the replay viewer says, read as a newcomer reads it, in a real
headless Chromium: events, rows and columns numbered from 0 as in the
replay file and the protocol, the score under a grid named for what it is,
and every digit of a three-digit score on a phone's screen."""

from __future__ import annotations

import pytest

from tests.web import factories as f
from tests.web.conftest import PHONE, snap
from tests.web.test_browser import _frames, _open_replay, _replay

pytestmark = pytest.mark.django_db(transaction=True)


def test_allegra_viewer_numbers_events_rows_and_columns_from_0(web):
    data = f.league("allegra", 2, matches=1, seed=41)
    match = data["matches"][0]
    replay = _replay(web, match.pk)
    frames = _frames(web, match.pk)["frames"]
    last = len(replay["events"]) - 1
    k, reveal = next((k, e) for k, e in enumerate(replay["events"]) if e["action"].get("type") == "reveal")
    seat, row, col = reveal["action"]["slot"]

    _open_replay(web, match.pk, f"#event={k}&view=full")
    # the counter shows the event's own number: the slider's, the log's and the address's
    assert web.inner_text("[data-out=event]") == f"{k} of 0–{last}"
    assert web.inner_text("[data-out=log] li.current .ix") == str(k)
    # the slot as the protocol writes it: [seat, row, column], from 0
    assert web.inner_text("[data-out=text]").endswith(f"'s row {row}, column {col}.")
    card = web.locator(f".pcard.mark[data-slot='{seat},{row},{col}']")
    assert card.get_attribute("title").endswith(f"slot [{seat}, {row}, {col}]")
    assert web.inner_text(f".agrid[data-seat='{seat}'] .shared-label").startswith("col 3 shared with")
    assert "numbered as in the protocol's slots [seat, row, column]" in web.inner_text("[data-testid=slot-note]")
    web.focus("body")
    web.keyboard.press("Home")
    assert web.inner_text("[data-out=event]") == f"0 of 0–{last}"
    web.keyboard.press("End")
    assert web.inner_text("[data-out=event]") == f"{last} of 0–{last}"

    # under each grid: the game's score so far (the rounds already scored), said so
    after_round_1 = next(k for k, fr in enumerate(frames) if fr.get("round_end")) + 1
    web.keyboard.press("Home")
    for _ in range(after_round_1):
        web.keyboard.press("ArrowRight")
    scores = frames[after_round_1]["obs"]["scores"]
    assert any(scores)
    for s, score in enumerate(scores):
        assert web.inner_text(f"[data-game-score='{s}']") == f"game score so far: {score}"


# For each element matched: is all of its text inside the green table and
# inside every box that clips it (a scroll box, the screen)? Text spilling
# past the table is drawn white on white.
TEXT_SHOWN = """(selector) => [...document.querySelectorAll(selector)].map(el => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const text = range.getBoundingClientRect();
    const felt = el.closest('.felt').getBoundingClientRect();
    let left = Math.max(0, felt.left), right = Math.min(document.documentElement.clientWidth, felt.right);
    for (let box = el.parentElement; box; box = box.parentElement) {
        if (getComputedStyle(box).overflowX !== 'visible') {
            const b = box.getBoundingClientRect();
            left = Math.max(left, b.left);
            right = Math.min(right, b.right);
        }
    }
    return {text: el.textContent, shown: text.left >= left - 0.5 && text.right <= right + 0.5,
            from: Math.round(text.left), to: Math.round(text.right), visible_to: Math.round(right)};
})"""


def test_three_digit_scores_are_whole_on_a_phone(web):
    data = f.league("allegra", 4, matches=1, seed=1)
    match = data["matches"][0]
    scores = [p.score for p in match.participants.order_by("seat")]
    assert max(scores) >= 100  # the case that was cut to two digits
    web.set_viewport_size(PHONE)
    _open_replay(web, match.pk)
    web.click("[data-act=last]")
    assert web.get_attribute("#replay", "data-last") == "1"
    for selector in ("[data-testid=scores] [data-total]", "[data-game-score]", "[data-testid=final] [data-final-score]"):
        cells = web.evaluate(TEXT_SHOWN, selector)
        assert len(cells) == 4, selector
        assert all(c["shown"] for c in cells), (selector, cells)
    shown = {int(c.get_attribute("data-total")): c.inner_text() for c in web.locator("[data-testid=scores] [data-total]").all()}
    assert shown == {s: str(v) for s, v in enumerate(scores)}


def test_allegra_viewer_explains_and_lights_a_seats_area_with_the_shared_column(web):
    data = f.league("allegra", 2, matches=1, seed=43)
    match = data["matches"][0]
    _open_replay(web, match.pk, "#event=5&view=full")
    help_text = web.inner_text("[data-testid=area-help]")
    assert "each seat's column 3 (ringed in gold) belongs to two areas" in help_text
    assert "its own four columns plus the gold column just left of its grid" in help_text

    def lit():
        return web.eval_on_selector_all(
            ".agrid .pcard.in-area",
            "els => els.map(el => (el.closest('.agrid').dataset.seat ?? 'ghost') + ':' + (el.dataset.slot || 'copy'))",
        )

    def check(seat: int) -> None:
        # its 12 cards and the next seat's column 3: seat 0's for seat 1,
        # lit where it is and in its copy (the ghost) beside seat 1's grid
        cards = lit()
        assert sum(c.startswith(f"{seat}:") for c in cards) == 12, cards
        if seat == 0:
            assert sorted(c for c in cards if not c.startswith("0:")) == ["1:1,0,3", "1:1,1,3", "1:1,2,3"]
        else:
            assert sorted(c for c in cards if not c.startswith("1:")) == ["0:0,0,3", "0:0,1,3", "0:0,2,3", *["ghost:copy"] * 3]
        assert web.inner_text("[data-testid=area-now]") == f"S{seat}'s area now lit: S{seat}'s columns 0–3 and S{1 - seat}'s column 3."

    snap(web, "allegra-area")
    # the seat to act's area
    active = int(web.get_attribute(".agrid.active", "data-seat"))
    other = 1 - active
    check(active)
    # hovering the other grid lights that seat's area instead, and leaving it goes back
    web.hover(f".agrid[data-seat='{other}']")
    check(other)
    web.hover("[data-testid=slot-note]")
    check(active)
