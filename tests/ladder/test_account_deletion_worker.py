"""Issue 36, item 5, end to end on a real casual worker: a person deletes
the account while a casual match waits on their move; the worker plays
the seat out (the idle forfeit) and records a replay that names the
tombstone, though its seat was named after the person when it started."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client

from ladder.models import CasualSeat, Match
from tests.ladder import factories
from tests.ladder.test_casual_worker import CASUAL_WORKER, FAST_EXCHANGE, awaited, signed_in, start
from tests.ladder.worker_fixtures import celery_workers_fixture, wait_until  # noqa: F401 (the fixture celery_workers)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_match_the_worker_finishes_after_the_deletion_names_the_tombstone(celery_workers, settings):
    settings.CARDROOM_CASUAL_IDLE_SECONDS = 3
    celery_workers.start("casual", **CASUAL_WORKER, **FAST_EXCHANGE, CARDROOM_CASUAL_IDLE_SECONDS="3")
    api, auth = signed_in("erin")
    match_id = start(api, auth, game="allegra", num_players=2, opponents=["builtin:random"], seat=0)
    seat = awaited(api, auth, match_id, celery_workers)
    assert seat["status"] == "running" and seat["players"][0]["name"] == "erin"

    user = CasualSeat.objects.get(pk=match_id).user
    web = Client()
    web.force_login(user)
    assert web.post("/account/delete/", {"password": factories.PASSWORD}).status_code == 302

    done = wait_until(lambda: Match.objects.filter(pk=match_id, status="finished").first(), 60, "the match's end", celery_workers)
    assert CasualSeat.objects.get(match=done).forfeit_reason == "timeout"
    stored = json.loads(gzip.decompress(done.replay.read()))
    assert [p["name"] for p in stored["players"]] == [f"[deleted-{user.pk}]", stored["players"][1]["name"]]
    served = Client().get(f"/api/matches/{match_id}/replay/")
    assert served.status_code == 200 and b"erin" not in served.content
    assert f"[deleted-{user.pk}]".encode() in served.content
