"""Duplicate sets on the ladder (ladder.services.duplicate_sets, decision
255): the scheduler plays a pairing as one deal in every seat rotation where
CARDROOM_DUPLICATE_SETS says so; every rotation is an ordinary ladder match
(rated by Elo on its own, charged to fair shares); a complete set is one
result of the adjusted rating; a partial set loses and double-counts
nothing; the deal (seed, replay) is shown only once the whole set is over.

Matches are played through the real worker path (``run_queued_match``: a
leased claim, the built-in bots as processes, the result recorded under the
lease), against the suite's PostgreSQL and Redis."""

from __future__ import annotations

import gzip
import json
import random
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from cardroom.tournament.schedule import rotate
from ladder.models import AdjustedRanking, BotVersion, DuplicateSet, Match, MatchLuck, Participant, RatingChange
from ladder.ranking import Outcome
from ladder.selectors.outcomes import RatedMatch, group, ladder_outcomes
from ladder.services import adjusted, bot_management, duplicate_sets, reaper
from ladder.services import matches as m
from ladder.services.fairshare import FairShare
from ladder.services.matchmaking import top_up_queues
from tests.ladder import factories
from tests.ladder.test_matchmaking import make_bot, make_ladder

pytestmark = pytest.mark.django_db


@pytest.fixture
def sets_on(settings):
    settings.CARDROOM_DUPLICATE_SETS = ["allegory:2", "allegory:4"]
    settings.CARDROOM_SANDBOX = "none"  # the built-in bots as plain processes
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = True


def builtin(game: str, name: str) -> BotVersion:
    return BotVersion.objects.select_related("bot").get(
        bot__game=game, bot__name=name, bot__builtin=True, status="active"
    )


def uploaded(game: str = "allegory") -> BotVersion:
    bot = factories.active_bot(game=game)
    return BotVersion.objects.select_related("bot").get(pk=bot.current_version_id)


def new_set(versions: list[BotVersion]) -> list[Match]:
    return duplicate_sets.create_set(factories.ladder(versions[0].bot.game, len(versions)), versions)


def seats(match: Match) -> list[int]:
    return list(Participant.objects.filter(match=match).order_by("seat").values_list("version_id", flat=True))


def replay(match: Match) -> dict:
    match.refresh_from_db()
    with match.replay.open("rb") as f:
        return json.loads(gzip.decompress(f.read()))


def api_match(match: Match) -> dict:
    factories.clear_caches()
    return factories.client().get(f"/api/matches/{match.pk}/").json()


def test_the_scheduler_plays_pairings_as_sets_only_where_the_setting_says(sets_on, settings):
    from ladder.models import Ladder

    Ladder.objects.update(active=False)
    settings.CARDROOM_QUEUE_TARGET = 4
    for game in ("allegory", "allegra"):
        for _ in range(5):
            make_bot(game)
    two, four, plain = make_ladder("allegory", 2), make_ladder("allegory", 4), make_ladder("allegra", 2)
    top_up_queues(random.Random(5))

    for ladder, k, count in ((two, 2, 4), (four, 4, 4)):
        matches = list(Match.objects.filter(ladder=ladder).order_by("pk"))
        assert len(matches) == count
        by_set: dict[int, list[Match]] = {}
        for match in matches:
            assert match.duplicate_set_id is not None
            by_set.setdefault(match.duplicate_set_id, []).append(match)
        for members in by_set.values():
            assert [x.set_rotation for x in members] == list(range(k))
            assert len({x.seed for x in members}) == 1  # one deal
            first = seats(members[0])
            assert len(set(first)) == k
            for x in members:
                assert seats(x) == list(rotate(first, x.set_rotation))  # the events' rotation scheme
            assert DuplicateSet.objects.get(pk=members[0].duplicate_set_id).rotations == k
    # Allegra: measured no help (decision 255): single matches, each its own seed
    singles = list(Match.objects.filter(ladder=plain))
    assert len(singles) == 4 and all(x.duplicate_set_id is None for x in singles)
    assert len({x.seed for x in singles}) == 4
    assert top_up_queues(random.Random(6)) == []  # full


