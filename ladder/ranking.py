"""The ladder's adjusted rating: a rating with a 95% interval, a place, and
whether that place is settled, from a ladder's results (issue 37; the
formula is docs/ladder.md, "Adjusted rating"; decision 245).

Free of Django, like ladder.rating_math, so it can be checked and recomputed
on its own. Standard library only: the server has no NumPy (and SciPy was
taken out of the image for its size), and the fit is a few dozen lines.

The model (``MODEL``) is Bradley-Terry on rank points. Version ``a`` has a
strength ``theta[a]`` (natural-log odds); at a table of k, seat i is expected
to score the mean over the others of the logistic ``sigma(theta_i -
theta_j)``, which is the expectation of its rank points (the mean of its
pairwise results, decision 184). The fit is where every version's expected
points equal its actual points (each outcome counting ``matches`` times),
less theta_a / PRIOR_SD^2: a normal prior N(0, 2^2) on every strength, as
much information as one drawn match against an average version (a version
with few or no matches sits near the middle, and one that won everything,
or whose adjusted points exceed what any strength can be expected to
score, has a finite rating). It maximises the concave

    L(theta) = sum_o w_o [ sum_i p_i theta_(v_i)
                           - 1/(k-1) sum_(i<j) log(exp theta_(v_i) + exp theta_(v_j)) ]
               - sum_a theta_a^2 / (2 PRIOR_SD^2)

(for k = 2 and results 0/1 it is exactly Bradley-Terry's log-likelihood), by
Newton's method.

With ``seats`` (not of record: measured in decision 292, it did not settle
the ranking sooner), each seat's advantage is fitted too: in a single match
(``matches`` 1, its versions by seat) seat s of a table of k plays at
``theta_v + delta[k][s]``, every delta under the same prior. A seat's
advantage is noise in a single result (in Allegory at 2 players the second
seat wins 88% between equal bots) that the luck cannot remove (a seat's
mean luck is 0). A set's rotations give every version every seat: a set
has no seat term. Balanced seating (decision 293) is what takes the seat
out instead.

The interval is the cluster-robust ("sandwich") one, clustered by
outcome: cov = J^-1 B J^-1 with J = -Hessian of L and B the sum over
outcomes of the outer product of each outcome's score vector (times
G/(G-1), G outcomes), plus the prior's information 1/PRIOR_SD^2, taken
relative to the field's mean (with ``seats``, the strengths' block: the
seat advantages are nuisance parameters); its quantile is Student's t with
(the version's outcomes - 1) degrees of freedom, as the sandwich is too narrow on
few outcomes. Being built on the residuals, it narrows as the payoffs'
variance falls, which is what luck-adjusted payoffs and duplicate sets are
for.

The scale is Elo's: ``rating = 1500 + theta * 400 / ln 10``, so a gap of 400
is odds of 10 to 1 in expected points.

Settled (the place is within one of the true place): every version placed
two or more places away is separated from it, the 95% interval of the two
ratings' difference (from the joint covariance, t with the smaller outcome
count) excluding 0. Then the only
versions that may be in the wrong order relative to it are its two
neighbours, so its true place is its place, one above or one below.

"About N more matches" (``more_matches``, since bradley-terry-points@2;
decision 269): the median number of matches until every version two or
more places away that it is not yet told apart from is first shown
separated from it (``separation_chance``: both versions playing on, t
falling with the outcomes, the first passage of the estimated difference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cardroom.tournament.stats import t_quantile

MODEL = "bradley-terry-points@2"  # @2: "about N more" as decision 269 (the fit is @1's)
# Seat advantages fitted beside the strengths: measured and not of record
# (decision 292); True is the benchmark's "-seatfit" rows.
SEAT_ADVANTAGE = False

RATING_CENTRE = 1500.0
RATING_PER_LOGIT = 400.0 / math.log(10.0)  # Elo's scale
LEVEL = 0.95  # the intervals' coverage
Z95 = 1.959963984540054  # the normal's two-sided 95% quantile
PRIOR_SD = 2.0  # the normal prior's standard deviation of a strength (log-odds)
MORE_MATCHES_CAP = 10_000  # "about this many or more": no end in sight


@dataclass(frozen=True)
class Outcome:
    """One rated result: a ladder match, or a duplicate set rated as one."""

    versions: tuple[int, ...]  # bot-version ids, one per seat (a set: one per bot)
    payoffs: tuple[float, ...]  # each one's rank points (mean over a set's rotations), adjusted when luck is known
    matches: int = 1  # matches it stands for (a set of k rotations: k)


@dataclass(frozen=True)
class Rank:
    version: int
    rating: float  # 1500 + 400 / ln 10 * strength: Elo's scale
    low: float  # 95% interval
    high: float
    matches: int
    place: int  # 1 = best
    settled: bool  # its place is within one of the true place (module docstring)
    more_matches: int | None  # about how many more matches until settled; None once settled


@dataclass(frozen=True)
class Fit:
    """The fitted model: strengths in log-odds and their covariance, versions
    in increasing id order (``index`` maps an id to its row)."""

    versions: tuple[int, ...]
    theta: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    matches: tuple[int, ...]
    counts: tuple[int, ...]  # outcomes each version took part in (the sandwich's clusters)
    outcomes: int
    # by table size, each seat's advantage in log-odds (single matches; decision 292)
    seat_advantages: tuple[tuple[int, tuple[float, ...]], ...] = ()

    @property
    def index(self) -> dict[int, int]:
        return {v: i for i, v in enumerate(self.versions)}

    def rating(self, i: int) -> float:
        return RATING_CENTRE + RATING_PER_LOGIT * self.theta[i]

    def difference_sd(self, i: int, j: int) -> float:
        """Standard deviation of theta_i - theta_j (log-odds)."""
        c = self.covariance
        return math.sqrt(max(c[i][i] + c[j][j] - 2.0 * c[i][j], 0.0))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log1pexp(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _checked(outcomes: Iterable[Outcome]) -> list[Outcome]:
    out = []
    for o in outcomes:
        k = len(o.versions)
        if k < 2 or len(o.payoffs) != k:
            raise ValueError(f"an outcome needs at least 2 versions and one payoff each, not {o!r}")
        if len(set(o.versions)) != k:
            raise ValueError(f"a version holds two seats of one outcome: {o.versions}")
        if o.matches < 1:
            raise ValueError(f"an outcome stands for at least one match, not {o.matches}")
        if not all(math.isfinite(p) for p in o.payoffs):
            raise ValueError(f"payoffs must be finite numbers: {o.payoffs}")
        out.append(o)
    return out


def _cholesky_solve(matrix: list[list[float]], rhs: list[list[float]]) -> list[list[float]]:
    """X with matrix @ X = rhs (matrix symmetric positive definite, which
    the prior guarantees); rhs and X given as columns."""
    n = len(matrix)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        row_i = low[i]
        for j in range(i + 1):
            row_j = low[j]
            s = matrix[i][j] - sum(row_i[t] * row_j[t] for t in range(j))
            if i == j:
                row_i[i] = math.sqrt(s)
            else:
                row_i[j] = s / row_j[j]
    out = []
    for b in rhs:
        y = [0.0] * n
        for i in range(n):
            y[i] = (b[i] - sum(low[i][t] * y[t] for t in range(i))) / low[i][i]
        x = [0.0] * n
        for i in reversed(range(n)):
            x[i] = (y[i] - sum(low[t][i] * x[t] for t in range(i + 1, n))) / low[i][i]
        out.append(x)
    return out


class _Problem:
    """The outcomes as index tuples, and L, its gradient and -Hessian.

    The parameters are the versions' strengths (rows 0..n-1), then, with
    ``seats``, each table size's seat advantages (one row per seat of each
    size that single matches were played at). A seat's strength is the sum
    of its parameters: its version's, plus its seat's in a single match (a
    set's rotations give every version every seat, so a set has none)."""

    def __init__(self, outcomes: Sequence[Outcome], prior_sd: float, seats: bool):
        self.versions = tuple(sorted({v for o in outcomes for v in o.versions}))
        index = {v: i for i, v in enumerate(self.versions)}
        n = len(self.versions)
        sizes = sorted({len(o.versions) for o in outcomes if o.matches == 1}) if seats else []
        self.seat_rows: dict[int, tuple[int, ...]] = {}
        for k in sizes:
            start = n + sum(len(r) for r in self.seat_rows.values())
            self.seat_rows[k] = tuple(range(start, start + k))
        self.size = n + sum(len(r) for r in self.seat_rows.values())
        # each outcome: its versions' rows, its seats' rows (None: no seat
        # term, the common case, kept on a path of its own for speed)
        self.rows: list[tuple[tuple[int, ...], tuple[int, ...] | None, tuple[float, ...], float]] = []
        for o in outcomes:
            at = self.seat_rows.get(len(o.versions)) if o.matches == 1 else None
            self.rows.append((tuple(index[v] for v in o.versions), at, o.payoffs, float(o.matches)))
        self.prior_sd = prior_sd
        self.matches = [0] * n
        self.counts = [0] * n
        for o in outcomes:
            for v in o.versions:
                self.matches[index[v]] += o.matches
                self.counts[index[v]] += 1

    @staticmethod
    def strengths(theta: Sequence[float], versions: tuple[int, ...], seats: tuple[int, ...] | None) -> list[float]:
        if seats is None:
            return [theta[v] for v in versions]
        return [theta[v] + theta[s] for v, s in zip(versions, seats)]

    def objective(self, theta: Sequence[float]) -> float:
        total = 0.0
        for versions, seats, payoffs, w in self.rows:
            k = len(versions)
            e = self.strengths(theta, versions, seats)
            part = sum(p * x for x, p in zip(e, payoffs))
            pairs = 0.0
            for x in range(k):
                for y in range(x + 1, k):
                    pairs += max(e[x], e[y]) + _log1pexp(-abs(e[x] - e[y]))
            total += w * (part - pairs / (k - 1))
        total -= sum(t * t for t in theta) / (2 * self.prior_sd**2)
        return total

    @staticmethod
    def residuals(e: Sequence[float], payoffs: Sequence[float]) -> list[float]:
        """Each seat's points less its expected points, from the seats' strengths."""
        k = len(e)
        return [p - sum(_sigmoid(e[x] - e[y]) for y in range(k) if y != x) / (k - 1) for x, p in enumerate(payoffs)]

    def scores(self, theta: Sequence[float]) -> list[list[tuple[int, float]]]:
        """Each outcome's contribution to the gradient: (parameter, w * residual) pairs."""
        out = []
        for versions, seats, payoffs, w in self.rows:
            r = self.residuals(self.strengths(theta, versions, seats), payoffs)
            score = [(v, w * rx) for v, rx in zip(versions, r)]
            if seats is not None:
                score += [(s, w * rx) for s, rx in zip(seats, r)]
            out.append(score)
        return out

    def gradient_and_information(self, theta: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        size = len(theta)
        grad = [-t / self.prior_sd**2 for t in theta]
        info = [[0.0] * size for _ in range(size)]
        for i in range(size):
            info[i][i] += 1 / self.prior_sd**2
        for score in self.scores(theta):
            for p, g in score:
                grad[p] += g
        for versions, seats, _payoffs, w in self.rows:
            k = len(versions)
            e = self.strengths(theta, versions, seats)
            for x in range(k):
                for y in range(x + 1, k):
                    s = _sigmoid(e[x] - e[y])
                    h = w * s * (1 - s) / (k - 1)
                    # the pair's log-odds move with +1 for x's parameters, -1 for y's
                    plus, minus = versions[x], versions[y]
                    info[plus][plus] += h
                    info[minus][minus] += h
                    info[plus][minus] -= h
                    info[minus][plus] -= h
                    if seats is not None:
                        signed = ((plus, 1.0), (seats[x], 1.0), (minus, -1.0), (seats[y], -1.0))
                        for a, sa in signed:
                            for b, sb in signed:
                                if not (a in (plus, minus) and b in (plus, minus)):  # those four are above
                                    info[a][b] += h * sa * sb
        return grad, info


def fit(outcomes: Iterable[Outcome], *, prior_sd: float = PRIOR_SD, seats: bool = SEAT_ADVANTAGE) -> Fit:
    """The model fitted to ``outcomes`` (see the module docstring); with
    ``seats``, beside each table size's seat advantages (decision 292, not
    of record)."""
    if not (prior_sd > 0 and math.isfinite(prior_sd)):
        raise ValueError("prior_sd must be positive and finite (it keeps every rating finite)")
    outcomes = _checked(outcomes)
    problem = _Problem(outcomes, prior_sd, seats)
    n, size = len(problem.versions), problem.size
    if n == 0:
        return Fit((), (), (), (), (), 0)
    theta = [0.0] * size
    value = problem.objective(theta)
    for _ in range(100):
        grad, info = problem.gradient_and_information(theta)
        (step,) = _cholesky_solve(info, [grad])
        # Newton's step, halved while it does not raise L (L is concave, so
        # near the top the full step is taken and convergence is quadratic).
        scale = 1.0
        while True:
            candidate = [t + scale * s for t, s in zip(theta, step)]
            new_value = problem.objective(candidate)
            if new_value >= value - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, value = candidate, new_value
        if max(abs(scale * s) for s in step) < 1e-10:
            break
    _, info = problem.gradient_and_information(theta)
    # The meat: each outcome's score vector, outer product, summed (CR1
    # small-sample factor), plus the prior's information (one observation's worth).
    g = len(problem.rows)
    factor = g / (g - 1) if g > 1 else 1.0
    meat = [[0.0] * size for _ in range(size)]
    for score in problem.scores(theta):
        for a, ra in score:
            for b, rb in score:
                meat[a][b] += factor * ra * rb
    for i in range(size):
        meat[i][i] += 1 / prior_sd**2
    identity = [[1.0 if r == c else 0.0 for r in range(size)] for c in range(size)]
    inverse = _cholesky_solve(info, identity)  # columns of J^-1 (symmetric)
    half = _cholesky_solve(info, [list(col) for col in zip(*_matmul(meat, inverse))])
    # the strengths' block (the seat advantages are nuisance parameters)
    full = [[(half[c][r] + half[r][c]) / 2 for c in range(n)] for r in range(n)]
    # Strengths are told apart only relative to each other: report them
    # relative to the field's mean (theta - mean theta, and its covariance
    # P C P with P = I - 1/n), so a rating's interval says where it stands in
    # the field, not how well the prior pins the whole field. (With payoffs
    # that add up to what a table's seats share, rank points or adjusted
    # ones, the fitted mean is 0 already.)
    mean = sum(theta[:n]) / n
    row_mean = [sum(row) / n for row in full]
    grand = sum(row_mean) / n
    covariance = tuple(tuple(full[r][c] - row_mean[r] - row_mean[c] + grand for c in range(n)) for r in range(n))
    advantages = tuple((k, tuple(theta[p] for p in rows)) for k, rows in problem.seat_rows.items())
    return Fit(
        problem.versions,
        tuple(t - mean for t in theta[:n]),
        covariance,
        tuple(problem.matches),
        tuple(problem.counts),
        g,
        advantages,
    )


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """a @ b, with b given as columns (so: rows of a times columns of b); the
    result as rows."""
    return [[sum(x * y for x, y in zip(row, col)) for col in b] for row in a]


def quantile(outcomes: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` quantile for an interval resting on
    ``outcomes`` outcomes: Student's t with outcomes - 1 degrees of freedom
    (at least 1), as for a mean of that many, since the sandwich estimates
    a version's variance from its own outcomes' residuals and is too
    narrow on few of them."""
    return t_quantile(max(outcomes - 1, 1), 0.5 + level / 2)


def unseparated(model: Fit, order: Sequence[int], place0: int, level: float = LEVEL) -> list[tuple[int, float, float]]:
    """For the version at ``order[place0]`` (``order``: rows of ``model``
    best first), every version two or more places away that its interval
    does not yet tell apart: (its row, the gap in strengths, the half-width
    the gap must pass). Empty: the place is settled (if it played)."""
    i = order[place0]
    out = []
    for other0, j in enumerate(order):
        if abs(other0 - place0) < 2:
            continue
        gap = abs(model.theta[i] - model.theta[j])
        needed = quantile(min(model.counts[i], model.counts[j]), level) * model.difference_sd(i, j)
        if gap <= needed:
            out.append((j, gap, needed))
    return out


def _normal_cdf(x: float) -> float:
    """The standard normal's distribution function, from erfc: accurate in
    the far lower tail, where 1 + erf(x) cancels to 0."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _inverse_gaussian_cdf(u: float, mean: float, shape: float) -> float:
    """The inverse Gaussian law's distribution function at ``u`` > 0: the
    chance that a Brownian motion with drift nu first reaches a level a
    above it by time u (mean a/nu, shape a^2)."""
    r = math.sqrt(shape / u)
    # e^(2 shape/mean) Phi(-x), in logs: Phi(-x) underflows where the exponential would not
    tail = _normal_cdf(-r * (u / mean + 1))
    return _normal_cdf(r * (u / mean - 1)) + (math.exp(2 * shape / mean + math.log(tail)) if tail > 0 else 0.0)


def _inverse_gaussian_median(mean: float, shape: float) -> float:
    """The inverse Gaussian law's median, by bisection; always below the mean."""
    low, high = mean * 1e-9, mean
    while high > low * (1 + 1e-7):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if _inverse_gaussian_cdf(middle, mean, shape) < 0.5 else (low, middle)
    return math.sqrt(low * high)


def separation_chance(model: Fit, i: int, j: int, level: float = LEVEL) -> Callable[[float], float]:
    """The chance, as a function of m, that versions ``i`` and ``j`` (rows
    of ``model``) are first shown separated within m more matches each,
    under the model, the gap being what it is estimated to be.

    Both keep playing (the scheduler gives every version about the same
    share), so after m more matches each, each one's part of the
    difference's variance shrinks with its own matches: with a = n_i / (n_i
    + m) and b = n_j / (n_j + m), V(m) = a C_ii + b C_jj - 2 sqrt(ab) C_ij.
    In information I = 1 / V the estimated difference times I is a
    Brownian motion with drift the gap d, and the pair is shown separated
    when it first reaches t sqrt(I), t's degrees of freedom growing with
    the outcomes. Its mean path reaches it at I* = (t*/d)^2, t* the
    quantile then; the boundary's tangent there turns the wait into a
    Brownian motion's first passage to a level, the inverse Gaussian law
    (mean I* - I0, shape (d/2)^2 (I* - I0)^2) (the tangent lies above the
    concave boundary: if anything, late). Not the mean path's own
    crossing: a pair is shown separated the first time its interval
    clears, and the path's own noise makes that typically much sooner."""
    gap = abs(model.theta[i] - model.theta[j])
    if gap == 0:
        return lambda m: 0.0  # estimated level: no end in sight
    c, n_i, n_j = model.covariance, max(model.matches[i], 1), max(model.matches[j], 1)

    def variance(m: float) -> float:
        a, b = n_i / (n_i + m), n_j / (n_j + m)
        return max(a * c[i][i] + b * c[j][j] - 2 * math.sqrt(a * b) * c[i][j], 1e-300)

    def t_after(m: float) -> float:
        outcomes = min(model.counts[i] * (n_i + m) / n_i, model.counts[j] * (n_j + m) / n_j)
        return quantile(int(outcomes), level)

    start = 1 / variance(0.0)
    t_then = t_after(0.0)
    for _ in range(20):  # t* at the crossing it implies: it only falls, so this settles quickly
        target = (t_then / gap) ** 2
        crossing = _first(lambda m, at=target: variance(m) <= 1 / at)
        if not math.isfinite(crossing):
            return lambda m: 0.0
        t_next = t_after(crossing)
        if abs(t_next - t_then) < 1e-6:
            break
        t_then = t_next
    if target <= start:  # t falling is enough
        return lambda m: 1.0 if m >= crossing else 0.0
    wait = target - start
    shape = (gap / 2) ** 2 * wait**2

    def chance(m: float) -> float:
        u = 1 / variance(m) - start
        return _inverse_gaussian_cdf(u, wait, shape) if u > 0 else 0.0

    return chance


def _first(holds: Callable[[float], bool]) -> float:
    """The least m >= 0 at which ``holds`` (monotone: false, then true)
    becomes true, to a millionth; inf beyond 10^12."""
    if holds(0.0):
        return 0.0
    low, high = 0.0, 1.0
    while not holds(high):
        low, high = high, high * 2
        if high > 1e12:
            return math.inf
    while high - low > 1e-6 * high:  # far finer than the whole matches it is shown as
        middle = (low + high) / 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def matches_to_separate(model: Fit, i: int, j: int, level: float = LEVEL) -> float:
    """The median number of matches until ``i`` and ``j`` are first shown
    separated (``separation_chance``); inf when the gap is 0."""
    chance = separation_chance(model, i, j, level)
    return _first(lambda m: chance(m) >= 0.5)


def more_matches(model: Fit, i: int, apart: list[tuple[int, float, float]], level: float = LEVEL) -> int:
    """The "about N more matches" of row ``i`` not settled, ``apart`` its
    ``unseparated`` list: the median number of matches until every one of
    them is first shown separated from it (their chances multiplied, as if
    independent; they share i's own estimate, so if anything this is late),
    at least 1; MORE_MATCHES_CAP when no end is in sight."""
    chances = [separation_chance(model, i, j, level) for j, _gap, _needed in apart]
    wait = _first(lambda m: math.prod(chance(m) for chance in chances) >= 0.5) if chances else 1.0
    return MORE_MATCHES_CAP if not math.isfinite(wait) else min(max(math.ceil(wait), 1), MORE_MATCHES_CAP)


def rank(
    outcomes: Iterable[Outcome], *, prior_sd: float = PRIOR_SD, level: float = LEVEL, seats: bool = SEAT_ADVANTAGE
) -> list[Rank]:
    """Every version that played, best first (ties in rating by version id);
    deterministic."""
    model = fit(outcomes, prior_sd=prior_sd, seats=seats)
    n = len(model.versions)
    order = sorted(range(n), key=lambda i: (-model.theta[i], model.versions[i]))
    out = []
    for place0, i in enumerate(order):
        apart = unseparated(model, order, place0, level)
        settled = model.matches[i] > 0 and not apart
        more = None if settled else more_matches(model, i, apart, level)
        half = quantile(model.counts[i], level) * math.sqrt(max(model.covariance[i][i], 0.0)) * RATING_PER_LOGIT
        rating = model.rating(i)
        out.append(
            Rank(
                version=model.versions[i],
                rating=rating,
                low=rating - half,
                high=rating + half,
                matches=model.matches[i],
                place=place0 + 1,
                settled=settled,
                more_matches=more,
            )
        )
    return out
