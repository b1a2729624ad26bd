"""An open event from its entry window to its final table, on PostgreSQL and
Redis with a real Celery worker and the real scheduler (`celery -A config
beat`): three users enter bots through the API; one withdraws, one swaps to
a new version before the start, one more tries after it and is refused; the
scheduler's start_due_events starts the event on time, the worker plays it
on the events' queue, and its stored standings are the field's, final."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from ladder import selectors
from ladder.models import Match, Participant, Tournament
from ladder.services import tournaments
from ladder.tasks import reap_expired_leases
from tests.ladder import factories
from tests.ladder.factories import assert_error
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    beat_process,
    cardroom_verify,
    celery_workers_fixture,
    wait_until,
    worker_env,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LEAD_SECONDS = 4


@pytest.fixture
def beat(tmp_path):
    """The real scheduler, sending start_due_events every second (and the
    ladder's own periodic tasks only after an hour: no ladder matches here)."""
    with beat_process(tmp_path, EVENT_START_INTERVAL="1", MATCHMAKING_INTERVAL="3600", REAPER_INTERVAL="3600") as log:
        yield log


def test_an_open_event_takes_entries_until_its_start_then_plays_to_the_end(celery_workers, beat, settings, tmp_path):
    settings.CARDROOM_EVENT_MIN_LEAD_SECONDS = 1
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    boss = factories.user()
    boss.is_staff = True
    boss.save()
    alice, bob, carol, dave = (factories.user() for _ in range(4))
    a, b, c, d = (factories.active_bot(owner, game="allegra") for owner in (alice, bob, carol, dave))
    celery_workers.start("events", queues="celery,tournaments,scheduler")

    starts = timezone.now() + timedelta(seconds=LEAD_SECONDS)
    response = factories.client(boss).post(
        "/api/tournaments/",
        {"name": "open cup", "game": "allegra", "format": "round-robin", "table_size": 2, "deals": 2, "starts": starts.isoformat(),
         "per_move_ms": 1000, "total_ms": 60000},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    t = Tournament.objects.get(pk=response.json()["id"])
    entries = f"/api/tournaments/{t.pk}/entries/"
    for owner, bot in ((alice, a), (bob, b), (carol, c)):
        assert factories.client(owner).post(entries, {"bot": bot.pk}, format="json").status_code == 201
    assert factories.client(alice).delete(f"{entries}{a.pk}/").status_code == 204
    first = b.current_version_id
    swapped = factories.version(b)
    assert factories.client(bob).post(entries, {"bot": b.pk}, format="json").json()["version"] == swapped.pk != first

    wait_until(lambda: timezone.now() >= t.starts, LEAD_SECONDS + 5, "the start time")
    assert_error(factories.client(dave).post(entries, {"bot": d.pk}, format="json"), 409, "tournament", "closed at its start")
    assert_error(factories.client(bob).delete(f"{entries}{b.pk}/"), 409, "tournament", "closed")

    def started():
        t.refresh_from_db()
        return t.status != Tournament.Status.OPEN

    wait_until(started, 30, f"the scheduler to start the event\n{beat()}", celery_workers, interval=0.1)
    assert t.status in (Tournament.Status.RUNNING, Tournament.Status.FINISHED)
    # on time: drawn within the scheduler's interval (1 s) and a worker's turn of it
    assert t.starts <= t.started <= t.starts + timedelta(seconds=5), (t.starts, t.started)
    assert (t.total_matches, t.pairing) == (2, "complete")
    assert [(e["bot"], e["version"]) for e in selectors.tournament_entries(t)] == [(b.pk, swapped.pk), (c.pk, c.current_version_id)]

    def finished():
        t.refresh_from_db()
        return t.status == Tournament.Status.FINISHED

    wait_until(finished, 120, "the worker to play the event", celery_workers)
    ids = list(Match.objects.filter(tournament_slot__tournament=t).values_list("pk", flat=True))
    assert Match.objects.filter(pk__in=ids, status=Match.Status.FINISHED).count() == 2
    played = set(Participant.objects.filter(match_id__in=ids).values_list("bot_id", "version_id"))
    assert played == {(b.pk, swapped.pk), (c.pk, c.current_version_id)}  # never a's, d's, or b's first version

    doc = selectors.tournament_standings(t)
    assert doc["matches_played"] == 2 and doc["results_counted"] == 2
    assert sorted(r["bot"] for r in doc["standings"]) == sorted([b.pk, c.pk])
    assert all(r["matches"] == 2 for r in doc["standings"])
    assert sum(r["points"] for r in doc["standings"]) == pytest.approx(2.0)  # a point a 2-table match
    assert {k: v for k, v in doc.items() if k != "computed"} == {
        **tournaments.standings_document(t), "results_counted": 2
    }  # what the finished matches say
    # the archive: the final table and every replay, each of which verifies
    response = Client().get(f"/tournaments/{t.pk}/archive.zip")
    assert response.status_code == 200 and response.streaming and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert sorted(archive.namelist()) == ["replays/match-0000.json", "replays/match-0001.json", "standings.json"]
    saved = json.loads(archive.read("standings.json"))
    assert saved["standings"] == doc["standings"] and saved["event"]["seed"] == t.seed
    assert [(e["bot"], e["version"]) for e in saved["entries"]] == [(b.pk, swapped.pk), (c.pk, c.current_version_id)]
    for row in saved["matches"]:
        path = tmp_path / row["replay"].replace("/", "-")
        path.write_bytes(archive.read(row["replay"]))
        checked = cardroom_verify(path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert json.loads(path.read_bytes())["seed"] == row["seed"] == Match.objects.get(pk=row["match"]).seed
    # final: the sweeps leave it as it ended
    computed = doc["computed"]
    Tournament.objects.filter(pk=t.pk).update(results_recorded=3)  # as a straggling result would
    assert not tournaments.refresh_standings(t.pk)
    reap_expired_leases.apply()
    assert selectors.tournament_standings(t)["computed"] == computed
