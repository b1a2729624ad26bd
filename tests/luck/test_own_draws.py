"""benchmarks/luck_variance.py's ``own-draws`` (decision 304): how much of
a result the bots' own random draws decide, the floor under what any
correction for chance keeps; on cases whose answer is known and on real
matches of the built-in bots."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from tests.benchmarks import benchmark


def _plays(n: int, k: int, own_sd: float, chance_sd: float, credited: float, seed: int = 1):
    """n draws of a k-seat line-up, the seats rotated: each result is a
    seat-and-rotation advantage plus the bots' own part (shared by the two
    deals of a draw) plus chance's part (each deal its own); the luck
    credited is ``credited`` times chance's part."""
    rng = random.Random(seed)
    plays = []
    for i in range(n):
        rotation = i % k
        own = [rng.gauss(0, own_sd) for _ in range(k)]
        both = []
        for _deal in range(2):
            chance = [rng.gauss(0, chance_sd) for _ in range(k)]
            pay = [0.4 * j - 0.8 * rotation + o + c for j, (o, c) in enumerate(zip(own, chance))]
            both.append((pay, [credited * c - 0.2 for c in chance]))
        plays.append((rotation, both))
    return plays


def test_a_perfect_chance_correction_keeps_exactly_what_the_bots_draws_decide():
    lv = benchmark("luck_variance")
    figures = lv.own_draws_figures(_plays(3000, 4, own_sd=1.0, chance_sd=1.0, credited=1.0))
    assert figures["floor"] == pytest.approx(0.5, abs=0.04)
    assert figures["kept"] == pytest.approx(0.5, abs=0.04)  # it reaches the floor and goes no lower
    none_credited = lv.own_draws_figures(_plays(3000, 4, own_sd=1.0, chance_sd=1.0, credited=0.0))
    assert none_credited["kept"] == pytest.approx(1.0)


def test_the_floor_follows_the_share_of_the_bots_draws():
    lv = benchmark("luck_variance")
    assert lv.own_draws_figures(_plays(3000, 2, own_sd=0.5, chance_sd=1.0, credited=0.0))["floor"] == pytest.approx(
        0.2, abs=0.04
    )
    assert lv.own_draws_figures(_plays(3000, 2, own_sd=0.0, chance_sd=1.0, credited=0.0))["floor"] == pytest.approx(
        0.0, abs=0.04
    )


def test_seated_at_random_the_seat_s_advantage_is_in_both_and_a_set_takes_it_out():
    """About each bot's mean over every seat, the seats' advantage (here a
    variance of 0.8, against 1 from the bots' draws and 1 from chance) is
    shared by a draw's two deals (played in the same seats), and no chance
    correction moves it: the floor seated at random is (1 + 0.8) / 2.8. A
    set of every rotation takes the advantage out, so against plain single
    games seated at random it can save up to 2.8 / 1 times."""
    lv = benchmark("luck_variance")
    figures = lv.own_draws_figures(_plays(6000, 4, own_sd=1.0, chance_sd=1.0, credited=1.0))
    assert figures["floor_seated"] == pytest.approx(1.8 / 2.8, abs=0.04)
    assert figures["kept_seated"] == pytest.approx(1.8 / 2.8, abs=0.04)
    assert figures["most_singles"] == pytest.approx(2.8 / 1.8, abs=0.1)
    assert figures["most_sets"] == pytest.approx(2.8, abs=0.2)
    assert figures["most"] == pytest.approx(2.0, abs=0.15)


def test_a_bot_s_own_draws_do_not_depend_on_the_deal():
    """On real matches: a bot seeded by its draw alone makes the same
    random draws on any deal, and another draw's differ."""
    lv = benchmark("luck_variance")

    def first_draws(key: str, deal: int) -> list[float]:
        player = lv.OwnDraws(lv.make("weak-greedy", "allegory"), key)
        player.start(SimpleNamespace(seat=1, seed=deal))  # what the bots' start reads
        return [player._inner._rng.random() for _ in range(3)]

    assert first_draws("7", 1) == first_draws("7", 2)
    assert first_draws("7", 1) != first_draws("8", 1)


def test_where_no_bot_draws_the_deals_share_nothing():
    """Allegory's greedy bot and its chips-weakened copy draw nothing: a
    draw's two deals then share no part of the result, and the floor is
    noise about 0 (were a draw's two deals one deal it would be 1)."""
    lv = benchmark("luck_variance")
    plays = lv.own_draws_plays("allegory", "chips", 80)
    assert abs(lv.own_draws_figures(plays)["floor"]) < 0.3
    assert [rotation for rotation, _ in plays[:4]] == [0, 1, 0, 1]
