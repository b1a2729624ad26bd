"""The "about N more matches" (ladder.ranking.matches_to_separate, decision
269) and the simulation that measures it (benchmarks/ranking_more_matches.py):
its pieces on known cases, and a small run of it end to end."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from ladder import ranking

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import ranking_more_matches as sim  # noqa: E402


def test_the_inverse_gaussian_median_is_the_first_passage_median():
    # known values: IG(1, 1) has median 0.6758 (its distribution function at it is 1/2)
    assert ranking._inverse_gaussian_median(1.0, 1.0) == pytest.approx(0.67584, abs=1e-4)
    assert ranking._inverse_gaussian_median(5.0, 5.0) == pytest.approx(5 * 0.67584, abs=5e-4)  # it scales
    # a Brownian motion with drift 1 from 0 to the level 1, simulated: the same median
    rng, dt, times = random.Random(4), 2e-3, []
    for _ in range(600):
        x = t = 0.0
        while x < 1.0:
            x += dt + rng.gauss(0.0, math.sqrt(dt))
            t += dt
        times.append(t)
    assert sorted(times)[300] == pytest.approx(0.6758, abs=0.06)
    # nearly normal when the shape is large: the median nears the mean, from below
    assert 0.99 < ranking._inverse_gaussian_median(1.0, 100.0) < 1.0


def _pair(gap: float, variance: float, matches: int) -> ranking.Fit:
    """Two versions ``gap`` apart, each strength's variance ``variance``
    (independent), ``matches`` matches each, one outcome a match."""
    cov = ((variance, 0.0), (0.0, variance))
    return ranking.Fit((1, 2), (gap / 2, -gap / 2), cov, (matches, matches), (matches, matches), matches)


def test_a_wider_gap_or_more_matches_behind_it_needs_fewer_more():
    wait = ranking.matches_to_separate(_pair(0.4, 0.04, 20), 0, 1)  # z = 0.4 / sqrt(0.08) = 1.41 < t
    assert 1 <= wait < ranking.MORE_MATCHES_CAP
    assert ranking.matches_to_separate(_pair(0.6, 0.04, 20), 0, 1) < wait
    # the same estimates from twice the matches: further along, less to wait
    assert ranking.matches_to_separate(_pair(0.4, 0.02, 40), 0, 1) < wait
    # the mean path's own crossing (t at its degrees of freedom), which the median comes well before
    t = ranking.quantile(20 + 1)
    crossing = 20 * ((t / 0.4) ** 2 * 0.08 - 1)
    assert wait < 0.8 * crossing
    assert ranking.matches_to_separate(_pair(0.0, 0.04, 20), 0, 1) == math.inf  # level: no end in sight


def test_settled_needs_every_pair_apart_so_two_close_pairs_wait_longer_than_one():
    # versions 2 and 3 the same distance below 1, independent estimates
    cov = ((0.04, 0.0, 0.0), (0.0, 0.04, 0.0), (0.0, 0.0, 0.04))
    model = ranking.Fit((1, 2, 3), (0.4, 0.0, 0.0), cov, (20, 20, 20), (20, 20, 20), 30)
    one = ranking.matches_to_separate(model, 0, 1)
    assert ranking.more_matches(model, 0, [(1, 0.4, 0.0)]) == math.ceil(one)
    both = ranking.more_matches(model, 0, [(1, 0.4, 0.0), (2, 0.4, 0.0)])
    assert both > one  # each pair's chance must reach 1/sqrt(2), not 1/2
    chance = ranking.separation_chance(model, 0, 1)
    assert chance(both) ** 2 == pytest.approx(0.5, abs=0.02)
    assert chance(0.0) == 0.0 and chance(1e6) == pytest.approx(1.0)


def test_the_simulation_shows_what_rank_shows():
    rng = random.Random(3)
    run = sim.simulate("graded", rng, horizon=12, every=4)
    assert len(run.checkpoints) == 3 and sorted(run.truth) == list(range(1, 9))
    outcomes = []
    rng = random.Random(5)
    for _ in range(60):
        a, b = rng.sample(range(1, 9), 2)
        won = float(rng.random() < 0.5 + 0.05 * (b - a))
        outcomes.append(ranking.Outcome((a, b), (won, 1 - won)))
    shown, places = sim.view(outcomes)
    for r in ranking.rank(outcomes):
        assert (shown[r.version].settled, shown[r.version].after, places[r.version]) == (
            r.settled,
            r.more_matches,
            r.place,
        )
        assert (shown[r.version].before is None) == r.settled


def test_kaplan_meier_on_a_known_sample():
    # 4 events at 1, 2, 3, 4 and one censored at 2.5: S drops 1/5, 1/4, then 1/2 of the 2 left at 3
    rows = [(1.0, True), (2.0, True), (2.5, False), (3.0, True), (4.0, True)]
    assert sim.kaplan_meier_quantiles(rows) == [2.0, 3.0, 4.0]
    assert sim.kaplan_meier_quantiles([(1.0, True), (5.0, False), (6.0, False)], (0.25, 0.5)) == [1.0, math.inf]


def test_a_small_run_measures_both_projections():
    report = sim.main(["--runs", "2", "--horizon", "40", "--every", "2", "--fields", "graded", "--out", "/dev/null"])
    row = report["results"]["graded"]
    for which in ("before", "after"):
        assert row[which]["settled_in_run"]["settled"] <= row[which]["settled_in_run"]["n"]
        assert len(row[which]["kaplan_meier"]["quartiles"]) == 3
    assert 0.0 <= row["settled_within_one"]["share"] <= 1.0
