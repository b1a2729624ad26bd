"""95% confidence intervals for tournament standings.

* an entry's mean: Student's t-interval, mean +- t(0.975, n-1) * s / sqrt(n),
  over its per-match points (a duplicate event: over its per-deal means, since
  the rotations of one deal share their cards and are not independent);
* the difference of two entries: Welch's t-interval (unequal variances,
  Welch-Satterthwaite degrees of freedom) over their per-match points, or, in
  a duplicate event, the t-interval of the per-deal differences (paired by
  deal: the luck of the cards cancels).

The t quantile is SciPy's (``scipy.special.stdtrit``, the inverse of
Student's t distribution function).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

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

    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n, "method": self.method}


def t_quantile(df: float) -> float:
    # scipy.special, not scipy.stats: the same quantile, a fraction of the import time
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + LEVEL / 2))


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
