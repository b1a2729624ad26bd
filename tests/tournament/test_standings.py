"""Standings: the points table, the tie-breaks and the confidence intervals
against examples worked by hand (the numbers are in the comments)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from cardroom.tournament import stats
from cardroom.tournament.standings import Outcome, compute, rank_points, score_margins


def test_points_table_from_ranks():
    assert rank_points([1, 2]) == [1, 0]
    assert rank_points([1, 1]) == [F(1, 2), F(1, 2)]
    assert rank_points([1, 2, 3, 4]) == [1, F(2, 3), F(1, 3), 0]
    # two share first place: (1 + 2/4... ) -> places 1 and 2 of 3: (1 + 1/2) / 2
    assert rank_points([1, 1, 3]) == [F(3, 4), F(3, 4), 0]
    # two forfeits share the last rank of a 4-table: places 3 and 4: (1/3 + 0) / 2
    assert rank_points([2, 1, 3, 3]) == [F(2, 3), 1, F(1, 6), F(1, 6)]
    # every table hands out k/2 points
    assert sum(rank_points([1, 2, 2, 4, 5, 5])) == 3


def test_score_margin_is_against_the_mean_of_the_others_and_negated_for_allegra():
    assert score_margins([10, 4, 1], lower_is_better=False) == [F(15, 2), F(-3, 2), -6]
    assert score_margins([10, 4, 1], lower_is_better=True) == [F(-15, 2), F(3, 2), 6]


def test_equal_points_are_separated_by_score_margin():
    # A, B, C each win once and lose once (1/2 point a match); margins:
    # A: +6 (10-4), -2 (3-5) -> +2;  B: -6, +6 -> 0;  C: +2, -6 -> -2
    outcomes = [
        Outcome(0, (0, 1), (1, 2), (10, 4)),
        Outcome(1, (0, 2), (2, 1), (3, 5)),
        Outcome(2, (1, 2), (1, 2), (8, 2)),
    ]
    doc = compute("allegory", ["A", "B", "C"], outcomes)
    rows = doc["standings"]
    assert [r["name"] for r in rows] == ["A", "B", "C"]
    assert [r["place"] for r in rows] == [1, 2, 3]
    assert [r["points_per_match"] for r in rows] == [0.5, 0.5, 0.5]
    assert [r["score_margin"] for r in rows] == [2.0, 0.0, -2.0]


def test_equal_points_and_margins_are_separated_head_to_head_in_allegra():
    # Allegra, lower is better. A beats B 5-7 (+2/-2), A loses to C 7-5 (-2),
    # B beats D 4-6 (+2). A and B: 1/2 point a match, margin 0; A beat B.
    outcomes = [
        Outcome(0, (0, 1), (1, 2), (5, 7)),
        Outcome(1, (0, 2), (2, 1), (7, 5)),
        Outcome(2, (1, 3), (1, 2), (4, 6)),
    ]
    doc = compute("allegra", ["A", "B", "C", "D"], outcomes)
    rows = doc["standings"]
    assert [r["name"] for r in rows] == ["C", "A", "B", "D"]
    assert [r["place"] for r in rows] == [1, 2, 3, 4]
    assert rows[1]["score_margin"] == rows[2]["score_margin"] == 0
    assert (rows[1]["head_to_head"], rows[2]["head_to_head"]) == (1, -1)


def test_a_cycle_tied_on_everything_shares_the_place():
    outcomes = [
        Outcome(0, (0, 1), (1, 2), (5, 3)),
        Outcome(1, (1, 2), (1, 2), (5, 3)),
        Outcome(2, (2, 0), (1, 2), (5, 3)),
    ]
    rows = compute("allegory", ["A", "B", "C"], outcomes)["standings"]
    assert [r["place"] for r in rows] == [1, 1, 1]
    assert [r["head_to_head"] for r in rows] == [0, 0, 0]


def test_crosstable_counts_games_and_scores_between_every_two():
    outcomes = [
        Outcome(0, (0, 1, 2), (1, 2, 2), (9, 3, 3)),
        Outcome(1, (1, 2, 0), (1, 2, 3), (9, 5, 1)),
    ]
    cells = compute("allegory", ["A", "B", "C"], outcomes)["crosstable"]["cells"]
    assert cells[0][0] is None
    assert cells[0][1] == {"games": 2, "score": 1.0}  # A beat B once, lost once
    assert cells[1][2] == {"games": 2, "score": 1.5}  # B level with C, then ahead
    assert cells[2][1] == {"games": 2, "score": 0.5}


def test_mean_interval_by_hand():
    # mean 0.6, s^2 = 0.3, se = sqrt(0.06) = 0.24495, t(0.975, 4) = 2.77645
    iv = stats.mean_interval([1, 0, 1, 1, 0])
    assert iv.estimate == pytest.approx(0.6)
    assert iv.half_width == pytest.approx(0.680087, abs=1e-6)
    assert (iv.low, iv.high) == pytest.approx((-0.080087, 1.280087), abs=1e-6)
    assert not iv.excludes_zero()
    assert stats.mean_interval([1]).low is None  # one match: no interval


def test_welch_interval_by_hand():
    # x: mean 0.6, s^2 0.3 (n 5); y = [0, 0, 1, 0]: mean 0.25, s^2 0.25 (n 4)
    # se^2 = 0.06 + 0.0625 = 0.1225 (se 0.35); Welch df = 0.1225^2 /
    # (0.06^2/4 + 0.0625^2/3) = 6.8146; t(0.975, 6.8146) = 2.37773 -> half 0.83221
    iv = stats.welch_interval([1, 0, 1, 1, 0], [0, 0, 1, 0])
    assert iv.estimate == pytest.approx(0.35)
    assert iv.half_width == pytest.approx(0.832206, abs=1e-6)


def test_paired_interval_by_hand():
    # differences 0.5, -0.25, 1: mean 5/12, s^2 = 0.395833, se = 0.363242,
    # t(0.975, 2) = 4.302653 -> half 1.562902
    iv = stats.paired_interval([0.5, -0.25, 1.0])
    assert iv.estimate == pytest.approx(5 / 12)
    assert iv.half_width == pytest.approx(1.562902, abs=1e-6)
    assert iv.method == "paired-by-deal"


def test_standings_carry_intervals_and_duplicate_pairs_by_deal():
    # duplicate, two entries, 2-tables, 3 deals x 2 rotations
    outcomes = []
    results = {0: [(1, 2), (2, 1)], 1: [(1, 2), (1, 2)], 2: [(1, 2), (2, 1)]}  # ranks of entry 0 first
    number = 0
    for deal, pair in results.items():
        for rotation, (r0, r1) in enumerate(pair):
            seats = (0, 1) if rotation == 0 else (1, 0)
            ranks = (r0, r1) if rotation == 0 else (r1, r0)
            outcomes.append(Outcome(number, seats, ranks, (0, 0), deal=deal))
            number += 1
    doc = compute("allegory", ["A", "B"], outcomes, duplicate=True)
    a = doc["standings"][0]
    assert a["name"] == "A" and a["points_per_match"] == pytest.approx(4 / 6)
    # per-deal means of A: 1/2, 1, 1/2 -> t-interval on 3 deals
    assert a["ci95"]["n"] == 3 and a["ci95"]["method"] == "t-per-deal"
    assert a["ci95"]["estimate"] == pytest.approx(2 / 3)
    diff = doc["differences"][0]
    # paired differences by deal: 0, 1, 0
    assert diff["ci95"]["method"] == "paired-by-deal"
    assert diff["ci95"]["estimate"] == pytest.approx(1 / 3)
    deals = doc["deals"]
    assert deals["deals"] == [0, 1, 2]
    row_a = deals["entries"][0]
    assert [c["mean_rank"] for c in row_a["deals"]] == [1.5, 1.0, 1.5]
    assert deals["field_mean_rank"] == [1.5, 1.5, 1.5]
    assert row_a["mean_vs_field"] == pytest.approx(-1 / 6)


def test_intervals_stay_within_the_points_a_match_can_give():
    # A wins 6 of 8 against B: a t-interval on 8 games reaches past 1 for A
    # and below 0 for B; each is cut to its range.
    outcomes = [Outcome(k, (0, 1), (1, 2) if k < 6 else (2, 1), (5, 1)) for k in range(8)]
    doc = compute("allegory", ["A", "B"], outcomes)
    raw = stats.mean_interval([1.0] * 6 + [0.0] * 2)
    assert 0 < raw.low and raw.high > 1  # what was shown before
    a, b = doc["standings"]
    assert a["ci95"]["low"] == pytest.approx(raw.low) and a["ci95"]["high"] == 1.0
    assert b["ci95"]["low"] == 0.0 and b["ci95"]["high"] == pytest.approx(1 - raw.low)

    # A difference of two is cut to [-1, 1]: 3 games all won by A, 2 by B.
    outcomes = [Outcome(k, (0, 1), (1, 2), (5, 1)) for k in range(3)] + [Outcome(3, (0, 2), (2, 1), (1, 5)), Outcome(4, (0, 2), (1, 2), (5, 1))]
    doc = compute("allegory", ["A", "B", "C"], outcomes)
    for pair in doc["differences"]:
        assert -1.0 <= pair["ci95"]["low"] <= pair["ci95"]["estimate"] <= pair["ci95"]["high"] <= 1.0
    assert stats.welch_interval([1.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0]).high > 1  # uncut
    a_b = next(p for p in doc["differences"] if {p["a"], p["b"]} == {0, 1})
    assert a_b["ci95"]["high"] == 1.0
