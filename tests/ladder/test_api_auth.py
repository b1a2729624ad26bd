"""REST API: registration, token login, authentication errors, throttles
(docs/api.md)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from tests.ladder import factories as f

pytestmark = pytest.mark.django_db

REGISTER = "/api/auth/register/"
LOGIN = "/api/auth/token/"


@pytest.fixture(autouse=True)
def _fresh_throttles(settings):
    f.fast_passwords(settings)
    f.clear_caches()
    yield
    f.clear_caches()


# -- registration -----------------------------------------------------------------


def test_register_gives_201_and_a_working_token():
    response = f.client().post(REGISTER, {"username": "alice", "password": f.PASSWORD}, format="json")
    assert response.status_code == 201
    key = response.json()["token"]
    user = get_user_model().objects.get(username="alice")
    assert Token.objects.get(user=user).key == key
    assert user.check_password(f.PASSWORD)
    # The token signs requests in.
    api = f.client()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    created = api.post("/api/bots/", {"game": "allegra", "name": "alices-bot"}, format="json")
    assert created.status_code == 201
    assert created.json()["owner"] == "alice"


def test_register_accepts_a_form_post_too():
    response = f.client().post(REGISTER, {"username": "formuser", "password": f.PASSWORD})
    assert response.status_code == 201
    assert response.json()["token"]


def test_register_duplicate_username_is_400():
    f.user("bob")
    response = f.client().post(REGISTER, {"username": "bob", "password": f.PASSWORD}, format="json")
    f.assert_error(response, 400, field="username", contains="'bob' is taken")
    assert get_user_model().objects.filter(username="bob").count() == 1


@pytest.mark.parametrize(
    "password, says",
    [
        ("short1!", "at least 8 characters"),
        ("", "blank"),
        ("password123", "too common"),
        ("83729104658", "entirely numeric"),
        ("carol-the-great", "too similar to the username"),
    ],
)
def test_register_weak_or_short_password_is_400_with_the_reason(password, says):
    response = f.client().post(REGISTER, {"username": "carol-the-great", "password": password}, format="json")
    body = f.assert_error(response, 400, field="password", contains=says)
    assert body["error"].startswith("password: ")
    assert not get_user_model().objects.filter(username="carol-the-great").exists()


@pytest.mark.parametrize(
    "data, field",
    [
        ({"password": f.PASSWORD}, "username"),
        ({"username": "dave"}, "password"),
        ({"username": "a b", "password": f.PASSWORD}, "username"),
        ({"username": "x", "password": f.PASSWORD}, "username"),
        ({"username": "u" * 41, "password": f.PASSWORD}, "username"),
        ({"username": "dave", "password": "p" * 129}, "password"),
    ],
)
def test_register_bad_input_is_400_naming_the_field(data, field):
    f.assert_error(f.client().post(REGISTER, data, format="json"), 400, field=field)


def test_register_bad_username_message_says_what_is_allowed():
    response = f.client().post(REGISTER, {"username": "no spaces", "password": f.PASSWORD}, format="json")
    f.assert_error(response, 400, field="username", contains="3-40 characters")


def test_register_malformed_json_is_a_json_400():
    response = f.client().post(REGISTER, data=b'{"username": ', content_type="application/json")
    body = f.assert_error(response, 400, contains="not the JSON the API takes")
    assert "at character 13" in body["error"], body  # where the JSON stops


def test_register_unsupported_media_type_is_a_json_415():
    response = f.client().post(REGISTER, data=b"<user/>", content_type="application/xml")
    f.assert_error(response, 415)


def test_register_only_accepts_post():
    f.assert_error(f.client().get(REGISTER), 405, contains='"GET" not allowed')


def test_register_is_throttled(settings):
    f.limit_rate(settings, "register", "3/hour")
    api = f.client()
    for i in range(3):
        assert api.post(REGISTER, {"username": f"throttled{i}", "password": f.PASSWORD}, format="json").status_code == 201
    response = api.post(REGISTER, {"username": "throttled9", "password": f.PASSWORD}, format="json")
    f.assert_error(response, 429, contains="throttled")
    assert int(response["Retry-After"]) > 0
    assert not get_user_model().objects.filter(username="throttled9").exists()
    # Failed attempts count as well: the limit is on requests, not accounts.
    f.clear_caches()
    for _ in range(3):
        api.post(REGISTER, {"username": "x"}, format="json")
    f.assert_error(api.post(REGISTER, {"username": "late", "password": f.PASSWORD}, format="json"), 429)


# -- token login ----------------------------------------------------------------------


def test_login_gives_the_users_token():
    user = f.user("erin")
    response = f.client().post(LOGIN, {"username": "erin", "password": f.PASSWORD}, format="json")
    assert response.status_code == 200
    assert response.json() == {"token": Token.objects.get(user=user).key}
    # Logging in again gives the same token.
    again = f.client().post(LOGIN, {"username": "erin", "password": f.PASSWORD}, format="json")
    assert again.json() == response.json()


def test_register_then_login_gives_the_same_token():
    registered = f.client().post(REGISTER, {"username": "frank", "password": f.PASSWORD}, format="json").json()
    logged_in = f.client().post(LOGIN, {"username": "frank", "password": f.PASSWORD}, format="json").json()
    assert registered == logged_in


@pytest.mark.parametrize(
    "username, password", [("gina", "wrong-password-1"), ("nobody-here", f.PASSWORD), ("GINA", f.PASSWORD)]
)
def test_login_with_bad_credentials_is_400(username, password):
    f.user("gina")
    response = f.client().post(LOGIN, {"username": username, "password": password}, format="json")
    body = f.assert_error(response, 400, contains="wrong username or password")
    assert "token" not in body


def test_login_inactive_user_is_refused():
    user = f.user("henry")
    user.is_active = False
    user.save()
    f.assert_error(f.client().post(LOGIN, {"username": "henry", "password": f.PASSWORD}, format="json"), 400)


def test_login_missing_field_is_400():
    f.assert_error(f.client().post(LOGIN, {"username": "ivy"}, format="json"), 400, field="password")


def test_login_is_throttled(settings):
    f.limit_rate(settings, "login", "2/min")
    f.user("jack")
    api = f.client()
    assert api.post(LOGIN, {"username": "jack", "password": "nope-nope-1"}, format="json").status_code == 400
    assert api.post(LOGIN, {"username": "jack", "password": f.PASSWORD}, format="json").status_code == 200
    response = api.post(LOGIN, {"username": "jack", "password": f.PASSWORD}, format="json")
    f.assert_error(response, 429)
    assert "Retry-After" in response


# -- authentication errors ------------------------------------------------------------------


def test_a_bad_token_is_a_json_401():
    api = f.client()
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = api.get("/api/ladders/")
    f.assert_error(response, 401, contains="invalid token")
    assert response["WWW-Authenticate"] == "Token"


def test_anonymous_write_is_a_json_401_with_the_auth_scheme():
    response = f.client().post("/api/bots/", {"game": "allegra", "name": "anon-bot"}, format="json")
    f.assert_error(response, 401, contains="credentials were not provided")
    assert response["WWW-Authenticate"] == "Token"


def test_a_browser_session_signs_in_too():
    user = f.user("kim")
    api = f.client()
    api.force_login(user)
    assert api.get("/api/bots/").status_code == 200