def test_a_set_is_one_deal_in_every_rotation_rated_per_match_and_as_one_result(sets_on):
    greedy, rand = builtin("allegory", "greedy"), builtin("allegory", "random")
    first, second = new_set([greedy, rand])
    anyone = factories.client()

    assert m.run_queued_match(first.pk, worker="w") == "finished"
    # the other rotation still to play: neither the seed nor the replay of the one played
    assert api_match(first)["seed"] is None
    assert api_match(first)["duplicate_set"] == {"id": first.duplicate_set_id, "rotation": 0, "over": False}
    factories.assert_error(anyone.get(f"/api/matches/{first.pk}/replay/"), 404, contains="duplicate set")
    listed = {x["id"]: x for x in anyone.get(f"/api/matches/?ladder={first.ladder_id}").json()["results"]}
    assert listed[first.pk]["status"] == "finished" and listed[first.pk]["seed"] is None
    page = Client().get(f"/matches/{first.pk}/").content.decode()
    assert str(first.seed) not in page and 'data-testid="duplicate-set"' in page and "replay-download" not in page
    assert Client().get(f"/matches/{first.pk}/frames/").status_code == 404
    assert ladder_outcomes(first.ladder_id).outcomes[-1] == Outcome(
        tuple(seats(first)), tuple(_counted(first))
    )  # counted alone while its set is incomplete

    assert m.run_queued_match(second.pk, worker="w") == "finished"
    for match in (first, second):
        shown = api_match(match)
        assert shown["seed"] == first.seed and shown["duplicate_set"]["over"] is True
        assert anyone.get(f"/api/matches/{match.pk}/replay/").status_code == 200
        assert RatingChange.objects.filter(match=match).count() == 2  # Elo: each rotation on its own
    page = Client().get(f"/matches/{first.pk}/").content.decode()
    assert f"seed {first.seed}" in page and "replay-download" in page
    # the same cards: Allegory's setup (the Theme deck, each seat's Moral) is the same chance event
    setups = [next(e["action"] for e in replay(x)["events"] if e["by"] == "chance") for x in (first, second)]
    assert setups[0] == setups[1] and replay(first)["seed"] == replay(second)["seed"] == first.seed

    outcomes = [o for o in ladder_outcomes(first.ladder_id).outcomes if set(o.versions) == {greedy.pk, rand.pk}]
    assert len(outcomes) == 1 and outcomes[0].matches == 2
    assert outcomes[0].versions == (greedy.pk, rand.pk)
    # each bot's mean less its luck (kept by the worker): the luck sums to 0 in each rotation
    assert MatchLuck.objects.filter(match__in=[first, second], error="").count() == 2
    a, b = _counted(first), _counted(second)  # by seat; rotation 1 seats them the other way round
    assert outcomes[0].payoffs == pytest.approx(((a[0] + b[1]) / 2, (a[1] + b[0]) / 2))
    assert sum(outcomes[0].payoffs) == pytest.approx(1.0)
    # the stored ranking counts the set's two matches, as one outcome
    adjusted.refresh(first.ladder)
    assert AdjustedRanking.objects.get(ladder_id=first.ladder_id).matches == 2


def _points(match: Match) -> list[float]:
    from cardroom.tournament.standings import rank_points

    ranks = Participant.objects.filter(match=match).order_by("seat").values_list("rank", flat=True)
    return [float(x) for x in rank_points(list(ranks))]


def _counted(match: Match) -> list[float]:
    """Each seat's payoff as the ranking counts it: rank points, less the luck where it is known."""
    kept = MatchLuck.objects.filter(match=match, error="").exclude(luck=None).first()
    return [p - x for p, x in zip(_points(match), kept.luck)] if kept else _points(match)


def test_a_rotation_that_fails_for_good_leaves_the_rest_rated_and_nothing_double_counted(sets_on, settings):
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 1
    mine, rand = uploaded(), builtin("allegory", "random")
    first, second = new_set([mine, rand])
    assert m.run_queued_match(first.pk, worker="w") == "finished"
    settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = False  # the second rotation's platform failure, its only attempt
    assert m.run_queued_match(second.pk, worker="w") == m.RunOutcome.PLATFORM_FAILURE
    second.refresh_from_db()
    assert second.status == Match.Status.FAILED
    # the set is over: the played rotation's deal is published, and it counts once, alone
    assert api_match(first)["seed"] == first.seed and api_match(second)["seed"] is None
    assert (
        RatingChange.objects.filter(match=first).count() == 2 and not RatingChange.objects.filter(match=second).exists()
    )
    mine_outcomes = [o for o in ladder_outcomes(first.ladder_id).outcomes if mine.pk in o.versions]
    assert mine_outcomes == [Outcome(tuple(seats(first)), tuple(_counted(first)))]
    # fair shares: the played rotation is charged like any match
    charged = Participant.objects.get(match=first, version=mine).worker_ms
    assert charged and charged > 0
    assert FairShare.load().usage_ms[mine.bot.owner_id] == pytest.approx(charged)


