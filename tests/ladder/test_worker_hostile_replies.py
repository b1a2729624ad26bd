"""A losing bot cannot void its match with a reply that breaks the parser
(issue 25): on a real worker, in the sandbox, a bot that answers with a
reply nested 200,000 levels deep once it is behind forfeits (invalid_json),
the match finishes at its first attempt, and it is rated: the Elo and
OpenSkill changes are recorded, the forfeiter's down."""

from __future__ import annotations

import gzip

import pytest

from ladder.models import BotVersion, Match, Participant, RatingChange
from ladder.services import bots as bot_services
from ladder.services import match_kinds
from ladder.services import matches as match_services
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    cardroom_verify,
    celery_workers_fixture,
    only_ladders,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]


def test_a_losing_bots_json_bomb_is_its_forfeit_and_the_match_is_rated(celery_workers, tmp_path):
    ladder = only_ladders("allegra", [2], startup_ms=5000, per_move_ms=1000, overage_ms=2000, total_ms=60000)[2]
    owner = factories.user()
    bomber_bot = bot_services.create_bot(owner=owner, game="allegra", name="bomber")
    bomber = bot_services.upload_version(bot=bomber_bot, filename="bomb_when_losing.py", data=(BOTS / "bomb_when_losing.py").read_bytes())
    bot_services.activate_version(bomber)  # validation is not what this test is about
    bomber = BotVersion.objects.select_related("bot").get(pk=bomber.pk)
    greedy = BotVersion.objects.select_related("bot").get(bot__game="allegra", bot__name="greedy", status="active")
    match = match_services.create_match(ladder=ladder, versions=[bomber, greedy], seed=4242)

    celery_workers.start("bombed")
    match_kinds.send_match(match.pk)

    def done():
        m = Match.objects.get(pk=match.pk)
        assert m.status not in (Match.Status.FAILED, Match.Status.CANCELLED), (m.status, m.error)
        assert m.attempts <= 1, f"the match was re-queued: {m.error}"
        return m.status == Match.Status.FINISHED and m

    finished = wait_until(done, 120, "the match to finish", celery_workers)
    assert finished.error == "" and finished.error_kind == ""
    seats = {p.seat: p for p in Participant.objects.filter(match=match)}
    assert seats[0].forfeit_reason == "invalid_json", seats[0].forfeit_detail
    assert "nested deeper than" in seats[0].forfeit_detail
    assert seats[0].rank == 2 and seats[1].rank == 1
    with seats[0].log.open("rb") as stored:
        assert b"bomb_when_losing: behind at" in gzip.decompress(stored.read())

    changes = {c.participant.seat: c for c in RatingChange.objects.filter(match=match).select_related("participant")}
    assert sorted(changes) == [0, 1], "both seats are rated"
    assert changes[0].elo_after < changes[0].elo_before and changes[1].elo_after > changes[1].elo_before
    assert changes[0].mu_after < changes[0].mu_before and changes[1].mu_after > changes[1].mu_before

    path = tmp_path / "bombed.json"
    with finished.replay.open("rb") as stored:
        path.write_bytes(gzip.decompress(stored.read()))
    verified = cardroom_verify(path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
