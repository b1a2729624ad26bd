"""The "Play against a bot" pages through Django's test client, no worker:
who may open them, what the form offers, the links to them, and the seat's
frames (the person's own view, from the frame the page has reached). The
match played in a browser: test_play_browser.py."""

from __future__ import annotations

import json
import re

import pytest

from cardroom.runner import run_match
from ladder.models import CasualSeat
from ladder.services import casual
from tests.web import factories as f
from tests.web.test_pages import _client

pytestmark = pytest.mark.django_db

def _casual(user, game: str = "allegory", seat: int = 1) -> CasualSeat:
    match = casual.start(user=user, game=game, num_players=3, opponents=["builtin:random", "builtin:greedy"], seat=seat)
    return match.casual_seat


def test_the_form_needs_a_sign_in_and_offers_the_bots_that_can_play():
    owner = f.user("author")
    lowball = f.active_bot(owner, "allegra", "lowball")
    gone = f.active_bot(owner, "allegra", "retired-one")
    gone.withdrawn = gone.created
    gone.save(update_fields=["withdrawn"])
    anonymous = _client().get("/play/")
    assert anonymous.status_code == 302 and anonymous["Location"] == "/login/?next=/play/"

    page = _client(f.user("player")).get("/play/?game=allegra")
    html = page.content.decode()
    assert page.status_code == 200
    assert re.search(r'name="game" value="allegra" checked', html)
    choices = json.loads(re.search(r'<script id="play-opponents" type="application/json">(.*?)</script>', html, re.S).group(1))
    allegra = [c["value"] for c in choices["allegra"]]
    assert allegra[:2] == ["builtin:greedy", "builtin:random"]  # the built-ins installed, then the ladder's bots
    assert str(lowball.pk) in allegra and str(gone.pk) not in allegra
    assert [c["value"] for c in choices["allegory"]] == ["builtin:greedy", "builtin:random"]
    # the clock and the idle forfeit, from the settings
    assert "You have 1 minute for each move" in html and "stays closed for 2 minutes" in html


def test_each_rules_page_how_to_play_and_the_navigation_lead_to_the_form():
    c = _client()
    for game in ("allegory", "allegra"):
        html = c.get(f"/rules/{game}/").content.decode()
        how_to_play = html.split('id="how-to-play"', 1)[1].split("<h2", 1)[0]
        assert f'<a href="/play/?game={game}">Play against a bot</a>' in how_to_play
        assert '<a href="/play/" data-testid="nav-play">' in html
    doc = c.get("/docs/play/").content.decode()
    assert "Your clock" in doc and "Leaving a match" in doc


def test_only_the_person_opens_their_table_and_its_frames():
    alice, bob = f.user("alice"), f.user("bob")
    seat = _casual(alice)
    table = _client(alice).get(f"/play/{seat.pk}/")
    assert table.status_code == 200
    # the form lists the person's own matches, the open one leading back to the table
    assert f'<a href="/play/{seat.pk}/">#{seat.pk}</a>' in _client(alice).get("/play/").content.decode()
    assert 'data-testid="my-casual"' not in _client(bob).get("/play/").content.decode()
    assert f'data-seat="{seat.seat}"' in table.content.decode()
    assert _client(alice).get(f"/play/{seat.pk}/frames/").json()["frames"] == []  # not dealt yet
    for url in (f"/play/{seat.pk}/", f"/play/{seat.pk}/frames/"):
        assert _client(bob).get(url).status_code == 404  # another person's hand is never shown
        assert _client().get(url).status_code == 302  # to the sign-in
    ladder_match = f.league("allegra", 2, matches=1, seed=5)["matches"][0]
    assert _client(alice).get(f"/play/{ladder_match.pk}/").status_code == 404
    bad = _client(alice).get(f"/play/{seat.pk}/frames/?from=-1")
    assert bad.status_code == 400 and bad.json()["field"] == "from"


def test_the_frames_are_the_persons_own_view_from_the_frame_asked():
    alice = f.user("alice")
    seat = _casual(alice, "allegory", seat=1)
    record = run_match("allegory", ["builtin:random", "builtin:random", "builtin:random"], seed=11)
    seat.events = record.replay["events"][:30]  # the match so far, as the worker records it
    seat.save(update_fields=["events"])
    c = _client(alice)
    whole = c.get(f"/play/{seat.pk}/frames/").json()
    assert (whole["count"], len(whole["frames"]), whole["seat"], whole["result"]) == (30, 30, 1, None)
    assert whole["names"][1] == "Seat 1 · alice (you)" and whole["names"][0] == "Seat 0 · random v1"
    for frame in whole["frames"]:
        obs = frame["obs"]
        assert obs["seat"] == 1 and "moral" in obs and "morals" not in obs and "deck" not in obs  # seat 1's view
        assert frame["text"]
    later = c.get(f"/play/{seat.pk}/frames/?from=25").json()
    assert later["start"] == 25 and later["frames"] == whole["frames"][25:]


def test_a_casual_match_page_names_the_person_and_leads_back_to_the_table():
    alice = f.user("alice")
    seat = _casual(alice, "allegra", seat=0)
    html = _client(alice).get(f"/matches/{seat.pk}/").content.decode()
    assert "Casual match (never rated)" in html
    assert '<span data-testid="person">alice</span>' in html
    assert f'href="/play/{seat.pk}/" data-testid="play-link"' in html
    assert 'data-testid="play-link"' not in _client(f.user("bob")).get(f"/matches/{seat.pk}/").content.decode()


def test_the_home_page_counts_no_casual_match():
    _casual(f.user("player"))  # queued, waiting for the casual worker
    html = _client().get("/").content.decode()
    assert re.search(r'data-count="queued">0<', html), "a person's casual match counted in the ladder's queue"
