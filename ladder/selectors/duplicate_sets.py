"""Reads of the ladder's duplicate sets (ladder.services.duplicate_sets,
decision 255): whether a set's deal may be shown yet, and a ladder's
finished matches grouped into the results the adjusted rating is built
from (a complete set is one result standing for its k matches)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from cardroom.tournament.standings import rank_points
from ladder.models import Ladder, Match
from ladder.ranking import Outcome

OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)


def set_open(set_column: str = "duplicate_set") -> Exists:
    """For a queryset of matches: whether the match's set still has a
    rotation queued or running (False for a match of no set)."""
    return Exists(Match.objects.filter(duplicate_set=OuterRef(set_column), status__in=OPEN))


def deal_published(match: Match) -> bool:
    """May the match's seed and replay be shown (once it has finished)? A
    set's rotations share the deal: not while any of them is still to play."""
    if match.duplicate_set_id is None:
        return True
    return not Match.objects.filter(duplicate_set_id=match.duplicate_set_id, status__in=OPEN).exists()


@dataclass(frozen=True)
class Played:
    """A finished ladder match as the adjusted rating reads it."""

    match: int
    versions: tuple[int, ...]  # by seat
    payoffs: tuple[float, ...]  # by seat: rank points, adjusted when luck is known
    duplicate_set: int | None = None
    set_rotations: int = 1  # the set's rotations (1: no set)


def group(played: Iterable[Played]) -> list[Outcome]:
    """The results the adjusted rating is built from, in match order: a set
    whose every rotation is here is one ``Outcome(versions, payoffs,
    matches=k)`` (each version's payoff the mean over the rotations, in
    rotation 0's seat order); any other match, a set's rotation included
    while its set is incomplete, one ``Outcome(versions, payoffs)``."""
    rows = sorted(played, key=lambda p: p.match)
    sets: dict[int, list[Played]] = defaultdict(list)
    for p in rows:
        if p.duplicate_set is not None:
            sets[p.duplicate_set].append(p)
    complete = {s for s, members in sets.items() if len(members) == members[0].set_rotations > 1}
    out: list[Outcome] = []
    for p in rows:
        if p.duplicate_set in complete:
            members = sets.pop(p.duplicate_set, None)
            if members is None:
                continue  # (the set was emitted at its first rotation)
            versions = members[0].versions
            total: dict[int, float] = defaultdict(float)
            for m in members:
                for v, x in zip(m.versions, m.payoffs):
                    total[v] += x
            k = len(members)
            out.append(Outcome(versions, tuple(total[v] / k for v in versions), matches=k))
        else:
            out.append(Outcome(p.versions, p.payoffs))
    return out


def played_matches(ladder: Ladder | int, adjusted: dict[int, Sequence[float]] | None = None) -> list[Played]:
    """The ladder's finished matches, each seat's payoff its rank points, or
    ``adjusted[match_id]`` (by seat) where the caller knows the luck."""
    adjusted = adjusted or {}
    ladder_id = ladder if isinstance(ladder, int) else ladder.pk
    seats: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    meta: dict[int, tuple[int | None, int]] = {}
    rows = (
        Match.objects.filter(ladder_id=ladder_id, kind=Match.Kind.LADDER, status=Match.Status.FINISHED)
        .order_by("pk")
        .values_list(
            "pk",
            "duplicate_set_id",
            "duplicate_set__rotations",
            "participants__seat",
            "participants__version_id",
            "participants__rank",
        )
    )
    for match_id, set_id, rotations, seat, version, rank in rows.iterator(chunk_size=5000):
        meta[match_id] = (set_id, rotations or 1)
        seats[match_id].append((seat, version, rank))
    out = []
    for match_id, (set_id, rotations) in meta.items():
        by_seat = sorted(seats[match_id])
        points = adjusted.get(match_id)
        if points is None:
            points = [float(x) for x in rank_points([rank for _s, _v, rank in by_seat])]
        out.append(
            Played(match_id, tuple(v for _s, v, _r in by_seat), tuple(float(x) for x in points), set_id, rotations)
        )
    return out


def ladder_outcomes(ladder: Ladder | int, adjusted: dict[int, Sequence[float]] | None = None) -> list[Outcome]:
    """The ladder's results for ladder.ranking.rank: its finished matches,
    each complete duplicate set as one (``adjusted``: match id -> payoffs by
    seat, where the luck is known)."""
    return group(played_matches(ladder, adjusted))


def sets_of(ladder: Ladder | int) -> dict[int, tuple[int, int]]:
    """match id -> (its duplicate set, the set's rotations), for the ladder's
    matches that belong to a set: what a caller with payoffs of its own
    (the adjusted rating's luck) needs to build ``Played`` rows for ``group``."""
    ladder_id = ladder if isinstance(ladder, int) else ladder.pk
    rows = Match.objects.filter(ladder_id=ladder_id, duplicate_set__isnull=False).values_list(
        "pk", "duplicate_set_id", "duplicate_set__rotations"
    )
    return {match_id: (set_id, rotations) for match_id, set_id, rotations in rows.iterator(chunk_size=5000)}
