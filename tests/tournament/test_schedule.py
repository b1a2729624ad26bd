"""Schedules: complete and balanced for every format, table size 2-6 and
field of 2-50; Swiss avoids rematches while it can; seeds fix everything."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from cardroom.tournament import event, schedule
from cardroom.tournament.schedule import BALANCED, COMPLETE, EventSpec, ScheduleError
from cardroom.tournament.standings import Outcome

FIELDS = range(2, 51)


def pair_counts(tables, n):
    meet = Counter(frozenset(p) for t in tables for p in itertools.combinations(t.entries, 2))
    return [meet[frozenset(p)] for p in itertools.combinations(range(n), 2)]


def check_rounds(tables, n, k, rounds):
    """Each round seats everyone once except the n mod k who sit out, and
    sitting out goes round (counts differ by at most one)."""
    by_round = {}
    for t in tables:
        assert len(t.entries) == k and len(set(t.entries)) == k
        by_round.setdefault(t.round, []).append(t)
    assert sorted(by_round) == list(range(rounds))
    sat_out = Counter()
    for r, ts in by_round.items():
        seated = [e for t in ts for e in t.entries]
        assert len(seated) == len(set(seated)) == n - n % k, f"round {r}"
        for e in set(range(n)) - set(seated):
            sat_out[e] += 1
    counts = [sat_out[e] for e in range(n)]
    assert max(counts) - min(counts) <= 1


def random_schedule_squares(n, k, rounds, seed):
    """The sum of squared meeting counts of rounds seated at random."""
    rng = random.Random(seed)
    meet = Counter()
    for _ in range(rounds):
        order = list(range(n))
        rng.shuffle(order)
        for i in range(0, n - n % k, k):
            for p in itertools.combinations(order[i : i + k], 2):
                meet[frozenset(p)] += 1
    return sum(c * c for c in meet.values())


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_round_robin_and_duplicate_tables_are_complete_or_balanced(k):
    for n in FIELDS:
        if n < k:
            continue
        spec = EventSpec("allegra", "round-robin", n, k, deals=2, seed=n * 10 + k)
        tables = schedule.static_tables(spec)
        if schedule.pairing(spec) == COMPLETE:
            groups = [tuple(sorted(t.entries)) for t in tables]
            assert sorted(groups) == list(itertools.combinations(range(n), k)), (n, k)
        else:
            assert schedule.pairing(spec) == BALANCED
            rounds = schedule.num_rounds(spec)
            check_rounds(tables, n, k, rounds)
            counts = pair_counts(tables, n)
            mean = sum(counts) / len(counts)
            # "as nearly as possible": within two of the mean, and far more
            # even than rounds seated at random
            assert max(counts) <= math.ceil(mean) + 2, (n, k, max(counts), mean)
            assert min(counts) >= math.floor(mean) - 1, (n, k, min(counts), mean)
            squares = sum(c * c for c in counts)
            assert squares < min(random_schedule_squares(n, k, rounds, s) for s in range(3)), (n, k)
        plans = schedule.table_matches(spec, tables)
        assert len(plans) == schedule.total_matches(spec) == len(tables) * 2
        assert [p.number for p in plans] == list(range(len(plans)))
        check_duplicate(EventSpec("allegra", "duplicate", n, k, deals=2, seed=spec.seed), tables)


def check_duplicate(spec, tables):
    """Every table plays every deal once in every seat rotation, all on the
    deal's one seed: every entry has every seat on every deal it plays."""
    k = spec.table_size
    plans = schedule.table_matches(spec, tables)
    assert len(plans) == schedule.total_matches(spec) == len(tables) * spec.deals * k
    seeds = {}
    seats_seen = Counter()
    for p in plans:
        assert p.keyed_chance
        assert seeds.setdefault(p.deal, p.seed) == p.seed
        for seat, e in enumerate(p.seats):
            seats_seen[(p.round, p.table, p.deal, e, seat)] += 1
    assert len(set(seeds.values())) == spec.deals
    for t in tables:
        for d in range(spec.deals):
            for e in t.entries:
                assert [seats_seen[(t.round, t.index, d, e, s)] for s in range(k)] == [1] * k


@pytest.mark.parametrize("n", [2, 3, 7, 8, 19, 50, 101])
def test_pairs_by_the_circle_method_meet_exactly_once(n):
    rounds = n - 1 if n % 2 == 0 else n
    spec = EventSpec("allegory", "round-robin", n, 2, rounds=rounds, seed=3)
    assert schedule.pairing(spec) == BALANCED
    tables = schedule.static_tables(spec)
    check_rounds(tables, n, 2, rounds)
    assert set(pair_counts(tables, n)) == {1}


def test_too_many_groups_makes_a_balanced_schedule_and_rounds_ask_for_one():
    assert schedule.pairing(EventSpec("allegra", "round-robin", 20, 4)) == COMPLETE  # 4845 groups
    assert schedule.pairing(EventSpec("allegra", "round-robin", 21, 4)) == BALANCED  # 5985 groups
    assert schedule.pairing(EventSpec("allegra", "round-robin", 6, 3, rounds=4)) == BALANCED


def fake_outcomes(spec, plans, rng):
    out = []
    for p in plans:
        scores = [rng.randrange(10) for _ in p.seats]
        ranks = [1 + sum(1 for o in scores if o > s) for s in scores]
        out.append(Outcome(p.number, p.seats, tuple(ranks), tuple(scores), p.deal, p.round, p.table))
    return out


