"""Issue 36, item 5: a deleted account is named ``[deleted-N]`` in every
replay and page (decision 191): the stored replays of its casual matches
are rewritten, one that finishes after the deletion is recorded with the
tombstone, and no cached copy (the replay's, a match page's, the frames')
shows the old name again, whatever the headers it was first sent with."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client

from bots import builtin_chooser
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from ladder import caching, selectors
from ladder.models import Bot, Match
from ladder.services import casual
from ladder.services import matches as match_services
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]


def play_casual(user, *, delete_before_the_result: bool = False) -> Match:
    """A casual match of ``user`` (seat 0) against the built-in random bot,
    played by the real runner and recorded as the casual worker does
    (the seat's name is the username when the match starts)."""
    seat = casual.start(user=user, game="allegra", num_players=2, opponents=["builtin:random"], seat=0)
    claim = match_services.claim_match(seat.pk, worker="tests")
    assert claim is not None
    match = Match.objects.get(pk=seat.pk)
    players = [InProcessPlayer(name, builtin_chooser("random", "allegra")) for name in (user.username, "random")]
    record = run_match("allegra", players, seed=match.seed, options={}, match_id=str(match.pk), names=[user.username, "random v1"])
    if delete_before_the_result:
        delete(user)
    assert match_services.record_result(claim, record)
    return Match.objects.get(pk=match.pk)


def delete(user) -> None:
    web = Client()
    web.force_login(user)
    response = web.post("/account/delete/", {"password": f.PASSWORD})
    assert response.status_code == 302, response.content[:500]


def replay_names(response) -> list[str]:
    body = gzip.decompress(response.content) if response.get("Content-Encoding") == "gzip" else response.content
    return [p["name"] for p in json.loads(body)["players"]]


def stored_names(match: Match) -> list[str]:
    match.refresh_from_db()
    return [p["name"] for p in json.loads(selectors.replay_bytes(match))["players"]]


def tombstone(user) -> str:
    return f"[deleted-{user.pk}]"


def test_every_replay_and_page_names_the_deleted_account(django_capture_on_commit_callbacks):
    alice = f.user("alice")
    match = play_casual(alice)
    visitor = Client()
    # Everything that names her, asked (and cached) before the deletion.
    replay = visitor.get(f"/api/matches/{match.pk}/replay/")
    assert replay_names(replay) == ["alice", "random v1"]
    assert "immutable" not in replay["Cache-Control"] and "max-age=0" in replay["Cache-Control"]
    zipped = visitor.get(f"/api/matches/{match.pk}/replay/", HTTP_ACCEPT_ENCODING="gzip")
    assert replay_names(zipped) == ["alice", "random v1"]
    frames = visitor.get(f"/matches/{match.pk}/frames/?view=full")
    assert "alice" in frames.content.decode()
    assert "max-age=0" in frames["Cache-Control"]
    assert "alice" in visitor.get(f"/matches/{match.pk}/").content.decode()
    old_file = match.replay.name

    with django_capture_on_commit_callbacks(execute=True):
        delete(alice)

    gone = tombstone(alice)
    assert stored_names(match) == [gone, "random v1"]
    assert not match.replay.storage.exists(old_file)  # the file that held the name is removed
    again = visitor.get(f"/api/matches/{match.pk}/replay/")
    assert replay_names(again) == [gone, "random v1"]
    assert replay_names(visitor.get(f"/api/matches/{match.pk}/replay/", HTTP_ACCEPT_ENCODING="gzip")) == [gone, "random v1"]
    # A client revalidating the copy it kept gets the new replay, not a 304.
    revalidated = visitor.get(f"/api/matches/{match.pk}/replay/", HTTP_IF_NONE_MATCH=replay["ETag"])
    assert revalidated.status_code == 200 and replay_names(revalidated) == [gone, "random v1"]
    new_frames = visitor.get(f"/matches/{match.pk}/frames/?view=full", HTTP_IF_NONE_MATCH=frames["ETag"])
    assert new_frames.status_code == 200
    assert gone in new_frames.content.decode() and "alice" not in new_frames.content.decode()
    page = visitor.get(f"/matches/{match.pk}/").content.decode()
    assert gone in page and "alice" not in page
    assert b"alice" not in Client().get(f"/api/matches/{match.pk}/").content


def test_a_casual_match_that_ends_after_the_deletion_names_the_tombstone():
    bob = f.user("bobby")
    match = play_casual(bob, delete_before_the_result=True)  # the seat was named "bobby" when it started
    gone = tombstone(bob)
    assert stored_names(match) == [gone, "random v1"]
    assert replay_names(Client().get(f"/api/matches/{match.pk}/replay/")) == [gone, "random v1"]
    assert gone in Client().get(f"/matches/{match.pk}/frames/?view=seat-0").content.decode()


def test_a_replay_kept_in_the_cache_before_the_deletion_is_not_served_after_it():
    """The deletion's commit-time drop aside (not run here): the people
    generation alone makes the kept copy stale."""
    carol = f.user("carol")
    match = play_casual(carol)
    assert replay_names(Client().get(f"/api/matches/{match.pk}/replay/")) == ["carol", "random v1"]
    entry, _ = caching.cached_replay(match.pk)
    assert entry is not None and entry["named"]  # kept
    delete(carol)
    assert caching.cached_replay(match.pk)[0] is None
    assert replay_names(Client().get(f"/api/matches/{match.pk}/replay/")) == [tombstone(carol), "random v1"]


def test_a_ladder_replay_names_no_person_and_stays_immutable_through_a_deletion():
    dave = f.user("dave")
    mine = f.active_bot(dave, "allegra", "daves-bot")
    match = f.finished_match(f.ladder("allegra", 2), [mine, Bot.objects.get(game="allegra", name="random")])
    first = Client().get(f"/api/matches/{match.pk}/replay/")
    assert first["Cache-Control"] == caching.REPLAY_CACHE_CONTROL
    ladder_page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert "dave" in ladder_page
    delete(dave)
    after = Client().get(f"/api/matches/{match.pk}/replay/")
    assert after.content == first.content and after["ETag"] == first["ETag"]
    # The page shows the owner by the tombstone at once (the cached page is stale).
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert tombstone(dave) in page and ">dave<" not in page


def test_the_migration_renames_the_replays_of_accounts_deleted_before(django_capture_on_commit_callbacks):
    """An account deleted before deletion rewrote replays: its name is
    still in them until migration 0010 runs."""
    import importlib

    from django.apps import apps
    from django.contrib.auth import get_user_model

    migration = importlib.import_module("ladder.migrations.0010_rename_deleted_people_in_replays")
    frank, gina = f.user("frank"), f.user("gina")
    old, kept = play_casual(frank), play_casual(gina)
    # as the old deletion left it: the user row renamed, the replay untouched
    get_user_model().objects.filter(pk=frank.pk).update(username=tombstone(frank), is_active=False)
    assert stored_names(old) == ["frank", "random v1"]
    with django_capture_on_commit_callbacks(execute=True):
        migration.rename(apps, None)
    assert stored_names(old) == [tombstone(frank), "random v1"]
    assert stored_names(kept) == ["gina", "random v1"]  # a live account's stay
    assert replay_names(Client().get(f"/api/matches/{old.pk}/replay/")) == [tombstone(frank), "random v1"]
