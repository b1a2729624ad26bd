"""Tournament schedules: which entries sit at which table, in which seats,
with which seed. Pure Python, no Django: ``cardroom tournament`` and the
platform's events use this same code.

An event is fixed by an ``EventSpec`` (game, format, field size, table size,
deals, rounds, seed): the schedule is a function of it alone (Swiss rounds
also of the results so far), so an event replays exactly.

Formats (docs/tournaments.md has the whole story):

* ``round-robin``: every group of ``table_size`` entries meets at one table
  ("complete"), when there are at most MAX_COMPLETE_TABLES such groups and no
  ``rounds`` were asked for; otherwise a "balanced" schedule of rounds in which
  each round seats everyone once (``N mod k`` entries sit out, in turn) and
  every pair meets as equally often as the construction gets.
* ``swiss``: rounds drawn by standing, best with best, avoiding a rematch
  while any rematch-free draw exists (a bounded exhaustive search).
* ``duplicate``: the round-robin tables, where every table plays each deal
  once in every seat rotation; deal ``d`` has one seed for the whole event.

Every table plays ``deals`` matches (a duplicate table ``deals x k``).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cardroom.tournament.seeds import derive

T = TypeVar("T")

FORMATS = ("round-robin", "swiss", "duplicate")
MIN_TABLE, MAX_TABLE = 2, 6
MAX_FIELD = 1000
MAX_DEALS = 1000
MAX_ROUNDS = 1000
# Past this many groups a round-robin is "balanced" rather than "complete".
MAX_COMPLETE_TABLES = 5000
# How long a balanced schedule is annealed (swaps per seat played).
ANNEAL_MOVES_PER_SEAT = 40
ANNEAL_START_TEMPERATURE = 0.3
# An event may not schedule more matches than this (fails closed at creation).
MAX_MATCHES = 500_000
# Swiss: how many partial draws the rematch-free search may try per round.
SWISS_SEARCH_BUDGET = 20_000

COMPLETE, BALANCED, SWISS = "complete", "balanced", "swiss"


class ScheduleError(ValueError):
    """An event that cannot be scheduled as asked (the message says why)."""


@dataclass(frozen=True)
class EventSpec:
    game: str
    format: str
    field_size: int
    table_size: int
    deals: int = 1
    rounds: int | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        check_spec(self)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "format": self.format,
            "field_size": self.field_size,
            "table_size": self.table_size,
            "deals": self.deals,
            "rounds": self.rounds,
            "seed": self.seed,
            "options": dict(self.options),
        }


def _whole(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScheduleError(f"{name} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ScheduleError(f"{name} must be between {low} and {high}, not {value}")


def check_spec(spec: EventSpec) -> None:
    if spec.format not in FORMATS:
        raise ScheduleError(f"unknown format {spec.format!r} (formats: {', '.join(FORMATS)})")
    _whole("the field", spec.field_size, 2, MAX_FIELD)
    _whole("the table size", spec.table_size, MIN_TABLE, MAX_TABLE)
    if spec.table_size > spec.field_size:
        raise ScheduleError(f"a table of {spec.table_size} needs at least {spec.table_size} entries, not {spec.field_size}")
    _whole("deals", spec.deals, 1, MAX_DEALS)
    if spec.rounds is not None:
        _whole("rounds", spec.rounds, 1, MAX_ROUNDS)
    _whole("the seed", spec.seed, 0, 2**63 - 1)
    total = total_matches(spec)
    if total > MAX_MATCHES:
        raise ScheduleError(f"this event would play {total} matches; at most {MAX_MATCHES} (fewer deals or rounds)")


@dataclass(frozen=True)
class Table:
    round: int
    index: int
    entries: tuple[int, ...]  # in seat order for rotation 0


@dataclass(frozen=True)
class MatchPlan:
    number: int  # 0-based position in the event's play order
    round: int
    table: int
    deal: int
    rotation: int
    seats: tuple[int, ...]  # entry index by seat
    seed: int
    keyed_chance: bool  # chance drawn with KeyedChance(seed) (duplicate)

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "round": self.round,
            "table": self.table,
            "deal": self.deal,
            "rotation": self.rotation,
            "seats": list(self.seats),
            "seed": self.seed,
            "keyed_chance": self.keyed_chance,
        }


# -- sizes ------------------------------------------------------------------


def pairing(spec: EventSpec) -> str:
    """complete, balanced or swiss: what kind of schedule the event gets."""
    if spec.format == "swiss":
        return SWISS
    if spec.rounds is None and math.comb(spec.field_size, spec.table_size) <= MAX_COMPLETE_TABLES:
        return COMPLETE
    return BALANCED


def num_rounds(spec: EventSpec) -> int:
    n, k = spec.field_size, spec.table_size
    kind = pairing(spec)
    if kind == COMPLETE:
        return 1
    if spec.rounds is not None:
        return spec.rounds
    if kind == SWISS:
        return max(1, math.ceil(math.log2(n)))
    # enough rounds for each entry to meet each other about once
    return max(1, math.ceil((n - 1) / (k - 1)))


def matches_per_table(spec: EventSpec) -> int:
    return spec.deals * (spec.table_size if spec.format == "duplicate" else 1)


def total_matches(spec: EventSpec) -> int:
    n, k = spec.field_size, spec.table_size
    if pairing(spec) == COMPLETE:
        tables = math.comb(n, k)
    else:
        tables = num_rounds(spec) * (n // k)
    return tables * matches_per_table(spec)


# -- static schedules (round-robin, duplicate) -------------------------------


def static_tables(spec: EventSpec) -> list[Table]:
    """The tables of a round-robin or duplicate event, round by round."""
    if spec.format == "swiss":
        raise ScheduleError("a Swiss event is drawn round by round (swiss_tables)")
    n, k = spec.field_size, spec.table_size
    if pairing(spec) == COMPLETE:
        return [Table(0, i, group) for i, group in enumerate(itertools.combinations(range(n), k))]
    rng = random.Random(derive(spec.seed, "schedule"))
    if k == 2:
        return _circle_tables(n, num_rounds(spec), rng)
    return _greedy_tables(n, k, num_rounds(spec), rng)


def _circle_tables(n: int, rounds: int, rng: random.Random) -> list[Table]:
    """Pairs by the circle method: N-1 rounds (N odd: N, one sits out each)
    in which every pair meets exactly once; more rounds repeat the cycle."""
    players: list[int | None] = list(range(n))
    rng.shuffle(players)
    if n % 2:
        players.append(None)  # the bye
    m = len(players)
    tables = []
    for r in range(rounds):
        c = r % (m - 1)
        ring = players[1:]
        ring = ring[c:] + ring[:c]
        order = [players[0], *ring]
        index = 0
        for i in range(m // 2):
            a, b = order[i], order[m - 1 - i]
            if a is None or b is None:
                continue
            tables.append(Table(r, index, (a, b) if (r + i) % 2 == 0 else (b, a)))
            index += 1
    return tables


def _greedy_tables(n: int, k: int, rounds: int, rng: random.Random) -> list[Table]:
    """Rounds of tables of k that spread meetings evenly: greedy (each seat
    goes to whoever has met the table least), then swaps (between tables, and
    with those sitting out who have sat out as often) while they lower the sum
    of squared meeting counts."""
    meet = [[0] * n for _ in range(n)]
    byes = [0] * n
    plan: list[tuple[list[list[int]], list[int]]] = []
    sit_out = n % k
    for _round in range(rounds):
        order = list(range(n))
        rng.shuffle(order)
        order.sort(key=lambda e: byes[e])  # stable: the shuffle breaks ties
        bench = order[:sit_out]
        free = order[sit_out:]
        rng.shuffle(free)
        groups: list[list[int]] = []
        while free:
            group = [free.pop()]
            while len(group) < k:
                best = min(range(len(free)), key=lambda i: sum(meet[free[i]][x] for x in group))
                group.append(free.pop(best))
            groups.append(group)
        _improve(groups, bench, meet, byes, rng)
        _count(groups, bench, meet, byes, +1)
        plan.append((groups, bench))
    _anneal(plan, meet, byes, rng, ANNEAL_MOVES_PER_SEAT * rounds * (n - sit_out))
    return [Table(r, index, tuple(group)) for r, (groups, _bench) in enumerate(plan) for index, group in enumerate(groups)]


def _anneal(plan, meet: list[list[int]], byes: list[int], rng: random.Random, moves: int) -> None:
    """Simulated annealing over single swaps anywhere in the schedule (two
    tables of a round, or a table and those sitting out with as many byes):
    greedy rounds get stuck where a design needs several swaps at once."""
    if not plan or moves <= 0:
        return
    temperature = ANNEAL_START_TEMPERATURE
    cooling = (0.02 / temperature) ** (1 / moves)
    rounds = len(plan)
    for _move in range(moves):
        temperature *= cooling
        groups, bench = plan[rng.randrange(rounds)]
        t = len(groups)
        i = rng.randrange(t)
        j = rng.randrange(t + (1 if bench else 0) - 1)
        j = j + 1 if j >= i else j
        gi = groups[i]
        gj = bench if j == t else groups[j]
        x, y = rng.randrange(len(gi)), rng.randrange(len(gj))
        a, b = gi[x], gj[y]
        if j == t:
            if byes[a] + 1 != byes[b]:  # b's bye is this round's; a may take it only with as few
                continue
            # half the change of the sum of squared counts (counts include this round)
            delta = sum(meet[b][o] - meet[a][o] + 1 for o in gi if o != a)
            if delta < 0 or rng.random() < math.exp(-delta / temperature):
                _trade(meet, a, b, gi)
                byes[a] += 1
                byes[b] -= 1
                gi[x], gj[y] = b, a
            continue
        delta = sum(meet[b][o] - meet[a][o] + 1 for o in gi if o != a) + sum(
            meet[a][o] - meet[b][o] + 1 for o in gj if o != b
        )
        if delta < 0 or rng.random() < math.exp(-delta / temperature):
            _trade(meet, a, b, gi)
            _trade(meet, b, a, gj)
            gi[x], gj[y] = b, a


def _trade(meet: list[list[int]], leaving: int, joining: int, group: list[int]) -> None:
    """Count ``joining`` instead of ``leaving`` as meeting the rest of ``group``."""
    for o in group:
        if o != leaving:
            meet[leaving][o] -= 1
            meet[o][leaving] -= 1
            meet[joining][o] += 1
            meet[o][joining] += 1

def _count(groups: list[list[int]], bench: list[int], meet: list[list[int]], byes: list[int], sign: int) -> None:
    for e in bench:
        byes[e] += sign
    for group in groups:
        for a, b in itertools.combinations(group, 2):
            meet[a][b] += sign
            meet[b][a] += sign


def _improve(groups: list[list[int]], bench: list[int], meet: list[list[int]], byes: list[int], rng: random.Random) -> bool:
    """Swap entries of one round while that lowers the round's meetings with
    the rest of the schedule (``meet``); True if anything moved."""
    t = len(groups)
    moved = False
    pairs = [(i, j) for i in range(t) for j in range(i + 1, t)] + [(i, -1) for i in range(t)]
    budget = 20_000

    def cost(e: int, group: list[int], without: int) -> int:
        return sum(meet[e][o] for o in group if o != without)

    for _pass in range(20):
        rng.shuffle(pairs)
        improved = False
        for i, j in pairs[:budget]:
            gi = groups[i]
            gj = bench if j < 0 else groups[j]
            for x in range(len(gi)):
                for y in range(len(gj)):
                    a, b = gi[x], gj[y]
                    if j < 0:
                        # a sits out instead of b: only if a has sat out as often
                        if byes[a] != byes[b]:
                            continue
                        before, after = cost(a, gi, a), cost(b, gi, a)
                    else:
                        before = cost(a, gi, a) + cost(b, gj, b)
                        after = cost(b, gi, a) + cost(a, gj, b)
                    if after < before:
                        gi[x], gj[y] = b, a
                        improved = moved = True
        if not improved:
            return moved
    return moved


def rotate(entries: Sequence[T], rotation: int) -> tuple[T, ...]:
    """A table's seats in ``rotation`` (0..k-1): the entry order shifted by
    it, so over the k rotations every entry plays every seat once (a
    duplicate table's deal; the ladder's duplicate sets play the same)."""
    entries = tuple(entries)
    return entries[rotation:] + entries[:rotation]


def table_matches(spec: EventSpec, tables: Iterable[Table], first_number: int = 0) -> list[MatchPlan]:
    """The matches of some tables, in play order: by round, then deal, then
    table, then seat rotation. Round-robin and Swiss tables rotate their seats
    from deal to deal; a duplicate table plays each deal in every rotation,
    all on the deal's one seed."""
    by_round: dict[int, list[Table]] = {}
    for table in tables:
        by_round.setdefault(table.round, []).append(table)
    k = spec.table_size
    duplicate = spec.format == "duplicate"
    plans: list[MatchPlan] = []
    number = first_number
    for rnd in sorted(by_round):
        for deal in range(spec.deals):
            for table in by_round[rnd]:
                rotations = range(k) if duplicate else [(table.index + rnd + deal) % k]
                for rotation in rotations:
                    seats = rotate(table.entries, rotation)
                    seed = derive(spec.seed, "deal", deal) if duplicate else derive(spec.seed, "match", rnd, table.index, deal)
                    plans.append(MatchPlan(number, rnd, table.index, deal, rotation if duplicate else 0, seats, seed, duplicate))
                    number += 1
    return plans


