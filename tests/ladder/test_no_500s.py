"""The three 500s of issue 36, item 4, each now a 4xx naming the problem:
JSON nested 1,000 deep in a body (every JSON endpoint, found from the URL
conf, is read by the one bounded parser), a NUL in a string of a body (a
400 naming the field), and deleting a bot (or a version) entered in an
event (a 409 naming the event, on the API and the web form: decision 190)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from ladder.api.parsers import LimitedJSONParser
from ladder.models import Bot, BotVersion, Match, Tournament
from ladder.services import casual
from ladder.services import tournaments as tournament_services
from tests.ladder import factories as f
from tests.ladder.test_abuse_inputs import _routes, quiet_client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

DEPTH = 1000
DEEP_BODIES = {
    "a bare array": b"[" * DEPTH + b"]" * DEPTH,
    "inside a field": b'{"username": ' + b"[" * DEPTH + b"]" * DEPTH + b', "password": "x"}',
    "an object chain": b'{"a":' * DEPTH + b"1" + b"}" * DEPTH,
}


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    for scope in ("register", "login", "bot", "upload"):
        f.limit_rate(settings, scope, "100000/hour")


def staff_user(name: str | None = None):
    user = f.user(name)
    user.is_staff = True
    user.save()
    return user


def open_event(boss, name: str | None = None) -> Tournament:
    fields = {
        "name": name or f.unique("open cup "), "game": "allegra", "format": "round-robin", "table_size": 2,
        "starts": (timezone.now() + timedelta(hours=1)).isoformat(),
    }  # fmt: skip
    response = f.client(boss).post("/api/tournaments/", fields, format="json")
    assert response.status_code == 201, response.content
    return Tournament.objects.get(pk=response.json()["id"])


@pytest.fixture(name="world")
def world_fixture():
    """One of everything a path names, owned by a staff user."""
    owner = staff_user("deep-owner")
    mine = f.active_bot(owner, "allegra", "deep-bot")
    ladder = f.ladder("allegra", 2)
    match = f.finished_match(ladder, [mine, Bot.objects.get(game="allegra", name="random")])
    event = open_event(owner)
    seat = casual.start(user=owner, game="allegra", num_players=2, opponents=["builtin:random"], seat=0)
    return {"owner": owner, "bot": mine, "ladder": ladder, "match": match, "event": event, "casual": seat}


def _fill(route: str, world: dict) -> str:
    """A path of ``route`` naming the world's objects (the kind from the segment before an id)."""
    ids = {
        "bots": world["bot"].pk, "ladders": world["ladder"].pk, "matches": world["match"].pk,
        "tournaments": world["event"].pk, "play": world["casual"].pk, "versions": 1, "entries": world["bot"].pk, "logs": 0,
    }  # fmt: skip

    def value(m: re.Match) -> str:
        before = route[: m.start()].rstrip("/").rsplit("/", 1)[-1]
        return str(ids.get(before, 1))

    return "/" + re.sub(r"<[^>]+>", value, route)


def api_routes() -> list[str]:
    return [r for r in _routes() if r.startswith("api/") and not r.startswith("api/^")]


def test_every_api_view_reads_json_with_the_bounded_parser():
    """No view, today's or a new one, parses JSON with DRF's own parser."""
    views = []

    def walk(resolver):
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                walk(entry)
            elif isinstance(entry, URLPattern) and isinstance(getattr(entry.callback, "cls", None), type):
                views.append(entry.callback.cls)

    walk(get_resolver())
    api_views = [v for v in views if issubclass(v, APIView)]
    assert len(api_views) > 20
    for view in api_views:
        for parser in view().get_parsers():
            if isinstance(parser, JSONParser):
                assert isinstance(parser, LimitedJSONParser), (view, parser)


@pytest.mark.parametrize("shape", list(DEEP_BODIES))
def test_deep_json_on_every_api_route_is_a_4xx_never_a_500(world, shape):
    body = DEEP_BODIES[shape]
    api = quiet_client(world["owner"])
    refused_deep = set()
    for route in api_routes():
        path = _fill(route, world)
        for method in ("post", "put", "patch"):
            response = getattr(api, method)(path, data=body, content_type="application/json")
            assert response.status_code < 500, (method, path, response.status_code, response.content[:300])
            if response.status_code == 400 and "nested deeper than" in response.json().get("error", ""):
                refused_deep.add((method, route))
    # The body was read (and refused, saying why) wherever a view reads one.
    expected = {
        ("post", "api/auth/register/"), ("post", "api/auth/token/"), ("post", "api/bots/"),
        ("patch", "api/bots/<id:pk>/"), ("post", "api/tournaments/"), ("post", "api/tournaments/<id:pk>/entries/"),
        ("post", "api/play/"), ("post", "api/play/<id:pk>/action/"),
    }  # fmt: skip
    assert expected <= refused_deep, expected - refused_deep


