"""Keeping each active ladder's queue topped up with well-chosen matches.

Only bots whose owner is within their fair share of the workers may take a
new seat (ladder.services.fairshare): an owner whose bots took more than the
equal split of recent worker time waits until the others catch up.

First the bot that most needs games (fewest games queued or played recently,
then the widest OpenSkill uncertainty), then its opponents, then their seats
(``CARDROOM_SEATING``; decision 293): ``balanced`` (the default), the order
in which each pair of them has sat least often, then each bot's least used
seats (in Allegory the seat decides a great deal, and a run of good seats
would read as strength); ``shuffled``, at random.
The opponents (``CARDROOM_PAIRING``; docs/ladder.md, "Pairing"; decision 274):
``elo``, drawn at random among the nearest few in Elo; ``informative``, among
those whose order relative to it the stored adjusted ranking is least sure
of (a match between two versions already told apart teaches the ranking
little), Elo's nearest where the ranking does not hold a version yet. Each match
gets its own seed; on the ladders that play duplicate sets
(ladder.services.duplicate_sets) a pairing is one deal played in every seat
rotation, k matches sharing a seed, each counted as a match (busy, fair
shares, the queue's target). Only bots whose current version is active play.

No table seats two bots of one owner (``CARDROOM_SEPARATE_OWNERS``, on by
default; decision 278): two bots of one account could share what each seat
sees, or one could lose to the other on purpose, and the platform cannot
tell. cardroom's own bots (built in, or its account's) count each as an
owner of its own. A ladder whose allowed bots have fewer owners than a
table has seats makes no match (it waits for another owner's bot, or for
one over its fair share).

One ladder is topped up under a lock on its row, so two runs of the periodic
task at once (a slow run overlapping the next) never overfill a queue.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from statistics import NormalDist

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from ladder.models import Bot, Ladder, Match, Participant, Rating
from ladder.selectors import adjusted
from ladder.services import duplicate_sets
from ladder.services.bots import SYSTEM_USERNAME
from ladder.services.fairshare import FairShare
from ladder.services.matches import create_match, enqueue_after_commit
from ladder.services.ratings import ensure_ratings

RECENT = timedelta(hours=24)
Z95 = NormalDist().inv_cdf(0.975)
# Informative pairing draws among the opponents at least this share as
# likely to be misordered as the likeliest one: near-ties, so pairings vary.
NEAR_TIE = 0.5
# Balanced seating reads the seats of the ladder's last this many single
# matches: enough for every pair of a busy ladder's field to have met, few
# enough to read in two small queries per top-up.
SEATING_MATCHES = 1000


@dataclass
class SeatHistory:
    """Who sat where in a ladder's recent single matches (a duplicate set
    plays every rotation, so its seats are balanced already): how often
    each bot sat in each seat, and each ordered pair (a, b) how often a sat
    before b."""

    seat: Counter = field(default_factory=Counter)  # (bot id, seat)
    before: Counter = field(default_factory=Counter)  # (bot id, bot id)

    @classmethod
    def load(cls, ladder: Ladder) -> SeatHistory:
        history = cls()
        recent = (
            Match.objects.filter(ladder=ladder, duplicate_set__isnull=True).order_by("-pk").values_list("pk", flat=True)
        )
        oldest = recent[SEATING_MATCHES - 1 : SEATING_MATCHES].first()
        rows = Participant.objects.filter(match__ladder=ladder, match__duplicate_set__isnull=True)
        if oldest is not None:
            rows = rows.filter(match_id__gte=oldest)
        tables: dict[int, list[tuple[int, int]]] = {}
        for match_id, seat, bot_id in rows.values_list("match_id", "seat", "bot_id"):
            tables.setdefault(match_id, []).append((seat, bot_id))
        for table in tables.values():
            history.add([bot_id for _seat, bot_id in sorted(table)])
        return history

    def add(self, seated: list[int]) -> None:
        """One more match, its bot ids in seat order."""
        for seat, bot in enumerate(seated):
            self.seat[bot, seat] += 1
        for a, b in itertools.combinations(seated, 2):
            self.before[a, b] += 1

    def balanced(self, bots: list[Bot], rng: random.Random) -> list[Bot]:
        """``bots`` in the seat order that the pairs among them have sat in
        least often (so two bots that keep meeting take turns at the better
        seat), then that uses each one's seats least, ties at random."""

        def cost(order: tuple[Bot, ...]) -> tuple[int, int, float]:
            pairs = sum(self.before[a.pk, b.pk] for a, b in itertools.combinations(order, 2))
            seats = sum(self.seat[bot.pk, seat] for seat, bot in enumerate(order))
            return pairs, seats, rng.random()

        return list(min(itertools.permutations(bots), key=cost))


