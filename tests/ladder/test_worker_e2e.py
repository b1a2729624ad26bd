"""End to end through a real Celery worker process consuming from Redis:
register and upload over the API → validation in the sandbox (by the worker)
→ ladder matches → standings → replay download → ``cardroom verify``; and a
crashing bot failed with an actionable validation log its owner can read."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ladder.models import Bot, BotVersion, Match, Participant, Rating, RatingChange
from ladder.services import matchmaking
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    cardroom_verify,
    celery_workers_fixture,
    only_ladders,
    sandbox_mode,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Short limits: a slow or stuck bot costs seconds, not minutes.
LIMITS = {"startup_ms": 5000, "per_move_ms": 500, "overage_ms": 2000, "total_ms": 20000}


def register(api: Client, username: str) -> dict:
    r = api.post("/api/auth/register/", {"username": username, "password": factories.PASSWORD}, content_type="application/json")
    assert r.status_code == 201, r.content
    return {"HTTP_AUTHORIZATION": f"Token {r.json()['token']}"}


def create_bot(api: Client, auth: dict, name: str, game: str = "allegory") -> int:
    r = api.post("/api/bots/", {"game": game, "name": name}, content_type="application/json", **auth)
    assert r.status_code == 201, r.content
    return r.json()["id"]


def upload(api: Client, auth: dict, bot_id: int, filename: str, data: bytes) -> dict:
    r = api.post(f"/api/bots/{bot_id}/versions/", {"file": SimpleUploadedFile(filename, data)}, **auth)
    assert r.status_code == 201, r.content
    assert r.json()["status"] == "pending"
    return r.json()


def versions(api: Client, auth: dict, bot_id: int) -> list[dict]:
    r = api.get(f"/api/bots/{bot_id}/versions/", **auth)
    assert r.status_code == 200, r.content
    body = r.json()
    return body["results"] if isinstance(body, dict) else body


def settled(api: Client, auth: dict, bot_id: int, number: int) -> dict | None:
    for v in versions(api, auth, bot_id):
        if v["number"] == number and v["status"] in ("active", "failed"):
            return v
    return None


def standings(api: Client, ladder_id: int) -> dict[str, dict]:
    r = api.get(f"/api/ladders/{ladder_id}/standings/")
    assert r.status_code == 200, r.content
    body = r.json()
    rows = body["results"] if isinstance(body, dict) else body
    return {row["bot_name"]: row for row in rows}


def test_upload_validate_play_rate_and_verify_the_replay(celery_workers, settings, tmp_path):
    ladders = only_ladders("allegory", [2, 4], **LIMITS)
    worker = celery_workers.start("e2e")

    api = Client()
    alice = register(api, "alice")
    bot_id = create_bot(api, alice, "alice-bot")
    uploaded = upload(api, alice, bot_id, "alice_bot.py", factories.bot_program("alice"))

    # Validation: the worker plays a 2- and a 4-player match in the sandbox.
    version = wait_until(lambda: settled(api, alice, bot_id, uploaded["number"]), 120, "validation", celery_workers)
    assert version["status"] == "active", version["validation_log"]
    assert "passed: 2-player validation match" in version["validation_log"]
    assert "passed: 4-player validation match" in version["validation_log"]
    checks = Match.objects.filter(kind=Match.Kind.VALIDATION, validation_of_id=version["id"])
    assert sorted(checks.values_list("num_players", flat=True)) == [2, 4]
    assert all(m.status == Match.Status.FINISHED and m.worker.startswith(worker.node) for m in checks)
    assert not RatingChange.objects.filter(match__in=checks).exists()  # validation is never rated
    assert Bot.objects.get(pk=bot_id).current_version_id == version["id"]
    if sandbox_mode() == "bwrap":
        assert "sandbox: bwrap" in worker.log()  # the pool process runs bots in bubblewrap

    # Ladder matches: the matchmaker queues them, the worker plays them.
    ladder = ladders[2]
    Match.objects.filter(kind=Match.Kind.LADDER).delete()
    ladders[4].active = False
    ladders[4].save(update_fields=["active"])
    before = standings(api, ladder.pk)
    assert before["alice-bot"]["games"] == 0 and before["alice-bot"]["elo"] == "1500.00"
    settings.CARDROOM_QUEUE_TARGET = 3
    created = matchmaking.top_up_queues()
    assert len(created) == 3

    def all_done():
        statuses = set(Match.objects.filter(pk__in=created).values_list("status", flat=True))
        assert not statuses & {"failed", "cancelled"}, list(Match.objects.filter(pk__in=created).values("pk", "status", "error"))
        return statuses == {"finished"}

    wait_until(all_done, 120, "the ladder matches", celery_workers)
    after = standings(api, ladder.pk)
    assert after["alice-bot"]["games"] >= 1
    assert sum(row["games"] for row in after.values()) == 2 * len(created)
    assert after != before and any(row["elo"] != "1500.00" for row in after.values())
    for match_id in created:
        assert RatingChange.objects.filter(match_id=match_id).count() == 2  # once per participant
    alice_rating = Rating.objects.get(ladder=ladder, bot_id=bot_id)
    assert alice_rating.games == Participant.objects.filter(match_id__in=created, bot_id=bot_id).count()

    # The replay of one of alice's matches, downloaded, checks out with the real CLI.
    played = Participant.objects.filter(match_id__in=created, bot_id=bot_id).first().match
    r = api.get(f"/api/matches/{played.pk}/replay/")
    assert r.status_code == 200
    path = tmp_path / f"match-{played.pk}.json"
    path.write_bytes(r.content)
    verified = cardroom_verify(path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    detail = api.get(f"/api/matches/{played.pk}/").json()
    assert detail["status"] == "finished" and detail["num_events"] > 0
    assert all(p["elo_change"] is not None for p in detail["participants"])
    seat = next(p["seat"] for p in detail["participants"] if p["bot"] == bot_id)
    assert api.get(f"/api/matches/{played.pk}/logs/{seat}/", **alice).status_code == 200


def test_a_crashing_bot_fails_validation_with_an_actionable_log(celery_workers, tmp_path):
    only_ladders("allegory", [2], **LIMITS)
    celery_workers.start("e2e")

    api = Client()
    bob = register(api, "bob")
    bot_id = create_bot(api, bob, "bob-crasher")
    uploaded = upload(api, bob, bot_id, "crash_bot.py", (BOTS / "crash_bot.py").read_bytes())

    version = wait_until(lambda: settled(api, bob, bot_id, uploaded["number"]), 120, "validation", celery_workers)
    log = version["validation_log"]
    assert version["status"] == "failed", log
    assert "FAILED: 2-player validation match" in log
    assert "forfeit (crash)" in log
    assert "at event" in log
    assert "what to do:" in log
    assert "crash_bot: about to divide by zero" in log  # the bot's own stderr
    assert "ZeroDivisionError" in log  # its traceback
    assert Bot.objects.get(pk=bot_id).current_version_id is None
    assert BotVersion.objects.get(pk=version["id"]).status == BotVersion.Status.FAILED

    # The log is the owner's: someone else sees the version but not its log.
    carol = register(api, "carol")
    other = next(v for v in versions(api, carol, bot_id) if v["id"] == version["id"])
    assert other["status"] == "failed" and other["validation_log"] is None
    # A platform failure it was not: the match finished (a forfeit is a result).
    check = Match.objects.get(kind=Match.Kind.VALIDATION, validation_of_id=version["id"])
    assert check.status == Match.Status.FINISHED and check.error == ""
    # The links in the log are the web pages (the match at the forfeit, seen
    # from the bot's seat; the bot's log there); the replay (with the
    # forfeit) verifies, and the log is the owner's.
    seat = check.participants.get(version_id=version["id"]).seat
    assert f"/matches/{check.pk}/#event=" in log and f"&view=seat-{seat}" in log
    assert "/api/" not in log
    r = api.get(f"/api/matches/{check.pk}/replay/")
    assert r.status_code == 200
    path = tmp_path / "validation.json"
    path.write_bytes(r.content)
    verified = cardroom_verify(path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"/matches/{check.pk}/logs/{seat}/" in log
    web = Client()
    web.force_login(Bot.objects.get(pk=bot_id).owner)
    page = web.get(f"/matches/{check.pk}/logs/{seat}/")
    assert page.status_code == 200 and "ZeroDivisionError" in page.content.decode()
    own = api.get(f"/api/matches/{check.pk}/logs/{seat}/", **bob)
    assert own.status_code == 200 and "ZeroDivisionError" in own.content.decode()
    assert api.get(f"/api/matches/{check.pk}/logs/{seat}/", **carol).status_code == 403
