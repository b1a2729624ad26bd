"""Applying match results to ratings: in one transaction with row locks, in
the order results are committed, and replayable by recompute_ratings.

The order: ``apply_match_ratings`` locks the participants' Rating rows (in
bot order, so two matches sharing bots never deadlock) before it writes the
RatingChange rows, so of two results that share a bot the one committed
later has the larger RatingChange ids. Results that share no bot may commit
(and number their rows) in any order: they touch disjoint ratings, so their
order does not matter. ``recompute_all`` replays the RatingChange history in
id order and must land on the live ratings exactly (Elo is Decimal, mu and
sigma are doubles stored as doubles, and both paths call the same code with
the seats in the same order).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from django.db import connection, transaction

from ladder import rating_math as calc
from ladder.models import Match, Participant, Rating, RatingChange


class _Played(Protocol):
    """What rating needs of a participant (a Participant, or a row of one)."""

    seat: int
    version_id: int
    rank: int
    forfeit_reason: str


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
    def fresh(cls) -> _Standing:
        return cls(calc.ELO_START, calc.MU_START, calc.SIGMA_START, 0, 0, 0, 0, None)

    @classmethod
    def of(cls, r: Rating) -> _Standing:
        return cls(r.elo, r.mu, r.sigma, r.games, r.wins, r.forfeits, r.version_games, r.version_id)

    def take_over(self, version_id: int) -> bool:
        """The version that played a game about to be rated. A newer version
        of the bot than the one in charge takes over: it keeps Elo and mu, is
        provisional again, and gets back some uncertainty (sigma at least
        SIGMA_NEW_VERSION). Returns whether the game counts for the version
        in charge: a game of an *older* version (queued before the new one
        took over, finished after) is rated like any other but hands nothing
        back to the old version (version ids grow with version numbers)."""
        if self.version_id is None or version_id == self.version_id:
            self.version_id = version_id
            return True
        if version_id > self.version_id:
            self.sigma = max(self.sigma, calc.SIGMA_NEW_VERSION)
            self.version_games = 0
            self.version_id = version_id
            return True
        return False

    @property
    def provisional(self) -> bool:
        return self.version_games < calc.PROVISIONAL_GAMES


def _rate(standings: list[_Standing], participants: list[_Played]) -> list[calc.Update]:
    """Rate one match: ``participants`` in seat order, ``standings`` theirs."""
    current = [st.take_over(p.version_id) for st, p in zip(standings, participants)]
    seats = [calc.Seat(st.elo, st.mu, st.sigma, st.provisional, p.rank) for st, p in zip(standings, participants)]
    updates = calc.rate_match(seats)
    for st, p, up, counts in zip(standings, participants, updates, current):
        st.elo, st.mu, st.sigma = up.elo, up.mu, up.sigma
        st.games += 1
        st.version_games += 1 if counts else 0
        st.wins += 1 if p.rank == 1 else 0
        st.forfeits += 1 if p.forfeit_reason else 0
    return updates


def ensure_ratings(ladder, bot_ids: Iterable[int]) -> None:
    """A fresh Rating for every bot that has none on this ladder (two queries
    however many bots; safe against a concurrent insert of the same row)."""
    ladder_id = ladder if isinstance(ladder, int) else ladder.pk
    wanted = set(bot_ids)
    if not wanted:
        return
    have = set(Rating.objects.filter(ladder_id=ladder_id, bot_id__in=wanted).values_list("bot_id", flat=True))
    missing = sorted(wanted - have)
    if missing:
        Rating.objects.bulk_create(
            [
                Rating(
                    ladder_id=ladder_id,
                    bot_id=bot_id,
                    elo=calc.ELO_START,
                    mu=calc.MU_START,
                    sigma=calc.SIGMA_START,
                    ordinal=calc.ordinal(calc.MU_START, calc.SIGMA_START),
                )
                for bot_id in missing
            ],
            ignore_conflicts=True,
        )


def apply_match_ratings(match: Match, participants: list[Participant]) -> None:
    """Rate a finished ladder match. Must run inside the transaction that
    records the result (so a result is rated exactly once)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("apply_match_ratings must run inside the transaction that records the result")
    if match.ladder_id is None:  # (which kinds are rated is their policy's, ladder.services.match_kinds)
        raise ValueError(f"match {match.pk} is not a ladder match: it is not rated")
    participants = sorted(participants, key=lambda p: p.seat)
    if len(participants) < 2 or any(p.rank is None for p in participants):
        raise ValueError(f"match {match.pk} has no complete result to rate")
    # The match row first (record_result holds it already): a second delivery
    # of the same result waits here, then finds it rated and stops.
    Match.objects.select_for_update().filter(pk=match.pk).values_list("pk", flat=True).get()
    if RatingChange.objects.filter(match_id=match.pk).exists():
        return  # already applied: the same result delivered twice counts once
    bot_ids = [p.bot_id for p in participants]
    if len(set(bot_ids)) != len(bot_ids):
        raise ValueError(f"match {match.pk}: a bot holds two seats")
    locked = _lock_ratings(match.ladder_id, bot_ids)
    ratings = [locked[p.bot_id] for p in participants]
    before = [_Standing.of(r) for r in ratings]
    standings = [_Standing.of(r) for r in ratings]
    _rate(standings, participants)
    if sum(s.elo for s in before) != sum(s.elo for s in standings):
        raise calc.RatingInvariantError(f"match {match.pk} changed the sum of Elo")
    changes = []
    for rating, old, new, p in zip(ratings, before, standings, participants):
        _set(rating, new, match.finished)
        p.elo_before, p.elo_after = old.elo, new.elo
        p.mu_before, p.mu_after = old.mu, new.mu
        p.sigma_before, p.sigma_after = old.sigma, new.sigma
        changes.append(
            RatingChange(
                rating=rating, match=match, participant=p, version_id=p.version_id,
                elo_before=old.elo, elo_after=new.elo, mu_before=old.mu, mu_after=new.mu,
                sigma_before=old.sigma, sigma_after=new.sigma,
            )
        )
    # One statement each, however many seats: every query is a round trip
    # to the database that all the workers share.
    Rating.objects.bulk_update(ratings, _COMPARED)
    Participant.objects.bulk_update(participants, _PARTICIPANT_RATING_FIELDS)
    RatingChange.objects.bulk_create(changes)
    # The match's place in the order ratings were applied (the API's
    # rating_sequence): its first RatingChange id, allocated under the locks above.
    sequence = min(c.pk for c in changes) if all(c.pk is not None for c in changes) else (
        RatingChange.objects.filter(match_id=match.pk).order_by("id").values_list("id", flat=True).first()
    )  # fmt: skip
    Match.objects.filter(pk=match.pk).update(rating_sequence=sequence)
    match.rating_sequence = sequence


