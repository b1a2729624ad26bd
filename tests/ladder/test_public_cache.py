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
    # a parameter the page does not know changes nothing it shows: the same entry (decision 198)
    assert {r["bot"]: r for r in client.get(url + "?x=1").json()["results"]}[mine.pk]["elo"] != "1234.00"
    # one of its own given twice, DRF's format override, or credentials go to the view
    assert {r["bot"]: r for r in client.get(url + "?page=1&page=1").json()["results"]}[mine.pk]["elo"] == "1234.00"
    assert {r["bot"]: r for r in client.get(url + "?format=json").json()["results"]}[mine.pk]["elo"] == "1234.00"
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


# -- served first in the middleware stack (docs/operations.md, "Fast public reads") --

SECURITY_HEADERS = ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options",
                    "Cross-Origin-Opener-Policy")  # fmt: skip


@pytest.fixture
def stack_calls(monkeypatch) -> list[str]:
    """The paths of the requests that went through the middleware below the
    cache (django-csp's, which adds the policy to every response)."""
    import csp.middleware

    calls: list[str] = []
    original = csp.middleware.CSPMiddleware.process_response

    def recording(self, request, response):
        calls.append(request.path)
        return original(self, request, response)

    monkeypatch.setattr(csp.middleware.CSPMiddleware, "process_response", recording)
    return calls


@pytest.mark.parametrize("page", ["api-standings", "api-match", "web-match"])
def test_a_cached_response_carries_every_security_header_of_a_fresh_one(world, page):
    url = {
        "api-standings": f"/api/ladders/{world['ladder'].pk}/standings/",
        "api-match": f"/api/matches/{world['match'].pk}/",
        "web-match": f"/matches/{world['match'].pk}/",
    }[page]
    client = f.client() if page.startswith("api") else Client()
    fresh = client.get(url)
    # Changed behind the cache's back: the second answer really is the stored one.
    Rating.objects.filter(ladder=world["ladder"]).update(elo=1234)
    world["match"].__class__.objects.filter(pk=world["match"].pk).update(num_events=987_654_321)
    cached = client.get(url)
    assert cached.status_code == 200 and cached.content == fresh.content
    # Sentinels no timestamp can hold (a bare "1234" can be its microseconds).
    assert b"1234.00" not in cached.content and b"987654321" not in cached.content
    for name in SECURITY_HEADERS:
        assert cached.get(name), f"{name} missing from the cached response"
        assert cached[name] == fresh[name]
    assert "default-src 'self'" in cached["Content-Security-Policy"]
    assert cached["X-Content-Type-Options"] == "nosniff"


def test_a_hit_is_answered_before_the_other_middleware_runs(world, stack_calls):
    calls = stack_calls
    client = f.client()
    url = f"/api/matches/{world['match'].pk}/"
    assert client.get(url).status_code == 200
    assert calls == [url]  # the miss went through the stack
    assert client.get(url).status_code == 200
    assert client.get(url, HTTP_IF_NONE_MATCH=client.get(url)["ETag"]).status_code == 304
    assert calls == [url]  # the hits (and the 304) did not


def test_a_signed_in_user_is_never_served_the_cached_page(world):
    ladder, mine = world["ladder"], world["bots"][0]
    url = f"/api/ladders/{ladder.pk}/standings/"
    visitor = f.client()
    standings(visitor, ladder)
    Rating.objects.filter(ladder=ladder, bot=mine).update(elo=1234)
    assert standings(visitor, ladder)[mine.pk]["elo"] != "1234.00"  # the visitor: the cached page
    # A token (or any Authorization header, even a wrong one) goes to the view,
    # which answers for that client (a bad token is a 401, never the cached 200).
    assert standings(f.client(mine.owner), ladder)[mine.pk]["elo"] == "1234.00"
    assert visitor.get(url, HTTP_AUTHORIZATION="Token not-a-token").status_code == 401
    # A signed-in browser on the web pages: its own page, never the visitors' copy.
    browser = Client()
    assert browser.get(f"/matches/{world['match'].pk}/").status_code == 200
    browser.force_login(mine.owner)
    page = browser.get(f"/matches/{world['match'].pk}/")
    assert page.status_code == 200 and "ETag" not in page and "cache-owner" in page.content.decode()


def test_an_evicted_generation_never_revives_old_entries(world):
    from django.core.cache import cache

    from ladder import caching

    ladder, mine = world["ladder"], world["bots"][0]
    client = f.client()
    standings(client, ladder)
    Rating.objects.filter(ladder=ladder, bot=mine).update(elo=1234)
    cache.delete(caching._gen_key(caching.RATINGS))  # (as an LRU eviction would)
    assert standings(client, ladder)[mine.pk]["elo"] == "1234.00"


def test_a_host_not_allowed_is_a_400_on_a_cached_page(world):
    client = f.client()
    url = f"/api/matches/{world['match'].pk}/"
    assert client.get(url).status_code == 200
    assert client.get(url, HTTP_HOST="evil.example").status_code == 400


def test_a_replay_is_served_from_the_cache_with_its_own_headers(world, stack_calls):
    calls = stack_calls
    client = f.client()
    url = f"/api/matches/{world['match'].pk}/replay/"
    first = {enc: client.get(url, HTTP_ACCEPT_ENCODING=enc) for enc in ("gzip", "identity")}
    assert len(calls) == 2  # one miss per encoding
    for enc, fresh in first.items():
        again = client.get(url, HTTP_ACCEPT_ENCODING=enc)
        assert again.content == fresh.content and again["ETag"] == fresh["ETag"]
        assert again["Cache-Control"] == "public, max-age=31536000, immutable"
        assert again.get("Content-Encoding") == fresh.get("Content-Encoding")
        assert again["Content-Security-Policy"] == fresh["Content-Security-Policy"]
        assert client.get(url, HTTP_ACCEPT_ENCODING=enc, HTTP_IF_NONE_MATCH=again["ETag"]).status_code == 304
    assert first["gzip"]["Content-Encoding"] == "gzip" and "Content-Encoding" not in first["identity"]
    assert json.loads(gzip.decompress(first["gzip"].content)) == json.loads(first["identity"].content)
    assert len(calls) == 2  # the hits did not go through the stack
