"""benchmarks/luck_variance.py's ``kept`` (decision 303): the share of a
4-player match's deviation the luck keeps, and the best multiple of the
luck, on cases whose answer is known."""

from __future__ import annotations

import random

import pytest

from tests.benchmarks import benchmark


def _rows(n: int, credited: float, seed: int = 1):
    """n matches of 4 seats, the line-up rotated: each seat's result is a
    seat-and-rotation advantage plus chance's part ``c`` plus the players'
    own part ``e`` (equal variances), and the luck credited is
    ``credited × c``."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rotation = i % 4
        chance = [rng.gauss(0, 1) for _ in range(4)]
        own = [rng.gauss(0, 1) for _ in range(4)]
        pay = [0.3 * seat - 0.2 * rotation + c + e for seat, (c, e) in enumerate(zip(chance, own))]
        rows.append((rotation, pay, [credited * c + 0.7 for c in chance]))
    return rows


def _kept(rows):
    lv = benchmark("luck_variance")
    return lv.kept_shares(lv.deviations_and_luck(rows))


def test_each_bot_s_seat_advantage_is_not_deviation():
    lv = benchmark("luck_variance")
    centred = lv.deviations_and_luck(_rows(400, 1.0))
    for rotation in range(4):
        for seat in range(4):
            cell = [m[seat] for i, m in enumerate(centred) if i % 4 == rotation]
            assert sum(d for d, _ in cell) == pytest.approx(0, abs=1e-9)
            assert sum(lk for _, lk in cell) == pytest.approx(0, abs=1e-9)


def test_luck_that_is_chance_s_part_keeps_the_players_part():
    """Chance is half the variance: luck equal to it keeps half, and 1 is the best multiple."""
    k = _kept(_rows(4000, 1.0))
    assert k["kept"] == pytest.approx(0.5, abs=0.03)
    assert k["kept_lo"] < k["kept"] < k["kept_hi"]
    assert k["beta"] == pytest.approx(1.0, abs=0.05)
    assert k["kept_at_beta"] == pytest.approx(0.5, abs=0.03)


def test_luck_twice_too_large_is_found_so():
    """Credited twice over, the luck keeps everything (0.5 + 0.5 added back)
    and its best multiple is a half, at which it keeps a half again: decision
    302's finding, on a known case."""
    k = _kept(_rows(4000, 2.0))
    assert k["kept"] == pytest.approx(1.0, abs=0.06)
    assert k["beta_lo"] < 0.5 < k["beta_hi"]
    assert k["beta_hi"] < 0.6
    assert k["kept_at_beta"] == pytest.approx(0.5, abs=0.03)


def test_real_matches_name_their_line_ups():
    lv = benchmark("luck_variance")
    assert lv.lineup_names("allegra", "greedy×4") == ["greedy"] * 4
    top, bottom = lv.lineup_names("allegra", "field-top"), lv.lineup_names("allegra", "field-bottom")
    assert len(top) == len(bottom) == 4 and not set(top) & set(bottom)
    assert lv.make("greedy-e0.35", "allegra").name == "greedy-e0.35"
    with pytest.raises(ValueError):
        lv.lineup_names("allegra", "everyone")
