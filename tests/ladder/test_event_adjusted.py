"""Events' luck-adjusted standings on the platform (issue 37): each match's
luck stored when its result is recorded, the adjusted columns in the
standings API, the archive's standings.json and the event page; the
organizer's choice of what decides (API and web form), plain by default."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client

from engine.replay import ReplayError
from ladder import selectors
from ladder.models import Match, Tournament, TournamentMatch
from ladder.services import tournaments
from tests.ladder import factories
from tests.ladder.test_tournaments import builtin, play_queued, staff

pytestmark = pytest.mark.django_db


def event_body(**extra) -> dict:
    greedy, rand = builtin("allegory", "greedy"), builtin("allegory", "random")
    return {"name": factories.unique("cup "), "game": "allegory", "format": "duplicate", "bots": [greedy.pk, rand.pk],
            "table_size": 2, "deals": 2, **extra}  # fmt: skip


def test_the_organizer_chooses_what_decides_plain_by_default():
    boss = factories.client(staff())
    factories.assert_error(
        boss.post("/api/tournaments/", event_body(decided_by="luck"), format="json"), 400, "decided_by"
    )
    plain = boss.post("/api/tournaments/", event_body(), format="json")
    assert plain.status_code == 201 and plain.json()["decided_by"] == "plain"
    adjusted = boss.post("/api/tournaments/", event_body(decided_by="adjusted"), format="json")
    assert adjusted.status_code == 201 and adjusted.json()["decided_by"] == "adjusted"
    assert factories.client().get(f"/api/tournaments/{adjusted.json()['id']}/").json()["decided_by"] == "adjusted"

    web = Client()
    web.force_login(staff())
    assert 'name="decided_by"' in web.get("/tournaments/new/").content.decode()
    form = {**event_body(), "per_move_ms": 1000, "total_ms": 300000, "entries_per_user": 1}
    refused = web.post("/tournaments/new/", {**form, "decided_by": "luck"})
    assert refused.status_code == 200 and not Tournament.objects.filter(name=form["name"]).exists()
    posted = web.post("/tournaments/new/", {**form, "decided_by": "adjusted"})
    assert posted.status_code == 302, posted.content.decode()[:2000]
    assert Tournament.objects.get(name=form["name"]).decided_by == "adjusted"


def test_adjusted_standings_beside_the_plain_ones_in_the_api_the_archive_and_the_page():
    t = tournaments.create_tournament(
        user=staff(), name="adjusted cup", game="allegory", format="duplicate", decided_by="adjusted",
        bots=[builtin("allegory", "greedy"), builtin("allegory", "random")], table_size=2, deals=3,
    )  # fmt: skip
    assert play_queued(t) == 6
    for slot in TournamentMatch.objects.filter(tournament=t):
        assert slot.luck["value_function"] == "allegory-net@1"
        assert sum(slot.luck["luck"]) == pytest.approx(0, abs=1e-9)  # the seats' luck adds up to 0
    factories.clear_caches()
    doc = factories.client().get(f"/api/tournaments/{t.pk}/standings/").json()
    assert doc["decided_by"] == "adjusted" and doc["value_functions"] == ["allegory-net@1"]
    rows = doc["standings"]
    assert all(r["adjusted"]["matches_adjusted"] == r["matches"] == 6 for r in rows)
    assert all(r["adjusted"]["ci95"]["method"] == "t-per-deal" for r in rows)
    assert rows[0]["adjusted"]["points_per_match"] >= rows[1]["adjusted"]["points_per_match"]  # what decides
    assert (
        doc["differences"][0]["ci95"]["method"] == doc["adjusted_differences"][0]["ci95"]["method"] == "paired-by-deal"
    )
    # the adjusted points are the stored luck's
    mean = {r["entry"]: 0.0 for r in rows}
    for slot in TournamentMatch.objects.filter(tournament=t):
        for seat, entry in enumerate(slot.seats):
            mean[entry] += slot.luck["adjusted"][seat] / 6
    assert {r["entry"]: r["adjusted"]["points_per_match"] for r in rows} == pytest.approx(mean)

    archive = Client().get(f"/tournaments/{t.pk}/archive.zip")
    assert archive.status_code == 200
    import json

    body = b"".join(archive.streaming_content) if archive.streaming else archive.content
    standings_json = json.loads(zipfile.ZipFile(io.BytesIO(body)).read("standings.json"))
    assert standings_json["event"]["decided_by"] == standings_json["decided_by"] == "adjusted"
    assert "adjusted" in standings_json["standings"][0] and standings_json["adjusted_differences"]
    assert all(m["luck"]["value_function"] == "allegory-net@1" for m in standings_json["matches"])

    factories.clear_caches()
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Adjusted per game" in page and 'data-testid="adjusted-per-game"' in page
    assert "Decided by <strong>adjusted</strong>" in page and "allegory-net@1" in page


def test_a_match_whose_luck_fails_is_recorded_and_counts_its_plain_points(monkeypatch):
    def broken(doc, policies=None):
        raise ReplayError("no luck today")

    monkeypatch.setattr(tournaments, "luck_of", broken)
    t = tournaments.create_tournament(
        user=staff(), name="plain cup", game="allegory", format="round-robin",
        bots=[builtin("allegory", "greedy"), builtin("allegory", "random")], table_size=2, deals=2,
    )  # fmt: skip
    assert play_queued(t) == 2
    assert Match.objects.filter(tournament_slot__tournament=t, status=Match.Status.FINISHED).count() == 2
    assert not TournamentMatch.objects.filter(tournament=t, luck__isnull=False).exists()
    doc = selectors.tournament_standings(t)
    assert "decided_by" not in doc  # no luck known, plain decides: the table as it always was
    assert [r["points_per_match"] for r in doc["standings"]] == sorted(
        (r["points_per_match"] for r in doc["standings"]), reverse=True
    )
