"""REST API: managing a bot after creating it (edit the description,
withdraw and re-enter, delete a version, delete a bot), the validation
progress of a version, the API root and /api/auth/me/. Only the owner may
change a bot; history (rated matches and their participants) survives every
deletion."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from ladder import selectors
from ladder.models import Bot, BotVersion, Match, Participant, Rating
from ladder.services import accounts, matchmaking
from ladder.services import validation as validation_services
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _setup(settings):
    f.fast_passwords(settings)
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def owner():
    return f.user("owner")


@pytest.fixture
def my_bot(owner):
    return f.active_bot(owner, game="allegra", name="my-bot")


def standing_ids(ladder) -> set[int]:
    return {row["bot"] for row in selectors.standings(ladder)}


# -- the API root and who am I ------------------------------------------------------


def test_api_root_lists_the_resources_with_links():
    response = f.client().get("/api/")
    assert response.status_code == 200
    links = response.json()
    for name in ("games", "ladders", "bots", "matches", "schema", "register", "token", "me"):
        assert links[name].startswith("http://testserver/api/"), links
    # every link answers (the ones that need no sign-in, without one)
    for name in ("games", "ladders", "bots", "matches", "schema"):
        assert f.client().get(links[name]).status_code == 200, name


def test_me_names_the_token_owner(owner):
    assert f.client(owner).get("/api/auth/me/").json() == {"username": "owner", "is_staff": False}
    f.assert_error(f.client().get("/api/auth/me/"), 401)


def test_bots_can_be_found_by_name(owner, my_bot):
    other = f.active_bot(game="allegory", name="my-bot")
    found = f.client(owner).get("/api/bots/?game=allegra&name=my-bot").json()["results"]
    assert [b["id"] for b in found] == [my_bot.pk]
    assert other.pk != my_bot.pk


# -- description ------------------------------------------------------------------------


def test_owner_edits_the_description(owner, my_bot):
    response = f.client(owner).patch(f"/api/bots/{my_bot.pk}/", {"description": "  now smarter\r\n"}, format="json")
    assert response.status_code == 200
    assert response.json()["description"] == "now smarter"
    assert Bot.objects.get(pk=my_bot.pk).description == "now smarter"


def test_description_over_the_limit_is_400(owner, my_bot):
    response = f.client(owner).patch(f"/api/bots/{my_bot.pk}/", {"description": "x" * 2001}, format="json")
    f.assert_error(response, 400, field="description")
    assert Bot.objects.get(pk=my_bot.pk).description == ""


@pytest.mark.parametrize(
    "change", [{"description": "mine now"}, {"withdrawn": True}], ids=["description", "withdraw"]
)
def test_only_the_owner_may_change_a_bot(my_bot, change):
    intruder = f.user("intruder")
    f.assert_error(f.client(intruder).patch(f"/api/bots/{my_bot.pk}/", change, format="json"), 403, contains="owner")
    f.assert_error(f.client().patch(f"/api/bots/{my_bot.pk}/", change, format="json"), 401)
    staff = f.user("staffer")
    staff.is_staff = True
    staff.save()
    f.assert_error(f.client(staff).patch(f"/api/bots/{my_bot.pk}/", change, format="json"), 403)
    bot = Bot.objects.get(pk=my_bot.pk)
    assert bot.description == "" and bot.withdrawn is None


# -- withdraw and re-enter --------------------------------------------------------------------


def test_withdrawn_bot_keeps_history_leaves_standings_and_matchmaking(owner, my_bot):
    ladder = f.ladder("allegra", 2)
    rival = f.active_bot(game="allegra")
    match = f.finished_match(ladder, [my_bot, rival], seed=11)
    assert my_bot.pk in standing_ids(ladder)
    assert my_bot.pk in {b.pk for b in matchmaking.eligible_bots(ladder)}

    api = f.client(owner)
    response = api.patch(f"/api/bots/{my_bot.pk}/", {"withdrawn": True}, format="json")
    assert response.status_code == 200 and response.json()["withdrawn"] is True
    assert my_bot.pk not in standing_ids(ladder)
    assert my_bot.pk not in {b.pk for b in matchmaking.eligible_bots(ladder)}
    public = f.client().get(f"/api/ladders/{ladder.pk}/standings/").json()["results"]
    assert my_bot.pk not in {row["bot"] for row in public}
    # its history stays: the match, its seat, its rating
    assert Participant.objects.filter(match=match, bot=my_bot).exists()
    assert Rating.objects.get(ladder=ladder, bot=my_bot).games == 1
    assert f.client().get(f"/api/matches/?bot={my_bot.pk}").json()["results"][0]["id"] == match.pk

    response = api.patch(f"/api/bots/{my_bot.pk}/", {"withdrawn": False}, format="json")
    assert response.status_code == 200 and response.json()["withdrawn"] is False
    assert my_bot.pk in standing_ids(ladder)
    assert my_bot.pk in {b.pk for b in matchmaking.eligible_bots(ladder)}


# -- deleting a version ------------------------------------------------------------------------------


def test_version_detail_shows_the_queue_position_of_pending_versions(owner, my_bot):
    first = f.version(my_bot, activate=False)
    second = f.version(my_bot, activate=False)
    api = f.client(owner)
    one = api.get(f"/api/bots/{my_bot.pk}/versions/{first.number}/").json()
    two = api.get(f"/api/bots/{my_bot.pk}/versions/{second.number}/").json()
    assert (one["status"], one["queue_position"]) == ("pending", 1)
    assert (two["status"], two["queue_position"]) == ("pending", 2)
    assert two["progress"].startswith("queued for validation: place 2 in the queue (1 version ahead). Waiting ")
    assert two["validation_step"] is None
    # the list shows the same
    listed = {v["number"]: v for v in api.get(f"/api/bots/{my_bot.pk}/versions/").json()["results"]}
    assert listed[second.number]["queue_position"] == 2
    active = listed[my_bot.current_version.number]
    assert active["queue_position"] is None and active["progress"] == ""


def test_a_pending_version_says_what_it_waits_for_and_about_how_long(owner, my_bot):
    """Issue 36: "place 1 in the queue" alone for a minute and a half."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    # three earlier uploads: waited 30, 40 and 50 s for a worker, then validated in 20, 25 and 30 s
    for wait, play in ((30, 20), (40, 25), (50, 30)):
        done = f.version(my_bot, activate=False)
        matches = validation_services.create_validation_matches(done)
        created = now - timedelta(minutes=10)
        BotVersion.objects.filter(pk=done.pk).update(status="rejected", created=created)
        Match.objects.filter(pk__in=[m.pk for m in matches]).update(
            status="finished", started=created + timedelta(seconds=wait), finished=created + timedelta(seconds=wait + play)
        )
    validating = f.version(my_bot, activate=False)
    running = validation_services.create_validation_matches(validating)[0]
    Match.objects.filter(pk=running.pk).update(status="running")
    BotVersion.objects.filter(pk=validating.pk).update(status="validating")
    first = f.version(my_bot, activate=False)
    second = f.version(my_bot, activate=False)
    BotVersion.objects.filter(pk__in=[first.pk, second.pk]).update(created=now - timedelta(seconds=10))
    api = f.client(owner)
    one = api.get(f"/api/bots/{my_bot.pk}/versions/{first.number}/").json()
    two = api.get(f"/api/bots/{my_bot.pk}/versions/{second.number}/").json()
    # (a slow machine may take a second or two between the update and the reads)
    assert re.fullmatch(
        r"queued for validation: place 1 in the queue \(next in line\)\. Waiting 1[0-4] s so far: "
        r"1 validation match is being played now, and each worker finishes the match it is playing before it takes the next\. "
        # the medians: 40 s of waiting, 25 s of play; place 2 waits for one validation ahead too
        r"Lately a version waited about 40 s for a worker and its validation took about 25 s \(the last 20 uploads at most\): "
        r"this one should start within about (2[6-9]|30) s\.",
        one["progress"],
    ), one["progress"]
    assert re.search(r"this one should start within about (5[1-5]) s\.$", two["progress"]), two["progress"]
    # the owner's page says the same
    from django.test import Client

    web = Client()
    web.force_login(owner)
    page = web.get(f"/my/bots/{my_bot.pk}/").content.decode()
    assert re.search(r"Waiting 1[0-9] s so far", page) and re.search(r"should start within about (2[0-9]|30) s", page)