def _lock_ratings(ladder_id: int, bot_ids: list[int]) -> dict[int, Rating]:
    """The bots' Rating rows on this ladder, locked in bot order (two
    matches sharing bots never deadlock); a missing row is created first."""

    def lock() -> dict[int, Rating]:
        rows = Rating.objects.select_for_update().filter(ladder_id=ladder_id, bot_id__in=bot_ids).order_by("bot_id")
        return {r.bot_id: r for r in rows}

    locked = lock()
    if len(locked) < len(bot_ids):  # (a bot new to the ladder: rare)
        ensure_ratings(ladder_id, bot_ids)
        locked = lock()
    return locked


_PARTICIPANT_RATING_FIELDS = ["elo_before", "elo_after", "mu_before", "mu_after", "sigma_before", "sigma_after"]

_COMPARED = ("elo", "mu", "sigma", "ordinal", "provisional", "games", "wins", "forfeits", "version_games", "version_id", "last_played")


def _values(st: _Standing, last_played: datetime | None) -> dict:
    return {
        "elo": st.elo, "mu": st.mu, "sigma": st.sigma, "ordinal": calc.ordinal(st.mu, st.sigma),
        "provisional": st.provisional, "games": st.games, "wins": st.wins, "forfeits": st.forfeits,
        "version_games": st.version_games, "version_id": st.version_id, "last_played": last_played,
    }


