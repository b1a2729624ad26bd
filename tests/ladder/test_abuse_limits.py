"""Rate limits and lockouts that hold (issue 11): the client address behind
CARDROOM_TRUSTED_PROXIES, the same limits on the web forms as on the API
(one shared store), and django-axes locking out an account and an address
after failed logins. The limits live in the "limits" cache: the database
table here (the embedded default), Redis in tests/ops/test_limits_processes.py."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from ladder.models import Bot
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

REGISTER = "/api/auth/register/"
TOKEN = "/api/auth/token/"


def rotating(n: int) -> list[str]:
    return [f"203.0.113.{i % 250 + 1}" for i in range(n)]


# -- the client address ------------------------------------------------------------------


def test_x_forwarded_for_rotation_gets_429s_with_no_trusted_proxy(settings):
    """With no proxy (the default) X-Forwarded-For is the client's own
    invention: a new value per request buys nothing."""
    f.limit_rate(settings, "register", "5/hour")
    api = f.client()
    codes = [
        api.post(REGISTER, {"username": f"rot{i}", "password": f.PASSWORD}, format="json", HTTP_X_FORWARDED_FOR=addr).status_code
        for i, addr in enumerate(rotating(12))
    ]
    assert codes[:5] == [201] * 5
    assert codes[5:] == [429] * 7
    assert get_user_model().objects.filter(username__startswith="rot").count() == 5


def test_token_guessing_with_rotating_headers_is_stopped(settings):
    """The issue's attack: 75 guesses with a new X-Forwarded-For each, then the
    right password. The rate limit and the lockout both stop it."""
    f.limit_rate(settings, "login", "30/min")
    f.user("victim")
    api = f.client()
    codes = [
        api.post(TOKEN, {"username": "victim", "password": f"guess-{i}"}, format="json", HTTP_X_FORWARDED_FOR=addr).status_code
        for i, addr in enumerate(rotating(75))
    ]
    assert codes.count(400) == settings.AXES_FAILURE_LIMIT - 1  # then the account is locked
    assert set(codes[settings.AXES_FAILURE_LIMIT :]) == {429}
    right = api.post(TOKEN, {"username": "victim", "password": f.PASSWORD}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.7")
    f.assert_error(right, 429)
    assert "token" not in right.json()


def test_behind_one_trusted_proxy_the_proxy_written_address_counts(settings):
    """Behind one proxy, the right-most X-Forwarded-For entry is the one the
    proxy wrote: what the client put left of it is ignored, and two real
    clients behind the proxy are counted apart."""
    settings.CARDROOM_TRUSTED_PROXIES = 1
    f.limit_rate(settings, "register", "3/hour")
    api = f.client()

    def register(name, forwarded):
        return api.post(REGISTER, {"username": name, "password": f.PASSWORD}, format="json", HTTP_X_FORWARDED_FOR=forwarded)

    codes = [register(f"px{i}", f"{spoof}, 192.0.2.10").status_code for i, spoof in enumerate(rotating(5))]
    assert codes == [201, 201, 201, 429, 429]
    # Another client, as the proxy reports it, has its own count.
    assert register("other1", "192.0.2.11").status_code == 201


# -- the web forms, with the API's limits ----------------------------------------------


def test_web_login_form_is_limited_and_says_so_on_the_page(settings):
    f.limit_rate(settings, "login", "3/min")
    f.user("weblogin")
    c = Client()
    for _ in range(3):
        assert c.post(reverse("login"), {"username": "weblogin", "password": f.PASSWORD}).status_code == 302
        c.logout()
    refused = c.post(reverse("login"), {"username": "weblogin", "password": f.PASSWORD})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    html = refused.content.decode()
    assert 'data-testid="limit-error"' in html and "Too many requests" in html
    assert "_auth_user_id" not in c.session


def test_web_login_and_api_token_share_one_limit(settings):
    """Alternating between the form and the API buys nothing."""
    f.limit_rate(settings, "login", "4/min")
    f.user("both")
    c = Client()
    api = f.client()
    for _ in range(2):
        assert c.post(reverse("login"), {"username": "both", "password": f.PASSWORD}).status_code == 302
        c.logout()
        assert api.post(TOKEN, {"username": "both", "password": f.PASSWORD}, format="json").status_code == 200
    assert c.post(reverse("login"), {"username": "both", "password": f.PASSWORD}).status_code == 429
    f.assert_error(api.post(TOKEN, {"username": "both", "password": f.PASSWORD}, format="json"), 429)


def test_web_signup_is_limited_like_the_api(settings):
    f.limit_rate(settings, "register", "3/hour")
    c = Client()
    for i in range(2):
        form = {"username": f"websign{i}", "password1": f.PASSWORD, "password2": f.PASSWORD}
        assert c.post(reverse("web-signup"), form).status_code == 302
        c.logout()
    # The API's register counts against the same limit.
    assert f.client().post(REGISTER, {"username": "apisign", "password": f.PASSWORD}, format="json").status_code == 201
    refused = c.post(reverse("web-signup"), {"username": "websign9", "password1": f.PASSWORD, "password2": f.PASSWORD})
    assert refused.status_code == 429
    assert "Too many requests" in refused.content.decode()
    assert not get_user_model().objects.filter(username="websign9").exists()


def test_web_upload_form_is_limited(settings):
    f.limit_rate(settings, "upload", "2/hour")
    owner = f.user("uploader")
    bot = f.bot(owner, name="uploaded-bot")
    c = Client()
    c.force_login(owner)
    url = reverse("web-my-bot", args=[bot.pk])
    for i in range(2):
        response = c.post(url, {"file": SimpleUploadedFile(f"v{i}.py", f.bot_program())})
        assert response.status_code == 302, response.content.decode()[-2000:]
    refused = c.post(url, {"file": SimpleUploadedFile("v9.py", f.bot_program())})
    assert refused.status_code == 429
    assert "Too many requests" in refused.content.decode()
    assert bot.versions.count() == 2
    # The API's upload shares the count.
    api_refused = f.client(owner).post(
        f"/api/bots/{bot.pk}/versions/", {"file": SimpleUploadedFile("api.py", f.bot_program())}, format="multipart"
    )
    f.assert_error(api_refused, 429)


def test_bot_creation_is_limited_on_the_form_and_the_api(settings):
    f.limit_rate(settings, "bot", "3/hour")
    owner = f.user("maker")
    c = Client()
    c.force_login(owner)
    for i in range(2):
        assert c.post(reverse("web-my-bots"), {"game": "allegra", "name": f"made-{i}"}).status_code == 302
    api = f.client(owner)
    assert api.post("/api/bots/", {"game": "allegra", "name": "made-api"}, format="json").status_code == 201
    refused = c.post(reverse("web-my-bots"), {"game": "allegra", "name": "made-9"})
    assert refused.status_code == 429
    assert "Too many requests" in refused.content.decode()
    f.assert_error(api.post("/api/bots/", {"game": "allegra", "name": "made-10"}, format="json"), 429)
    assert Bot.objects.filter(owner=owner).count() == 3


# -- lockout after failed logins (django-axes) ------------------------------------------


def test_failed_logins_lock_the_account_from_any_address(settings):
    """Per account: wrong passwords from ever new addresses (a botnet) lock
    the account; its owner is told on the form, and the right password is
    refused until the cool-off ends."""
    settings.CARDROOM_TRUSTED_PROXIES = 1  # each request really from elsewhere
    f.user("target")
    c = Client()
    for i, addr in enumerate(rotating(settings.AXES_FAILURE_LIMIT)):
        c.post(reverse("login"), {"username": "target", "password": f"bad-{i}"}, HTTP_X_FORWARDED_FOR=addr)
    locked = c.post(reverse("login"), {"username": "target", "password": f.PASSWORD}, HTTP_X_FORWARDED_FOR="198.51.100.99")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert int(locked["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    assert "_auth_user_id" not in c.session
    # The API's token endpoint honours the same lockout, in JSON.
    api = f.client().post(TOKEN, {"username": "target", "password": f.PASSWORD}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.98")
    f.assert_error(api, 429, contains="Too many failed logins")
    # A case variant is the same account for the lockout.
    upper = f.client().post(TOKEN, {"username": "TARGET", "password": "x-y-z-1"}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.97")
    f.assert_error(upper, 429)
    # Another account is not locked.
    f.user("bystander")
    ok = f.client().post(TOKEN, {"username": "bystander", "password": f.PASSWORD}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.96")
    assert ok.status_code == 200


def test_failed_logins_lock_the_address_for_every_account(settings):
    """Per address: one client trying many accounts is locked out, even for
    an account it knows the password of."""
    f.user("mine")
    api = f.client()
    for i in range(settings.AXES_FAILURE_LIMIT):
        api.post(TOKEN, {"username": f"someone-{i}", "password": "guess-guess-1"}, format="json")
    f.assert_error(api.post(TOKEN, {"username": "mine", "password": f.PASSWORD}, format="json"), 429, contains="this address")
    c = Client()
    assert c.post(reverse("login"), {"username": "mine", "password": f.PASSWORD}).status_code == 429
    # From another address, the account is fine.
    other = f.client().post(TOKEN, {"username": "mine", "password": f.PASSWORD}, format="json", REMOTE_ADDR="192.0.2.200")
    assert other.status_code == 200


def test_failures_below_the_limit_do_not_lock(settings):
    f.user("careless")
    api = f.client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        f.assert_error(api.post(TOKEN, {"username": "careless", "password": "typo-typo-1"}, format="json"), 400)
    assert api.post(TOKEN, {"username": "careless", "password": f.PASSWORD}, format="json").status_code == 200
