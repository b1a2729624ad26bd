"""Matchmaking (ladder.services.matchmaking): the periodic task that keeps
every active ladder's queue at CARDROOM_QUEUE_TARGET matches."""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
from collections import Counter
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from cardroom.runner import run_match
from ladder import tasks
from ladder.models import Bot, BotVersion, Ladder, Match, Rating
from ladder.services import bots as bot_services
from ladder.services.matches import claim_match, create_match, record_result
from ladder.services.matchmaking import pick_lineup, table_owner, top_up_queues

_names = itertools.count(1)


def make_bot(game: str, status: str | None = BotVersion.Status.ACTIVE) -> Bot:
    """A bot with one version: activated (``status`` active), or left with
    ``status`` (pending, failed...), or with none at all (``status`` None)."""
    owner = get_user_model().objects.create(username=f"mm-owner{next(_names)}")
    bot = Bot.objects.create(owner=owner, game=game, name=f"mm{next(_names)}")
    if status is None:
        return bot
    version = BotVersion.objects.create(
        bot=bot,
        number=1,
        package=f"tests/{bot.name}.py",
        filename="bot.py",
        sha256=hashlib.sha256(bot.name.encode()).hexdigest(),
        size=1,
    )
    bot_services.activate_version(version)
    if status != BotVersion.Status.ACTIVE:
        BotVersion.objects.filter(pk=version.pk).update(status=status)
    bot.refresh_from_db()
    return bot


def make_ladder(game: str, players: int, active: bool = True) -> Ladder:
    return Ladder.objects.create(
        name=f"mm {game} {players}p #{next(_names)}", game=game, players_per_match=players, active=active
    )


def play(ladder: Ladder, bots: list[Bot], seed: int) -> Match:
    """A finished match through the real path."""
    with transaction.atomic():
        match = create_match(ladder=ladder, versions=[b.current_version for b in bots], seed=seed)
    claim = claim_match(match.pk)
    assert record_result(claim, run_match(ladder.game, ["builtin:random"] * len(bots), seed=seed))
    return match


def lineups_beside_a_needy_bot(ladder: Ladder, bots: list[Bot], needy: Bot, tries: int = 10) -> list[set[int]]:
    """Every bot but ``needy`` plays twice; then the bot ids of the one
    match that each of ``tries`` top-ups (a queue target of 1) makes."""
    busy = [b for b in bots if b != needy]
    for i, pair in enumerate(zip(busy, busy[1:] + busy[:1])):
        play(ladder, list(pair), seed=i)
    out = []
    for seed in range(tries):
        Match.objects.filter(ladder=ladder, status=Match.Status.QUEUED).delete()
        (match_id,) = top_up_queues(random.Random(seed))
        out.append(set(Match.objects.get(pk=match_id).participants.values_list("bot_id", flat=True)))
    return out


def queued(ladder: Ladder):
    return Match.objects.filter(ladder=ladder, status=Match.Status.QUEUED)


@pytest.fixture
def only_my_ladders(db):
    """Switch off the default ladders (a fresh installation's), so a test
    sees only the ladders it makes."""
    Ladder.objects.update(active=False)


@pytest.mark.django_db
def test_every_active_ladder_is_topped_up_to_the_target(settings):
    settings.CARDROOM_QUEUE_TARGET = 5
    for game in ("allegory", "allegra"):
        for _ in range(5):
            make_bot(game)
    mine = make_ladder("allegra", 3)
    ladders = list(Ladder.objects.filter(active=True))
    assert len(ladders) == 5  # the four default ladders and mine

    created = tasks.top_up_queues()  # the periodic task itself
    assert len(created) == 5 * 5
    for ladder in ladders:
        assert queued(ladder).count() == 5
        for match in queued(ladder):
            assert match.num_players == ladder.players_per_match == match.participants.count()
            assert match.game == ladder.game and match.kind == Match.Kind.LADDER
    assert top_up_queues() == []  # full: nothing more

    # Two matches start: two more are queued, for that ladder only.
    for match in list(queued(mine)[:2]):
        assert claim_match(match.pk)
    again = top_up_queues()
    assert len(again) == 2 and set(Match.objects.filter(pk__in=again).values_list("ladder", flat=True)) == {mine.pk}
    assert queued(mine).count() == 5


