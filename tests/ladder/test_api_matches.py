"""REST API: ladders, standings, matches (filters, cursor pagination, detail),
replays and bot logs (docs/api.md). Matches are played by the real
runner and recorded by the real services (tests/ladder/factories.py)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine.replay import verify
from ladder.models import Bot, Ladder, Match, Rating
from ladder.services.validation import create_validation_matches
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _setup(settings):
    f.fast_passwords(settings)
    f.clear_caches()
    yield
    f.clear_caches()


@pytest.fixture
def alice():
    return f.user("alice")


@pytest.fixture
def bob():
    return f.user("bob")


@pytest.fixture
def allegra2():
    return f.ladder("allegra", 2)


@pytest.fixture
def played(alice, bob, allegra2):
    """Two finished matches between alice's and bob's bots; in the second,
    bob's bot (seat 1) crashes after 3 moves."""
    a = f.active_bot(alice, "allegra", "alice-bot")
    b = f.active_bot(bob, "allegra", "bob-bot")
    first = f.finished_match(allegra2, [a, b], seed=11)
    second = f.finished_match(allegra2, [a, b], seed=12, crash={1: 3})
    return {"alice_bot": a, "bob_bot": b, "clean": first, "forfeit": second}


# -- ladders and standings -----------------------------------------------------------------


def test_ladder_list_is_public_and_complete():
    response = f.client().get("/api/ladders/")
    assert response.status_code == 200
    ladders = response.json()
    assert [(lad["game"], lad["players_per_match"]) for lad in ladders] == [
        ("allegory", 2), ("allegory", 4), ("allegra", 2), ("allegra", 4)
    ]
    assert set(ladders[0]) == {
        "id", "name", "game", "players_per_match", "options", "startup_ms", "per_move_ms", "overage_ms", "total_ms", "active"
    }


def test_ladder_detail(allegra2):
    body = f.client().get(f"/api/ladders/{allegra2.pk}/").json()
    assert body["id"] == allegra2.pk and body["name"] == allegra2.name and body["game"] == "allegra"
    assert body["players_per_match"] == 2 and body["active"] is True and body["options"] == {}


def test_unknown_ladder_is_a_json_404():
    f.assert_error(f.client().get("/api/ladders/999999/"), 404)
    f.assert_error(f.client().get("/api/ladders/999999/standings/"), 404)


def test_standings_fresh_ladder_lists_the_playable_bots(allegra2):
    rows = f.client().get(f"/api/ladders/{allegra2.pk}/standings/").json()["results"]
    assert {r["bot_name"] for r in rows} == {"greedy", "random"}
    for row in rows:
        assert row["elo"] == "1500.00" and row["games"] == 0 and row["win_rate"] is None and row["provisional"] is True


def test_standings_order_by_elo_with_every_field(played, allegra2, alice):
    Rating.objects.filter(ladder=allegra2, bot__name="random").update(elo=Decimal("1600.00"))
    response = f.client().get(f"/api/ladders/{allegra2.pk}/standings/")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert set(rows[0]) == {
        "rank", "bot", "bot_name", "owner", "elo", "openskill_ordinal", "mu", "sigma",
        "games", "wins", "win_rate", "forfeits", "provisional", "adjusted",
    }
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    elos = [Decimal(r["elo"]) for r in rows]
    assert elos == sorted(elos, reverse=True)
    assert rows[0]["bot_name"] == "random" and rows[0]["owner"] == "cardroom"

    mine = next(r for r in rows if r["bot_name"] == "alice-bot")
    rating = Rating.objects.get(ladder=allegra2, bot=played["alice_bot"])
    assert mine["bot"] == played["alice_bot"].pk and mine["owner"] == "alice"
    assert Decimal(mine["elo"]) == rating.elo
    assert mine["openskill_ordinal"] == pytest.approx(rating.ordinal)
    assert mine["mu"] == pytest.approx(rating.mu) and mine["sigma"] == pytest.approx(rating.sigma)
    assert mine["games"] == 2 and mine["wins"] == rating.wins
    assert mine["win_rate"] == pytest.approx(rating.wins / 2)
    assert mine["provisional"] is True

    bobs = next(r for r in rows if r["bot_name"] == "bob-bot")
    assert bobs["forfeits"] == 1 and bobs["games"] == 2
    # bob's bot forfeited the second match, so alice's won it.
    assert mine["wins"] >= 1


