"""ladder.ranking: the adjusted rating, its interval, place and "settled"
(docs/ladder.md, "Adjusted rating"). No database."""

from __future__ import annotations

import math
import random

import pytest

from ladder import ranking
from ladder.ranking import Outcome, fit, rank


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _two_player(strengths: dict[int, float], matches: int, rng: random.Random) -> list[Outcome]:
    versions = sorted(strengths)
    out = []
    for _ in range(matches):
        a, b = rng.sample(versions, 2)
        won = 1.0 if rng.random() < _sigmoid(strengths[a] - strengths[b]) else 0.0
        out.append(Outcome((a, b), (won, 1.0 - won)))
    return out


def _mixed_outcomes() -> list[Outcome]:
    rng = random.Random(5)
    outcomes = _two_player({1: 0.8, 2: 0.0, 3: -0.8}, 120, rng)
    outcomes += [Outcome((1, 2, 3), (1.0, 0.5, 0.0), matches=3), Outcome((3, 2, 1), (0.5, 1.0, 0.0))]
    outcomes += [Outcome((1, 3), (1.2, -0.2)), Outcome((2, 3), (0.4, 0.6))]  # adjusted payoffs
    outcomes += [Outcome((2, 1, 3), (0.0, 1.0, 0.5)), Outcome((1, 3, 2), (0.5, 0.0, 1.0))]
    return outcomes


def test_fit_is_where_expected_points_equal_actual_points():
    """The documented formula, recomputed: at the fit every version's
    actual points (each outcome counting `matches` times) equal its expected
    points plus theta / PRIOR_SD^2 (the normal prior); and, for each seat
    of each table size, the single matches' points at that seat equal their
    expected points plus its advantage / PRIOR_SD^2. A set (matches = k)
    gives every version every seat, so it has no seat term."""
    outcomes = _mixed_outcomes()
    model = fit(outcomes, seats=True)
    advantage = dict(model.seat_advantages)
    assert sorted(advantage) == [2, 3] and all(len(advantage[k]) == k for k in advantage)
    theta = {v: model.theta[i] for v, i in model.index.items()}

    def strength(o: Outcome, seat: int) -> float:
        return theta[o.versions[seat]] + (advantage[len(o.versions)][seat] if o.matches == 1 else 0.0)

    def expected(o: Outcome, seat: int) -> float:
        k = len(o.versions)
        return sum(_sigmoid(strength(o, seat) - strength(o, u)) for u in range(k) if u != seat) / (k - 1)

    for v in model.versions:
        actual = wanted = 0.0
        for o in outcomes:
            if v in o.versions:
                seat = o.versions.index(v)
                actual += o.matches * o.payoffs[seat]
                wanted += o.matches * expected(o, seat)
        assert actual == pytest.approx(wanted + theta[v] / ranking.PRIOR_SD**2, abs=1e-8)
    for k, by_seat in advantage.items():
        for seat, delta in enumerate(by_seat):
            single = [o for o in outcomes if len(o.versions) == k and o.matches == 1]
            actual = sum(o.payoffs[seat] for o in single)
            wanted = sum(expected(o, seat) for o in single)
            assert actual == pytest.approx(wanted + delta / ranking.PRIOR_SD**2, abs=1e-8)


def test_the_model_of_record_fits_the_strengths_alone():
    """bradley-terry-points@2: no seat advantages (decision 292)."""
    outcomes = _mixed_outcomes()
    assert ranking.MODEL == "bradley-terry-points@2"
    model = fit(outcomes)
    assert model.seat_advantages == ()
    theta = {v: model.theta[i] for v, i in model.index.items()}
    for v in model.versions:
        actual = expected = 0.0
        for o in outcomes:
            if v not in o.versions:
                continue
            k = len(o.versions)
            seat = o.versions.index(v)
            actual += o.matches * o.payoffs[seat]
            expected += o.matches * sum(_sigmoid(theta[v] - theta[u]) for u in o.versions if u != v) / (k - 1)
        assert actual == pytest.approx(expected + theta[v] / ranking.PRIOR_SD**2, abs=1e-8)


def _seated(strengths: dict[int, float], advantage: tuple[float, float], matches: int, rng) -> list[Outcome]:
    """2-player matches, seats shuffled as the scheduler does, the second
    seat's log-odds raised by advantage[1] - advantage[0]."""
    versions = sorted(strengths)
    out = []
    for _ in range(matches):
        a, b = rng.sample(versions, 2)
        edge = strengths[a] + advantage[0] - strengths[b] - advantage[1]
        won = 1.0 if rng.random() < _sigmoid(edge) else 0.0
        out.append(Outcome((a, b), (won, 1.0 - won)))
    return out