@pytest.mark.django_db
def test_a_match_never_seats_a_bot_twice_and_plays_current_versions(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 40
    settings.CARDROOM_QUOTA_QUEUED_MATCHES = 40  # every bot sits in nearly every match here
    for _ in range(5):
        make_bot("allegory")
    ladder = make_ladder("allegory", 6)
    top_up_queues(random.Random(1))
    assert queued(ladder).count() == 40
    current = dict(Bot.objects.filter(game="allegory").values_list("pk", "current_version"))
    assert len(current) == 7  # with the two built-in bots
    for match in queued(ladder).prefetch_related("participants"):
        parts = list(match.participants.all())
        assert sorted(p.seat for p in parts) == list(range(6))
        assert len({p.bot_id for p in parts}) == 6
        assert all(p.version_id == current[p.bot_id] for p in parts)
    seeds = list(queued(ladder).values_list("seed", flat=True))
    assert len(set(seeds)) == len(seeds)  # each match its own seed


@pytest.mark.django_db
def test_inactive_ladders_are_left_alone(settings):
    settings.CARDROOM_QUEUE_TARGET = 3
    for _ in range(4):
        make_bot("allegra")
    off = make_ladder("allegra", 2, active=False)
    on = make_ladder("allegra", 2)
    Ladder.objects.filter(game="allegory").update(active=False)
    top_up_queues()
    assert not Match.objects.filter(ladder=off).exists()
    assert not Match.objects.filter(ladder__game="allegory").exists()
    assert queued(on).count() == 3


@pytest.mark.django_db
def test_bots_without_an_active_version_are_never_picked(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 30
    ladder = make_ladder("allegra", 2)
    Bot.objects.filter(game="allegra", builtin=True).update(current_version=None)  # just the bots below
    playing = {make_bot("allegra").pk for _ in range(3)}
    benched = {
        make_bot("allegra", status=None).pk,  # no version at all
        make_bot("allegra", status=BotVersion.Status.PENDING).pk,
        make_bot("allegra", status=BotVersion.Status.VALIDATING).pk,
        make_bot("allegra", status=BotVersion.Status.FAILED).pk,
        make_bot("allegra", status=BotVersion.Status.RETIRED).pk,
    }
    top_up_queues(random.Random(3))
    seated = set(queued(ladder).values_list("participants__bot", flat=True))
    assert seated == playing and not seated & benched


@pytest.mark.django_db
def test_too_few_bots_make_no_match(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 4
    ladder = make_ladder("allegory", 5)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    for _ in range(4):
        make_bot("allegory")
    assert top_up_queues() == [] and not Match.objects.filter(ladder=ladder).exists()


@pytest.mark.django_db
def test_the_bot_with_the_fewest_recent_games_plays_first(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 1
    ladder = make_ladder("allegra", 2)
    Bot.objects.filter(game="allegra", builtin=True).update(current_version=None)
    bots = [make_bot("allegra") for _ in range(6)]
    needy = bots[3]
    for lineup in lineups_beside_a_needy_bot(ladder, bots, needy):
        assert needy.pk in lineup


@pytest.mark.django_db
def test_among_equally_busy_bots_the_most_uncertain_plays_first(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 1
    ladder = make_ladder("allegory", 2)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    bots = [make_bot("allegory") for _ in range(6)]
    Rating.objects.filter(ladder=ladder).update(sigma=3.0)
    Rating.objects.filter(ladder=ladder, bot=bots[4]).update(sigma=5.0)
    for seed in range(10):
        lineup = pick_lineup(ladder, random.Random(seed))
        assert bots[4] in lineup


@pytest.mark.django_db
def test_opponents_are_near_in_rating_and_seats_are_random(only_my_ladders, settings):
    ladder = make_ladder("allegory", 2)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    bots = [make_bot("allegory") for _ in range(11)]
    for i, bot in enumerate(bots):  # Elo 1000, 1100, ... 2000
        Rating.objects.filter(ladder=ladder, bot=bot).update(elo=Decimal(1000 + 100 * i), sigma=3.0)
    needy = bots[5]  # 1500
    Rating.objects.filter(ladder=ladder, bot=needy).update(sigma=6.0)
    opponents, seats = Counter(), Counter()
    for seed in range(40):
        lineup = pick_lineup(ladder, random.Random(seed))
        assert needy in lineup
        seats[lineup.index(needy)] += 1
        (other,) = [b for b in lineup if b != needy]
        opponents[other.pk] += 1
    assert set(opponents) == {bots[4].pk, bots[6].pk}  # the two nearest (1400, 1600)
    assert set(seats) == {0, 1}


@pytest.mark.django_db
def test_a_top_up_spreads_games_over_the_bots(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 12
    ladder = make_ladder("allegra", 2)
    Bot.objects.filter(game="allegra", builtin=True).update(current_version=None)
    bots = [make_bot("allegra") for _ in range(8)]
    top_up_queues(random.Random(9))
    games = Counter(queued(ladder).values_list("participants__bot", flat=True))
    assert set(games) == {b.pk for b in bots}  # 24 seats over 8 bots: every bot plays
    assert max(games.values()) - min(games.values()) <= 2


@pytest.mark.postgres
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: concurrent writers and row locks (SQLite serialises every write transaction)",
)
def test_two_top_ups_at_once_do_not_overfill_a_queue(transactional_db, settings):
    settings.CARDROOM_QUEUE_TARGET = 6
    Ladder.objects.update(active=False)
    ladder = make_ladder("allegory", 2)
    for _ in range(4):
        make_bot("allegory")
    barrier = threading.Barrier(2)
    errors = []

    def run():
        try:
            barrier.wait(timeout=30)
            top_up_queues()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert queued(ladder).count() == 6


def owned_bots(owner, game: str, count: int) -> list[Bot]:
    """``count`` bots of ``owner``, each with an active version."""
    made = []
    for _ in range(count):
        bot = make_bot(game)
        Bot.objects.filter(pk=bot.pk).update(owner=owner)
        bot.refresh_from_db()
        made.append(bot)
    return made


def owners_at_each_table(ladder: Ladder) -> list[list[int]]:
    return [list(m.participants.values_list("bot__owner_id", flat=True)) for m in Match.objects.filter(ladder=ladder)]


@pytest.mark.django_db
@pytest.mark.parametrize("game,players", [("allegory", 2), ("allegra", 3)])
def test_no_table_seats_two_bots_of_one_owner(only_my_ladders, settings, game, players):
    """Two bots of one account at a table could share what each seat sees,
    or one could lose to the other on purpose: matchmaking never seats them
    together (decision 278), however many bots the account has."""
    settings.CARDROOM_QUEUE_TARGET = 12
    users = get_user_model().objects
    many, *others = (users.create(username=f"sep-owner{next(_names)}") for _ in range(players))
    ladder = make_ladder(game, players)
    mine = owned_bots(many, game, 5)
    for owner in others:
        owned_bots(owner, game, 1)
    created = top_up_queues(random.Random(players))
    assert len(created) == 12
    played = Counter()
    for table in Match.objects.filter(ladder=ladder):
        seated = [p.bot for p in table.participants.select_related("bot__owner")]
        assert len({table_owner(b) for b in seated}) == players  # cardroom's built-in bots play too
        assert sum(b.owner_id == many.pk for b in seated) <= 1
        played.update(b.pk for b in seated)
    assert all(played[b.pk] > 0 for b in mine)  # each of the account's bots still plays


@pytest.mark.django_db
def test_a_ladder_of_too_few_owners_waits_unless_separation_is_off(only_my_ladders, settings):
    settings.CARDROOM_QUEUE_TARGET = 6
    ladder = make_ladder("allegra", 2)
    Bot.objects.filter(game="allegra").update(withdrawn=timezone.now())  # cardroom's built-in bots too
    owner = get_user_model().objects.create(username=f"sep-solo{next(_names)}")
    owned_bots(owner, "allegra", 4)
    assert top_up_queues(random.Random(1)) == []  # one account: no table it may fill alone
    # cardroom's own bots (built in, or its account's) are each an owner of their own
    house = owned_bots(bot_services.system_user(), "allegra", 2)
    created = top_up_queues(random.Random(2))
    assert len(created) == 6
    for table in Match.objects.filter(pk__in=created):
        seated = list(table.participants.values_list("bot_id", "bot__owner_id"))
        assert sum(owner_id == owner.pk for _, owner_id in seated) <= 1, seated
    assert table_owner(house[0]) != table_owner(house[1])  # the two may share a table
    # a private ladder of one researcher's bots switches it off
    Match.objects.filter(ladder=ladder).delete()
    Bot.objects.filter(pk__in=[b.pk for b in house]).update(withdrawn=timezone.now())
    settings.CARDROOM_SEPARATE_OWNERS = False
    created = top_up_queues(random.Random(3))
    assert len(created) == 6
    assert all(set(owners) == {owner.pk} for owners in owners_at_each_table(ladder))


@pytest.mark.django_db
def test_balanced_seating_makes_a_pair_take_turns_at_each_seat(only_my_ladders, settings):
    """In Allegory the seat decides a great deal (decision 292): with
    CARDROOM_SEATING=balanced two bots that keep meeting take the first
    seat in turn, each top-up reading who sat where from the database."""
    settings.CARDROOM_SEATING = "balanced"
    settings.CARDROOM_QUEUE_TARGET = 1
    make_ladder("allegory", 2)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    a, b = make_bot("allegory"), make_bot("allegory")
    firsts = []
    for seed in range(10):
        (match_id,) = top_up_queues(random.Random(seed))
        assert claim_match(match_id)  # running: the next top-up makes another
        firsts.append(Match.objects.get(pk=match_id).participants.get(seat=0).bot_id)
    assert all(x != y for x, y in zip(firsts, firsts[1:])), firsts  # strictly in turn
    assert Counter(firsts) == {a.pk: 5, b.pk: 5}


@pytest.mark.django_db
def test_balanced_seating_gives_every_bot_every_seat_at_four_players(only_my_ladders, settings):
    settings.CARDROOM_SEATING = "balanced"
    settings.CARDROOM_QUEUE_TARGET = 8
    ladder = make_ladder("allegory", 4)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    bots = [make_bot("allegory") for _ in range(4)]
    assert len(top_up_queues(random.Random(3))) == 8  # one top-up: its own matches count too
    seats = Counter(queued(ladder).values_list("participants__bot", "participants__seat"))
    assert seats == {(bot.pk, seat): 2 for bot in bots for seat in range(4)}
    orders = [list(m.participants.order_by("seat").values_list("bot_id", flat=True)) for m in queued(ladder)]
    before = Counter((x, y) for order in orders for x, y in itertools.combinations(order, 2))
    assert all(before[x.pk, y.pk] == 4 for x, y in itertools.permutations(bots, 2))


@pytest.mark.django_db
def test_balanced_seating_is_the_default_and_shuffled_draws_seats_at_random(only_my_ladders, settings):
    from django.conf import settings as live

    assert live.CARDROOM_SEATING == "balanced"  # decision 293
    settings.CARDROOM_SEATING = "shuffled"
    settings.CARDROOM_QUEUE_TARGET = 1
    ladder = make_ladder("allegory", 2)
    Bot.objects.filter(game="allegory", builtin=True).update(current_version=None)
    make_bot("allegory"), make_bot("allegory")
    firsts = []
    for seed in range(12):
        (match_id,) = top_up_queues(random.Random(seed))
        assert claim_match(match_id)
        firsts.append(Match.objects.get(pk=match_id).participants.get(seat=0).bot_id)
    assert any(x == y for x, y in zip(firsts, firsts[1:]))  # not in turn
    assert ladder.matches.count() == 12
