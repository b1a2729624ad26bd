"""Anyone can recompute the ladder's Elo from the API alone: each match says
in which order its ratings were applied (``rating_sequence``), and replaying
the ladder's matches in that order with the documented formula
(docs/ladder.md, "Ratings") lands on every stored Elo exactly. The results
are recorded by the real services, in an order unlike the matches' ids."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from cardroom.runner import run_match
from ladder import rating_math as calc
from ladder.services import matches as match_services
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_cache():
    f.clear_caches()
    yield
    f.clear_caches()


def _all_matches(client, ladder_id: int) -> list[dict]:
    out, url = [], f"/api/matches/?ladder={ladder_id}&page_size=100"
    while url:
        page = client.get(url).json()
        out += page["results"]
        url = page["next"]
    return out


def test_elo_recomputed_from_the_api_in_rating_sequence_order_is_the_stored_elo():
    ladder = f.ladder("allegra", 2)
    bots = [f.active_bot(game="allegra") for _ in range(4)]
    queued = []
    for i in range(14):  # every bot past its 10 provisional games for some of them
        a, b = random.Random(i).sample(bots, 2)
        queued.append(f.queued_match(ladder, [a, b], seed=100 + i))
    order = list(queued)
    random.Random(3).shuffle(order)  # results come in unlike the matches' ids (and so the API's list order)
    claims = [match_services.claim_match(m.pk, worker="tests") for m in order]
    for m, claim in zip(order, claims):
        players = [f.ScriptedPlayer("allegra", f"seat {s}") for s in range(2)]
        record = run_match("allegra", players, seed=m.seed, match_id=str(m.pk))
        assert match_services.record_result(claim, record)

    anyone = f.client()
    played = [m for m in _all_matches(anyone, ladder.pk) if m["status"] == "finished"]
    assert len(played) == 14 and all(isinstance(m["rating_sequence"], int) for m in played)
    assert sorted(m["rating_sequence"] for m in played) != [m["rating_sequence"] for m in sorted(played, key=lambda m: m["id"])]

    elo: dict[int, Decimal] = {}
    games: dict[int, int] = {}
    right = 0
    for m in sorted(played, key=lambda m: m["rating_sequence"]):
        seats = sorted(m["participants"], key=lambda p: p["seat"])
        before = [elo.get(p["bot"], calc.ELO_START) for p in seats]
        provisional = [games.get(p["bot"], 0) < calc.PROVISIONAL_GAMES for p in seats]
        deltas = calc.elo_deltas(before, [p["rank"] for p in seats], provisional)
        for p, old, delta in zip(seats, before, deltas):
            assert Decimal(p["elo_before"]) == old, f"match {m['id']} seat {p['seat']}"
            assert Decimal(p["elo_after"]) == old + delta, f"match {m['id']} seat {p['seat']}"
            right += 1
            elo[p["bot"]] = old + delta
            games[p["bot"]] = games.get(p["bot"], 0) + 1
    assert right == 28
    standings = anyone.get(f"/api/ladders/{ladder.pk}/standings/?page_size=100").json()
    stored = {row["bot"]: Decimal(row["elo"]) for row in standings["results"] if row["bot"] in elo}
    assert stored == elo
