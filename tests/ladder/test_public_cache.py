"""Fast public reads (ladder.caching): standings, match lists and match pages
come from the shared cache until a result is recorded; conditional GETs get
304; a finished match's replay is served as immutable."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client

from ladder.models import Bot, Rating
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    ladder = f.ladder("allegra", 2)
    mine = f.active_bot(f.user("cache-owner"), "allegra", "cache-bot")
    other = Bot.objects.get(game="allegra", name="random")
    match = f.finished_match(ladder, [mine, other])
    return {"ladder": ladder, "bots": [mine, other], "match": match}


def standings(client, ladder) -> dict:
    response = client.get(f"/api/ladders/{ladder.pk}/standings/")
    assert response.status_code == 200
    return {row["bot"]: row for row in response.json()["results"]}


def test_standings_are_served_from_the_cache_until_a_result_is_recorded(world):
    ladder, (mine, other) = world["ladder"], world["bots"]
    client = f.client()
    before = standings(client, ladder)
    assert before[mine.pk]["games"] == 1
    # A write that goes round the services (and so bumps nothing) is not seen:
    # the page really comes from the cache.
    Rating.objects.filter(ladder=ladder, bot=mine).update(elo=1234)
    assert standings(client, ladder)[mine.pk]["elo"] == before[mine.pk]["elo"]
    # A recorded result invalidates it.
    f.finished_match(ladder, [mine, other], seed=8)
    after = standings(client, ladder)
    assert after[mine.pk]["games"] == 2
    assert after[mine.pk]["elo"] != before[mine.pk]["elo"]


def test_match_lists_and_pages_follow_every_state_change(world):
    ladder, bots = world["ladder"], world["bots"]
    client = f.client()
    first = client.get("/api/matches/").json()["results"]
    queued = f.queued_match(ladder, bots, seed=9)
    listed = client.get("/api/matches/").json()["results"]
    assert [m["id"] for m in listed] == [queued.pk] + [m["id"] for m in first]
    assert client.get(f"/api/matches/{queued.pk}/").json()["status"] == "queued"
    f.running_match(ladder, bots, seed=10)
    from ladder.services import matches as match_services

    match_services.cancel(queued)
    assert client.get(f"/api/matches/{queued.pk}/").json()["status"] == "cancelled"
    web = Client()
    assert "Cancelled" in web.get(f"/matches/{queued.pk}/").content.decode()


def test_a_conditional_get_is_answered_304(world):
    client = f.client()
    url = f"/api/ladders/{world['ladder'].pk}/standings/"
    first = client.get(url)
    etag, modified = first["ETag"], first["Last-Modified"]
    assert etag and modified and "public" in first["Cache-Control"]
    again = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=modified).status_code == 304
    # once a result is recorded, the old ETag no longer matches
    f.finished_match(world["ladder"], world["bots"], seed=11)
    fresh = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert fresh.status_code == 200 and fresh["ETag"] != etag


def test_web_pages_are_cached_for_visitors_only(world):
    match = world["match"]
    visitor = Client()
    page = visitor.get(f"/matches/{match.pk}/")
    assert page.status_code == 200 and page["ETag"]
    assert visitor.get(f"/matches/{match.pk}/", HTTP_IF_NONE_MATCH=page["ETag"]).status_code == 304
    # a signed-in owner gets their own page (their name, their log links), never the visitors' copy
    owner = Client()
    owner.force_login(world["bots"][0].owner)
    mine = owner.get(f"/matches/{match.pk}/")
    html = mine.content.decode()
    assert "cache-owner" in html and 'data-testid="log-link"' in html
    assert mine.get("ETag") != page["ETag"]
    assert 'data-testid="log-link"' not in visitor.get(f"/matches/{match.pk}/").content.decode()


def test_requests_that_are_not_the_shared_page_skip_the_cache(world):
    ladder, mine = world["ladder"], world["bots"][0]
    client = f.client()
    url = f"/api/ladders/{ladder.pk}/standings/"
    standings(client, ladder)
    Rating.objects.filter(ladder=ladder, bot=mine).update(elo=1234)
    # a parameter the page does not know, or credentials, go to the view
    assert {r["bot"]: r for r in client.get(url + "?x=1").json()["results"]}[mine.pk]["elo"] == "1234.00"
    signed_in = f.client(mine.owner)
    assert {r["bot"]: r for r in signed_in.get(url).json()["results"]}[mine.pk]["elo"] == "1234.00"
    assert "ETag" not in signed_in.get(url)


def test_a_replay_is_immutable(world):
    match = world["match"]
    client = f.client()
    url = f"/api/matches/{match.pk}/replay/"
    plain = client.get(url)
    assert plain.status_code == 200
    assert plain["Cache-Control"] == "public, max-age=31536000, immutable"
    doc = json.loads(plain.content)
    assert doc["format"] == "cardroom-replay"
    assert client.get(url, HTTP_IF_NONE_MATCH=plain["ETag"]).status_code == 304
    # compressed for a client that accepts it: the same document, its own ETag
    packed = client.get(url, HTTP_ACCEPT_ENCODING="gzip, br")
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    assert json.loads(gzip.decompress(packed.content)) == doc
    assert packed["ETag"] != plain["ETag"]
    assert client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=packed["ETag"]).status_code == 304
    # a replay file lost from storage: a 404 that says so, not a 500
    lost = f.finished_match(world["ladder"], world["bots"], seed=13)
    lost.replay.storage.delete(lost.replay.name)
    response = client.get(f"/api/matches/{lost.pk}/replay/")
    assert response.status_code == 404 and "missing from storage" in response.json()["error"]
    # no replay yet: a 404, not cached for later
    queued = f.queued_match(world["ladder"], world["bots"], seed=12)
    assert client.get(f"/api/matches/{queued.pk}/replay/").status_code == 404