def static_matches(spec: EventSpec) -> list[MatchPlan]:
    return table_matches(spec, static_tables(spec))


# -- Swiss ------------------------------------------------------------------


def swiss_tables(
    spec: EventSpec,
    round_no: int,
    ranking: Sequence[int],
    met: set[frozenset[int]],
    byes: Sequence[int],
) -> list[Table]:
    """Draw Swiss round ``round_no``.

    ``ranking`` is the whole field, best first (the standings after the
    previous rounds; round 0 passes ``initial_ranking``). ``met`` holds every
    pair that has shared a table, ``byes`` each entry's rounds sat out.

    The ``N mod k`` who sit out are taken from those who sat out least, the
    lowest ranked first. Then tables are filled from the top of the ranking,
    each with the best-ranked entries who have met nobody at it; an
    exhaustive search (bounded by SWISS_SEARCH_BUDGET) finds a rematch-free
    draw whenever there is one. Past the budget, or when there is none, a
    greedy draw takes whoever adds the fewest rematches."""
    n, k = spec.field_size, spec.table_size
    if sorted(ranking) != list(range(n)):
        raise ScheduleError("the ranking must list every entry once")
    sit_out = n % k
    least = min(byes) if sit_out else 0
    # who may sit out, in preference order: fewest byes, lowest ranked
    candidates = sorted(range(n), key=lambda e: (byes[e], -ranking.index(e)))
    budget = [SWISS_SEARCH_BUDGET]
    bye_sets = _bye_sets(candidates, byes, sit_out, least)
    for bye_set in bye_sets:
        players = [e for e in ranking if e not in bye_set]
        found = _rematch_free(players, k, met, budget)
        if found is not None:
            return [Table(round_no, i, tuple(group)) for i, group in enumerate(found)]
        if budget[0] <= 0:
            break
    players = [e for e in ranking if e not in bye_sets[0]]
    return [Table(round_no, i, tuple(group)) for i, group in enumerate(_fewest_rematches(players, k, met))]


