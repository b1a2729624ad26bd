"""95% confidence intervals for tournament standings.

* an entry's mean: Student's t-interval, mean +- t(0.975, n-1) * s / sqrt(n),
  over its per-match points (a duplicate event: over its per-deal means, since
  the rotations of one deal share their cards and are not independent);
* either cut to the range the quantity can take (points per match lie in
  [0, 1], a difference of two in [-1, 1]): the t-interval is symmetric and
  would reach past an end around a mean near it;
* the difference of two entries: Welch's t-interval (unequal variances,
  Welch-Satterthwaite degrees of freedom) over their per-match points, or, in
  a duplicate event, the t-interval of the per-deal differences (paired by
  deal: the luck of the cards cancels).

The t quantile is computed here, with the standard library only (SciPy, for
this one function, was 215 MB of the image): Student's t upper tail is half a
regularized incomplete beta function, evaluated by its continued fraction,
and inverted by Halley's method kept inside a bracket. From 10,000 degrees
of freedom on, the Cornish-Fisher expansion around the normal quantile is used
instead: there it is exact to rounding, while the continued fraction slows
down and the log-gamma differences lose digits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float | None  # None: too few observations (n < 2) for an interval
    high: float | None
    n: int
    method: str

    @property
    def half_width(self) -> float | None:
        return None if self.low is None else (self.high - self.low) / 2

    def within(self, lowest: float, highest: float) -> Interval:
        """The interval cut to the values the quantity can take: a
        t-interval is symmetric, so around a mean near an end of the range
        (every game won, or few games) it reaches past it."""
        if self.low is None:
            return self
        return Interval(self.estimate, max(self.low, lowest), min(self.high, highest), self.n, self.method)

    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n, "method": self.method}


@functools.lru_cache(maxsize=4096)  # standings ask again and again for the same whole df
def t_quantile(df: float, probability: float = 0.5 + LEVEL / 2) -> float:
    """The `probability` quantile of Student's t distribution with `df` (> 0,
    not necessarily whole: Welch) degrees of freedom."""
    if not (df > 0 and math.isfinite(df)):
        raise ValueError(f"degrees of freedom must be positive and finite, not {df!r}")
    if not 0 < probability < 1:
        raise ValueError(f"probability must be strictly between 0 and 1, not {probability!r}")
    if probability == 0.5:
        return 0.0
    tail = min(probability, 1 - probability)  # the quantile of the upper tail, > 0
    sign = 1.0 if probability > 0.5 else -1.0
    if df >= _DF_ASYMPTOTIC:
        return sign * _cornish_fisher(df, tail)
    return sign * _solve_upper_tail(df, tail)


# Above this the four-term Cornish-Fisher expansion errs by about g5(z) / df^5,
# far below rounding; below it the continued fraction is fast and exact to
# about 1e-12 (the log-gamma difference in its prefactor loses digits as df grows).
_DF_ASYMPTOTIC = 1e4


def _cornish_fisher(df: float, tail: float) -> float:
    # Abramowitz & Stegun 26.7.5: t = z + g1/df + g2/df^2 + g3/df^3 + g4/df^4
    z = NormalDist().inv_cdf(1 - tail)
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _solve_upper_tail(df: float, tail: float) -> float:
    """The t > 0 with P(T > t) = tail, by Halley's method (the tail's first and
    second derivatives are the density and a simple multiple of it), falling
    back to bisection whenever a step would leave the bracket of the root."""
    low, high = 0.0, math.inf
    t = _cornish_fisher(df, tail)  # close to start with, except for small df
    for _ in range(100):
        excess = _t_upper_tail(df, t) - tail
        if excess == 0:
            return t
        if excess > 0:
            low = t
        else:
            high = t
        newton = excess / _t_density(df, t)
        candidate = t + newton / (1 - newton * (df + 1) * t / (2 * (df + t * t)))
        # converged well below the 1e-9 asked for: a further step would only
        # move within the rounding of the tail (larger for large df)
        if abs(candidate - t) <= 1e-12 * t:
            return candidate
        if not low < candidate < high:
            candidate = 2 * low + 1 if high == math.inf else (low + high) / 2
        t = candidate
    return t  # not reached: the bracket halves at worst


def _t_density(df: float, t: float) -> float:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _t_upper_tail(df: float, t: float) -> float:
    """P(T > t) for t >= 0: I_x(df/2, 1/2) / 2 with x = df / (df + t^2)."""
    x = df / (df + t * t)
    one_minus_x = t * t / (df + t * t)  # not 1 - x: that loses digits for small t
    return _regularized_beta(df / 2, 0.5, x, one_minus_x) / 2


def _regularized_beta(a: float, b: float, x: float, one_minus_x: float) -> float:
    """I_x(a, b); the continued fraction converges fast for x < (a+1)/(a+b+2),
    and I_x(a, b) = 1 - I_(1-x)(b, a) covers the other side."""
    if x <= 0:
        return 0.0
    if one_minus_x <= 0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _regularized_beta(b, a, one_minus_x, x)
    log_front = a * math.log(x) + b * math.log(one_minus_x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    return math.exp(log_front) / a * _beta_continued_fraction(a, b, x)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction 1 / (1 + d1 / (1 + d2 / (1 + ...))) of I_x(a, b),
    with d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)) and d(2m) = m(b-m) x /
    ((a+2m-1)(a+2m)), evaluated front to back by the modified Lentz method."""
    tiny = 1e-300  # stands in for a zero denominator
    value = tiny  # f, for the leading term b0 = 0
    numerator_ratio = value  # C
    denominator_ratio = 0.0  # D
    for n in range(10_000):  # a few hundred at most for df < _DF_ASYMPTOTIC
        if n == 0:
            coefficient = 1.0
        elif n % 2:
            m = (n - 1) // 2
            coefficient = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            m = n // 2
            coefficient = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        denominator_ratio = 1 + coefficient * denominator_ratio
        denominator_ratio = 1 / (denominator_ratio if abs(denominator_ratio) > tiny else tiny)
        numerator_ratio = 1 + coefficient / numerator_ratio
        if abs(numerator_ratio) < tiny:
            numerator_ratio = tiny
        factor = numerator_ratio * denominator_ratio
        value *= factor
        if abs(factor - 1) < 1e-15:
            break
    return value


def _mean_var(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, var


def mean_interval(values: Sequence[float], method: str = "t") -> Interval:
    n = len(values)
    if n == 0:
        return Interval(0.0, None, None, 0, method)
    mean, var = _mean_var(values)
    if n < 2:
        return Interval(mean, None, None, n, method)
    half = t_quantile(n - 1) * math.sqrt(var / n)
    return Interval(mean, mean - half, mean + half, n, method)


def welch_interval(x: Sequence[float], y: Sequence[float]) -> Interval:
    nx, ny = len(x), len(y)
    if nx == 0 or ny == 0:
        return Interval(0.0, None, None, min(nx, ny), "welch")
    mx, vx = _mean_var(x)
    my, vy = _mean_var(y)
    diff = mx - my
    if nx < 2 or ny < 2:
        return Interval(diff, None, None, min(nx, ny), "welch")
    ax, ay = vx / nx, vy / ny
    se2 = ax + ay
    if se2 == 0:
        return Interval(diff, diff, diff, min(nx, ny), "welch")
    df = se2**2 / (ax**2 / (nx - 1) + ay**2 / (ny - 1))
    half = t_quantile(df) * math.sqrt(se2)
    return Interval(diff, diff - half, diff + half, min(nx, ny), "welch")


def paired_interval(differences: Sequence[float]) -> Interval:
    return mean_interval(differences, method="paired-by-deal")
