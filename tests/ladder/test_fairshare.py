"""Fair shares of the workers (ladder.services.fairshare) on the real
database: what each seat is charged, and matchmaking that keeps every owner
within an equal split of the workers, so slow bots play fewer matches."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from ladder.models import Bot, BotVersion, Ladder, Match, Participant, WorkerHeartbeat
from ladder.services import bots as bot_services
from ladder.services.fairshare import FairShare, seat_charges
from ladder.services.matchmaking import top_up_queues
from tests.ladder import factories

pytestmark = pytest.mark.django_db

_seq = itertools.count(1)


def owner_with_bots(n: int, game: str = "allegory", active_since: timedelta = timedelta(hours=1)) -> tuple[object, list[Bot]]:
    user = get_user_model().objects.create(username=f"fair-owner{next(_seq)}")
    made = []
    for _ in range(n):
        bot = Bot.objects.create(owner=user, game=game, name=f"fair{next(_seq)}")
        version = BotVersion.objects.create(bot=bot, number=1, package=f"tests/{bot.name}.py", filename="bot.py", sha256=f"{bot.pk:064x}", size=1)
        bot_services.activate_version(version)
        BotVersion.objects.filter(pk=version.pk).update(activated=timezone.now() - active_since)
        bot.refresh_from_db()
        made.append(bot)
    return user, made


@pytest.fixture
def one_ladder(db, settings):
    """Only one ladder plays (Allegory, 2 players), two workers are alive."""
    Ladder.objects.update(active=False)
    ladder = Ladder.objects.create(name=f"fair {next(_seq)}", game="allegory", players_per_match=2)
    now = timezone.now()
    for i in range(2):
        WorkerHeartbeat.objects.create(name=f"w{i}@test pid {i}", hostname="test", pid=i, started=now, last_seen=now)
    settings.CARDROOM_FAIR_SHARE_WINDOW_SECONDS = 600
    return ladder


def play_queued(cost_ms: dict[int, int]) -> None:
    """What the workers would record: every queued match finished now, each
    seat charged what its bot costs (``cost_ms`` by bot; built-ins 100 ms)."""
    for match in Match.objects.filter(status=Match.Status.QUEUED):
        Participant.objects.filter(match=match).update(worker_ms=0)
        for p in match.participants.all():
            Participant.objects.filter(pk=p.pk).update(worker_ms=cost_ms.get(p.bot_id, 100), rank=1, score=0)
        Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED, finished=timezone.now())


def test_each_seat_is_charged_its_thinking_and_a_part_of_the_rest():
    events = [{"by": -1, "action": {}}, {"by": 0, "action": {}, "ms": 900}, {"by": 1, "action": {}, "ms": 30}, {"by": 0, "action": {}, "ms": 900}]
    # seat 0 and 1 uploaded: each its thinking plus half of the 1,170 ms of the rest
    assert seat_charges(events, 3000, [0, 1], 2) == {0: 1800 + 585, 1: 30 + 585}
    # seat 1 a built-in: nobody's; the uploaded bot pays for the rest of the match
    assert seat_charges(events, 3000, [0], 2) == {0: 3000, 1: 30}
    # a match timed at 0 ms (in-process players on a quick machine) still costs its seats
    assert seat_charges([], 0, [0, 1], 2) == {0: 1, 1: 1}


def test_a_recorded_result_charges_every_seat(one_ladder):
    a = factories.active_bot(game="allegory")
    b = factories.active_bot(game="allegory")
    match = factories.finished_match(one_ladder, [a, b])
    charged = list(match.participants.values_list("worker_ms", flat=True))
    assert all(ms is not None and ms >= 0 for ms in charged)
    assert sum(charged) > 0


def fast_and_slow_owners() -> tuple[Bot, Bot, object, list[Bot]]:
    """Two owners of a fast bot each (0.5 s a seat), one of three slow ones (20 s)."""
    _, [fast1] = owner_with_bots(1)
    _, [fast2] = owner_with_bots(1)
    slow_owner, slow = owner_with_bots(3)
    return fast1, fast2, slow_owner, slow


def play_rounds(fast: list[Bot], slow: list[Bot], rounds: int = 60) -> None:
    """``rounds`` top-ups (a queue target of 2), each played at once."""
    cost = {**{b.pk: 500 for b in fast}, **{b.pk: 20_000 for b in slow}}
    rng = random.Random(5)
    for _ in range(rounds):
        top_up_queues(rng)
        play_queued(cost)


def test_slow_bots_play_fewer_matches_and_their_owner_keeps_to_a_share(one_ladder, settings):
    settings.CARDROOM_QUEUE_TARGET = 2
    settings.CARDROOM_QUOTA_QUEUED_MATCHES = 10
    fast1, fast2, slow_owner, slow = fast_and_slow_owners()
    play_rounds([fast1, fast2], slow)
    seats = Counter(Participant.objects.filter(match__ladder=one_ladder).values_list("bot__owner_id", flat=True))
    slow_seats = seats[slow_owner.pk]
    fast_seats = seats[fast1.owner_id] + seats[fast2.owner_id]
    # Share: 2 workers / 3 owners, over a 600 s window = 400 worker-seconds; a
    # slow seat costs 20 s: about 20 seats (one queued round more at most).
    assert 15 <= slow_seats <= 20 + 2 * 2, seats
    assert fast_seats > 4 * slow_seats, seats
    fair = FairShare.load()
    assert fair.use(slow_owner.pk) <= fair.share() + 2 * 2 * 20 / 600  # within its share, give or take the last round
    assert fair.allows(fast1) and not any(fair.allows(b) for b in slow)


def test_without_a_second_owner_there_is_nothing_to_share(one_ladder, settings):
    settings.CARDROOM_QUEUE_TARGET = 4
    _, slow = owner_with_bots(3)
    for _ in range(10):
        top_up_queues(random.Random(1))
        play_queued({b.pk: 60_000 for b in slow})
    assert Match.objects.filter(ladder=one_ladder).count() == 40


def test_a_newcomer_plays_one_match_a_bot_until_its_cost_is_known(one_ladder, settings):
    settings.CARDROOM_QUEUE_TARGET = 8
    _, [old] = owner_with_bots(1)
    top_up_queues(random.Random(2))
    play_queued({old.pk: 500})  # the platform has measured costs now
    newcomer, fresh = owner_with_bots(3, active_since=timedelta(0))
    top_up_queues(random.Random(3))
    in_hand = Counter(
        Participant.objects.filter(match__status=Match.Status.QUEUED, bot__owner=newcomer).values_list("bot_id", flat=True)
    )
    assert in_hand and max(in_hand.values()) == 1, in_hand


def test_running_matches_count_as_they_go(one_ladder):
    _, [busy] = owner_with_bots(1)
    _, [idle] = owner_with_bots(1)
    _, [third] = owner_with_bots(1)
    builtin = Bot.objects.filter(game="allegory", builtin=True, current_version__isnull=False).first()
    match = factories.running_match(one_ladder, [busy, builtin])
    assert FairShare.load().allows(busy)  # just started: nothing used yet
    # it has been running for twenty minutes: more than a worker, the whole window long
    Match.objects.filter(pk=match.pk).update(started=timezone.now() - timedelta(minutes=20))
    fair = FairShare.load()
    assert fair.use(busy.owner_id) > fair.share()
    assert not fair.allows(busy) and fair.allows(idle) and fair.allows(third)


def test_an_owner_with_the_most_queued_matches_gets_no_more(one_ladder, settings):
    settings.CARDROOM_QUEUE_TARGET = 20
    settings.CARDROOM_QUOTA_QUEUED_MATCHES = 3
    owner, mine = owner_with_bots(2)
    owner_with_bots(1)
    top_up_queues(random.Random(6))
    with_mine = Match.objects.filter(status=Match.Status.QUEUED, participants__bot__owner=owner).distinct().count()
    assert with_mine == 3
    assert Match.objects.filter(status=Match.Status.QUEUED).count() > 3  # the others still play