def test_a_seat_s_advantage_is_fitted_and_not_taken_for_strength():
    """Allegory at 2 players: the second seat wins about 88% of matches
    between equal bots (decision 292). Fitted, the advantage comes out near
    the truth, the strengths' difference too, and the two versions are told
    apart with more confidence (their difference in standard deviations)
    than when the seat is left as noise; with no seat advantage in the
    results, fitting one costs next to nothing."""
    rng = random.Random(29)
    truth = {1: 0.3, 2: 0.0, 3: -0.3}

    def z(model) -> float:
        i, j = model.index[1], model.index[3]
        return (model.theta[i] - model.theta[j]) / model.difference_sd(i, j)

    clearer, gained, lost = 0, [], []
    for _ in range(20):
        outcomes = _seated(truth, (-1.0, 1.0), 600, rng)
        with_seats, without = fit(outcomes, seats=True), fit(outcomes)
        ((size, (first, second)),) = with_seats.seat_advantages
        assert size == 2 and second - first == pytest.approx(2.0, abs=0.6)
        i, j = with_seats.index[1], with_seats.index[3]
        assert with_seats.theta[i] - with_seats.theta[j] == pytest.approx(0.6, abs=0.45)
        clearer += z(with_seats) > z(without)
        gained.append(z(with_seats) / z(without))
        level = _seated(truth, (0.0, 0.0), 600, rng)
        lost.append(z(fit(level, seats=True)) / z(fit(level)))
    assert clearer >= 17 and sum(gained) / len(gained) > 1.2
    assert sum(lost) / len(lost) == pytest.approx(1.0, abs=0.03)


def test_sets_alone_fit_no_seat_advantage():
    outcomes = [Outcome((1, 2), (0.75, 0.25), matches=2), Outcome((2, 3), (0.5, 0.5), matches=2)]
    assert fit(outcomes, seats=True).seat_advantages == ()
    assert [r.rating for r in rank(outcomes, seats=True)] == [r.rating for r in rank(outcomes)]


def test_points_beyond_any_expectation_still_give_a_finite_rating():
    """Adjusted points can add up to more than any strength is expected to
    score (a version that won every match, with luck against it): the prior
    keeps the fit finite."""
    ranks = rank([Outcome((1, 2), (1.4, -0.4)) for _ in range(20)])
    assert all(math.isfinite(r.rating) and math.isfinite(r.low) and math.isfinite(r.high) for r in ranks)
    assert ranks[0].version == 1 and ranks[0].rating > 2000


