"""The adjusted ranking's one reader of finished matches
(ladder.selectors.outcomes, decision 269): it counts exactly what Elo rated
(a forfeit yes; a platform failure, a queued rotation, a finished match
never rated no), a complete duplicate set as one outcome, and each seat's
payoff less its luck where the luck is known; and the stored ranking is
what anyone recomputes from the API by the recipe of docs/ladder.md.

Matches are played in-process by the built-in bots and recorded by the
real services (a set's rotations deal from the set's streams, as the
worker deals them), against the suite's database."""

from __future__ import annotations

from collections import defaultdict

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cardroom.runner import run_match
from ladder import ranking
from ladder.models import AdjustedRanking, AdjustedRating, BotVersion, Ladder, Match, RatingChange
from ladder.selectors.outcomes import ladder_outcomes
from ladder.services import adjusted, duplicate_sets, luck
from ladder.services import matches as m
from ladder.services.match_kinds import policy_for
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

SPEC = {"greedy": "builtin:greedy", "random": "builtin:random"}


def record(match: Match, specs: list[str], keep_luck: bool = True) -> Match:
    """Play a queued match as the worker would (its policy's deal) and record it."""
    claim = m.claim_match(match.pk, worker="tests")
    assert claim is not None
    played = run_match(
        match.game, specs, seed=match.seed, options=match.options, match_id=str(match.pk),
        chance=policy_for(match.kind).chance(match),
    )  # fmt: skip
    assert m.record_result(claim, played)
    if keep_luck:
        luck.keep_luck(match.pk, played.replay)
    return Match.objects.get(pk=match.pk)


def specs(versions: list[BotVersion]) -> list[str]:
    return [SPEC.get(v.bot.name, "builtin:random") for v in versions]  # an uploaded bot plays as random


def lone(ladder: Ladder, versions: list[BotVersion], seed: int, keep_luck: bool = True) -> Match:
    return record(m.create_match(ladder=ladder, versions=versions, seed=seed), specs(versions), keep_luck)


def recomputed_from_the_api(ladder: Ladder, plain: bool = False) -> tuple[list[ranking.Outcome], int]:
    """docs/ladder.md's recipe, from the API alone: the matches with a
    rating_sequence, in its order; a duplicate set whose every rotation is
    among them one outcome (rotation 0's seats, each payoff the sum over the
    rotations in rotation order over k, standing for k matches) at its
    first rotation's place; each seat's ``adjusted``, its ``payoff`` where
    that is null (``plain``: the payoffs alone). And the matches used."""
    rated = [
        x for x in f.all_pages(f.client(), f"/api/matches/?ladder={ladder.pk}&page_size=5") if x["rating_sequence"]
    ]
    rated.sort(key=lambda x: x["rating_sequence"])

    def seats_of(x: dict) -> tuple[tuple, tuple]:
        seats = sorted(x["participants"], key=lambda p: p["seat"])
        pay = [p["payoff"] if plain or p["adjusted"] is None else p["adjusted"] for p in seats]
        return tuple(p["version_id"] for p in seats), tuple(pay)

    sets = defaultdict(dict)
    for x in rated:
        if x["duplicate_set"]:
            sets[x["duplicate_set"]["id"]][x["duplicate_set"]["rotation"]] = x
    outcomes, done = [], set()
    for x in rated:
        members = sets.get(x["duplicate_set"]["id"]) if x["duplicate_set"] else None
        if not members or sorted(members) != list(range(x["num_players"])):
            outcomes.append(ranking.Outcome(*seats_of(x)))
            continue
        if x["duplicate_set"]["id"] in done:
            continue
        done.add(x["duplicate_set"]["id"])
        versions = seats_of(members[0])[0]
        total = dict.fromkeys(versions, 0.0)
        for r in sorted(members):
            for v, p in zip(*seats_of(members[r])):
                total[v] += p
        k = len(members)
        outcomes.append(ranking.Outcome(versions, tuple(total[v] / k for v in versions), matches=k))
    return outcomes, len(rated)


@pytest.fixture
def mixed_ladder(settings):
    """Allegory at 2 players: lone matches among greedy, random and an
    uploaded bot; a forfeit; a platform failure; a finished match whose
    rating was never applied; a complete duplicate set; a set with a
    rotation still queued."""
    settings.CARDROOM_MATCH_MAX_ATTEMPTS = 1
    ladder = f.ladder("allegory", 2)
    greedy, rand = f.builtin_version("allegory", "greedy"), f.builtin_version("allegory", "random")
    mine = BotVersion.objects.select_related("bot").get(pk=f.active_bot(game="allegory").current_version_id)
    pairs = [(greedy, rand), (greedy, mine), (rand, mine), (mine, greedy), (rand, greedy), (mine, rand)]
    singles = [lone(ladder, list(pair), seed=700 + i) for i, pair in enumerate(pairs * 2)]
    lone(ladder, [greedy, rand], seed=750, keep_luck=False)  # its luck not known: it counts plainly
    forfeit = f.finished_match(ladder, [mine.bot, greedy.bot], seed=751, crash={0: 2})
    failed = m.create_match(ladder=ladder, versions=[greedy, mine], seed=752)
    m.fail_attempt(m.claim_match(failed.pk, worker="tests"), "the sandbox could not start")
    unrated = lone(ladder, [rand, greedy], seed=753)
    RatingChange.objects.filter(match=unrated).delete()  # what recompute_ratings --check reports
    Match.objects.filter(pk=unrated.pk).update(rating_sequence=None)
    complete = duplicate_sets.create_set(ladder, [greedy, mine])
    for rotation in reversed(complete):  # rotation 1 rated first
        record(rotation, specs(_versions(rotation)))
    open_set = duplicate_sets.create_set(ladder, [rand, mine])
    record(open_set[0], specs(_versions(open_set[0])))
    adjusted.refresh(ladder)
    return {
        "ladder": ladder, "versions": (greedy, rand, mine), "singles": singles, "forfeit": forfeit,
        "failed": failed, "unrated": unrated, "complete": complete, "open_set": open_set,
    }  # fmt: skip