def play_swiss(spec, seed=0):
    rng = random.Random(seed)
    outcomes, rounds = [], []
    for r in range(event.batch_count(spec)):
        plans = event.batch_plans(spec, r, outcomes, first_number=len(outcomes))
        rounds.append(plans)
        outcomes += fake_outcomes(spec, plans, rng)
    return rounds, outcomes


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_swiss_rounds_seat_everyone_and_rotate_the_byes(k):
    for n in FIELDS:
        if n < k:
            continue
        spec = EventSpec("allegory", "swiss", n, k, deals=1, seed=n)
        rounds, outcomes = play_swiss(spec, seed=n)
        assert len(rounds) == schedule.num_rounds(spec)
        assert len(outcomes) == schedule.total_matches(spec)
        tables = event.swiss_history(spec, outcomes)
        check_rounds(tables, n, k, len(rounds))


def partitions(players, k, met):
    """Every way to seat ``players`` at rematch-free tables of k (brute force)."""
    if not players:
        yield []
        return
    head, rest = players[0], players[1:]
    for comp in itertools.combinations(rest, k - 1):
        group = (head, *comp)
        if any(frozenset(p) in met for p in itertools.combinations(group, 2)):
            continue
        left = [e for e in rest if e not in comp]
        for tail in partitions(left, k, met):
            yield [group, *tail]


@pytest.mark.parametrize("n,k", [(4, 2), (6, 2), (8, 2), (10, 2), (7, 2), (6, 3), (9, 3), (7, 3), (8, 4), (10, 4)])
def test_swiss_avoids_rematches_whenever_a_rematch_free_draw_exists(n, k):
    for seed in range(8):
        spec = EventSpec("allegory", "swiss", n, k, rounds=n, seed=seed)
        rng = random.Random(seed)
        outcomes = []
        for r in range(n):
            tables = event.swiss_history(spec, outcomes)
            met = schedule.pairs_of(tables)
            plans = event.batch_plans(spec, r, outcomes, first_number=len(outcomes))
            drawn = {(p.table, tuple(sorted(p.seats))) for p in plans}
            rematch = any(frozenset(pr) in met for _t, seats in drawn for pr in itertools.combinations(seats, 2))
            # who could sit out: those who sat out least (the bye rule)
            played = Counter(e for t in tables for e in t.entries)
            byes = {e: r - played[e] for e in range(n)}
            sitting = n % k
            least = sorted(byes.values())[sitting - 1] if sitting else 0
            must = [e for e in range(n) if sitting and byes[e] < least]
            may = [e for e in range(n) if sitting and byes[e] == least]
            possible = False
            for extra in itertools.combinations(may, sitting - len(must)) if sitting else [()]:
                out = set(must) | set(extra)
                if next(partitions([e for e in range(n) if e not in out], k, met), None) is not None:
                    possible = True
                    break
            assert rematch == (not possible), (n, k, seed, r)
            outcomes += fake_outcomes(spec, plans, rng)


def test_swiss_draws_by_standing():
    spec = EventSpec("allegory", "swiss", 8, 2, rounds=3, seed=5)
    r0 = event.batch_plans(spec, 0, [])
    # the first seat of each table wins round 0
    outcomes = [Outcome(p.number, p.seats, (1, 2), (10, 0), p.deal, p.round, p.table) for p in r0]
    winners = {p.seats[0] for p in r0}
    r1 = event.batch_plans(spec, 1, outcomes, first_number=len(outcomes))
    for p in r1:
        # winners meet winners, losers meet losers
        assert (p.seats[0] in winners) == (p.seats[1] in winners)


def test_seeds_fix_the_schedule_and_differ_between_events():
    a = schedule.static_matches(EventSpec("allegra", "round-robin", 30, 4, deals=2, seed=11))
    b = schedule.static_matches(EventSpec("allegra", "round-robin", 30, 4, deals=2, seed=11))
    c = schedule.static_matches(EventSpec("allegra", "round-robin", 30, 4, deals=2, seed=12))
    assert [p.as_dict() for p in a] == [p.as_dict() for p in b]
    assert [p.seats for p in a] != [p.seats for p in c]
    assert len({p.seed for p in a}) == len(a)  # every match its own cards
    s1, _ = play_swiss(EventSpec("allegory", "swiss", 12, 3, seed=4), seed=1)
    s2, _ = play_swiss(EventSpec("allegory", "swiss", 12, 3, seed=4), seed=1)
    assert [[p.as_dict() for p in r] for r in s1] == [[p.as_dict() for p in r] for r in s2]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"format": "knockout"}, "unknown format"),
        ({"field_size": 1}, "the field must be between 2 and 1000"),
        ({"field_size": 1001}, "the field must be between 2 and 1000"),
        ({"table_size": 7}, "the table size must be between 2 and 6"),
        ({"field_size": 3, "table_size": 4}, "a table of 4 needs at least 4 entries"),
        ({"deals": 0}, "deals must be between 1 and 1000"),
        ({"rounds": True}, "rounds must be a whole number"),
        ({"field_size": 1000, "table_size": 2, "deals": 1000, "rounds": 999}, "at most 500000"),
    ],
)
def test_bad_specs_are_refused_with_the_reason(kwargs, message):
    base = {"game": "allegra", "format": "round-robin", "field_size": 8, "table_size": 4}
    with pytest.raises(ScheduleError, match=message):
        EventSpec(**{**base, **kwargs})


def test_a_field_of_a_thousand_schedules():
    spec = EventSpec("allegra", "swiss", 1000, 4, rounds=2, seed=1)
    rounds, outcomes = play_swiss(spec)
    assert len(outcomes) == 2 * 250
    spec = EventSpec("allegra", "round-robin", 1000, 2, rounds=3, seed=1)
    assert len(schedule.static_matches(spec)) == 1500
