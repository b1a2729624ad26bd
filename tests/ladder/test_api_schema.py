"""The OpenAPI document at /api/schema/ and a schemathesis run against it:
every operation, anonymous and signed in, with valid and invalid input; no
response may be a server error or break the documented schema."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ladder.models import Bot
from ladder.services import casual
from ladder.services import tournaments as tournament_services
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db

CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    negative_data_rejection,
]

DJANGO_APP = get_wsgi_application()


def APP(environ, start_response):
    # schemathesis's WSGI transport sends requests' "Accept-Encoding: gzip,
    # deflate" but does not decode a gzip body (which the replay endpoint
    # sends to clients that accept it): ask for plain bodies.
    environ["HTTP_ACCEPT_ENCODING"] = "identity"
    return DJANGO_APP(environ, start_response)


# Loaded through the app itself, as a client would: the live document.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", APP)


@pytest.fixture
def world(settings):
    """Data for the generated requests to find, a signed-in user, and
    throttles out of the way (a 429 would hide what is behind it)."""
    f.fast_passwords(settings)
    f.limit_rate(settings, "register", "100000/min")
    f.limit_rate(settings, "login", "100000/min")
    f.limit_rate(settings, "upload", "100000/min")
    f.limit_rate(settings, "bot", "100000/min")
    cache.clear()
    owner = f.user("schema-owner")
    mine = f.active_bot(owner, "allegra", "schema-bot")
    ladder = f.ladder("allegra", 2)
    match = f.finished_match(ladder, [mine, Bot.objects.get(game="allegra", name="random")], crash={0: 2})
    staff = f.user("schema-staff")
    staff.is_staff = True
    staff.save()
    event = tournament_services.create_tournament(
        user=staff, name="schema cup", game="allegra", format="duplicate", table_size=2, deals=1,
        bots=[mine, Bot.objects.get(game="allegra", name="random")],
    )  # fmt: skip
    # A casual match of the owner's, queued (no worker here): its seat answers, and refuses answers (409).
    played = casual.start(user=owner, game="allegra", num_players=2, opponents=["builtin:random"], seat=0)
    # A WSGI request closes "old" database connections when it ends, which
    # would end the test's transaction (Django's test client does this too).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield {
            "auth": {"Authorization": f"Token {f.token(owner)}"},
            # Path parameters that name real things: the owner's bot, its
            # ladder, its finished match (seat 0 is the owner's, with a log)
            # and an event it entered.
            "ids": {"/api/bots/": mine.pk, "/api/ladders/": ladder.pk, "/api/matches/": match.pk, "/api/tournaments/": event.pk,
                    "/api/play/": played.pk},
        }
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        cache.clear()


BOUNDED = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,  # the same cases on every run (CI): a failure is reproducible
    database=None,
    suppress_health_check=list(HealthCheck),
)


def real_path_parameters(case, ids: dict) -> dict:
    prefix = next(p for p in ids if case.operation.path.startswith(p))
    named = {"seat": 0, "bot": ids["/api/bots/"]}  # (an event's entry: the owner's bot)
    return {name: named.get(name, ids[prefix]) for name in case.path_parameters}


@schema.parametrize()
@BOUNDED
def test_api(case, world):
    # Every generated request signed in (as the owner of a bot with a
    # finished match) and anonymous; generated path ids are mostly unknown
    # (404), so a request with path parameters is sent once more with them
    # naming real things, to reach the code behind the 404.
    case.call_and_validate(headers=world["auth"], checks=CHECKS)
    case.call_and_validate(checks=CHECKS)
    if case.path_parameters:
        case.path_parameters = real_path_parameters(case, world["ids"])
        # With real ids put in, a case generated as invalid only in its path
        # is a valid request now: its acceptance is no "negative data" failure.
        checks = [c for c in CHECKS if c is not negative_data_rejection]
        case.call_and_validate(headers=world["auth"], checks=checks)
        case.call_and_validate(checks=checks)


# -- the document itself -----------------------------------------------------------------


def test_schema_is_openapi_3_and_documents_every_path():
    response = f.client().get("/api/schema/?format=json")
    assert response.status_code == 200
    doc = response.json()
    assert doc["openapi"].startswith("3.")
    assert doc["info"]["title"] == "cardroom API"
    paths = set(doc["paths"])
    assert paths == {
        "/api/auth/register/", "/api/auth/token/", "/api/games/", "/api/ladders/", "/api/ladders/{id}/",
        "/api/ladders/{id}/standings/", "/api/bots/", "/api/bots/{id}/", "/api/bots/{id}/versions/",
        "/api/matches/", "/api/matches/{id}/", "/api/matches/{id}/replay/", "/api/matches/{id}/logs/{seat}/",
        # managing bots and the API root (issue 13)
        "/api/", "/api/auth/me/", "/api/bots/{id}/versions/{number}/",
        "/api/tournaments/", "/api/tournaments/{id}/", "/api/tournaments/{id}/standings/", "/api/tournaments/{id}/matches/",
        # open events (issue 24)
        "/api/tournaments/{id}/entries/", "/api/tournaments/{id}/entries/{bot}/",
        # the human seat (issue 24)
        "/api/play/", "/api/play/{id}/", "/api/play/{id}/action/",
    }
    bot = doc["paths"]["/api/bots/{id}/"]
    assert {"get", "patch", "delete"} <= set(bot) and "put" not in bot
    assert set(doc["components"]["schemas"]["PatchedBotUpdateInputRequest"]["properties"]) == {"description", "withdrawn"}
    version_fields = set(doc["components"]["schemas"]["VersionOutput"]["properties"])
    assert {"queue_position", "validation_step", "validation_steps", "validation_match", "progress"} <= version_fields
    upload = doc["paths"]["/api/bots/{id}/versions/"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    for code in ("400", "401", "403", "404", "409", "413", "429"):
        assert code in upload["responses"], code
    filters = {p["name"] for p in doc["paths"]["/api/matches/"]["get"]["parameters"]}
    assert {"ladder", "bot", "status", "cursor", "page_size"} <= filters
    assert doc["components"]["securitySchemes"]["tokenAuth"]["type"] == "apiKey"


def test_schema_yaml_is_served_too():
    response = f.client().get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi: 3" in response.content


def test_docs_page_is_swagger_ui_from_our_own_static_files():
    response = f.client().get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger" in html.lower()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    # No inline script or style (the Content-Security-Policy runs none): the
    # init script that points Swagger UI at the schema is a request of its own.
    assert "<script>" not in html and "<style" not in html
    script = f.client().get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()
