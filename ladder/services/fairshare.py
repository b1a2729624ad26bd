"""Fair shares of the workers: matchmaking spreads worker time across owners.

What a match costs: each seat is charged its own thinking (the ``ms`` of its
moves in the replay) plus an equal part of the rest of the match's time (the
engine, starting and stopping processes, the built-in bots' thinking),
split among the seats of uploaded bots; built-in bots are nobody's and are
never charged. The charge is ``Participant.worker_ms``, recorded with the
result (``seat_charges``).

The policy (matchmaking asks ``FairShare.allows`` before it seats a bot):

* the owners are the users with an active uploaded bot on an active ladder;
  the workers' capacity is the number of live worker processes (their
  heartbeats), at least one; each owner's **share** is an equal split of it;
* an owner's **use** is the worker time charged to their bots over the last
  CARDROOM_FAIR_SHARE_WINDOW_SECONDS (600 s), plus the time their running
  matches have taken so far, plus their queued seats at each bot's mean
  charge, divided by how long the owner has had an active bot within the
  window (at least a minute: a newcomer's first matches count at once);
* an owner whose use is over their share gets no new seats until it falls
  back (old matches leave the window); nor does one whose bots already sit in
  CARDROOM_QUOTA_QUEUED_MATCHES queued ladder matches;
* a bot whose cost is not known yet (no charged seat in the window, while
  other bots' are) plays one match at a time until it is: a slow newcomer
  cannot fill the queues before its first result shows what it costs.

Slow bots cost their owner more for each match, so they play fewer matches;
with only one owner there is nothing to share.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Avg, Count, Min
from django.utils import timezone

from ladder.models import Bot, BotVersion, Ladder, Match, Participant, WorkerHeartbeat
from ladder.services.match_kinds import kinds

# A newcomer's usage is spread over at least this long.
MIN_PRESENCE_SECONDS = 60.0


def seat_charges(events: list[dict], elapsed_ms: int, charged_seats: list[int], num_players: int) -> dict[int, int]:
    """Each seat's worker time for one match (``charged_seats``: the seats of
    uploaded bots, who share the rest; a seat not among them is charged its
    own thinking only, and a match of built-ins splits the rest among all)."""
    thinking = [0] * num_players
    for event in events:
        seat = event.get("by")
        if isinstance(seat, int) and 0 <= seat < num_players:
            thinking[seat] += int(event.get("ms") or 0)
    sharers = charged_seats or list(range(num_players))
    rest = max(0, elapsed_ms - sum(thinking[s] for s in sharers))
    # At least 1 ms a sharing seat: a match always costs a worker something
    # (its claim and its recording), however fast its moves were timed.
    return {s: max(1, thinking[s] + rest // len(sharers)) if s in sharers else thinking[s] for s in range(num_players)}


@dataclass
class FairShare:
    """What matchmaking knows of every owner's use of the workers, updated
    as it queues matches (``charge``)."""

    capacity: float = 1.0  # live worker processes
    usage_ms: dict[int, float] = field(default_factory=dict)  # owner -> worker ms in the window, in hand included
    presence_s: dict[int, float] = field(default_factory=dict)  # owner -> seconds with an active bot, in the window
    queued: dict[int, int] = field(default_factory=dict)  # owner -> queued ladder matches with their bots
    in_flight: dict[int, int] = field(default_factory=dict)  # bot -> its ladder matches queued or running
    bot_cost_ms: dict[int, float] = field(default_factory=dict)  # bot -> its mean charge per seat in the window
    measured: bool = False  # some seat was charged in the window
    max_queued: int = 0

    @classmethod
    def load(cls) -> FairShare:
        from ladder.services.ops import ALIVE_SECONDS

        now = timezone.now()
        since = now - timedelta(seconds=settings.CARDROOM_FAIR_SHARE_WINDOW_SECONDS)
        games = set(Ladder.objects.filter(active=True).values_list("game", flat=True))
        owners = set(
            Bot.objects.filter(builtin=False, game__in=games, current_version__status=BotVersion.Status.ACTIVE).values_list(
                "owner_id", flat=True
            )
        )
        alive = WorkerHeartbeat.objects.filter(last_seen__gte=now - timedelta(seconds=ALIVE_SECONDS)).count()
        fair = cls(capacity=float(max(1, alive)), max_queued=settings.CARDROOM_QUOTA_QUEUED_MATCHES)
        if not owners:
            return fair
        first_active = dict(
            BotVersion.objects.filter(bot__owner__in=owners, bot__builtin=False, activated__isnull=False)
            .values_list("bot__owner_id")
            .annotate(first=Min("activated"))
            .order_by()
        )
        for owner in owners:
            start = max(first_active.get(owner, now), since)
            fair.presence_s[owner] = max(MIN_PRESENCE_SECONDS, (now - start).total_seconds())
            fair.usage_ms[owner] = 0.0
        played = Participant.objects.filter(
            bot__builtin=False, bot__owner__in=owners, match__status=Match.Status.FINISHED,
            match__finished__gte=since, worker_ms__isnull=False,
        )  # fmt: skip
        for owner, bot, total, mean in (
            played.values_list("bot__owner_id", "bot_id").annotate(total=Count("id"), mean=Avg("worker_ms")).order_by()
        ):
            fair.usage_ms[owner] += total * float(mean)
            fair.bot_cost_ms[bot] = float(mean)
        fair.measured = bool(fair.bot_cost_ms)
        in_hand = (
            Participant.objects.filter(
                bot__builtin=False, bot__owner__in=owners, match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
            )
            .exclude(match__kind__in=kinds(has_person_seat=True))  # a casual match waits on its person, on workers of its own
            .values_list("bot__owner_id", "bot_id", "match_id", "match__status", "match__kind", "match__started")
        )
        running: dict[int, list[tuple[int, object]]] = defaultdict(list)
        queued = defaultdict(set)
        made_by_matchmaking = set(kinds(made_by_matchmaking=True))
        for owner, bot, match, status, kind, started in in_hand:
            if kind in made_by_matchmaking:
                fair.in_flight[bot] = fair.in_flight.get(bot, 0) + 1
            if status == Match.Status.RUNNING:
                running[match].append((owner, started))
            else:
                fair.usage_ms[owner] += fair.bot_cost_ms.get(bot, 0.0)
                if kind in made_by_matchmaking:
                    queued[owner].add(match)
        for seats in running.values():  # the time a running match has taken so far, split among its charged seats
            for owner, started in seats:
                elapsed_ms = max(0.0, (now - started).total_seconds() * 1000) if started else 0.0
                fair.usage_ms[owner] += elapsed_ms / len(seats)
        fair.queued = {owner: len(matches) for owner, matches in queued.items()}
        return fair

    def use(self, owner: int) -> float:
        """The owner's use of the workers: worker-seconds per second (1.0 = one worker, all the time)."""
        return self.usage_ms.get(owner, 0.0) / 1000 / self.presence_s.get(owner, MIN_PRESENCE_SECONDS)

    def share(self) -> float:
        """Each owner's share: an equal split of the workers."""
        return self.capacity / max(1, len(self.usage_ms))

    def allows(self, bot: Bot) -> bool:
        """May matchmaking give ``bot`` a new seat now?"""
        owner = bot.owner_id
        if bot.builtin or owner not in self.usage_ms:
            return True
        if self.queued.get(owner, 0) >= self.max_queued:
            return False
        if self.measured and bot.pk not in self.bot_cost_ms and self.in_flight.get(bot.pk, 0) >= 1:
            return False  # its cost is unknown until its first match is played
        return len(self.usage_ms) < 2 or self.use(owner) <= self.share()

    def cost_known(self, bot: Bot) -> bool:
        """Is what a seat of ``bot`` costs known (or nobody's to pay)?"""
        return bot.builtin or bot.owner_id not in self.usage_ms or not self.measured or bot.pk in self.bot_cost_ms

    def charge(self, lineup: list[Bot]) -> None:
        """A match with ``lineup`` was queued: count it."""
        for owner in {b.owner_id for b in lineup if not b.builtin and b.owner_id in self.usage_ms}:
            self.queued[owner] = self.queued.get(owner, 0) + 1
        for bot in lineup:
            if not bot.builtin and bot.owner_id in self.usage_ms:
                self.in_flight[bot.pk] = self.in_flight.get(bot.pk, 0) + 1
                self.usage_ms[bot.owner_id] += self.bot_cost_ms.get(bot.pk, 0.0)