def test_a_cancelled_rotation_or_a_killed_worker_loses_nothing(sets_on, django_capture_on_commit_callbacks):
    greedy, rand, mine = builtin("allegory", "greedy"), builtin("allegory", "random"), uploaded()
    # a worker killed mid-rotation: its lease lapses, the reaper re-queues it, it is played once
    first, second = new_set([greedy, mine])
    assert m.claim_match(first.pk, worker="doomed") is not None
    Match.objects.filter(pk=first.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert reaper.reap_expired_leases() == [first.pk]
    assert api_match(second)["seed"] is None
    # the bot is withdrawn mid-set: the rotations already queued are still played and rated
    bot_management.withdraw(bot=mine.bot, user=mine.bot.owner)
    for match in (first, second):
        assert m.run_queued_match(match.pk, worker="w") == "finished"
        assert RatingChange.objects.filter(match=match).count() == 2
    done = [o for o in ladder_outcomes(first.ladder_id).outcomes if mine.pk in o.versions]
    assert [o.matches for o in done] == [2]
    # charged: each rotation
    assert Participant.objects.filter(version=mine, worker_ms__gt=0).count() == 2

    # an operator cancels a queued rotation: the played one counts alone, and its deal is published
    third, fourth = new_set([rand, greedy])
    assert m.run_queued_match(third.pk, worker="w") == "finished"
    assert api_match(third)["seed"] is None
    m.cancel(fourth)
    assert api_match(third)["seed"] == third.seed
    alone = [o for o in ladder_outcomes(third.ladder_id).outcomes if o.versions == tuple(seats(third))]
    assert alone and all(o.matches == 1 for o in alone)


def test_sets_group_into_one_result_only_when_complete():
    rows = [
        RatedMatch(1, 101, (10, 20), (1.0, 0.0)),
        # rated before its rotation 0: the set comes out here, in rotation 0's seat order
        RatedMatch(3, 102, (20, 10), (0.5, 0.5), duplicate_set=7, rotation=1, rotations=2),
        RatedMatch(2, 104, (10, 20), (0.0, 1.0), duplicate_set=7, rotation=0, rotations=2),
        RatedMatch(4, 103, (30, 40, 50), (1.0, 0.5, 0.0), duplicate_set=8, rotation=0, rotations=3),  # incomplete
    ]
    assert group(rows) == [
        Outcome((10, 20), (1.0, 0.0)),
        Outcome((10, 20), (0.25, 0.75), matches=2),
        Outcome((30, 40, 50), (1.0, 0.5, 0.0)),
    ]


def test_a_bot_whose_cost_is_not_known_yet_plays_a_single_match_not_a_set(sets_on, settings):
    from ladder.models import Bot, Ladder

    Ladder.objects.update(active=False)
    Bot.objects.filter(builtin=True).update(withdrawn=timezone.now())  # the field: two uploaded bots
    settings.CARDROOM_QUEUE_TARGET = 4
    ladder = make_ladder("allegory", 2)
    known, newcomer = uploaded(), uploaded()
    # known's cost is measured: a match of its own, played and charged
    first = m.create_match(ladder=ladder, versions=[known, builtin("allegory", "random")])
    assert m.run_queued_match(first.pk, worker="w") == "finished"
    created = top_up_queues(random.Random(3))
    assert len(created) == 1  # the newcomer, one match at a time until its cost is known
    match = Match.objects.get(pk=created[0])
    assert match.duplicate_set_id is None and set(seats(match)) == {known.pk, newcomer.pk}
    assert m.run_queued_match(match.pk, worker="w") == "finished"
    # both costs known now: the next pairing is a set
    created = top_up_queues(random.Random(4))
    assert created and all(Match.objects.get(pk=pk).duplicate_set_id is not None for pk in created)
