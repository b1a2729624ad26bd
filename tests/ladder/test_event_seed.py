"""An event's seed, from which every match's cards are derived, is published
only once its last match has ended (decision 173), written as the attack: a
spectator collects everything the site shows about a running event (the
API's event, list, standings and matches, each finished match, the event's
page, its archive) and looks for the seed, or for the seed of a match still
to play. Afterwards anyone verifies every deal from the published seed."""

from __future__ import annotations

import io
import json
import random
import secrets
import zipfile

import pytest
from django.test import Client

from cardroom.tournament.seeds import derive
from engine import new_game
from ladder.models import Match, Tournament, TournamentMatch
from ladder.services import matches as match_services
from ladder.services import tournaments
from tests.ladder import factories
from tests.ladder.test_tournaments import builtin, staff

pytestmark = pytest.mark.django_db


def new_event(fmt: str, boss, deals: int = 2) -> Tournament:
    # a seed of 62 random bits: its digits turn up in a page only if the page shows it
    return tournaments.create_tournament(
        user=boss, name=f"seed cup {secrets.token_hex(3)}", game="allegory", format=fmt,
        bots=[builtin("allegory", "greedy"), builtin("allegory", "random")], table_size=2, deals=deals,
        seed=secrets.randbelow(2**62 - 2**61) + 2**61,
    )  # fmt: skip


def everything_shown(t: Tournament) -> str:
    """What anyone can read about the event and its matches, as one text."""
    api, web = factories.client(), Client()
    parts = [
        api.get(f"/api/tournaments/{t.pk}/").content,
        api.get("/api/tournaments/").content,
        api.get(f"/api/tournaments/{t.pk}/standings/").content,
        api.get(f"/api/tournaments/{t.pk}/matches/").content,
        web.get(f"/tournaments/{t.pk}/").content,
        web.get("/tournaments/").content,
    ]
    ids = Match.objects.filter(tournament_slot__tournament=t).values_list("pk", flat=True)
    for match_id in ids:
        parts.append(api.get(f"/api/matches/{match_id}/").content)
        parts.append(web.get(f"/matches/{match_id}/").content)
    archive = web.get(f"/tournaments/{t.pk}/archive.zip")
    if archive.status_code == 200:
        zipped = zipfile.ZipFile(io.BytesIO(b"".join(archive.streaming_content)))
        parts += [zipped.read(name) for name in zipped.namelist()]
    return "\n".join(p.decode() for p in parts)


def seeds_still_to_play(t: Tournament) -> list[int]:
    return list(
        Match.objects.filter(tournament_slot__tournament=t).exclude(status=Match.Status.FINISHED).values_list("seed", flat=True)
    )


def play(match_id: int) -> None:
    assert match_services.run_queued_match(match_id, "seed-test") == "finished"


def test_a_running_events_seed_is_nowhere_until_its_last_match_ends_then_every_deal_verifies():
    t = new_event("round-robin", staff(), deals=3)
    ids = list(Match.objects.filter(tournament_slot__tournament=t).order_by("id").values_list("pk", flat=True))
    for match_id in [None, *ids[:-1]]:  # before any match, and after each but the last
        if match_id is not None:
            play(match_id)
        shown = everything_shown(t)
        assert str(t.seed) not in shown
        for seed in seeds_still_to_play(t):
            assert str(seed) not in shown  # nor the cards of a match still to play
        assert factories.client().get(f"/api/tournaments/{t.pk}/").json()["seed"] is None
        assert Client().get(f"/tournaments/{t.pk}/archive.zip").status_code == 409

    play(ids[-1])
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    assert factories.client().get(f"/api/tournaments/{t.pk}/").json()["seed"] == t.seed
    assert f'data-testid="event-seed">{t.seed}<' in Client().get(f"/tournaments/{t.pk}/").content.decode()
    # verifying the deals: each match's seed is derive(event seed, "match", round, table, deal)
    # (docs/tournaments.md), and each replay says which seed it was played with
    api = factories.client()
    for slot in TournamentMatch.objects.filter(tournament=t):
        replay = json.loads(api.get(f"/api/matches/{slot.match_id}/replay/").content)
        assert replay["seed"] == derive(t.seed, "match", slot.round, slot.table, slot.deal)
        # and that seed deals the replay's cards (the setup, Allegory's one chance event)
        state = new_game(replay["game"], replay["num_players"], replay["options"]).new_initial_state()
        assert state.sample_chance(random.Random(replay["seed"])) == replay["events"][0]["action"]


def test_a_cancelled_events_seed_waits_for_the_match_still_running():
    boss = staff()
    t = new_event("duplicate", boss, deals=1)
    first, second = Match.objects.filter(tournament_slot__tournament=t).order_by("id").values_list("pk", flat=True)
    seen_while_running: list[object] = []

    def cancel_meanwhile(match, lost):
        # staff cancel the event while this match runs: it still plays to its end
        tournaments.cancel(t, boss)
        seen_while_running.append(factories.client().get(f"/api/tournaments/{t.pk}/").json()["seed"])
        seen_while_running.append(str(t.seed) in everything_shown(t))
        seen_while_running.append(Client().get(f"/tournaments/{t.pk}/archive.zip").status_code)
        return {}, None

    assert match_services.run_queued_match(first, "seed-test", other_seats=cancel_meanwhile) == "finished"
    assert seen_while_running == [None, False, 409]
    assert Match.objects.get(pk=second).status == Match.Status.CANCELLED
    # the running match has ended: nothing of the event is left to play
    assert factories.client().get(f"/api/tournaments/{t.pk}/").json()["seed"] == t.seed
    assert Match.objects.get(pk=first).seed == derive(t.seed, "deal", 0)  # a duplicate deal's seed
    assert Client().get(f"/tournaments/{t.pk}/archive.zip").status_code == 200
