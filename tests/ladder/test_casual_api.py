"""Casual matches without a worker (decisions 130-136): what POST /api/play/
refuses, and how (a 4xx naming the field); the open-match limit; who may
read or answer a seat; a casual match in no list, no standings and no
matchmaking; and a casual match whose worker died is failed at once, never
dealt again. (Playing one, with a real worker: test_casual_worker.py.)"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from ladder import selectors
from ladder.models import Bot, CasualSeat, Match, Participant
from ladder.services import matches, matchmaking, ops, reaper
from ladder.tasks import reap_expired_leases
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

GOOD = {"game": "allegra", "num_players": 3, "opponents": ["builtin:random", "builtin:greedy"], "seat": 2}


@pytest.fixture
def alice():
    return f.user("alice")


def play(api, body, **extra):
    return api.post("/api/play/", body, format="json", **extra)


def test_a_casual_match_is_queued_with_the_person_in_the_seat_asked(alice):
    r = play(f.client(alice), GOOD)
    assert r.status_code == 201, r.content
    match = Match.objects.get(pk=r.json()["id"])
    assert (match.kind, match.status, match.ladder_id, match.num_players) == ("casual", "queued", None, 3)
    assert sorted(match.participants.values_list("seat", "bot__name")) == [(0, "random"), (1, "greedy")]
    assert (match.casual_seat.user, match.casual_seat.seat, match.casual_seat.decision) == (alice, 2, 0)
    seat = f.client(alice).get(f"/api/play/{match.pk}/").json()
    assert seat["status"] == "queued" and seat["message"] is None and seat["seat"] == 2
    assert [p["human"] for p in seat["players"]] == [False, False, True]
    listed = f.client(alice).get("/api/play/").json()
    assert [(m["id"], m["status"], m["seat"]) for m in listed] == [(match.pk, "queued", 2)]
    assert f.client(f.user()).get("/api/play/").json() == []  # each user sees their own
    # No answer is awaited yet: 409, not a 400 (the action may be fine).
    f.assert_error(f.client(alice).post(f"/api/play/{match.pk}/action/", {"action": {"type": "draw"}}, format="json"), 409)


def test_the_api_root_links_the_human_seat():
    assert f.client().get("/api/").json()["play"] == "http://testserver/api/play/"


def test_the_seat_defaults_to_a_random_one():
    unseated = {k: v for k, v in GOOD.items() if k != "seat"}
    # (each from an address of its own: one network holds a few open matches)
    seats = {CasualSeat.objects.get(pk=play(f.client(f.user()), unseated, REMOTE_ADDR=f"192.0.2.{i}").json()["id"]).seat for i in range(12)}
    assert len(seats) > 1 and seats <= {0, 1, 2}


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"game": "chess"}, "game", "chess"),
        ({"num_players": 1}, "num_players", "2"),
        ({"num_players": 7}, "num_players", "6"),
        ({"num_players": "three"}, "num_players", None),
        ({"opponents": ["builtin:random"]}, "opponents", "2 bots"),
        ({"opponents": "builtin:random"}, "opponents", None),
        ({"opponents": ["builtin:random", "builtin:nobody"]}, "opponents", "nobody"),
        ({"opponents": ["builtin:random", 99999999]}, "opponents", "99999999"),
        ({"opponents": ["builtin:random", 0]}, "opponents.1", None),
        ({"opponents": ["builtin:random", True]}, "opponents.1", None),
        ({"opponents": ["builtin:random", {"id": 3}]}, "opponents.1", None),
        ({"seat": 3}, "seat", "0 to 2"),
        ({"seat": -1}, "seat", None),
    ],
)
def test_bad_starts_are_a_400_naming_the_field(alice, change, field, says):
    r = play(f.client(alice), {**GOOD, **change})
    f.assert_error(r, 400, field, says)
    assert not Match.objects.filter(kind="casual").exists()


def test_opponents_must_be_active_visible_bots_of_the_game(alice):
    api = f.client(alice)
    other = f.user("other")
    ready = f.active_bot(other, "allegra", "ready")
    assert play(api, {**GOOD, "opponents": [ready.pk, "builtin:random"]}).status_code == 201
    f.assert_error(play(api, {**GOOD, "opponents": [f.bot(other, "allegra", "unvalidated").pk, "builtin:random"]}), 400, "opponents", "no active version")
    f.assert_error(play(api, {**GOOD, "opponents": [f.active_bot(other, "allegory", "elsewhere").pk, "builtin:random"]}), 400, "opponents", "allegory")
    Bot.objects.filter(pk=ready.pk).update(withdrawn=timezone.now())
    f.assert_error(play(api, {**GOOD, "opponents": [ready.pk, "builtin:random"]}), 400, "opponents", "withdrawn")
    # Bad JSON, and no token at all.
    r = api.post("/api/play/", "{not json", content_type="application/json")
    f.assert_error(r, 400)
    f.assert_error(play(f.client(), GOOD), 401)


def test_a_user_holds_a_limited_number_of_open_casual_matches(alice, settings):
    settings.CARDROOM_CASUAL_OPEN_PER_USER = 2
    api = f.client(alice)
    first, _second = (play(api, GOOD).json()["id"] for _ in range(2))
    body = f.assert_error(play(api, GOOD), 429, contains="CARDROOM_CASUAL_OPEN_PER_USER")
    assert body["quota"] == "casual_matches" and body["limit"] == 2
    assert play(f.client(f.user()), GOOD).status_code == 201  # another user's are their own
    Match.objects.filter(pk=first).update(status=Match.Status.FINISHED)
    assert play(api, GOOD).status_code == 201


def test_only_its_person_reads_or_answers_the_seat(alice):
    match_id = play(f.client(alice), GOOD).json()["id"]
    bob = f.client(f.user("bob"))
    f.assert_error(bob.get(f"/api/play/{match_id}/"), 403, contains="only the person")
    f.assert_error(bob.post(f"/api/play/{match_id}/action/", {"action": {"type": "draw"}}, format="json"), 403)
    f.assert_error(f.client().get(f"/api/play/{match_id}/"), 401)
    ladder_match = f.queued_match(f.ladder("allegra", 2), [Bot.objects.get(game="allegra", name="random")] * 2)
    f.assert_error(f.client(alice).get(f"/api/play/{ladder_match.pk}/"), 404)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"action": "draw"},
        {"action": {"type": "draw"}, "decision": 0},
        {"action": {"type": "draw"}, "decision": "1"},
        {"action": {"type": "draw"}, "extra": 1},
    ],
)
def test_malformed_answers_are_a_400_naming_the_field(alice, body):
    match_id = play(f.client(alice), GOOD).json()["id"]
    r = f.client(alice).post(f"/api/play/{match_id}/action/", body, format="json")
    assert r.status_code == 400, r.content


def test_an_answer_is_read_by_the_bounded_reply_parse(alice):
    match_id = play(f.client(alice), GOOD).json()["id"]
    api = f.client(alice)
    for raw in ['{"action": {"type": "draw", "type": "pass"}}', '{"action": {"amount": NaN}}', "[" * 40 + "]" * 40]:
        r = api.post(f"/api/play/{match_id}/action/", raw, content_type="application/json")
        assert r.status_code == 400, (raw, r.content)


def test_a_casual_match_is_in_no_list_no_standings_and_no_matchmaking(alice):
    match_id = play(f.client(alice), GOOD).json()["id"]
    api = f.client(alice)
    assert match_id not in [m["id"] for m in api.get("/api/matches/").json()["results"]]
    random_bot = Bot.objects.get(game="allegra", name="random")
    assert match_id not in [m["id"] for m in api.get(f"/api/matches/?bot={random_bot.pk}").json()["results"]]
    assert api.get(f"/api/matches/{match_id}/").json()["kind"] == "casual"
    # The matchmaker counts only its ladders' matches (a queued casual match fills no ladder's queue).
    created = matchmaking.top_up_queues()
    assert created and not Match.objects.filter(pk__in=created, kind="casual").exists()


def test_a_casual_match_whose_worker_died_is_failed_not_dealt_again(alice):
    match_id = play(f.client(alice), GOOD).json()["id"]
    claim = matches.claim_match(match_id, worker="gone")
    assert ops.status(with_broker=False)["matches"]["casual_running"] == 1  # the status page counts it
    CasualSeat.objects.filter(pk=match_id).update(decision=3, message='{"type":"act"}')
    Match.objects.filter(pk=match_id).update(lease_expires=timezone.now() - timedelta(seconds=1))
    assert reaper.reap_expired_leases() == [match_id]
    match = Match.objects.get(pk=match_id)
    assert match.status == "failed" and match.attempts == 1 and match.error_kind == "worker_lost"
    seat = f.client(alice).get(f"/api/play/{match_id}/").json()
    assert seat["status"] == "failed" and seat["message"] is None and seat["decision"] == 3
    assert matches.claim_match(match_id) is None and claim is not None
    assert Participant.objects.filter(match_id=match_id).count() == 2
    # A failed match is no longer open: the person may start another.
    assert selectors.open_casual_matches(alice).count() == 0


def test_a_queued_casual_match_its_person_left_is_cancelled_by_the_reapers_sweep(alice, settings):
    settings.CARDROOM_CASUAL_IDLE_SECONDS = 60
    api = f.client(alice)
    left, waiting = (play(api, GOOD).json()["id"] for _ in range(2))
    CasualSeat.objects.filter(pk=left).update(last_poll=timezone.now() - timedelta(seconds=61))
    api.get(f"/api/play/{waiting}/")  # this one's page still asks
    assert reap_expired_leases.apply().get()["casual_abandoned"] == [left]
    assert Match.objects.get(pk=left).status == "cancelled" and Match.objects.get(pk=waiting).status == "queued"
    assert selectors.open_casual_matches(alice).count() == 1


def test_the_seat_forfeits_on_its_move_clock_and_stops_when_the_match_is_no_longer_its_workers(alice, settings):
    """HumanSeat, the person's Player in the runner, on its own (the worker
    test plays it through a real worker): the act it publishes, its move
    clock, and its lease."""
    from cardroom.players import TIMEOUT, BotFault
    from engine import new_game
    from ladder.worker.casual import HumanSeat

    match_id = play(f.client(alice), GOOD).json()["id"]
    state = new_game("allegra", 3).new_initial_state()
    state.apply_chance(state.sample_chance(random.Random(1)))
    seat = state.to_act()[0]
    settings.CARDROOM_CASUAL_MOVE_SECONDS = 0
    with pytest.raises(BotFault) as fault:
        HumanSeat(match_id, "alice", lost=lambda: False).act(state, seat)
    assert fault.value.reason == TIMEOUT and "0 s for this move" in fault.value.detail
    row = CasualSeat.objects.get(pk=match_id)
    assert (row.decision, row.message, row.forfeit_reason) == (1, "", TIMEOUT)
    settings.CARDROOM_CASUAL_MOVE_SECONDS = 600
    with pytest.raises(matches.LeaseLost):
        HumanSeat(match_id, "alice", lost=lambda: True).act(state, seat)
    assert CasualSeat.objects.get(pk=match_id).message.startswith('{"type":"act","observation":')
