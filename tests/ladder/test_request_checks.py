"""Checks before any view (issue 25, items 5, 6 and 8; ladder.request_checks
and ladder.caching): a NUL byte in any query parameter is a 400 on every
API list endpoint and every page with filters; an Authorization header
without a working token is a 401, never an anonymous answer that skips the
caches; the app cache never keeps a variant one client chose with Accept
parameters."""

from __future__ import annotations

import re

import pytest

from tests.ladder import factories as f
from tests.ladder.test_abuse_inputs import _routes, quiet_client, world  # noqa: F401  (world: a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

NUL = "\x00"

# Every GET list endpoint and filtered page, with the parameters it takes.
FILTERED = [
    ("/api/bots/", ["owner", "name", "game", "page", "page_size"]),
    ("/api/ladders/", ["page"]),
    ("/api/ladders/{ladder}/standings/", ["page", "page_size"]),
    ("/api/bots/{bot}/versions/", ["page", "page_size"]),
    ("/api/matches/", ["ladder", "bot", "status", "cursor", "page_size"]),
    ("/api/tournaments/", ["page", "page_size"]),
    ("/", ["page"]),
    ("/ladders/{ladder}/", ["sort", "dir", "page", "partial"]),
    ("/bots/{bot}/", ["ladder"]),
    ("/matches/", ["before", "ladder", "bot"]),
    ("/matches/{match}/frames/", ["view"]),
    ("/my/bots/{bot}/", ["partial"]),
    ("/tournaments/", ["status", "game"]),
    ("/login/", ["next"]),
]


def _url(path: str, world) -> str:  # noqa: F811
    return path.format(ladder=world["ladder"].pk, bot=world["bot"].pk, match=world["match"].pk)


@pytest.mark.parametrize("path, params", FILTERED, ids=[p for p, _ in FILTERED])
def test_a_nul_byte_in_any_filter_is_a_400_naming_it(world, path, params):  # noqa: F811
    c = quiet_client(world["owner"])
    for name in params:
        for value in (NUL, f"abc{NUL}", f"{NUL}1"):
            response = c.get(_url(path, world), {name: value})
            assert response.status_code == 400, (path, name, repr(value), response.status_code)
            if path.startswith("/api/"):
                f.assert_error(response, 400, field=name, contains="NUL byte")
            else:
                assert "NUL byte" in response.content.decode()


def test_the_issues_nul_filters_are_400s():
    """`?owner=%00` and `?name=%00` were 500s on PostgreSQL."""
    for query in ("owner=%00", "name=%00"):
        response = quiet_client().get(f"/api/bots/?{query}")
        f.assert_error(response, 400, field=query.split("=")[0], contains="NUL byte")


def test_every_get_route_refuses_a_nul_in_a_parameter_name_or_value(world):  # noqa: F811
    c = quiet_client(world["owner"])
    real = {"pk": str(world["match"].pk), "seat": "0", "number": "1", "action": "pause", "game": "allegra",
            "slug": "protocol", "filename": "random_bot.py", "uidb64": "MQ", "token": "x-y"}  # fmt: skip
    swept = 0
    for route in _routes():
        if "(?" in route or "^" in route:
            continue  # (the API's catch-all: a JSON 404 for any path, checked below)
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        if not set(names) <= set(real):
            continue  # (the admin's own object routes)
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: real[m.group(1)], route)
        for query in ({"q": NUL}, {f"q{NUL}": "1"}):
            response = c.get(path, query)
            assert response.status_code == 400, (path, query, response.status_code)
        swept += 1
    assert swept >= 40
    assert c.get("/api/no/such/thing/", {"q": NUL}).status_code == 400


# -- the Authorization header --------------------------------------------------------------

BAD_HEADERS = ["Bearer abc", "Basic dXNlcjpwYXNz", "Token", "Token a b", "", "Token not-a-real-token", "junk"]


@pytest.mark.parametrize("header", BAD_HEADERS)
@pytest.mark.parametrize("path", ["/api/matches/", "/api/ladders/{ladder}/standings/", "/api/games/", "/matches/", "/ladders/{ladder}/", "/"])
def test_an_authorization_header_without_a_working_token_is_a_401(world, path, header):  # noqa: F811
    response = quiet_client().get(_url(path, world), HTTP_AUTHORIZATION=header)
    assert response.status_code == 401, (path, header, response.status_code)
    assert response["WWW-Authenticate"] == "Token"
    if path.startswith("/api/"):
        body = f.assert_error(response, 401)
        assert "token" in body["error"].lower()


def test_a_working_token_still_reads_and_writes(world):  # noqa: F811
    api = f.client()
    api.credentials(HTTP_AUTHORIZATION=f"Token {f.token(world['owner'])}")
    assert api.get("/api/matches/").status_code == 200
    assert api.post("/api/bots/", {"game": "allegra", "name": "token-bot"}, format="json").status_code == 201
    page = quiet_client().get("/matches/", HTTP_AUTHORIZATION=f"token {f.token(world['owner'])}")
    assert page.status_code == 200


def test_a_deactivated_accounts_token_is_a_401(world):  # noqa: F811
    key = f.token(world["owner"])
    world["owner"].is_active = False
    world["owner"].save()
    f.assert_error(quiet_client().get("/api/matches/", HTTP_AUTHORIZATION=f"Token {key}"), 401)


def test_signing_in_ignores_a_stale_token(world):  # noqa: F811
    """The token endpoints take no credentials: a client holding an old token
    (cardroom login) can still get the current one."""
    api = f.client()
    api.credentials(HTTP_AUTHORIZATION="Token stale-one")
    response = api.post("/api/auth/token/", {"username": world["owner"].username, "password": f.PASSWORD}, format="json")
    assert response.status_code == 200 and response.json()["token"] == f.token(world["owner"])


# -- Accept parameters and the app cache ----------------------------------------------------


@pytest.mark.parametrize("path", ["/api/matches/", "/api/ladders/{ladder}/standings/", "/api/matches/{match}/"])
def test_a_variant_chosen_with_accept_parameters_is_never_served_to_others(world, path):  # noqa: F811
    url = _url(path, world)
    indented = quiet_client().get(url, HTTP_ACCEPT="application/json; indent=8")
    assert indented.status_code == 200
    assert b"\n        " in indented.content  # that client's choice, honoured
    for accept in ("application/json", "*/*", None, "application/json;q=0.9, */*;q=0.1"):
        extra = {"HTTP_ACCEPT": accept} if accept else {}
        plain = quiet_client().get(url, **extra)
        assert plain.status_code == 200
        assert b"\n " not in plain.content, (accept, plain.content[:120])
    # ...and once the plain page is cached, the indented client still gets its own
    again = quiet_client().get(url, HTTP_ACCEPT="application/json; indent=8")
    assert b"\n        " in again.content