def _versions(match: Match) -> list[BotVersion]:
    return [p.version for p in match.participants.select_related("version__bot").order_by("seat")]


def test_the_ranking_counts_what_elo_rated_and_a_complete_set_as_one(mixed_ladder):
    x = mixed_ladder
    read = ladder_outcomes(x["ladder"].pk)
    # 13 lone matches, the forfeit, the complete set's 2 rotations, the open set's played one
    assert read.matches == 13 + 1 + 2 + 1
    assert len(read.outcomes) == 13 + 1 + 1 + 1
    assert read.adjusted == 12 + 2 + 1  # the plain one and the forfeit have no luck kept
    greedy, _rand, mine = x["versions"]
    [whole] = [o for o in read.outcomes if o.matches > 1]
    assert whole.versions == (greedy.pk, mine.pk) and whole.matches == 2
    assert sum(whole.payoffs) == pytest.approx(1.0)  # the luck sums to 0 in each rotation
    # the forfeit counts, the forfeiting seat last
    assert ranking.Outcome((mine.pk, greedy.pk), (0.0, 1.0)) in read.outcomes
    snapshot = AdjustedRanking.objects.get(ladder=x["ladder"])
    assert (snapshot.matches, snapshot.adjusted_matches) == (read.matches, read.adjusted)


def test_the_stored_ranking_is_what_the_api_recomputes(mixed_ladder):
    ladder = mixed_ladder["ladder"]
    outcomes, used = recomputed_from_the_api(ladder)
    about = f.client().get(f"/api/ladders/{ladder.pk}/standings/").json()["adjusted_ranking"]
    assert about["matches"] == used == 17  # the failed, unrated and queued matches left out
    assert outcomes == ladder_outcomes(ladder.pk).outcomes
    recomputed = {r.version: r for r in ranking.rank(outcomes)}
    stored = {r.version_id: r for r in AdjustedRating.objects.filter(ladder=ladder)}
    assert set(stored) == set(recomputed)
    for version, r in recomputed.items():
        s = stored[version]
        shown = (s.rating, s.low, s.high, s.place, s.matches, s.settled, s.more_matches)
        assert shown == (r.rating, r.low, r.high, r.place, r.matches, r.settled, r.more_matches)
    rows = f.client().get(f"/api/ladders/{ladder.pk}/standings/").json()["results"]
    for row in rows:
        if row["adjusted"]["version"] in recomputed:
            assert row["adjusted"]["rating"] == recomputed[row["adjusted"]["version"]].rating
    # adjusted, not plain: the luck moved the figures
    plain = {r.version: r.rating for r in ranking.rank(recomputed_from_the_api(ladder, plain=True)[0])}
    assert any(plain[v] != pytest.approx(r.rating, abs=1e-6) for v, r in recomputed.items())


def test_a_set_counts_as_one_once_its_last_rotation_is_rated(mixed_ladder):
    ladder, open_set = mixed_ladder["ladder"], mixed_ladder["open_set"]
    before = ladder_outcomes(ladder.pk)
    rand, mine = _versions(open_set[0])
    assert ranking.Outcome((rand.pk, mine.pk), before.outcomes[-1].payoffs) == before.outcomes[-1]  # alone, for now
    record(open_set[1], specs(_versions(open_set[1])))
    after = ladder_outcomes(ladder.pk)
    assert after.matches == before.matches + 1 and len(after.outcomes) == len(before.outcomes)
    assert [o.matches for o in after.outcomes if set(o.versions) == {rand.pk, mine.pk} and o.matches > 1] == [2]
    assert adjusted.is_stale(ladder)
    adjusted.refresh(ladder)
    outcomes, used = recomputed_from_the_api(ladder)
    assert outcomes == after.outcomes and used == AdjustedRanking.objects.get(ladder=ladder).matches == 18


def test_reading_a_ladder_costs_the_same_few_queries_however_many_matches(mixed_ladder):
    ladder = mixed_ladder["ladder"]
    greedy, rand, mine = mixed_ladder["versions"]
    with CaptureQueriesContext(connection) as few:
        small = ladder_outcomes(ladder.pk)
    pairs = [(greedy, rand), (rand, mine), (mine, greedy)]
    for i in range(30):
        lone(ladder, list(pairs[i % 3]), seed=800 + i)
    for _ in range(3):
        for rotation in duplicate_sets.create_set(ladder, [rand, greedy]):
            record(rotation, specs(_versions(rotation)))
    with CaptureQueriesContext(connection) as many:
        large = ladder_outcomes(ladder.pk)
    assert large.matches == small.matches + 36
    assert len(many.captured_queries) == len(few.captured_queries) == 2  # the luck, the seats
    with CaptureQueriesContext(connection) as stored:
        adjusted.refresh(ladder)
    assert len(stored.captured_queries) <= 12  # the marks, the reads, the snapshot's writes: no query per match