def misorder_chance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The chance that two versions' true order is the other way round from
    their ratings, each (rating, half-width of its 95% interval), taken as
    independent normals (the stored ranking keeps no covariance)."""
    sd = ((a[1] ** 2 + b[1] ** 2) ** 0.5) / Z95
    if sd <= 0:
        return 0.0 if a[0] != b[0] else 0.5
    return NormalDist().cdf(-abs(a[0] - b[0]) / sd)


def table_owner(bot: Bot) -> object:
    """Whom matchmaking keeps to one seat a table: the bot's owner; the bot
    itself for cardroom's own bots (built in, or its account's), and for
    every bot with ``CARDROOM_SEPARATE_OWNERS`` off (a private ladder of one
    researcher's bots)."""
    if bot.builtin or not settings.CARDROOM_SEPARATE_OWNERS or bot.owner.username == SYSTEM_USERNAME:
        return ("bot", bot.pk)
    return ("owner", bot.owner_id)


def one_bot_an_owner(bots: list[Bot]) -> list[Bot]:
    """The first of ``bots`` of each table owner, in order: a draw from
    them never seats an owner twice."""
    first: dict[object, Bot] = {}
    for bot in bots:
        first.setdefault(table_owner(bot), bot)
    return list(first.values())


def eligible_bots(ladder: Ladder) -> list[Bot]:
    return list(
        Bot.objects.filter(game=ladder.game, current_version__status="active", withdrawn__isnull=True)
        .select_related("current_version", "owner")
        .order_by("pk")
    )


@dataclass
class _Candidates:
    """What matchmaking knows of a ladder's bots, updated as it plans."""

    bots: list[Bot]
    elo: dict[int, Decimal]
    sigma: dict[int, float]
    busy: dict[int, int]  # games queued, running or finished recently
    fair: FairShare
    # {bot id: (adjusted rating, half-width)}: only for informative pairing
    strength: dict[int, tuple[float, float]] = field(default_factory=dict)
    informative: bool = False
    seating: SeatHistory | None = None  # balanced seating's history; None: seats shuffled

    @classmethod
    def load(cls, ladder: Ladder, fair: FairShare | None = None) -> _Candidates:
        bots = eligible_bots(ladder)
        ensure_ratings(ladder, [b.pk for b in bots])
        elo, sigma = {}, {}
        for bot_id, e, s in Rating.objects.filter(ladder=ladder, bot__in=bots).values_list("bot_id", "elo", "sigma"):
            elo[bot_id], sigma[bot_id] = e, s
        since = timezone.now() - RECENT
        busy = dict(
            Participant.objects.filter(match__ladder=ladder)
            .filter(Q(match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING]) | Q(match__finished__gte=since))
            .values_list("bot_id")
            .annotate(n=Count("id"))
            .order_by()
        )
        informative = settings.CARDROOM_PAIRING == "informative"
        strength = adjusted.strengths(ladder.pk, [b.pk for b in bots]) if informative else {}
        seating = SeatHistory.load(ladder) if settings.CARDROOM_SEATING == "balanced" else None
        return cls(bots, elo, sigma, busy, fair or FairShare.load(), strength, informative, seating)

    def pick(self, n: int, rng: random.Random) -> list[Bot] | None:
        """One match's lineup in seat order, counted."""
        lineup = self.choose(n, rng)
        if lineup is not None:
            self.count(lineup, 1)
        return lineup

    def choose(self, n: int, rng: random.Random) -> list[Bot] | None:
        """A lineup in seat order (not counted yet: ``count``)."""
        allowed = [b for b in self.bots if self.fair.allows(b)]
        if len({table_owner(b) for b in allowed}) < n:
            return None

        def need(bot: Bot) -> tuple:
            return (self.busy.get(bot.pk, 0), -self.sigma[bot.pk], rng.random())

        first = min(allowed, key=need)
        firsts = table_owner(first)
        others = [b for b in allowed if table_owner(b) != firsts]
        nearest = self._elo_nearest(first, others, rng)
        informative = self._informative_pool(first, others, n - 1, rng) if self.informative else None
        if informative is None:
            pool = one_bot_an_owner(nearest)[: 2 * (n - 1)]
        else:  # Elo's nearest fill in for the owners the informative pool holds twice
            pool = one_bot_an_owner(informative + nearest)[: max(n - 1, len(one_bot_an_owner(informative)))]
        lineup = [first, *rng.sample(pool, n - 1)]
        if self.seating is None:
            rng.shuffle(lineup)
            return lineup
        return self.seating.balanced(lineup, rng)

    def _elo_nearest(self, first: Bot, others: list[Bot], rng: random.Random) -> list[Bot]:
        """``others`` nearest ``first`` in Elo first, equal distances in random order."""
        return sorted(others, key=lambda b: (abs(self.elo[b.pk] - self.elo[first.pk]), rng.random()))

    def _informative_pool(self, first: Bot, others: list[Bot], wanted: int, rng: random.Random) -> list[Bot] | None:
        """The opponents to draw ``wanted`` from: those the ranking is
        least sure of relative to ``first`` (near-ties all in), filled up by
        Elo's nearest when it knows too few; None when it does not know
        ``first`` (Elo's pairing then)."""
        mine = self.strength.get(first.pk)
        if mine is None:
            return None
        known = [b for b in others if b.pk in self.strength]
        chance = {b.pk: misorder_chance(mine, self.strength[b.pk]) for b in known}
        known.sort(key=lambda b: (-chance[b.pk], rng.random()))
        best = chance[known[0].pk] if known else 0.0
        pool = [b for b in known if chance[b.pk] >= NEAR_TIE * best]
        pool += [b for b in known if b not in pool][: max(0, wanted - len(pool))]
        if len(pool) < wanted:
            unknown = [b for b in others if b.pk not in self.strength]
            pool += self._elo_nearest(first, unknown, rng)[: wanted - len(pool)]
        return pool

    def count(self, lineup: list[Bot], matches: int) -> None:
        """``matches`` matches of ``lineup`` were queued (a set: k)."""
        if self.seating is not None and matches == 1:  # a set's rotations balance themselves
            self.seating.add([bot.pk for bot in lineup])
        for bot in lineup:
            self.busy[bot.pk] = self.busy.get(bot.pk, 0) + matches
        for _ in range(matches):
            self.fair.charge(lineup)


