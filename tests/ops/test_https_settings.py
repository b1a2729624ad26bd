"""HTTPS settings from the environment and the Content-Security-Policy:
`manage.py check --deploy` is clean in the production configuration (and
not without it), HTTP is redirected behind the proxy, HSTS and secure cookies
are on, and no page carries an inline script, style or handler the policy
would refuse."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.test import Client

from tests.ladder import factories as f
from tests.ops.procs import ROOT

# What docs/operations.md gives as the production environment (compose sets the same).
PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "DEBUG": "0",
    "SECRET_KEY": "Jx8-q2Lr0vTzN4yWc7pHs1KbE9mGu6fDa3oXi5lVtRnQwZeC_yA0kU8jS2hP4gB",
    "ALLOWED_HOSTS": "cardroom.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://cardroom.example.org",
    "CARDROOM_HTTPS": "1",
    "CARDROOM_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "DATABASE_URL": "postgres://cardroom:pw@db.invalid:5432/cardroom",
    "CACHE_URL": "redis://cache.invalid:6379/0",
    "CELERY_BROKER_URL": "redis://redis.invalid:6379/0",
}


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    # (DJANGO_ALLOW_ASYNC_UNSAFE: the browser tests set it in this process for
    # Playwright; a deployment never has it, and check --deploy says so.)
    dropped = {*PRODUCTION, "CARDROOM_VAR_DIR", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    clean["CARDROOM_VAR_DIR"] = str(ROOT / "var" / "check-deploy")
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_check_deploy_is_clean_in_production():
    result = check_deploy(PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_warns_without_https():
    result = check_deploy({**PRODUCTION, "CARDROOM_HTTPS": "0"})
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stdout + result.stderr


@pytest.fixture
def https(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = settings.SECURE_HSTS_PRELOAD = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.django_db
def test_behind_the_proxy_http_is_redirected_and_https_gets_hsts(https):
    client = Client()
    plain = client.get("/api/games/", HTTP_X_FORWARDED_PROTO="http")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/api/games/"
    secure = client.get("/api/games/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    login = client.get("/login/", HTTP_X_FORWARDED_PROTO="https")
    assert login.cookies["csrftoken"]["secure"]


@pytest.mark.django_db
def test_every_response_carries_a_strict_policy():
    response = Client().get("/")
    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"<style\b", re.I), "a <style> element"),
    (re.compile(r"\sstyle=", re.I), "a style attribute"),
    (re.compile(r"\son[a-z]+=", re.I), "an on* handler attribute"),
    (re.compile(r"javascript:", re.I), "a javascript: URL"),
]


@pytest.mark.django_db
def test_no_page_has_inline_script_or_style(settings):
    f.fast_passwords(settings)
    owner = f.user("csp-owner")
    mine = f.active_bot(owner, "allegra", "csp-bot")
    ladder = f.ladder("allegra", 2)
    from ladder.models import Bot

    match = f.finished_match(ladder, [mine, Bot.objects.get(game="allegra", name="random")])
    f.finished_match(ladder, [mine, Bot.objects.get(game="allegra", name="random")], seed=8)
    visitor, signed_in = Client(), Client()
    signed_in.force_login(owner)
    pages = [
        (visitor, "/"), (visitor, f"/ladders/{ladder.pk}/"), (visitor, f"/ladders/{ladder.pk}/?partial=1"),
        (visitor, f"/bots/{mine.pk}/"), (visitor, "/matches/"), (visitor, f"/matches/{match.pk}/"),
        (visitor, "/rules/allegra/"), (visitor, "/rules/allegory/"), (visitor, "/login/"), (visitor, "/signup/"),
        (visitor, "/api/docs/"), (signed_in, "/account/"), (signed_in, "/my/bots/"), (signed_in, f"/my/bots/{mine.pk}/"),
        (signed_in, f"/matches/{match.pk}/logs/0/"),
    ]  # fmt: skip
    for client, path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        html = response.content.decode()
        for pattern, what in INLINE:
            found = pattern.search(html)
            assert found is None, f"{path} has {what}: {html[max(0, found.start() - 80):found.end() + 80]}"
