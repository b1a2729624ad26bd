"""A person at the "Play against a bot" page, in a real browser: starts a
casual match with the form and plays it to its end by clicking what the page
offers (tests/web/test_play_browser.py). Not a conftest: imported.

The person's choices make the moves the tests must see happen surely, not
by luck of the deal:
- Allegory: Rest in the Prologue, then bid all one may in every story round:
  no bot can outbid a seat that holds as many chips as anyone, so the person
  wins a story round and pays the bid out (a distribute), clicking + on one
  card and typing into another.
- Allegra: draw on every turn and knock at every draw of another, and give
  the drawn card whenever a bot knocked; otherwise discard it and turn a
  face-down card up (the rounds end soon). The tests seat the greedy bot,
  which draws most turns, beside the random one, which knocks at half the
  person's draws: a random bot draws about one turn in sixteen, and a
  match of two once gave the person nothing to knock at.
"""

from __future__ import annotations

import json
import time

DONE = "#play[data-state=over][data-stored='1']"
TURN = "#play[data-state=your-turn]"


def start_match(page, game: str, opponents: list[str], seat: int | None = None) -> int:
    """Fill in and send the form; returns the new match's id (from the URL)."""
    page.goto(f"/play/?game={game}")
    page.check(f"[name=game][value={game}]")
    page.select_option("[name=num_players]", str(len(opponents) + 1))
    for k, opponent in enumerate(opponents, start=1):
        page.select_option(f"#play-opponent-{k}", opponent)
    if seat is not None:
        page.select_option("[name=seat]", str(seat))
    page.click("#play-new button[type=submit]")
    page.wait_for_url("**/play/*/")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def _actions(page, selector: str) -> list[dict]:
    return [json.loads(a) for a in page.eval_on_selector_all(selector, "els => els.map(e => e.getAttribute('data-action'))")]


def _click_action(page, kind: str) -> bool:
    button = page.locator(f"#play [data-out=moves] button[data-action-type={kind}]").first
    if button.count():
        button.click()
        return True
    return False


def _allegory_move(page, clicks: dict) -> None:
    if page.locator("[data-testid=distribute]").count():
        rows = page.locator("[data-testid=distribute] .dist-row")
        total = int(page.get_attribute("[data-testid=distribute] .dist-row input", "max"))
        # One chip with +, the rest typed into the next card's box (if there is one).
        rows.nth(0).locator("button[data-step='1']").click()
        if total > 1:
            rows.nth(1 if rows.count() > 1 else 0).locator("input").fill(str(total - 1 if rows.count() > 1 else total))
        page.click("[data-testid=distribute] button[data-action-type=distribute]")
        clicks["distribute"] = clicks.get("distribute", 0) + 1
        return
    if page.locator("#play button[data-action-type=take]").count():
        page.locator("#play [data-out=table] .pool .choice").first.click()  # the card itself, on the table
        clicks["take"] = clicks.get("take", 0) + 1
        return
    prologue = page.locator("#play .allegory-table .status-bar b").first.inner_text() == "Prologue"
    bid = page.locator("#play [data-ctl=bid]")
    if not prologue and bid.count():
        bid.fill(bid.get_attribute("max"))
        page.click("#play button[data-action-type=bid]")
        clicks["bid"] = clicks.get("bid", 0) + 1
        return
    page.locator("#play button[data-action-type=rest]").first.click()
    clicks["rest"] = clicks.get("rest", 0) + 1


def _allegra_move(page, clicks: dict) -> None:
    # Draw (so that bots may knock) until the person has given a card once,
    # knock twice; then the quickest way to the end: pass, and take the
    # discard into a face-down slot (one card turned up a turn).
    given = bool(clicks.get("give"))
    wanted = ["give"] * (not given) + ["knock"] * (clicks.get("knock", 0) < 2) + ["pass"] + ["draw"] * (not given)
    for kind in wanted:
        if _click_action(page, kind):
            clicks[kind] = clicks.get(kind, 0) + 1
            return
    modes = page.eval_on_selector_all("#play button.mode", "els => els.map(e => e.dataset.mode)")
    offered = set(modes) or set(page.eval_on_selector_all("#play [data-out=table] .choice", "els => els.map(e => e.dataset.choice)"))
    for mode in ("reveal", "place", "exchange", "discard", "take_discard", "swap"):
        if mode in offered:
            if modes:
                page.click(f"#play button.mode[data-mode={mode}]")
            choices = page.locator("#play [data-out=table] .choice")
            face_down = page.locator("#play [data-out=table] .choice[data-face=down]")
            (face_down if face_down.count() else choices).first.click()
            if mode == "exchange":  # two clicks: the knocker's card, then where it goes
                page.wait_for_selector("#play [data-out=table] .pcard.picked")
                page.locator("#play [data-out=table] .choice").first.click()
            clicks[mode] = clicks.get(mode, 0) + 1
            return
    for kind in ("draw", "discard"):  # no slot to take the discard into / none face down to turn up
        if _click_action(page, kind):
            clicks[kind] = clicks.get(kind, 0) + 1
            return
    raise AssertionError("no move found to click: " + page.inner_text("#play [data-out=moves]"))


def play_to_the_end(page, speed: str = "0", timeout: float = 240) -> dict:
    """Click moves until the page shows the stored result; returns how many
    moves of each kind were clicked. ``speed``: the page's setting for the
    others' moves (ms each; "0": at once)."""
    page.select_option("#play [data-ctl=speed]", speed)
    clicks: dict = {}
    deadline = time.monotonic() + timeout
    game = page.get_attribute("#play", "data-game")
    while time.monotonic() < deadline:
        page.wait_for_selector(f"{TURN}, {DONE}", timeout=60_000)
        if page.locator(DONE).count():
            return clicks
        decision = page.get_attribute(f"{TURN} [data-out=moves]", "data-decision")
        (_allegory_move if game == "allegory" else _allegra_move)(page, clicks)
        # The move is sent: wait until the page has left this decision.
        page.wait_for_function(
            "d => { const r = document.querySelector('#play'); const m = r.querySelector('[data-out=moves]');"
            " return r.dataset.state !== 'your-turn' || m.dataset.decision !== d; }",
            arg=decision,
            timeout=60_000,
        )
    raise AssertionError(f"the match did not end within {timeout} s; clicked {clicks}")
