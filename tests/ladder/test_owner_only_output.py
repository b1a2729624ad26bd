"""A bot's own output reaches its owner only (issue 11, item 8): a bot that
forfeits by writing something that is not JSON to stdout (a real bot
process, through the launcher the ladder uses) has that text in the match
record; the public match and bot pages, the public API and the replay show
the forfeit's reason, never the text, while the owner sees it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from cardroom.runner import run_match
from ladder.models import Bot
from ladder.services import matches as match_services
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

SECRET = "MY-SECRET-PLAN bid 7 on the owl"
MISBEHAVING = Path(__file__).resolve().parents[1] / "bots" / "misbehaving_bot.py"


@pytest.fixture
def forfeited(tmp_path):
    """A finished ladder match whose seat 0 forfeited for invalid JSON: its
    stdout line was SECRET."""
    owner = f.user("secretive")
    bot = f.active_bot(owner, "allegra", "loose-lips")
    program = MISBEHAVING.read_text().replace('BEHAVIOUR = "none"', 'BEHAVIOUR = "garbage"').replace('"this is not json"', repr(SECRET))
    path = tmp_path / "loose_lips.py"
    path.write_text(program)
    ladder = f.ladder("allegra", 2)
    match = f.queued_match(ladder, [bot, Bot.objects.get(game="allegra", name="random")])
    claim = match_services.claim_match(match.pk, worker="tests")
    record = run_match("allegra", [str(path), "builtin:random"], seed=match.seed, match_id=str(match.pk), names=["loose-lips", "random"])
    assert record.forfeits and record.forfeits[0].reason == "invalid_json", record.forfeits
    assert SECRET in record.forfeits[0].detail  # the runner did see it
    assert match_services.record_result(claim, record)
    match.refresh_from_db()
    return {"owner": owner, "bot": bot, "match": match}


def test_public_pages_show_the_reason_but_not_the_bots_output(forfeited):
    match, bot = forfeited["match"], forfeited["bot"]
    stranger = f.user("nosy")
    for client in (Client(), _signed_in(stranger)):
        page = client.get(reverse("web-match", args=[match.pk])).content.decode()
        assert "invalid_json" in page
        assert "SECRET" not in page
        bot_page = client.get(reverse("web-bot", args=[bot.pk])).content.decode()
        assert "forfeit: invalid_json" in bot_page
        assert "SECRET" not in bot_page
        for frames_view in ("full", "seat-0"):
            body = client.get(reverse("web-match-frames", args=[match.pk]), {"view": frames_view}, HTTP_ACCEPT_ENCODING="gzip")
            assert b"SECRET" not in gzip.decompress(body.content)
        assert client.get(reverse("web-match-log", args=[match.pk, 0])).status_code in (302, 403)


def test_public_api_shows_the_reason_but_not_the_bots_output(forfeited):
    match = forfeited["match"]
    for api in (f.client(), f.client(f.user("nosy-api"))):
        detail = api.get(f"/api/matches/{match.pk}/")
        assert detail.json()["participants"][0]["forfeit"]["reason"] == "invalid_json"
        for url in (f"/api/matches/{match.pk}/", "/api/matches/", f"/api/bots/{forfeited['bot'].pk}/", f"/api/matches/{match.pk}/replay/"):
            response = api.get(url)
            assert response.status_code == 200, url
            assert b"SECRET" not in response.content, url
        assert api.get(f"/api/matches/{match.pk}/logs/0/").status_code in (401, 403)


def test_the_owner_sees_the_bots_output(forfeited):
    match, owner = forfeited["match"], forfeited["owner"]
    c = _signed_in(owner)
    assert SECRET in c.get(reverse("web-match", args=[match.pk])).content.decode()
    assert SECRET in c.get(reverse("web-match-log", args=[match.pk, 0]), {"raw": "1"}).content.decode()
    log = f.client(owner).get(f"/api/matches/{match.pk}/logs/0/")
    assert log.status_code == 200
    assert SECRET in log.content.decode()


def _signed_in(user) -> Client:
    c = Client()
    c.force_login(user)
    return c