def _bye_sets(candidates: list[int], byes: Sequence[int], sit_out: int, least: int) -> list[frozenset[int]]:
    """The sets of entries that may sit out, best first: those with the
    fewest byes (whoever has fewer must sit out before anyone with more)."""
    if sit_out == 0:
        return [frozenset()]
    ordered = sorted(candidates, key=lambda e: byes[e])
    threshold = byes[ordered[sit_out - 1]]
    must = [e for e in candidates if byes[e] < threshold]
    may = [e for e in candidates if byes[e] == threshold]
    # the first 200, in preference order already (may is lowest-ranked first)
    combos = itertools.islice(itertools.combinations(may, sit_out - len(must)), 200)
    return [frozenset(must + list(rest)) for rest in combos]


def _rematch_free(players: list[int], k: int, met: set[frozenset[int]], budget: list[int]) -> list[list[int]] | None:
    if not players:
        return []
    head, rest = players[0], players[1:]
    # the head's table: best-ranked first among those it has not met
    fresh = [e for e in rest if frozenset((head, e)) not in met]
    for companions in itertools.combinations(fresh, k - 1):
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if any(frozenset(p) in met for p in itertools.combinations(companions, 2)):
            continue
        chosen = set(companions)
        left = [e for e in rest if e not in chosen]
        if not _everyone_can_sit(left, k, met):
            continue
        tail = _rematch_free(left, k, met, budget)
        if tail is not None:
            return [[head, *companions], *tail]
        if budget[0] < 0:
            return None
    return None


def _everyone_can_sit(players: list[int], k: int, met: set[frozenset[int]]) -> bool:
    """A quick necessary condition: each has k-1 others it has not met."""
    for a in players:
        fresh = 0
        for b in players:
            if b != a and frozenset((a, b)) not in met:
                fresh += 1
                if fresh >= k - 1:
                    break
        else:
            return False
    return True


def _fewest_rematches(players: list[int], k: int, met: set[frozenset[int]]) -> list[list[int]]:
    free = list(players)
    groups = []
    while free:
        group = [free.pop(0)]
        while len(group) < k:
            best = min(range(len(free)), key=lambda i: (sum(frozenset((free[i], g)) in met for g in group), i))
            group.append(free.pop(best))
        groups.append(group)
    return groups


def initial_ranking(spec: EventSpec) -> list[int]:
    """Round 0 of a Swiss event: the field in a seeded random order."""
    order = list(range(spec.field_size))
    random.Random(derive(spec.seed, "swiss-start")).shuffle(order)
    return order


def pairs_of(tables: Iterable[Table]) -> set[frozenset[int]]:
    return {frozenset(p) for t in tables for p in itertools.combinations(t.entries, 2)}