def test_deep_json_to_the_token_endpoint_anonymously_says_what_is_wrong():
    response = quiet_client().post("/api/auth/token/", data=DEEP_BODIES["a bare array"], content_type="application/json")
    body = f.assert_error(response, 400, contains="nested deeper than 16 levels")
    assert body["error"].startswith("the body is not the JSON the API takes")


# -- NUL ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, field",
    [
        ({"game": "allegra", "num_players": 2, "opponents": ["builtin:ran\x00dom"]}, "opponents[0]"),
        ({"game": "allegra", "num_players": 3, "opponents": ["builtin:random", "builtin:\x00"]}, "opponents[1]"),
        ({"game": "alle\x00gra", "num_players": 2, "opponents": ["builtin:random"]}, "game"),
        ({"game": "allegra", "num_players": 2, "opponents": ["builtin:random"], "x\x00": 1}, "x\\0"),
    ],
)
def test_a_nul_in_a_casual_start_is_a_400_naming_the_field(body, field):
    user = f.user()
    response = quiet_client(user).post("/api/play/", body, content_type="application/json")
    error = f.assert_error(response, 400, field=field, contains="NUL")
    assert error["error"].startswith(f"{field}: ")
    assert not Match.objects.filter(kind=Match.Kind.CASUAL).exists()


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/api/auth/register/", {"username": "nul\x00user", "password": f.PASSWORD}, "username"),
        ("/api/auth/token/", {"username": "nul\x00user", "password": f.PASSWORD}, "username"),
        ("/api/bots/", {"game": "allegra", "name": "nul\x00bot"}, "name"),
        ("/api/tournaments/", {"name": "cup", "game": "allegra", "format": "swiss", "table_size": 2, "options": {"a": ["\x00"]}}, "options.a[0]"),
    ],
)
def test_a_nul_anywhere_in_a_json_body_is_a_400_naming_where(path, body, field):
    response = quiet_client(staff_user()).post(path, body, content_type="application/json")
    f.assert_error(response, 400, field=field, contains="NUL")


def test_a_nul_in_an_answer_is_a_400_naming_the_action():
    user = f.user()
    seat = casual.start(user=user, game="allegra", num_players=2, opponents=["builtin:random"], seat=0)
    response = quiet_client(user).post(f"/api/play/{seat.pk}/action/", {"action": {"type": "dr\x00aw"}}, content_type="application/json")
    f.assert_error(response, 400, field="action.type", contains="NUL")


# -- deleting a bot (or a version) entered in an event -----------------------------------


@pytest.fixture
def entered():
    boss = staff_user()
    owner = f.user()
    bot = f.active_bot(owner)
    event = open_event(boss, "Friday Night Open")
    tournament_services.enter(event, owner, bot)
    return {"owner": owner, "bot": bot, "event": event}


def test_deleting_a_bot_entered_in_an_open_event_is_a_409_naming_it(entered):
    bot, event = entered["bot"], entered["event"]
    response = quiet_client(entered["owner"]).delete(f"/api/bots/{bot.pk}/")
    body = f.assert_error(response, 409, contains="'Friday Night Open'")
    assert "withdraw the entry first" in body["error"] and f"/api/tournaments/{event.pk}/entries/{bot.pk}/" in body["error"]
    assert Bot.objects.filter(pk=bot.pk).exists()
    # Withdrawn from the event, it can be deleted.
    assert quiet_client(entered["owner"]).delete(f"/api/tournaments/{event.pk}/entries/{bot.pk}/").status_code == 204
    assert quiet_client(entered["owner"]).delete(f"/api/bots/{bot.pk}/").status_code == 204
    assert not Bot.objects.filter(pk=bot.pk).exists()


def test_deleting_a_bot_in_an_event_that_has_begun_is_a_409_keeping_it_as_history(entered):
    Tournament.objects.filter(pk=entered["event"].pk).update(status=Tournament.Status.CANCELLED)
    response = quiet_client(entered["owner"]).delete(f"/api/bots/{entered['bot'].pk}/")
    f.assert_error(response, 409, contains="keeps it as history")


def test_the_web_form_says_which_event_holds_the_bot(entered):
    bot = entered["bot"]
    confirm = quiet_client(entered["owner"]).get(f"/my/bots/{bot.pk}/delete/").content.decode()
    assert "Friday Night Open" in confirm and "withdraw the entry on the event" in confirm
    assert 'data-testid="confirm-delete"' not in confirm
    response = quiet_client(entered["owner"]).post(f"/my/bots/{bot.pk}/delete/", follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Friday Night Open" in page and "withdraw the entry first" in page
    assert Bot.objects.filter(pk=bot.pk).exists()


def test_deleting_an_old_version_an_entry_holds_is_a_409_naming_the_event(entered):
    bot, owner = entered["bot"], entered["owner"]
    first = bot.current_version
    f.version(bot)  # a newer version plays the ladders; the entry keeps the first
    response = quiet_client(owner).delete(f"/api/bots/{bot.pk}/versions/{first.number}/")
    f.assert_error(response, 409, contains="'Friday Night Open'")
    assert BotVersion.objects.filter(pk=first.pk).exists()