def pick_lineup(ladder: Ladder, rng: random.Random) -> list[Bot] | None:
    """One match's bots in seat order (None when too few bots can play)."""
    return _Candidates.load(ladder).pick(ladder.players_per_match, rng)


def top_up_ladder(ladder: Ladder, rng: random.Random, fair: FairShare | None = None) -> list[int]:
    """Create matches until this ladder has CARDROOM_QUEUE_TARGET queued (a
    duplicate set's last rotations may pass it by up to k - 1)."""
    created: list[int] = []
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        if not ladder.active:
            return created
        queued = Match.objects.filter(ladder=ladder, status=Match.Status.QUEUED).count()
        missing = settings.CARDROOM_QUEUE_TARGET - queued
        if missing <= 0:
            return created
        candidates = _Candidates.load(ladder, fair)
        rotations = duplicate_sets.rotations_for(ladder)
        while len(created) < missing:
            lineup = candidates.choose(ladder.players_per_match, rng)
            if lineup is None:
                break
            # A bot whose cost is not known yet plays one match at a time
            # (ladder.services.fairshare): a single match, not a set.
            sets = rotations > 1 and all(candidates.fair.cost_known(b) for b in lineup)
            candidates.count(lineup, rotations if sets else 1)
            versions = [b.current_version for b in lineup]
            # The seed from secrets (create_match's, create_set's), not from
            # rng: a Mersenne Twister's later outputs follow from its earlier
            # ones, and every finished match publishes its seed.
            if sets:
                matches = duplicate_sets.create_set(ladder, versions)
            else:
                matches = [create_match(ladder=ladder, versions=versions)]
            for match in matches:
                enqueue_after_commit(match.pk)
                created.append(match.pk)
    return created


def top_up_queues(rng: random.Random | None = None) -> list[int]:
    """Create matches until every active ladder has its target queue."""
    rng = rng or random.Random()
    created: list[int] = []
    fair = FairShare.load()  # one account for every ladder: they share the workers
    for ladder in Ladder.objects.filter(active=True).order_by("pk"):
        created += top_up_ladder(ladder, rng, fair)
    return created