def _set(rating: Rating, st: _Standing, last_played: datetime | None) -> None:
    for name, value in _values(st, last_played).items():
        if name != "last_played" or value is not None:
            setattr(rating, name, value)


def _store(rating: Rating, st: _Standing, last_played: datetime | None) -> None:
    _set(rating, st, last_played)
    rating.save()


@dataclass(frozen=True)
class _Row:
    """One stored rated participant, as recompute reads it back."""

    seat: int
    version_id: int
    rank: int
    forfeit_reason: str
    bot_id: int


def recompute_all(write: bool = True, chunk_size: int = 20_000) -> list[str]:
    """Rebuild every rating from the stored results, in the order they were
    committed (the RatingChange history); returns the differences found
    against the live ratings (empty when the live ratings are reproduced
    exactly) and, when ``write``, stores the rebuilt ratings where they differ.

    Streams the history (memory does not grow with it): a match is rated when
    its last RatingChange row has been read. Rows of two matches interleave
    only when the two committed concurrently, which the row locks allow only
    for matches sharing no bot, so the replay order is the committed order.
    """
    differences: list[str] = []
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # Wait for every result being rated now, and hold off new ones
            # (they wait at their Rating row locks, before writing history):
            # the replay sees one moment. Plain reads of ratings go on. On
            # SQLite, write transactions are serial already.
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {Rating._meta.db_table} IN EXCLUSIVE MODE")
        live = {(r.ladder_id, r.bot_id): r for r in Rating.objects.select_for_update().order_by("pk")}
        rebuilt: dict[tuple[int, int], _Standing] = {key: _Standing.fresh() for key in live}
        last_played: dict[tuple[int, int], datetime | None] = {}
        pending: dict[int, list[_Row]] = {}
        rows = (
            RatingChange.objects.order_by("id")
            .values_list(
                "match_id", "match__ladder_id", "match__num_players", "match__finished",
                "participant__seat", "participant__bot_id", "participant__rank", "participant__forfeit_reason",
                "version_id",
            )
            .iterator(chunk_size=chunk_size)
        )
        for match_id, ladder_id, num_players, finished, seat, bot_id, rank, forfeit_reason, version_id in rows:
            seats = pending.setdefault(match_id, [])
            seats.append(_Row(seat, version_id, rank, forfeit_reason, bot_id))
            if len(seats) < num_players:
                continue
            del pending[match_id]
            seats.sort(key=lambda r: r.seat)
            standings = [rebuilt.setdefault((ladder_id, r.bot_id), _Standing.fresh()) for r in seats]
            _rate(standings, seats)
            for r in seats:
                last_played[(ladder_id, r.bot_id)] = finished
        for match_id, seats in sorted(pending.items()):
            differences.append(f"match {match_id}: rating history has {len(seats)} rows, fewer than its seats")
        unrated = (
            Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.FINISHED, rating_changes__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        for match_id in unrated[:20]:
            differences.append(f"match {match_id}: finished but never rated")
        if len(differences) - len(pending) >= 20:
            differences.append(f"({unrated.count()} finished ladder matches in all were never rated)")
        for key, st in rebuilt.items():
            rating = live.get(key)
            if rating is None:
                differences.append(f"ladder {key[0]} bot {key[1]}: no live rating")
                continue
            values = _values(st, last_played.get(key, rating.last_played))
            changed = [name for name in _COMPARED if getattr(rating, name) != values[name]]
            for name in changed:
                differences.append(
                    f"ladder {key[0]} bot {key[1]}: {name} live {getattr(rating, name)} rebuilt {values[name]}"
                )
            if changed and write:
                _store(rating, st, last_played.get(key))
    return differences
