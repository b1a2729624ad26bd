"""Pearson's chi-square goodness-of-fit test with the standard library only
(scipy is not a dependency): the p-value is the regularized upper incomplete
gamma function Q(k/2, x/2), by its series below a + 1 and its continued
fraction above (the usual split; both converge fast there)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping


def gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), for a > 0, x >= 0."""
    if x <= 0:
        return 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # P by its series, Q = 1 - P
        term = total = 1.0 / a
        k = a
        for _ in range(10_000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    # Q by Lentz's continued fraction
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_prefix) * h


def chi_square_p(observed: Counter, expected_weights: Mapping) -> float:
    """p-value of ``observed`` counts against the distribution proportional to
    ``expected_weights`` (every category with positive weight is a cell)."""
    total_weight = sum(expected_weights.values())
    draws = sum(observed.values())
    stray = set(observed) - {k for k, w in expected_weights.items() if w > 0}
    if stray:
        return 0.0  # a value that cannot be there came out
    cells = [(observed.get(k, 0), draws * w / total_weight) for k, w in expected_weights.items() if w > 0]
    if len(cells) < 2:
        return 1.0
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    return gamma_q((len(cells) - 1) / 2, statistic / 2)
