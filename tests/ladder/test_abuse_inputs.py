"""Hostile input gets a 4xx saying what was wrong, never a 500 (issue 11,
item 6 and its kind): cursors, ids past 64 bits in paths and filters on
every route, oversized JSON bodies, file names the file system refuses, and
uploads over the limit through the web form."""

from __future__ import annotations

import base64
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from ladder.models import Bot
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

HUGE = "9" * 26  # past bigint, past any 64-bit integer
BAD_IDS = [HUGE, str(2**63), "-1", "0", "abc", "1e3", "%20", "²"]  # "²".isdigit(), but int("²") fails


@pytest.fixture
def world():
    owner = f.user("input-owner")
    mine = f.active_bot(owner, "allegra", "input-bot")
    ladder = f.ladder("allegra", 2)
    match = f.finished_match(ladder, [mine, Bot.objects.get(game="allegra", name="random")])
    return {"owner": owner, "bot": mine, "ladder": ladder, "match": match}


def quiet_client(user=None) -> Client:
    """A client that gets a 500 as a response (so the test can say which URL)."""
    c = Client(raise_request_exception=False)
    if user is not None:
        c.force_login(user)
    return c


def _routes(resolver=None, prefix: str = ""):
    """Every path pattern of the URL conf, as text (e.g. "api/bots/<id:pk>/")."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


# -- cursors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cursor",
    [
        "cD1hYmM=",  # "p=abc": decodes, but the position is no id
        base64.b64encode(f"p={HUGE}".encode()).decode(),  # a position past bigint
        base64.b64encode(b"p=-5").decode(),
        base64.b64encode("p=²".encode()).decode(),
        base64.b64encode(b"o=abc").decode(),
        "not-a-cursor",
    ],
)
def test_bad_cursors_are_400_naming_the_cursor(world, cursor):
    response = quiet_client().get("/api/matches/", {"cursor": cursor})
    body = f.assert_error(response, 400, field="cursor")
    assert "cursor" in body["error"]


def test_a_good_cursor_still_pages(world):
    f.finished_match(world["ladder"], [world["bot"], Bot.objects.get(game="allegra", name="greedy")], seed=9)
    first = f.client().get("/api/matches/", {"page_size": 1}).json()
    nxt = f.client().get(first["next"])
    assert nxt.status_code == 200
    assert nxt.json()["results"][0]["id"] < first["results"][0]["id"]


# -- ids in query strings --------------------------------------------------------------------


def test_the_issues_matches_page_with_a_huge_bot_id_is_a_400_page(world):
    response = quiet_client().get("/matches/", {"bot": "99999999999999999999999999"})
    assert response.status_code == 400
    assert "bot takes an id" in response.content.decode()


@pytest.mark.parametrize("name", ["bot", "ladder", "before"])
@pytest.mark.parametrize("value", BAD_IDS)
def test_web_match_list_filters_refuse_bad_ids(world, name, value):
    response = quiet_client().get("/matches/", {name: value})
    assert response.status_code == 400, (name, value, response.status_code)
    assert f"{name} takes an id" in response.content.decode()


@pytest.mark.parametrize("name", ["bot", "ladder"])
@pytest.mark.parametrize("value", BAD_IDS)
def test_api_match_filters_refuse_bad_ids(world, name, value):
    f.assert_error(quiet_client().get("/api/matches/", {name: value}), 400, field=name)


LIST_QUERIES = [
    # every list endpoint with hostile filters and paging
    ("/api/bots/", {"game": HUGE}), ("/api/bots/", {"owner": HUGE}), ("/api/bots/", {"page": HUGE}),
    ("/api/bots/", {"page": "-1"}), ("/api/bots/", {"page_size": HUGE}), ("/api/bots/", {"page_size": "-3"}),
    ("/api/ladders/", {"page": HUGE}), ("/api/matches/", {"status": HUGE}), ("/api/matches/", {"page_size": HUGE}),
    ("/api/matches/", {"page_size": "abc"}), ("/api/ladders/{ladder}/standings/", {"page": HUGE}),
    ("/api/ladders/{ladder}/standings/", {"page_size": "0"}), ("/api/bots/{bot}/versions/", {"page": HUGE}),
    ("/", {"page": HUGE}), ("/ladders/{ladder}/", {"page": HUGE}), ("/ladders/{ladder}/", {"page": "-9", "sort": HUGE, "dir": HUGE}),
    ("/ladders/{ladder}/", {"partial": "1", "page": "x"}), ("/bots/{bot}/", {"ladder": HUGE}), ("/bots/{bot}/", {"ladder": "-1"}),
    ("/matches/{match}/frames/", {"view": f"seat-{HUGE}"}), ("/matches/{match}/frames/", {"view": "seat--1"}),
    ("/my/bots/{bot}/", {"partial": HUGE}),
]  # fmt: skip


@pytest.mark.parametrize("path, query", LIST_QUERIES)
def test_list_endpoints_with_hostile_filters_are_never_500(world, path, query):
    url = path.format(ladder=world["ladder"].pk, bot=world["bot"].pk, match=world["match"].pk)
    response = quiet_client(world["owner"]).get(url, query)
    assert response.status_code < 500, (url, query, response.status_code)
    if url.startswith("/api/") and response.status_code >= 400:
        assert "error" in response.json()


# -- ids in paths: a sweep of the URL conf ------------------------------------------------


def test_every_route_with_an_id_refuses_bad_ids_with_a_404(world):
    """Each route of the URL conf taking an id (or a seat), with ids past
    64 bits, zero, negative and non-numeric: a 404, never a 500 (a GET and a
    POST, signed in, so the views' own code runs as far as it can)."""
    routes = [r for r in _routes() if "<id:" in r or "<seat:" in r or "<version:" in r]
    assert len(routes) >= 12, routes  # the sweep sees the API's and the pages' routes
    assert not [r for r in _routes() if "<int:" in r], "an <int:...> path id reaches the database unbounded"
    c = quiet_client(world["owner"])
    real = {"pk": str(world["match"].pk), "bot": str(world["bot"].pk), "seat": "0", "number": "1", "action": "pause"}
    for route in routes:
        for bad in BAD_IDS + ["99999"]:
            for name in re.findall(r"<\w+:(\w+)>", route):
                if name == "seat" and bad == "0":
                    continue  # seat 0 is a seat
                if name == "number" and bad == str(2**63):
                    continue  # (past the version converter's 9 digits anyway)
                path = route
                for other in re.findall(r"<\w+:(\w+)>", route):
                    value = bad if other == name else real[other]
                    path = re.sub(rf"<\w+:{other}>", value, path)
                for method in (c.get, c.post):
                    response = method("/" + path)
                    assert response.status_code < 500, (method.__name__, path, response.status_code)
                    if bad != "99999":  # (99999 is a well-formed id or seat: a 404, a 405 or a 403)
                        assert response.status_code == 404, (method.__name__, path, response.status_code)


# -- bodies --------------------------------------------------------------------------------


def test_a_13_mb_json_body_is_a_json_413(world):
    api = f.client(world["owner"])
    body = b'{"game": "allegra", "name": "big", "description": "' + b"x" * (13 * 1024 * 1024) + b'"}'
    response = api.post("/api/bots/", data=body, content_type="application/json")
    f.assert_error(response, 413, contains="the limit is")
    assert not Bot.objects.filter(name="big").exists()


def test_json_over_the_limit_without_a_length_is_a_413_too(settings, world):
    settings.CARDROOM_MAX_JSON_BYTES = 100
    api = f.client()
    response = api.post("/api/auth/register/", data=b'{"username": "' + b"u" * 200 + b'"}', content_type="application/json")
    f.assert_error(response, 413, contains="100 bytes")


def test_a_13_mb_form_body_is_refused_not_a_500(world):
    api = f.client(world["owner"])
    response = quiet_client(world["owner"]).post(
        "/api/bots/", data="game=allegra&name=big&description=" + "x" * (13 * 1024 * 1024),
        content_type="application/x-www-form-urlencoded",
        HTTP_AUTHORIZATION=f"Token {f.token(world['owner'])}",
    )
    assert 400 <= response.status_code < 500, response.status_code
    assert "error" in response.json()
    assert api.get("/api/bots/").status_code == 200


# -- upload file names ----------------------------------------------------------------------


LONG_NAME = "中" * 100 + ".py"  # 103 characters, 302 bytes: Errno 36 on a 255-byte file system


def test_api_upload_with_a_name_too_long_in_bytes_is_a_400(world):
    response = f.client(world["owner"]).post(
        f"/api/bots/{world['bot'].pk}/versions/", {"file": SimpleUploadedFile(LONG_NAME, f.bot_program())}, format="multipart"
    )
    body = f.assert_error(response, 400, field="file", contains="too long")
    assert "303 bytes" in body["error"]


def test_web_upload_with_a_name_too_long_in_bytes_says_so(world):
    c = quiet_client(world["owner"])
    response = c.post(reverse("web-my-bot", args=[world["bot"].pk]), {"file": SimpleUploadedFile(LONG_NAME, f.bot_program())})
    assert response.status_code == 200
    assert "too long" in response.content.decode()
    assert world["bot"].versions.count() == 1


def test_a_long_but_storable_unicode_name_is_accepted(world):
    name = "中" * 40 + ".py"  # 123 bytes
    response = f.client(world["owner"]).post(
        f"/api/bots/{world['bot'].pk}/versions/", {"file": SimpleUploadedFile(name, f.bot_program())}, format="multipart"
    )
    assert response.status_code == 201, response.content
    assert response.json()["filename"] == name


# -- the web upload form uses the upload guard ------------------------------------------------


def test_web_upload_over_the_limit_is_dropped_at_the_limit(settings, world, monkeypatch):
    """The web form's body goes through UploadLimit too: a file over the
    limit is never written past the limit (to memory or /tmp)."""
    from django.core.files.uploadhandler import MemoryFileUploadHandler, TemporaryFileUploadHandler

    settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    written = []
    for handler in (TemporaryFileUploadHandler, MemoryFileUploadHandler):
        original = handler.receive_data_chunk
        monkeypatch.setattr(
            handler, "receive_data_chunk", lambda self, data, start, original=original: written.append(len(data)) or original(self, data, start)
        )
    c = quiet_client(world["owner"])
    response = c.post(reverse("web-my-bot", args=[world["bot"].pk]), {"file": SimpleUploadedFile("huge.py", b"#" * 3_000_000)})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="upload-error"' in html
    assert "huge.py: the package is over the size limit for an uploaded package; the limit is 1000 bytes" in html
    assert "more than" not in html  # not "more than X; the limit is X"
    assert sum(written) <= 1000
    assert world["bot"].versions.count() == 1