def test_two_versions_recover_the_odds_on_elo_s_scale():
    # 3 wins in 4, 400 times: odds 3 to 1, 400 / ln 10 * ln 3 = 190.8 points
    # apart; each seat order as often with either result (no seat advantage)
    won = [(1.0, 0.0) if i % 4 else (0.0, 1.0) for i in range(1600)]  # 7's, 9's
    outcomes = [Outcome((7, 9), w) if (i // 4) % 2 else Outcome((9, 7), (w[1], w[0])) for i, w in enumerate(won)]
    ranks = rank(outcomes)
    assert [r.version for r in ranks] == [7, 9]
    gap = ranks[0].rating - ranks[1].rating
    assert gap == pytest.approx(400 / math.log(10) * math.log(3), rel=0.01)
    assert (ranks[0].rating + ranks[1].rating) / 2 == pytest.approx(1500.0)
    assert ranks[0].low < ranks[0].rating < ranks[0].high
    assert [r.matches for r in ranks] == [1600, 1600]


def test_interval_covers_the_true_difference_about_95_percent():
    rng = random.Random(11)
    truth = {1: 0.6, 2: 0.0, 3: -0.6}
    covered, runs = 0, 300
    for _ in range(runs):
        model = fit(_two_player(truth, 150, rng))
        i, j = model.index[1], model.index[3]
        estimate = model.theta[i] - model.theta[j]
        covered += abs(estimate - 1.2) <= ranking.Z95 * model.difference_sd(i, j)
    assert 0.91 <= covered / runs <= 0.99


def test_interval_narrows_when_payoffs_vary_less():
    """The sandwich is built on the residuals: the same expected points with
    less noise (payoffs 0.75/0.25 every match, against wins 3 times in 4)
    give a narrower interval: what adjusted payoffs are for."""

    def seated(i: int, payoffs: tuple[float, float]) -> Outcome:  # each seat order as often
        return Outcome((1, 2), payoffs) if (i // 4) % 2 else Outcome((2, 1), (payoffs[1], payoffs[0]))

    noisy = [seated(i, (1.0, 0.0) if i % 4 else (0.0, 1.0)) for i in range(200)]
    steady = [seated(i, (0.75, 0.25)) for i in range(200)]
    width = {}
    for name, outcomes in (("noisy", noisy), ("steady", steady)):
        top = rank(outcomes)[0]
        width[name] = top.high - top.low
    assert rank(noisy)[0].rating == pytest.approx(rank(steady)[0].rating, abs=1e-6)
    assert width["steady"] < width["noisy"] / 4


def test_a_well_separated_field_settles_and_a_new_one_does_not():
    rng = random.Random(3)
    truth = {v: -0.7 * v for v in range(1, 9)}
    settled = rank(_two_player(truth, 4000, rng))
    assert [r.version for r in settled] == list(range(1, 9))
    assert [r.place for r in settled] == list(range(1, 9))
    assert all(r.settled and r.more_matches is None for r in settled)
    early = rank(_two_player(truth, 16, random.Random(4)))
    assert not any(r.settled for r in early)
    assert all(r.more_matches is not None and r.more_matches >= 1 for r in early)


def test_more_matches_shrinks_as_matches_come_in():
    truth = {v: -0.4 * v for v in range(1, 9)}
    rng = random.Random(8)
    outcomes = _two_player(truth, 200, rng)
    before = {r.version: r.more_matches for r in rank(outcomes)}
    outcomes += _two_player(truth, 800, rng)
    after = {r.version: r.more_matches for r in rank(outcomes)}
    waiting = [v for v, more in before.items() if more is not None]
    assert len(waiting) >= 4
    assert all(after[v] is None or after[v] < before[v] for v in waiting)


def test_settled_means_within_one_place_of_the_truth():
    """Over many simulated ladders of close versions, at least 90% of the
    versions shown settled are within one place of their true place."""
    truth = {v: -0.25 * v for v in range(1, 9)}
    rng = random.Random(21)
    shown = right = 0
    for _ in range(40):
        for r in rank(_two_player(truth, 600, rng)):
            if r.settled:
                shown += 1
                right += abs(r.place - r.version) <= 1
    assert shown >= 40
    assert right / shown >= 0.9


def test_sets_count_their_matches_and_multi_player_tables_rank():
    rng = random.Random(2)
    truth = {1: 1.0, 2: 0.3, 3: -0.3, 4: -1.0}
    outcomes = []
    for _ in range(300):
        seats = rng.sample(sorted(truth), 4)
        # places by a noisy strength: a Plackett-Luce-like table of four
        noisy = sorted(seats, key=lambda v: -(truth[v] + rng.gauss(0, 1.2)))
        points = {v: (3 - p) / 3 for p, v in enumerate(noisy)}
        outcomes.append(Outcome(tuple(seats), tuple(points[v] for v in seats), matches=4))
    ranks = rank(outcomes)
    assert [r.version for r in ranks] == [1, 2, 3, 4]
    assert all(r.matches == 1200 for r in ranks)


def test_deterministic_whatever_the_order():
    rng = random.Random(9)
    outcomes = _two_player({1: 0.1, 2: 0.0, 3: -0.1, 4: 0.0}, 60, rng)
    shuffled = list(outcomes)
    random.Random(1).shuffle(shuffled)
    a, b = rank(outcomes), rank(shuffled)
    assert [r.version for r in a] == [r.version for r in b]
    for x, y in zip(a, b):
        assert x.rating == pytest.approx(y.rating, abs=1e-9)
        assert (x.settled, x.more_matches) == (y.settled, y.more_matches)


def test_a_version_that_won_everything_has_a_finite_rating():
    ranks = rank([Outcome((1, 2), (1.0, 0.0)) for _ in range(30)])
    assert all(math.isfinite(r.rating) and math.isfinite(r.low) and math.isfinite(r.high) for r in ranks)
    assert ranks[0].version == 1


def test_adjusted_payoffs_outside_zero_one_are_accepted():
    ranks = rank([Outcome((1, 2), (1.3, -0.3)), Outcome((2, 1), (0.6, 0.4)), Outcome((1, 2), (0.9, 0.1))])
    assert ranks[0].version == 1


def test_no_outcomes_no_ranks():
    assert rank([]) == []


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome((1,), (1.0,)),
        Outcome((1, 2), (1.0,)),
        Outcome((1, 1), (1.0, 0.0)),
        Outcome((1, 2), (1.0, 0.0), matches=0),
        Outcome((1, 2), (math.nan, 0.0)),
    ],
)
def test_malformed_outcomes_are_refused(outcome):
    with pytest.raises(ValueError):
        rank([outcome])
