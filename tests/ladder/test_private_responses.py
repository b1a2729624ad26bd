"""Issue 36, item 7: every response that holds private data is
``Cache-Control: private, no-store`` (ladder.private_responses, decision
193): the account page (the API token), a casual seat's JSON (the hand),
a bot's logs, a new token, any page for a signed-in person; and public
responses keep their own headers (the shared cache and the replays'
immutable ones)."""

from __future__ import annotations

import pytest
from django.test import Client

from ladder.caching import PUBLIC_CACHE_CONTROL, REPLAY_CACHE_CONTROL
from tests.ladder import factories as f
from tests.ladder.test_abuse_inputs import quiet_client
from tests.ladder.test_no_500s import _fill, api_routes, world_fixture  # noqa: F401 (the fixture world)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]


def directives(response) -> set[str]:
    return {d.strip() for d in response.get("Cache-Control", "").split(",") if d.strip()}


def assert_private(response) -> None:
    assert response.status_code == 200, (response.status_code, response.content[:300])
    assert directives(response) == {"private", "no-store"}, response.get("Cache-Control")


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    f.limit_rate(settings, "register", "100000/hour")
    f.limit_rate(settings, "login", "100000/hour")


def test_the_account_page_with_the_token_is_private(world):
    c = Client()
    c.force_login(world["owner"])
    response = c.get("/account/")
    assert f.token(world["owner"]) in response.content.decode()
    assert_private(response)


def test_the_seats_json_and_the_owners_logs_are_private(world):
    owner, match = world["owner"], world["match"]
    auth = {"HTTP_AUTHORIZATION": f"Token {f.token(owner)}"}
    api = Client()
    assert_private(api.get(f"/api/play/{world['casual'].pk}/", **auth))
    assert_private(api.get("/api/play/", **auth))
    log = api.get(f"/api/matches/{match.pk}/logs/0/", **auth)
    assert "hello from stderr" in log.content.decode()
    assert_private(log)
    assert_private(api.get("/api/auth/me/", **auth))
    web = Client()
    web.force_login(owner)
    assert_private(web.get(f"/matches/{match.pk}/logs/0/"))
    assert_private(web.get("/my/bots/"))
    assert_private(web.get(f"/my/bots/{world['bot'].pk}/"))
    assert_private(web.get(f"/play/{world['casual'].pk}/"))


def test_a_new_token_is_private_though_the_request_is_anonymous():
    register = Client().post("/api/auth/register/", {"username": "newcomer", "password": f.PASSWORD}, content_type="application/json")
    assert register.status_code == 201 and "token" in register.json()
    assert directives(register) == {"private", "no-store"}
    token = Client().post("/api/auth/token/", {"username": "newcomer", "password": f.PASSWORD}, content_type="application/json")
    assert_private(token)


def test_a_sign_in_that_sets_a_session_is_private():
    f.user("cookie-monster")
    response = Client().post("/login/", {"username": "cookie-monster", "password": f.PASSWORD})
    assert response.status_code == 302 and response.cookies
    assert directives(response) == {"private", "no-store"}


def test_every_api_read_for_a_signed_in_person_is_private_or_declared_public(world):
    """Whatever the route (found from the URL conf): a view's own public
    header stays (a replay), anything else answered to a token is private."""
    api = quiet_client(world["owner"])
    seen = 0
    for route in api_routes():
        if route in ("api/schema/", "api/docs/"):
            continue
        response = api.get(_fill(route, world), HTTP_AUTHORIZATION=f"Token {f.token(world['owner'])}")
        if response.status_code != 200:
            continue
        seen += 1
        got = directives(response)
        assert got == {"private", "no-store"} or "public" in got, (route, response.get("Cache-Control"))
    assert seen > 15


def test_public_responses_keep_their_headers_and_stay_in_the_shared_cache(world):
    match = world["match"]
    anonymous = Client()
    listing = anonymous.get("/api/matches/")
    assert listing["Cache-Control"] == PUBLIC_CACHE_CONTROL
    replay = anonymous.get(f"/api/matches/{match.pk}/replay/")
    assert replay["Cache-Control"] == REPLAY_CACHE_CONTROL
    # A signed-in person's request for a replay: the same bytes for everyone.
    signed_in = Client()
    signed_in.force_login(world["owner"])
    assert signed_in.get(f"/api/matches/{match.pk}/replay/")["Cache-Control"] == REPLAY_CACHE_CONTROL
    # A public page asked by a signed-in person shows who is signed in: private.
    page = signed_in.get(f"/matches/{match.pk}/")
    assert_private(page)
    assert world["owner"].username in page.content.decode()
    # ...and is never what the shared cache hands a visitor.
    again = anonymous.get(f"/matches/{match.pk}/")
    assert again["Cache-Control"] == PUBLIC_CACHE_CONTROL
    assert "private" not in again["Cache-Control"]
