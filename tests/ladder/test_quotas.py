"""Per-user quotas (ladder.services.quotas): bots, versions a day, stored
bytes and matches queued. Each refusal, over the API (a 4xx JSON body naming
the quota and its limit) and on the web forms (a message on the form), says
which quota was hit, its limit and what to do."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cardroom.sizes import format_size
from ladder.models import Bot, BotVersion, Match
from ladder.services import quotas
from ladder.services.bots import upload_version
from ladder.services.errors import QuotaExceeded
from ladder.services.validation import create_validation_matches
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()  # (the upload throttle counts in the cache)


def upload(api, bot_id: int, data: bytes, name: str = "bot.py"):
    return api.post(f"/api/bots/{bot_id}/versions/", {"file": SimpleUploadedFile(name, data)}, format="multipart")


def web(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def assert_quota(response, status: int, quota: str, limit: int, *says: str) -> dict:
    body = f.assert_error(response, status)
    assert body["quota"] == quota and body["limit"] == limit, body
    for text in says:
        assert text in body["error"], body
    return body


def test_bots_per_user(settings):
    settings.CARDROOM_QUOTA_BOTS = 2
    owner = f.user()
    api = f.client(owner)
    for name in ("first", "second"):
        assert api.post("/api/bots/", {"game": "allegra", "name": f"{owner.username}-{name}"}, format="json").status_code == 201
    refused = api.post("/api/bots/", {"game": "allegra", "name": f"{owner.username}-third"}, format="json")
    assert_quota(refused, 403, "bots", 2, "quota reached (bots per user)", "you have 2 bots and the limit is 2", "Upload a new version")
    # the web form says the same, on the form
    page = web(owner).post(reverse("web-my-bots"), {"game": "allegory", "name": f"{owner.username}-web", "description": ""})
    assert page.status_code == 200
    assert "quota reached (bots per user): you have 2 bots and the limit is 2" in page.content.decode()
    assert Bot.objects.filter(owner=owner).count() == 2
    # another user is not affected
    other = f.user()
    assert f.client(other).post("/api/bots/", {"game": "allegra", "name": f"{other.username}-x"}, format="json").status_code == 201


def test_versions_per_day(settings):
    settings.CARDROOM_QUOTA_VERSIONS_PER_DAY = 2
    owner = f.user()
    bot = f.bot(owner)
    api = f.client(owner)
    assert upload(api, bot.pk, f.bot_program()).status_code == 201
    assert upload(api, bot.pk, f.bot_program()).status_code == 201
    refused = upload(api, bot.pk, f.bot_program())
    body = assert_quota(refused, 429, "versions_per_day", 2, "quota reached (versions a day)", "2 versions in the last 24 hours")
    assert "You can upload again at" in body["error"]
    page = web(owner).post(reverse("web-my-bot", args=[bot.pk]), {"file": SimpleUploadedFile("bot.py", f.bot_program())})
    assert "quota reached (versions a day)" in page.context["upload_error"]
    assert BotVersion.objects.filter(bot=bot).count() == 2
    # a day later, the window has moved on
    BotVersion.objects.filter(bot=bot).update(created=timezone.now() - timedelta(hours=25))
    assert upload(api, bot.pk, f.bot_program()).status_code == 201


def test_zero_versions_a_day_refuses_every_upload_with_a_403(settings):
    """The limit 0 means no uploads (docs/operations.md): a clear refusal, never a 500,
    whether or not the user uploaded in the last 24 hours."""
    fresh, veteran = f.bot(), f.bot()
    f.version(veteran, activate=False)
    settings.CARDROOM_QUOTA_VERSIONS_PER_DAY = 0
    for bot in (fresh, veteran):
        refused = upload(f.client(bot.owner), bot.pk, f.bot_program())
        assert_quota(refused, 403, "versions_per_day", 0, "accepts no uploads", "the limit is 0")
    page = web(fresh.owner).post(reverse("web-my-bot", args=[fresh.pk]), {"file": SimpleUploadedFile("bot.py", f.bot_program())})
    assert "accepts no uploads" in page.context["upload_error"]
    assert BotVersion.objects.filter(bot=fresh).count() == 0


def test_stored_bytes(settings):
    owner = f.user()
    bot = f.bot(owner)
    first = f.bot_program()
    settings.CARDROOM_QUOTA_STORED_BYTES = 2 * len(first) + 10
    api = f.client(owner)
    assert upload(api, bot.pk, first).status_code == 201
    big = first + b"# padding\n" * 20
    refused = upload(api, bot.pk, big)
    assert_quota(
        refused, 403, "stored_bytes", settings.CARDROOM_QUOTA_STORED_BYTES,
        "quota reached (stored bytes)", f"your bot packages take {format_size(len(first))}", f"this one ({format_size(len(big))})",
        "Upload a smaller package",
    )  # fmt: skip
    page = web(owner).post(reverse("web-my-bot", args=[bot.pk]), {"file": SimpleUploadedFile("bot.py", big)})
    assert "quota reached (stored bytes)" in page.context["upload_error"]
    # a package that fits is still accepted
    assert upload(api, bot.pk, f.bot_program()).status_code == 201
    assert BotVersion.objects.filter(bot=bot).count() == 2


def test_matches_queued_for_validation(settings):
    owner = f.user()
    bot = f.bot(owner, game="allegra")
    per_version = quotas.validation_matches_per_version("allegra")
    assert per_version >= 1
    settings.CARDROOM_QUOTA_QUEUED_MATCHES = 2 * per_version
    api = f.client(owner)
    assert upload(api, bot.pk, f.bot_program()).status_code == 201
    second = upload(api, bot.pk, f.bot_program())
    assert second.status_code == 201
    refused = upload(api, bot.pk, f.bot_program())
    assert_quota(
        refused, 429, "queued_matches", 2 * per_version,
        "quota reached (matches queued)", f"{2 * per_version} matches still to play", f"would add {per_version}",
        "Wait until they are validated",
    )  # fmt: skip
    page = web(owner).post(reverse("web-my-bot", args=[bot.pk]), {"file": SimpleUploadedFile("bot.py", f.bot_program())})
    assert "quota reached (matches queued)" in page.context["upload_error"]
    # once a version's validation matches are played, there is room again
    version = BotVersion.objects.get(pk=second.json()["id"])
    matches = create_validation_matches(version)
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALIDATING)
    Match.objects.filter(pk__in=[m.pk for m in matches]).update(status=Match.Status.FINISHED)
    assert upload(api, bot.pk, f.bot_program()).status_code == 201


def test_staff_are_exempt(settings):
    settings.CARDROOM_QUOTA_BOTS = 0
    staff = f.user()
    staff.is_staff = True
    staff.save()
    assert f.client(staff).post("/api/bots/", {"game": "allegra", "name": f"{staff.username}-b"}, format="json").status_code == 201


def test_the_service_layer_refuses_whoever_calls_it(settings):
    """The quota holds for any caller of the service (a management command, say)."""
    settings.CARDROOM_QUOTA_VERSIONS_PER_DAY = 1
    bot = f.bot()
    upload_version(bot=bot, filename="a.py", data=f.bot_program())
    with pytest.raises(QuotaExceeded) as refused:
        upload_version(bot=bot, filename="b.py", data=f.bot_program())
    assert refused.value.quota == "versions_per_day" and refused.value.limit == 1
