"""Informative pairing (CARDROOM_PAIRING=informative; ladder.services.matchmaking,
docs/ladder.md "Pairing", decision 274): the first bot is chosen as with Elo's
pairing; its opponent is one whose order relative to it the stored adjusted
ranking is least sure of."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ladder.models import AdjustedRanking, AdjustedRating, Bot, BotVersion, Match, Participant, Rating
from ladder.ranking import MODEL
from ladder.services import bots as bot_services
from ladder.services.fairshare import FairShare
from ladder.services.matchmaking import misorder_chance, pick_lineup, top_up_queues
from tests.ladder import test_fairshare, test_matchmaking
from tests.ladder.test_fairshare import fast_and_slow_owners, play_rounds
from tests.ladder.test_matchmaking import lineups_beside_a_needy_bot, make_bot, make_ladder, play

ROOT = Path(__file__).resolve().parents[2]
# The fixtures of the tests of Elo's pairing and of the fair shares, shared.
only_my_ladders = test_matchmaking.only_my_ladders
one_ladder = test_fairshare.one_ladder


def field(game: str, elo: list[int], adjusted: list[tuple[float, float] | None]):
    """A 2-player ladder of bots with these Elos and adjusted (rating,
    half-width of the interval) in its stored ranking (None: not in it)."""
    ladder = make_ladder(game, 2)
    Bot.objects.filter(game=game, builtin=True).update(current_version=None)
    bots = [make_bot(game) for _ in elo]
    AdjustedRanking.objects.create(ladder=ladder, model=MODEL, matches=100)
    for place, (bot, e, adj) in enumerate(zip(bots, elo, adjusted), start=1):
        Rating.objects.filter(ladder=ladder, bot=bot).update(elo=Decimal(e), sigma=3.0)
        if adj is not None:
            rating, half = adj
            AdjustedRating.objects.create(
                ladder=ladder, version_id=bot.current_version_id, rating=rating, low=rating - half,
                high=rating + half, matches=20, place=place, settled=False,
            )  # fmt: skip
    return ladder, bots


def opponents_of(ladder, first: Bot, seeds: int = 30) -> Counter:
    """Whom ``first`` (the neediest: the widest OpenSkill sigma) is paired with."""
    Rating.objects.filter(ladder=ladder, bot=first).update(sigma=6.0)
    seen = Counter()
    for seed in range(seeds):
        lineup = pick_lineup(ladder, random.Random(seed))
        assert first in lineup
        (other,) = [b for b in lineup if b != first]
        seen[other] += 1
    return seen


def test_the_misorder_chance_falls_as_a_pair_is_told_apart():
    assert misorder_chance((1500, 50), (1500, 50)) == pytest.approx(0.5)
    assert misorder_chance((1500, 50), (1520, 50)) > misorder_chance((1500, 50), (1600, 50)) > 0.001
    assert misorder_chance((1500, 20), (1600, 20)) < 1e-9  # apart well beyond both intervals
    assert misorder_chance((1500, 0), (1600, 0)) == 0.0


@pytest.mark.django_db
def test_a_resolved_pair_stops_being_chosen_over_an_unresolved_one(only_my_ladders, settings):
    # Elo (K = 20 wanders) puts bots 1 and 2 next to bot 0; the adjusted
    # ranking has told them apart from it, and not bot 3.
    elo = [1500, 1510, 1490, 1900, 1100, 1200]
    adjusted = [(1500, 40), (1800, 40), (1200, 40), (1530, 40), (1000, 40), (2000, 40)]
    ladder, bots = field("allegra", elo, adjusted)
    settings.CARDROOM_PAIRING = "elo"
    assert set(opponents_of(ladder, bots[0])) == {bots[1], bots[2]}  # today's: the nearest two in Elo
    settings.CARDROOM_PAIRING = "informative"
    assert set(opponents_of(ladder, bots[0])) == {bots[3]}  # the one pair the ranking is unsure of


@pytest.mark.django_db
def test_near_ties_are_drawn_at_random_so_pairings_vary(only_my_ladders, settings):
    settings.CARDROOM_PAIRING = "informative"
    elo = [1500, 1500, 1500, 1500, 1500]
    adjusted = [(1500, 60), (1520, 60), (1480, 60), (1700, 30), (1300, 30)]
    ladder, bots = field("allegory", elo, adjusted)
    seen = opponents_of(ladder, bots[0], seeds=40)
    assert set(seen) == {bots[1], bots[2]}
    assert min(seen.values()) >= 10


@pytest.mark.django_db
def test_a_new_version_still_gets_games_paired_by_elo(only_my_ladders, settings):
    settings.CARDROOM_PAIRING = "informative"
    settings.CARDROOM_QUEUE_TARGET = 1
    elo = [1500, 1600, 1700, 1800]
    adjusted = [None, (1500, 40), (1700, 40), (1900, 40)]  # bot 0 not ranked yet
    ladder, bots = field("allegra", elo, adjusted)
    # Bot 1's new version: its old version's figures are not its own.
    old = bots[1].current_version
    new = BotVersion.objects.create(
        bot=bots[1], number=2, package=f"tests/{bots[1].name}-2.py", filename="bot.py", sha256="b" * 64, size=1
    )
    bot_services.activate_version(new)
    AdjustedRating.objects.filter(version=old).update(rating=1500)
    for i, pair in enumerate([(bots[2], bots[3]), (bots[3], bots[2])]):
        play(ladder, list(pair), seed=i)  # the ranked ones have played
    seen = Counter()
    for seed in range(20):
        Match.objects.filter(ladder=ladder, status=Match.Status.QUEUED).delete()
        (match_id,) = top_up_queues(random.Random(seed))
        lineup = set(Match.objects.get(pk=match_id).participants.values_list("bot_id", flat=True))
        assert bots[0].pk in lineup or bots[1].pk in lineup  # the unplayed play first
        seen[frozenset(lineup)] += 1
    # Unknown to the ranking, bot 0 is paired as Elo pairs it: its two nearest.
    assert frozenset({bots[0].pk, bots[1].pk}) in seen


@pytest.mark.django_db
def test_the_bot_that_most_needs_games_still_plays_first(only_my_ladders, settings):
    settings.CARDROOM_PAIRING = "informative"
    settings.CARDROOM_QUEUE_TARGET = 1
    adjusted = [(1000 + 100 * i, 30) for i in range(6)]  # graded, every pair told apart
    ladder, bots = field("allegra", [1500] * 6, adjusted)
    needy = bots[3]
    for lineup in lineups_beside_a_needy_bot(ladder, bots, needy):
        assert needy.pk in lineup
        assert lineup - {needy.pk} <= {bots[2].pk, bots[4].pk}  # its neighbours: the least told apart


def test_an_owner_over_its_share_waits_as_with_elo_pairing(one_ladder, settings):
    """decision 274: the fair shares are matchmaking's, not the pairing's.
    The slow owner's bots are the ones the ranking is least sure of, next
    to the fast bots, and still keep to their share."""
    settings.CARDROOM_PAIRING = "informative"
    settings.CARDROOM_QUEUE_TARGET = 2
    settings.CARDROOM_QUOTA_QUEUED_MATCHES = 10
    fast1, fast2, slow_owner, slow = fast_and_slow_owners()
    AdjustedRanking.objects.create(ladder=one_ladder, model=MODEL, matches=100)
    for place, (bot, rating) in enumerate(zip([fast1, *slow, fast2], [1500, 1510, 1520, 1490, 2500]), start=1):
        AdjustedRating.objects.create(
            ladder=one_ladder, version_id=bot.current_version_id, rating=rating, low=rating - 40, high=rating + 40,
            matches=20, place=place, settled=False,
        )  # fmt: skip
    play_rounds([fast1, fast2], slow)
    seats = Counter(Participant.objects.filter(match__ladder=one_ladder).values_list("bot__owner_id", flat=True))
    assert 15 <= seats[slow_owner.pk] <= 20 + 2 * 2, seats  # the share of test_fairshare's same field
    fair = FairShare.load()
    assert fair.use(slow_owner.pk) <= fair.share() + 2 * 2 * 20 / 600
    assert not any(fair.allows(b) for b in slow)


@pytest.mark.django_db
def test_the_queries_do_not_grow_with_the_field(only_my_ladders, settings):
    counts = {}
    for pairing in ("elo", "informative"):
        settings.CARDROOM_PAIRING = pairing
        for n in (4, 12):
            ladder, _bots = field(
                "allegory", [1500 + 10 * i for i in range(n)], [(1500 + 10 * i, 50) for i in range(n)]
            )
            pick_lineup(ladder, random.Random(1))  # Ratings made once
            with CaptureQueriesContext(connection) as queries:
                assert pick_lineup(ladder, random.Random(1)) is not None
            counts[pairing, n] = len(queries)
            ladder.delete()
    assert counts["elo", 4] == counts["elo", 12]
    assert counts["informative", 4] == counts["informative", 12] == counts["elo", 4] + 1


def test_an_unknown_pairing_setting_stops_the_start():
    env = {**os.environ, "CARDROOM_PAIRING": "nearest", "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "CARDROOM_PAIRING is 'elo' or 'informative', not 'nearest'" in done.stderr
