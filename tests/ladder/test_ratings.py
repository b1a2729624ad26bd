"""The rating arithmetic of ladder.rating_math, on its own (no database)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder import rating_math as calc
from ladder.rating_math import Seat, elo_deltas, rate_match

D = Decimal


def seat(elo="1500.00", rank=1, provisional=False, mu=None, sigma=None) -> Seat:
    return Seat(D(elo), calc.MU_START if mu is None else mu, calc.SIGMA_START if sigma is None else sigma, provisional, rank)


# Elo with two decimals between 100 and 3000, as the database stores it.
elos = st.integers(min_value=10_000, max_value=300_000).map(lambda cents: D(cents) / 100)


@st.composite
def matches(draw, min_players=2, max_players=6):
    n = draw(st.integers(min_value=min_players, max_value=max_players))
    ratings = draw(st.lists(elos, min_size=n, max_size=n))
    # Competition ranks as the engine gives them: any keys, ties allowed.
    keys = draw(st.lists(st.integers(min_value=0, max_value=n), min_size=n, max_size=n))
    ranks = [1 + sum(1 for other in keys if other > key) for key in keys]
    provisional = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    mus = draw(st.lists(st.floats(min_value=0, max_value=50), min_size=n, max_size=n))
    sigmas = draw(st.lists(st.floats(min_value=0.5, max_value=calc.SIGMA_START), min_size=n, max_size=n))
    return [Seat(e, m, s, p, r) for e, m, s, p, r in zip(ratings, mus, sigmas, provisional, ranks)]


@settings(max_examples=400, deadline=None)
@given(matches())
def test_the_sum_of_elo_over_a_match_is_unchanged(seats):
    deltas = elo_deltas([s.elo for s in seats], [s.rank for s in seats], [s.provisional for s in seats])
    assert sum(deltas) == 0
    assert all(d == d.quantize(D("0.01")) for d in deltas)
    updates = rate_match(seats)
    assert sum(u.elo for u in updates) == sum(s.elo for s in seats)
    assert all(u.elo.as_tuple().exponent == -2 for u in updates)


@settings(max_examples=200, deadline=None)
@given(matches())
def test_a_sole_winner_gains_and_a_sole_loser_loses(seats):
    updates = rate_match(seats)
    ranks = [s.rank for s in seats]
    for s, u in zip(seats, updates):
        if ranks.count(s.rank) == 1 and s.rank == 1:
            assert u.elo >= s.elo
            assert u.mu > s.mu
        if ranks.count(s.rank) == 1 and s.rank == max(ranks):
            assert u.elo <= s.elo
            assert u.mu < s.mu


@settings(max_examples=200, deadline=None)
@given(matches())
def test_a_strict_winner_within_400_points_of_everyone_gains_elo(seats):
    ranks = [s.rank for s in seats]
    if ranks.count(1) != 1 or max(s.elo for s in seats) - min(s.elo for s in seats) > 400:
        return
    winner = ranks.index(1)
    assert rate_match(seats)[winner].elo > seats[winner].elo


@settings(max_examples=200, deadline=None)
@given(matches())
def test_the_seat_order_does_not_matter_beyond_rounding(seats):
    forward = rate_match(seats)
    backward = rate_match(list(reversed(seats)))[::-1]
    for a, b in zip(forward, backward):
        assert abs(a.elo - b.elo) <= D("0.01") * (len(seats) - 1)
        assert a.mu == pytest.approx(b.mu)
        assert a.sigma == pytest.approx(b.sigma)


@settings(max_examples=200, deadline=None)
@given(matches())
def test_the_same_match_rates_the_same_way_every_time(seats):
    assert rate_match(seats) == rate_match(seats)


def test_two_equal_bots_one_win_moves_half_of_k():
    a, b = rate_match([seat(rank=1), seat(rank=2)])
    assert a.elo == D("1510.00") and b.elo == D("1490.00")  # K 20, expected 0.5


def test_k_is_divided_by_players_minus_one():
    # Four equal bots, no ties: each pair moves K / 3 * 0.5 = 3.33 (rounded
    # per pair, so the sum stays exact); the winner wins three pairs.
    updates = rate_match([seat(rank=r) for r in (1, 2, 3, 4)])
    assert [u.elo for u in updates] == [D("1509.99"), D("1503.33"), D("1496.67"), D("1490.01")]
    assert sum(u.elo for u in updates) == D("6000.00")


def test_a_tie_between_equal_bots_changes_no_elo():
    a, b = rate_match([seat(rank=1), seat(rank=1)])
    assert a.elo == b.elo == D("1500.00")
    assert a.mu == pytest.approx(b.mu)


def test_a_tie_moves_points_from_the_stronger_to_the_weaker():
    strong, weak = rate_match([seat("1700.00", rank=1), seat("1500.00", rank=1)])
    assert strong.elo < D("1700.00") and weak.elo > D("1500.00")
    assert strong.elo + weak.elo == D("3200.00")


def test_an_upset_moves_more_than_an_expected_win():
    upset = rate_match([seat("1400.00", rank=1), seat("1600.00", rank=2)])[0].elo - D("1400.00")
    expected = rate_match([seat("1600.00", rank=1), seat("1400.00", rank=2)])[0].elo - D("1600.00")
    assert upset > expected > 0


def test_provisional_k_for_both_doubles_the_change():
    settled = rate_match([seat(rank=1), seat(rank=2)])[0].elo - D("1500.00")
    new = rate_match([seat(rank=1, provisional=True), seat(rank=2, provisional=True)])[0].elo - D("1500.00")
    assert settled == D("10.00") and new == D("20.00")
    assert calc.ELO_K_PROVISIONAL == 2 * calc.ELO_K


def test_a_pair_with_one_provisional_bot_uses_the_mean_k():
    a, b = rate_match([seat(rank=1, provisional=True), seat(rank=2)])
    assert a.elo == D("1515.00") and b.elo == D("1485.00")  # (40 + 20) / 2 * 0.5


def test_openskill_ordinal_is_conservative():
    assert calc.ordinal(25.0, 8.0) == pytest.approx(1.0)
    assert calc.ordinal(calc.MU_START, calc.SIGMA_START) < calc.MU_START
    winner, loser = rate_match([seat(rank=1), seat(rank=2)])
    assert winner.sigma < calc.SIGMA_START and loser.sigma < calc.SIGMA_START
    assert calc.SIGMA_NEW_VERSION < calc.SIGMA_START


def test_fewer_than_two_seats_is_an_error():
    with pytest.raises(ValueError):
        rate_match([seat()])
    with pytest.raises(ValueError):
        elo_deltas([D("1500.00")] * 2, [1], [False, False])


def test_a_broken_invariant_is_reported(monkeypatch):
    real = calc.elo_deltas
    monkeypatch.setattr(calc, "elo_deltas", lambda *a: [d + D("0.01") for d in real(*a)])
    with pytest.raises(calc.RatingInvariantError):
        rate_match([seat(rank=1), seat(rank=2)])