def test_standings_ties_are_broken_by_ordinal_and_paginate(played, allegra2):
    api = f.client()
    everything = api.get(f"/api/ladders/{allegra2.pk}/standings/").json()
    page = api.get(f"/api/ladders/{allegra2.pk}/standings/", {"page_size": 2, "page": 2}).json()
    assert [r["rank"] for r in page["results"]] == [3, 4]
    assert [r["bot"] for r in page["results"]] == [r["bot"] for r in everything["results"][2:4]]


def test_standings_leave_out_bots_that_cannot_play_and_never_played(allegra2, alice):
    f.bot(alice, "allegra", "never-uploaded")
    pending = f.bot(alice, "allegra", "pending-only")
    f.version(pending, activate=False)
    names = {r["bot_name"] for r in f.client().get(f"/api/ladders/{allegra2.pk}/standings/").json()["results"]}
    assert "never-uploaded" not in names and "pending-only" not in names


def test_list_query_counts_do_not_grow_with_the_page_size(alice, allegra2):
    bots = [f.active_bot(alice, "allegra", f"qc-{i}") for i in range(8)]
    for _ in range(7):
        f.version(bots[0])
    api = f.client(alice)
    for url in (f"/api/ladders/{allegra2.pk}/standings/", "/api/bots/", f"/api/bots/{bots[0].pk}/versions/"):
        counts = []
        for size in (2, 8):
            with CaptureQueriesContext(connection) as ctx:
                response = api.get(url, {"page_size": size})
            assert len(response.json()["results"]) == size, url
            counts.append(len(ctx.captured_queries))
        assert counts[0] == counts[1], (url, counts)


# -- match list ----------------------------------------------------------------------------------