def test_version_detail_shows_which_validation_match_is_playing(owner, my_bot):
    version = f.version(my_bot, activate=False)
    matches = validation_services.create_validation_matches(version)
    BotVersion.objects.filter(pk=version.pk).update(status="validating")
    api = f.client(owner)
    url = f"/api/bots/{my_bot.pk}/versions/{version.number}/"
    body = api.get(url).json()
    assert (body["validation_step"], body["validation_steps"], body["validation_match"]) == (1, 2, matches[0].pk)
    assert body["progress"] == f"validating: playing match 1 of 2 (/matches/{matches[0].pk}/)"
    Match.objects.filter(pk=matches[0].pk).update(status="finished")
    body = api.get(url).json()
    assert (body["validation_step"], body["validation_match"]) == (2, matches[1].pk)
    assert body["queue_position"] is None


def test_owner_deletes_a_version_that_never_played(owner, my_bot):
    version = f.version(my_bot, activate=False)
    validation = validation_services.create_validation_matches(version)
    response = f.client(owner).delete(f"/api/bots/{my_bot.pk}/versions/{version.number}/")
    assert response.status_code == 204
    assert not BotVersion.objects.filter(pk=version.pk).exists()
    assert not Match.objects.filter(pk__in=[m.pk for m in validation]).exists()
    f.assert_error(f.client(owner).get(f"/api/bots/{my_bot.pk}/versions/{version.number}/"), 404)


