"""The Student-t quantile behind the confidence intervals, computed without
SciPy: against tabulated values, the closed forms for 1 and 2 degrees of
freedom, and the normal limit."""

from __future__ import annotations

import math
import subprocess
import sys
from statistics import NormalDist

import pytest

from cardroom.tournament.stats import t_quantile

# t(0.975, df), the two-sided 95% quantile, to 12 significant digits (they
# agree with SciPy 1.17 `stdtrit` to all of them)
TABULATED_975 = {
    1: 12.7062047362,
    2: 4.30265272975,
    3: 3.18244630528,
    4: 2.77644510520,
    5: 2.57058183564,
    10: 2.22813885196,
    30: 2.04227245630,
    100: 1.98397151845,
    1000: 1.96233908082,
}


@pytest.mark.parametrize(("df", "expected"), sorted(TABULATED_975.items()))
def test_tabulated_two_sided_95_percent_quantiles(df, expected):
    assert t_quantile(df) == pytest.approx(expected, rel=1e-9)


LEVELS = [0.6, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.4, 0.1, 0.025, 1e-4]


@pytest.mark.parametrize("probability", LEVELS)
def test_one_degree_of_freedom_is_the_cauchy_quantile(probability):
    assert t_quantile(1, probability) == pytest.approx(math.tan(math.pi * (probability - 0.5)), rel=1e-9)


@pytest.mark.parametrize("probability", LEVELS)
def test_two_degrees_of_freedom_closed_form(probability):
    expected = (2 * probability - 1) / math.sqrt(2 * probability * (1 - probability))
    assert t_quantile(2, probability) == pytest.approx(expected, rel=1e-9)


def test_symmetric_and_zero_at_the_median():
    assert t_quantile(7, 0.5) == 0.0
    for df in (1, 3.5, 20, 5e4):
        assert t_quantile(df, 0.025) == pytest.approx(-t_quantile(df, 0.975), rel=1e-12)


def test_fractional_degrees_of_freedom_lie_between_their_neighbours():
    # Welch's degrees of freedom are not whole: the quantile falls as df grows
    values = [t_quantile(df) for df in (6, 6.25, 6.8146, 7, 7.5)]
    assert values == sorted(values, reverse=True)
    assert values[2] == pytest.approx(2.3777283564, rel=1e-9)  # SciPy 1.17 stdtrit


def test_large_degrees_of_freedom_are_continuous_and_tend_to_the_normal():
    # the computation changes method at df = 1e4; the two must agree there
    below, above = t_quantile(9999.999999), t_quantile(10000.0)
    assert below == pytest.approx(above, rel=1e-11)
    assert below > above
    z = NormalDist().inv_cdf(0.975)
    assert t_quantile(1e4) == pytest.approx(1.96020123989, rel=1e-9)
    assert t_quantile(1e9) == pytest.approx(z, rel=1e-8)
    assert t_quantile(1e9) > z


@pytest.mark.parametrize("df", [0, -1, math.nan, math.inf])
def test_bad_degrees_of_freedom_are_refused(df):
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(df)


@pytest.mark.parametrize("probability", [0, 1, -0.5, 1.5, math.nan])
def test_bad_probabilities_are_refused(probability):
    with pytest.raises(ValueError, match="probability"):
        t_quantile(3, probability)


def test_works_without_scipy_installed():
    # the image no longer ships SciPy: a blocked import must not matter
    script = (
        "import sys; sys.modules['scipy'] = None; sys.modules['numpy'] = None\n"
        "from cardroom.tournament import stats\n"
        "print(repr(stats.mean_interval([1, 0, 1, 1, 0]).half_width))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(0.680087, abs=1e-6)
