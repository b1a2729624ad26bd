"""Applying match results to ratings: in one transaction with row locks, in
the order results are committed, and replayable by recompute_ratings."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from ladder import ratings as calc
from ladder.models import Match, Participant, Rating, RatingChange


@dataclass
class _Standing:
    """A rating's mutable numbers, shared by the live path and recompute."""

    elo: Decimal
    mu: float
    sigma: float
    games: int
    wins: int
    forfeits: int
    version_games: int
    version_id: int | None

    @classmethod
    def fresh(cls) -> "_Standing":
        return cls(calc.ELO_START, calc.MU_START, calc.SIGMA_START, 0, 0, 0, 0, None)

    @classmethod
    def of(cls, r: Rating) -> "_Standing":
        return cls(r.elo, r.mu, r.sigma, r.games, r.wins, r.forfeits, r.version_games, r.version_id)

    def take_over(self, version_id: int) -> None:
        """A new version of the bot plays its first rated game here: it keeps
        Elo and mu, is provisional again, and gets back some uncertainty."""
        if self.version_id is not None and self.version_id != version_id:
            self.sigma = max(self.sigma, calc.SIGMA_NEW_VERSION)
            self.version_games = 0
        self.version_id = version_id

    @property
    def provisional(self) -> bool:
        return self.version_games < calc.PROVISIONAL_GAMES


def _rate(standings: list[_Standing], participants: list[Participant]) -> list[calc.Update]:
    for st, p in zip(standings, participants):
        st.take_over(p.version_id)
    seats = [calc.Seat(st.elo, st.mu, st.sigma, st.provisional, p.rank) for st, p in zip(standings, participants)]
    updates = calc.rate_match(seats)
    for st, p, up in zip(standings, participants, updates):
        st.elo, st.mu, st.sigma = up.elo, up.mu, up.sigma
        st.games += 1
        st.version_games += 1
        st.wins += 1 if p.rank == 1 else 0
        st.forfeits += 1 if p.forfeit_reason else 0
    return updates


def ensure_ratings(ladder, bot_ids) -> None:
    for bot_id in bot_ids:
        Rating.objects.get_or_create(
            ladder=ladder,
            bot_id=bot_id,
            defaults={"mu": calc.MU_START, "sigma": calc.SIGMA_START, "ordinal": calc.ordinal(calc.MU_START, calc.SIGMA_START)},
        )


def apply_match_ratings(match: Match, participants: list[Participant]) -> None:
    """Rate a finished ladder match. Must run inside the transaction that
    records the result (so a result is rated exactly once)."""
    assert transaction.get_connection().in_atomic_block
    if RatingChange.objects.filter(match=match).exists():
        return  # already applied: the same result delivered twice counts once
    ensure_ratings(match.ladder, [p.bot_id for p in participants])
    # Lock in bot order: two matches sharing bots never deadlock.
    locked = {
        r.bot_id: r
        for r in Rating.objects.select_for_update().filter(ladder=match.ladder, bot_id__in=[p.bot_id for p in participants]).order_by("bot_id")
    }
    ratings = [locked[p.bot_id] for p in participants]
    before = [_Standing.of(r) for r in ratings]
    standings = [_Standing.of(r) for r in ratings]
    _rate(standings, participants)
    changes = []
    for rating, old, new, p in zip(ratings, before, standings, participants):
        _store(rating, new, match)
        p.elo_before, p.elo_after = old.elo, new.elo
        p.mu_before, p.mu_after = old.mu, new.mu
        p.sigma_before, p.sigma_after = old.sigma, new.sigma
        p.save(update_fields=["elo_before", "elo_after", "mu_before", "mu_after", "sigma_before", "sigma_after"])
        changes.append(
            RatingChange(
                rating=rating, match=match, participant=p, version_id=p.version_id,
                elo_before=old.elo, elo_after=new.elo, mu_before=old.mu, mu_after=new.mu,
                sigma_before=old.sigma, sigma_after=new.sigma,
            )
        )
    RatingChange.objects.bulk_create(changes)
    if sum(s.elo for s in before) != sum(s.elo for s in standings):
        raise calc.RatingInvariantError(f"match {match.pk} changed the sum of Elo")


def _store(rating: Rating, st: _Standing, match: Match | None) -> None:
    rating.elo, rating.mu, rating.sigma = st.elo, st.mu, st.sigma
    rating.ordinal = calc.ordinal(st.mu, st.sigma)
    rating.games, rating.wins, rating.forfeits = st.games, st.wins, st.forfeits
    rating.version_games, rating.version_id = st.version_games, st.version_id
    rating.provisional = st.provisional
    if match is not None:
        rating.last_played = match.finished
    rating.save()


def recompute_all() -> list[str]:
    """Rebuild every rating from the stored results, in the order they were
    committed; returns the differences found against the live ratings (empty
    when the live ratings are exactly reproduced) and writes the rebuilt ones."""
    differences: list[str] = []
    with transaction.atomic():
        live = {(r.ladder_id, r.bot_id): r for r in Rating.objects.select_for_update()}
        rebuilt: dict[tuple[int, int], _Standing] = {key: _Standing.fresh() for key in live}
        last_match: dict[tuple[int, int], Match] = {}
        match_ids = (
            RatingChange.objects.values_list("match_id", flat=True).order_by("id").distinct()
        )
        seen: set[int] = set()
        ordered: list[int] = []
        for mid in match_ids:
            if mid not in seen:
                seen.add(mid)
                ordered.append(mid)
        matches = Match.objects.in_bulk(ordered)
        parts: dict[int, list[Participant]] = {}
        for p in Participant.objects.filter(match_id__in=ordered).order_by("match_id", "seat"):
            parts.setdefault(p.match_id, []).append(p)
        for mid in ordered:
            match = matches[mid]
            participants = parts[mid]
            standings = [rebuilt.setdefault((match.ladder_id, p.bot_id), _Standing.fresh()) for p in participants]
            _rate(standings, participants)
            for p in participants:
                last_match[(match.ladder_id, p.bot_id)] = match
        for key, st in rebuilt.items():
            rating = live.get(key)
            if rating is None:
                differences.append(f"ladder {key[0]} bot {key[1]}: no live rating")
                continue
            fields = ("elo", "mu", "sigma", "games", "wins", "forfeits", "version_games", "version_id")
            for name in fields:
                if getattr(rating, name) != getattr(st, name):
                    differences.append(f"ladder {key[0]} bot {key[1]}: {name} live {getattr(rating, name)} rebuilt {getattr(st, name)}")
            _store(rating, st, last_match.get(key))
    return differences