def test_a_version_that_played_a_ladder_match_is_kept(owner, my_bot):
    ladder = f.ladder("allegra", 2)
    played = my_bot.current_version
    match = f.finished_match(ladder, [my_bot, f.active_bot(game="allegra")], seed=5)
    f.version(my_bot)  # a newer version takes over: the old one is not the one playing
    response = f.client(owner).delete(f"/api/bots/{my_bot.pk}/versions/{played.number}/")
    f.assert_error(response, 409, contains="kept as history")
    assert BotVersion.objects.filter(pk=played.pk).exists()
    assert Participant.objects.filter(match=match, version=played).exists()


def test_the_version_playing_now_cannot_be_deleted(owner, my_bot):
    response = f.client(owner).delete(f"/api/bots/{my_bot.pk}/versions/{my_bot.current_version.number}/")
    f.assert_error(response, 409, contains="upload a new version first")


def test_a_version_being_validated_cannot_be_deleted(owner, my_bot):
    version = f.version(my_bot, activate=False)
    BotVersion.objects.filter(pk=version.pk).update(status="validating")
    f.assert_error(f.client(owner).delete(f"/api/bots/{my_bot.pk}/versions/{version.number}/"), 409, contains="wait")
    assert BotVersion.objects.filter(pk=version.pk).exists()


def test_only_the_owner_may_delete_a_version(owner, my_bot):
    version = f.version(my_bot, activate=False)
    url = f"/api/bots/{my_bot.pk}/versions/{version.number}/"
    f.assert_error(f.client(f.user()).delete(url), 403)
    f.assert_error(f.client().delete(url), 401)
    assert BotVersion.objects.filter(pk=version.pk).exists()


# -- deleting a bot -------------------------------------------------------------------------------------


def test_owner_deletes_a_bot_that_never_played_on_a_ladder(owner, my_bot):
    failed = f.version(my_bot, activate=False)
    validation = validation_services.create_validation_matches(failed)
    BotVersion.objects.filter(pk=failed.pk).update(status="failed")
    response = f.client(owner).delete(f"/api/bots/{my_bot.pk}/")
    assert response.status_code == 204
    assert not Bot.objects.filter(pk=my_bot.pk).exists()
    assert not BotVersion.objects.filter(bot_id=my_bot.pk).exists()
    assert not Rating.objects.filter(bot_id=my_bot.pk).exists()
    assert not Match.objects.filter(pk__in=[m.pk for m in validation]).exists()
    # the built-in bots that sat in its validation matches are untouched
    assert Bot.objects.filter(builtin=True, game="allegra").count() >= 1
    # the name is free again
    assert f.client(owner).post("/api/bots/", {"game": "allegra", "name": "my-bot"}, format="json").status_code == 201


def test_a_bot_with_ladder_history_cannot_be_deleted(owner, my_bot):
    ladder = f.ladder("allegra", 2)
    rival = f.active_bot(game="allegra")
    match = f.finished_match(ladder, [my_bot, rival], seed=3)
    f.assert_error(f.client(owner).delete(f"/api/bots/{my_bot.pk}/"), 409, contains="withdraw it")
    assert Bot.objects.filter(pk=my_bot.pk).exists()
    assert sorted(Participant.objects.filter(match=match).values_list("bot_id", flat=True)) == sorted([my_bot.pk, rival.pk])


def test_only_the_owner_may_delete_a_bot(my_bot):
    f.assert_error(f.client(f.user()).delete(f"/api/bots/{my_bot.pk}/"), 403)
    f.assert_error(f.client().delete(f"/api/bots/{my_bot.pk}/"), 401)
    builtin = Bot.objects.filter(builtin=True).first()
    f.assert_error(f.client(f.user()).delete(f"/api/bots/{builtin.pk}/"), 403)
    assert Bot.objects.filter(pk__in=[my_bot.pk, builtin.pk]).count() == 2


# -- deleting an account -----------------------------------------------------------------------------


def test_deleted_account_keeps_history_under_a_tombstone(owner, my_bot):
    ladder = f.ladder("allegra", 2)
    match = f.finished_match(ladder, [my_bot, f.active_bot(game="allegra")], seed=9)
    key = f.token(owner)
    accounts.delete_account(owner)
    owner.refresh_from_db()
    assert owner.username == f"[deleted-{owner.pk}]" and not owner.is_active and not owner.has_usable_password()
    assert Bot.objects.get(pk=my_bot.pk).withdrawn is not None
    assert my_bot.pk not in standing_ids(ladder)
    seats = f.client().get(f"/api/matches/{match.pk}/").json()["participants"]
    assert {s["owner"] for s in seats if s["bot"] == my_bot.pk} == {owner.username}
    api = f.client()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    f.assert_error(api.get("/api/auth/me/"), 401)