def test_match_list_is_public_and_newest_first(played):
    response = f.client().get("/api/matches/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"next", "previous", "results"}
    ids = [m["id"] for m in body["results"]]
    assert ids == sorted(ids, reverse=True)
    assert ids[:2] == [played["forfeit"].pk, played["clean"].pk]
    first = body["results"][0]
    assert first["status"] == "finished" and first["kind"] == "ladder" and first["game"] == "allegra"
    assert first["ladder_name"] == "Allegra, 2 players"
    assert [p["bot_name"] for p in first["participants"]] == ["alice-bot", "bob-bot"]


@pytest.fixture
def many_matches(allegra2):
    from ladder.models import Bot

    bots = [Bot.objects.get(game="allegra", name="random"), Bot.objects.get(game="allegra", name="greedy")]
    return [f.queued_match(allegra2, bots, seed=i).pk for i in range(60)]


def test_match_list_cursor_pagination_walks_every_match_once(many_matches):
    api = f.client()
    seen = []
    url = "/api/matches/?page_size=7"
    pages = 0
    while url:
        body = api.get(url).json()
        assert len(body["results"]) <= 7
        seen += [m["id"] for m in body["results"]]
        url = body["next"]
        pages += 1
        assert "cursor=" in (url or "cursor=")
    assert seen == sorted(many_matches, reverse=True)
    assert pages == 9
    # And back again.
    last = api.get("/api/matches/?page_size=7").json()
    second = api.get(last["next"]).json()
    back = api.get(second["previous"]).json()
    assert [m["id"] for m in back["results"]] == [m["id"] for m in last["results"]]


def test_match_list_default_and_max_page_size(many_matches):
    api = f.client()
    assert len(api.get("/api/matches/").json()["results"]) == 50
    assert len(api.get("/api/matches/", {"page_size": 1000}).json()["results"]) == 60  # capped at 200


@pytest.mark.parametrize("value", ["0", "-3", "abc", "1.5"])
def test_match_list_bad_page_size_is_400(value):
    f.assert_error(f.client().get("/api/matches/", {"page_size": value}), 400, field="page_size")


def test_match_list_bad_cursor_is_a_json_error():
    body = f.assert_error(f.client().get("/api/matches/", {"cursor": "not-a-cursor"}), 400, field="cursor")
    assert "cursor" in body["error"].lower()


def test_match_list_query_count_does_not_grow_with_the_page_size(many_matches, played):
    api = f.client()
    counts = {}
    for size in (5, 50):
        with CaptureQueriesContext(connection) as ctx:
            response = api.get("/api/matches/", {"page_size": size})
        assert len(response.json()["results"]) == size
        counts[size] = len(ctx.captured_queries)
    assert counts[5] == counts[50], counts
    assert counts[50] <= 4, counts


def test_match_list_filters(played, alice, allegra2):
    api = f.client()
    allegory2 = f.ladder("allegory", 2)
    a, b = played["alice_bot"], played["bob_bot"]
    other = f.active_bot(alice, "allegra", "third-bot")
    queued = f.queued_match(allegra2, [a, other]).pk
    running = f.running_match(allegra2, [other, b]).pk
    cancelled = f.cancelled_match(allegra2, [b, a]).pk
    owl = f.active_bot(alice, "allegory", "owl")
    from ladder.models import Bot

    allegory_match = f.finished_match(allegory2, [owl, Bot.objects.get(game="allegory", name="greedy")]).pk
    clean, forfeit = played["clean"].pk, played["forfeit"].pk

    def ids(**params):
        response = api.get("/api/matches/", params)
        assert response.status_code == 200, response.content
        return [m["id"] for m in response.json()["results"]]

    assert ids() == [allegory_match, cancelled, running, queued, forfeit, clean]
    assert ids(ladder=allegra2.pk) == [cancelled, running, queued, forfeit, clean]
    assert ids(ladder=allegory2.pk) == [allegory_match]
    assert ids(bot=a.pk) == [cancelled, queued, forfeit, clean]
    assert ids(bot=other.pk) == [running, queued]
    assert ids(bot=owl.pk) == [allegory_match]
    assert ids(status="finished") == [allegory_match, forfeit, clean]
    assert ids(status="queued") == [queued]
    assert ids(status="running") == [running]
    assert ids(status="cancelled") == [cancelled]
    assert ids(status="failed") == []
    assert ids(ladder=allegra2.pk, bot=b.pk, status="finished") == [forfeit, clean]
    assert ids(ladder=allegory2.pk, bot=b.pk) == []
    assert ids(ladder=999999) == [] and ids(bot=999999) == []
    seeds = {m["id"]: m["seed"] for m in api.get("/api/matches/").json()["results"]}
    assert seeds[queued] is None and seeds[running] is None and seeds[cancelled] is None
    assert seeds[clean] == 11 and seeds[forfeit] == 12
    # A filtered list pages too.
    body = api.get("/api/matches/", {"bot": a.pk, "page_size": 3}).json()
    assert [m["id"] for m in body["results"]] == [cancelled, queued, forfeit]
    assert [m["id"] for m in api.get(body["next"]).json()["results"]] == [clean]


@pytest.mark.parametrize(
    "params, field, says",
    [
        ({"ladder": "abc"}, "ladder", "the filter 'ladder' takes an id (a whole number), not 'abc'"),
        ({"bot": "1.5"}, "bot", "the filter 'bot' takes an id"),
        ({"bot": "1; drop table"}, "bot", "not '1; drop table'"),
        ({"status": "done"}, "status", "status must be one of queued, running, finished, failed, cancelled, not 'done'"),
        ({"status": "FINISHED"}, "status", "status must be one of"),
        ({"status": ""}, "status", "not ''"),
        ({"ladder": ""}, "ladder", "not ''"),
        ({"bot": ""}, "bot", "not ''"),
    ],
)
def test_match_list_bad_filter_values_are_400(params, field, says):
    f.assert_error(f.client().get("/api/matches/", params), 400, field=field, contains=says)


@pytest.mark.parametrize("value", ["99999999999999999999999", "9223372036854775808", "-1", "0"])
def test_match_list_out_of_range_ids_are_400(value):
    for name in ("ladder", "bot"):
        f.assert_error(f.client().get("/api/matches/", {name: value}), 400, field=name, contains="takes an id from 1 to")
    # The largest id is merely unknown.
    assert f.client().get("/api/matches/", {"bot": "9223372036854775807"}).json()["results"] == []


@pytest.mark.parametrize(
    "url",
    [
        "/api/matches/{big}/", "/api/matches/{big}/replay/", "/api/matches/{big}/logs/0/", "/api/bots/{big}/",
        "/api/bots/{big}/versions/", "/api/ladders/{big}/", "/api/ladders/{big}/standings/",
    ],
)
def test_huge_ids_in_paths_are_404(url, alice):
    f.assert_error(f.client(alice).get(url.format(big="99999999999999999999999")), 404)


def test_huge_seat_is_404(played, alice):
    f.assert_error(f.client(alice).get(f"/api/matches/{played['clean'].pk}/logs/99999999999999999999999/"), 404)


def test_match_list_shows_validation_matches_without_a_ladder(alice, allegra2):
    bot = f.bot(alice, "allegra", "new-bot")
    version = f.version(bot, activate=False)
    validation = create_validation_matches(version)
    body = f.client().get("/api/matches/", {"bot": bot.pk}).json()
    assert [m["id"] for m in body["results"]] == sorted((m.pk for m in validation), reverse=True)
    for m in body["results"]:
        assert m["kind"] == "validation" and m["ladder"] is None and m["ladder_name"] is None
    assert f.client().get("/api/matches/", {"ladder": allegra2.pk, "bot": bot.pk}).json()["results"] == []


# -- match detail ----------------------------------------------------------------------------------------


def test_match_detail_shows_participants_scores_ranks_and_rating_changes(played):
    match = played["clean"]
    body = f.client().get(f"/api/matches/{match.pk}/").json()
    assert body["id"] == match.pk and body["status"] == "finished" and body["num_players"] == 2
    assert body["seed"] == 11 and body["num_events"] == match.num_events and body["finished"]
    participants = body["participants"]
    assert [p["seat"] for p in participants] == [0, 1]
    assert [p["bot_name"] for p in participants] == ["alice-bot", "bob-bot"]
    assert [p["owner"] for p in participants] == ["alice", "bob"]
    assert [p["version"] for p in participants] == [1, 1]
    for p in participants:
        assert isinstance(p["score"], int) and p["rank"] in (1, 2) and p["forfeit"] is None
        assert p["elo_before"] == "1500.00"
        change = Decimal(p["elo_after"]) - Decimal(p["elo_before"])
        assert p["elo_change"] == f"{change:+.2f}"
        assert p["mu_before"] is not None and p["mu_after"] is not None
        assert p["sigma_after"] < p["sigma_before"]
    assert sum(Decimal(p["elo_change"]) for p in participants) == 0
    replay = json.loads(f.client().get(f"/api/matches/{match.pk}/replay/").content)
    assert [p["score"] for p in participants] == replay["result"]["scores"]
    assert [p["rank"] for p in participants] == replay["result"]["ranks"]


def test_match_detail_shows_forfeits(played):
    match = played["forfeit"]
    participants = f.client().get(f"/api/matches/{match.pk}/").json()["participants"]
    alice_seat, bob_seat = participants
    assert alice_seat["forfeit"] is None and alice_seat["rank"] == 1
    assert bob_seat["forfeit"]["reason"] == "crash"
    assert isinstance(bob_seat["forfeit"]["event"], int)
    assert bob_seat["rank"] == 2
    assert Decimal(bob_seat["elo_change"]) < 0 < Decimal(alice_seat["elo_change"])
    replay = json.loads(f.client().get(f"/api/matches/{match.pk}/replay/").content)
    assert replay["result"]["forfeits"] == [{"seat": 1, "reason": "crash", "event": bob_seat["forfeit"]["event"]}]


def test_match_detail_of_a_queued_match(alice, allegra2):
    a, b = f.active_bot(alice, "allegra", "q1"), f.active_bot(alice, "allegra", "q2")
    match = f.queued_match(allegra2, [a, b])
    body = f.client().get(f"/api/matches/{match.pk}/").json()
    assert body["status"] == "queued" and body["finished"] is None and body["num_events"] is None
    assert body["seed"] is None  # it would give away the deal
    for p in body["participants"]:
        assert p["score"] is None and p["rank"] is None and p["elo_change"] is None and p["forfeit"] is None


def test_unknown_match_is_a_json_404():
    api = f.client(f.user())
    for url in ("/api/matches/999999/", "/api/matches/999999/replay/", "/api/matches/999999/logs/0/"):
        f.assert_error(api.get(url), 404, contains="not found")


# -- replay ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["clean", "forfeit"])
def test_replay_is_a_verifiable_json_download(played, which):
    match = played[which]
    response = f.client().get(f"/api/matches/{match.pk}/replay/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="cardroom-match-{match.pk}.json"'
    doc = json.loads(response.content)
    assert doc["format"] == "cardroom-replay" and doc["version"] == 1
    assert doc["game"] == "allegra" and doc["num_players"] == 2 and doc["seed"] == match.seed
    assert [p["name"] for p in doc["players"]] == ["alice-bot", "bob-bot"]
    verified = verify(doc)
    assert verified.events == match.num_events == len(doc["events"])
    assert verified.result.scores == doc["result"]["scores"]


def test_replay_of_an_unplayed_match_is_a_json_404(alice, allegra2):
    a, b = f.active_bot(alice, "allegra", "r1"), f.active_bot(alice, "allegra", "r2")
    match = f.queued_match(allegra2, [a, b])
    f.assert_error(f.client().get(f"/api/matches/{match.pk}/replay/"), 404, contains="has no replay yet (status: queued)")


# -- logs ----------------------------------------------------------------------------------------------------------


def test_logs_owner_reads_their_seat(played, alice, bob):
    clean, forfeit = played["clean"], played["forfeit"]
    response = f.client(alice).get(f"/api/matches/{clean.pk}/logs/0/")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert text.startswith("seat 0 (alice-bot): hello from stderr\nmove 1\n")
    response = f.client(bob).get(f"/api/matches/{forfeit.pk}/logs/1/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "move 3\nTraceback: deliberate crash after 3 moves" in text
    assert "[cardroom: seat 1 forfeited at event" in text and "crash" in text


def test_logs_another_user_is_403(played, alice, bob):
    match = played["clean"]
    f.assert_error(f.client(bob).get(f"/api/matches/{match.pk}/logs/0/"), 403, contains="only the bot's owner")
    f.assert_error(f.client(alice).get(f"/api/matches/{match.pk}/logs/1/"), 403)
    f.assert_error(f.client(f.user()).get(f"/api/matches/{match.pk}/logs/0/"), 403)


def test_logs_of_a_builtin_bot_are_not_public(allegra2, alice):
    from ladder.models import Bot

    builtin = Bot.objects.get(game="allegra", name="greedy")
    mine = f.active_bot(alice, "allegra", "vs-greedy")
    match = f.finished_match(allegra2, [mine, builtin])
    assert f.client(alice).get(f"/api/matches/{match.pk}/logs/0/").status_code == 200
    f.assert_error(f.client(alice).get(f"/api/matches/{match.pk}/logs/1/"), 403)


def test_logs_anonymous_is_401(played):
    response = f.client().get(f"/api/matches/{played['clean'].pk}/logs/0/")
    f.assert_error(response, 401)
    assert response["WWW-Authenticate"] == "Token"


def test_logs_unknown_seat_is_404(played, alice):
    match = played["clean"]
    f.assert_error(f.client(alice).get(f"/api/matches/{match.pk}/logs/2/"), 404, contains=f"match {match.pk} has no seat 2")
    f.assert_error(f.client(alice).get(f"/api/matches/{match.pk}/logs/99999/"), 404)


def test_logs_of_an_unplayed_match_are_empty(alice, allegra2):
    a, b = f.active_bot(alice, "allegra", "l1"), f.active_bot(alice, "allegra", "l2")
    match = f.queued_match(allegra2, [a, b])
    response = f.client(alice).get(f"/api/matches/{match.pk}/logs/0/")
    assert response.status_code == 200 and response.content == b""


# -- read-only resources and stray URLs --------------------------------------------------------------------------------


def test_matches_and_ladders_are_read_only(played, alice):
    api = f.client(alice)
    match = played["clean"]
    f.assert_error(api.post("/api/matches/", {}, format="json"), 405)
    f.assert_error(api.delete(f"/api/matches/{match.pk}/"), 405)
    f.assert_error(api.post("/api/ladders/", {"name": "mine"}, format="json"), 405)
    assert Ladder.objects.count() == 4 and Match.objects.filter(pk=match.pk).exists()


@pytest.mark.parametrize(
    "url",
    ["/api/nothing-here/", "/api/matches/abc/", "/api/bots/1/versions/v2/", "/api/matches/1/logs/x/", "/api/no/thing/",
     "/api/matches/a%0Ab/logs/1/"],
)
def test_unknown_api_urls_are_json_404(url):
    f.assert_error(f.client().get(url), 404, contains="no API resource")
    f.assert_error(f.client().post(url, {}, format="json"), 404)


def test_a_match_page_shows_the_match_exactly_as_the_list_does():
    # (the page reads its row with SQL of its own, the list with the ORM:
    # datetimes, options and names must come out the same)
    ladder = f.ladder("allegra", 2)
    bots = [f.active_bot(f.user("page-owner"), "allegra", "page-bot"), Bot.objects.get(game="allegra", name="random")]
    finished = f.finished_match(ladder, bots, seed=21)
    queued = f.queued_match(ladder, bots, seed=22)
    listed = {m["id"]: m for m in f.client().get("/api/matches/").json()["results"]}
    for match in (finished, queued):
        page = f.client().get(f"/api/matches/{match.pk}/").json()
        assert page == listed[match.pk]
    assert listed[finished.pk]["finished"].endswith("Z") and listed[finished.pk]["ladder_name"] == ladder.name
    assert f.client().get("/api/matches/999999999/").status_code == 404
