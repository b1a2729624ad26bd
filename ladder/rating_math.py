"""Rating arithmetic, free of Django so it can be checked on its own.

Elo for 2-6 players: a match counts as every pairwise result by rank (a win
1, a tie 0.5), each pair exchanging ``K_pair / (n - 1) * (S - E)`` points,
rounded to hundredths, where ``K_pair`` is the mean of the two bots' K
(provisional bots have a larger K). Every point one bot gains its opponent
loses, so the sum of Elo over a match's participants is unchanged, exactly
(Decimal arithmetic).

OpenSkill: the Plackett-Luce model of the ``openskill`` package, each bot a
team of one, ranks as the game gave them; ``ordinal = mu - 3 sigma``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from openskill.models import PlackettLuce

ELO_START = Decimal("1500.00")
ELO_K = Decimal("20")
ELO_K_PROVISIONAL = Decimal("40")
PROVISIONAL_GAMES = 10
CENT = Decimal("0.01")

_MODEL = PlackettLuce()
MU_START: float = _MODEL.mu
SIGMA_START: float = _MODEL.sigma
# A new version keeps its bot's mu but at least this much uncertainty, so it
# can move quickly if it plays differently from its predecessor.
SIGMA_NEW_VERSION: float = SIGMA_START / 2


class RatingInvariantError(AssertionError):
    """A rating update broke an invariant (a bug, never a bot's fault)."""


@dataclass(frozen=True)
class Seat:
    elo: Decimal
    mu: float
    sigma: float
    provisional: bool
    rank: int


@dataclass(frozen=True)
class Update:
    elo: Decimal
    mu: float
    sigma: float


def expected_score(rating: Decimal, opponent: Decimal) -> float:
    return 1.0 / (1.0 + 10.0 ** ((float(opponent) - float(rating)) / 400.0))


def elo_deltas(elos: Sequence[Decimal], ranks: Sequence[int], provisional: Sequence[bool]) -> list[Decimal]:
    """Each seat's Elo change (seats in a fixed order: the seat order, so the
    live path and recompute_ratings round every pair the same way)."""
    n = len(elos)
    if not len(ranks) == len(provisional) == n:
        raise ValueError("elos, ranks and provisional flags must have one entry per seat")
    if n < 2:
        raise ValueError(f"a rated match has at least 2 seats, not {n}")
    ks = [ELO_K_PROVISIONAL if p else ELO_K for p in provisional]
    deltas = [Decimal("0.00")] * n
    # A fixed context: the same inputs round the same way in every process.
    with localcontext() as ctx:
        ctx.prec = 28
        ctx.rounding = ROUND_HALF_EVEN
        for i in range(n):
            for j in range(i + 1, n):
                actual = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                k_pair = (ks[i] + ks[j]) / 2 / (n - 1)
                transfer = (k_pair * Decimal(repr(actual - expected_score(elos[i], elos[j])))).quantize(
                    CENT, rounding=ROUND_HALF_EVEN
                )
                deltas[i] += transfer
                deltas[j] -= transfer
    if sum(deltas) != 0:
        raise RatingInvariantError(f"Elo deltas {deltas} do not sum to zero")
    return deltas


def rate_match(seats: Sequence[Seat]) -> list[Update]:
    """New ratings for every seat of one finished match (ranks are 1-based,
    equal ranks a tie). Raises RatingInvariantError if the Elo sum moved."""
    deltas = elo_deltas([s.elo for s in seats], [s.rank for s in seats], [s.provisional for s in seats])
    teams = [[_MODEL.rating(mu=s.mu, sigma=s.sigma)] for s in seats]
    rated = _MODEL.rate(teams, ranks=[s.rank for s in seats])
    updates = [Update(s.elo + d, team[0].mu, team[0].sigma) for s, d, team in zip(seats, deltas, rated)]
    before = sum(s.elo for s in seats)
    after = sum(u.elo for u in updates)
    if before != after:
        raise RatingInvariantError(f"the match changed the Elo sum from {before} to {after}")
    return updates


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3.0 * sigma
