"""The one reader of a ladder's results for its adjusted ranking
(``ladder.ranking``; docs/ladder.md, "The adjusted rating on the ladder",
and decision 269): which finished matches count, each seat's payoff, and a
duplicate set as one outcome.

Which matches count: exactly the ones Elo rated, the ladder's matches with
a ``rating_sequence``. So a forfeit counts (a bot's failure is a result,
the forfeiting seat ranked last); a platform failure (``failed``), a
cancelled, queued or running match never does (it has no result); nor
does a finished match that was never rated (``recompute_ratings --check``
reports it). One rule for both ratings, and the one the API shows: a
match's ``rating_sequence`` is not null.

A seat's payoff is its rank points less its luck where the luck is known
(the API's ``adjusted``), else its rank points (the API's ``payoff``).

A duplicate set (decision 255) whose every rotation counts is one outcome
standing for its k matches: its versions in rotation 0's seat order, each
one's payoff the sum over the rotations in rotation order, divided by k.
A set with a rotation that does not count (failed, cancelled, not played
yet) counts its counted rotations one by one. Outcomes come in
``rating_sequence`` order, a complete set at its first-rated rotation's
place: the order the API lets anyone rebuild, so a recomputation from the
API gives the same figures to the last bit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from ladder.models import Match, MatchLuck, Participant
from ladder.ranking import Outcome
from ladder.selectors import seat_payoffs


@dataclass(frozen=True)
class RatedMatch:
    """One counted match as the ranking reads it."""

    match: int
    sequence: int  # its rating_sequence
    versions: tuple[int, ...]  # by seat
    payoffs: tuple[float, ...]  # by seat: rank points, less the luck where it is known
    duplicate_set: int | None = None
    rotation: int = 0  # its rotation in the set
    rotations: int = 1  # the set's rotations (1: no set)


@dataclass(frozen=True)
class LadderOutcomes:
    """A ladder's outcomes for ``ladder.ranking.rank``, and what they hold."""

    outcomes: list[Outcome]
    matches: int  # rated matches counted (a set: each of its rotations)
    adjusted: int  # of them, those whose luck is known
    value_functions: list[str]  # the luck's value functions (NAME@VERSION) used


def rated_matches(ladder_id: int) -> QuerySet[Match]:
    """The matches that count: the ladder's matches Elo rated."""
    return Match.objects.filter(ladder_id=ladder_id, kind=Match.Kind.LADDER, rating_sequence__isnull=False)


def counted_payoffs(ranks: Sequence[int], luck: Sequence[float] | None) -> list[float]:
    """Each seat's payoff as the ranking counts it: its rank points, less
    its luck when that is known (the API's ``adjusted``, else ``payoff``)."""
    points = seat_payoffs(list(ranks))
    if luck is None:
        return points
    return [p - x for p, x in zip(points, luck)]


def group(rated: Iterable[RatedMatch]) -> list[Outcome]:
    """The outcomes of counted matches (the module docstring's rule)."""
    rows = sorted(rated, key=lambda r: r.sequence)
    sets: dict[int, list[RatedMatch]] = defaultdict(list)
    for r in rows:
        if r.duplicate_set is not None:
            sets[r.duplicate_set].append(r)
    complete = set()
    for set_id, members in sets.items():
        k = members[0].rotations
        members.sort(key=lambda r: r.rotation)
        # every rotation once, each seating the same versions
        if k > 1 and [r.rotation for r in members] == list(range(k)):
            if all(set(r.versions) == set(members[0].versions) for r in members):
                complete.add(set_id)
    out: list[Outcome] = []
    for r in rows:
        if r.duplicate_set not in complete:
            out.append(Outcome(r.versions, r.payoffs))
            continue
        members = sets.pop(r.duplicate_set, None)
        if members is None:
            continue  # the set is out already, at its first-rated rotation
        versions = members[0].versions
        total = dict.fromkeys(versions, 0.0)
        for m in members:
            for v, x in zip(m.versions, m.payoffs):
                total[v] += x
        k = len(members)
        out.append(Outcome(versions, tuple(total[v] / k for v in versions), matches=k))
    return out


def _known_luck(ladder_id: int) -> dict[int, tuple[str, list[float]]]:
    """match id -> (value function, each seat's luck) where it is known."""
    rows = (
        MatchLuck.objects.filter(match__in=rated_matches(ladder_id), error="")
        .exclude(luck=None)
        .values_list("match_id", "value_function", "luck")
    )
    return {match_id: (value_function, values) for match_id, value_function, values in rows}


def ladder_outcomes(ladder_id: int) -> LadderOutcomes:
    """The ladder's outcomes for its adjusted ranking: two queries however
    many matches (the seats streamed in rating order)."""
    luck = _known_luck(ladder_id)
    seats = (
        Participant.objects.filter(match__in=rated_matches(ladder_id))
        .order_by("match__rating_sequence", "seat")
        .values_list(
            "match_id", "match__rating_sequence", "match__duplicate_set_id", "match__set_rotation",
            "match__duplicate_set__rotations", "version_id", "rank",
        )
        .iterator(chunk_size=10_000)
    )  # fmt: skip
    rated: list[RatedMatch] = []
    adjusted, used = 0, set()

    def close(head: tuple, by_seat: list[tuple[int, int]]) -> None:
        nonlocal adjusted
        match_id, sequence, set_id, rotation, rotations = head
        known = luck.get(match_id)
        values = known[1] if known is not None and len(known[1]) == len(by_seat) else None
        if values is not None:
            adjusted += 1
            used.add(known[0])
        payoffs = counted_payoffs([r for _v, r in by_seat], values)
        versions = tuple(v for v, _r in by_seat)
        rated.append(RatedMatch(match_id, sequence, versions, tuple(payoffs), set_id, rotation or 0, rotations or 1))

    head, by_seat = None, []
    for match_id, sequence, set_id, rotation, rotations, version_id, rank in seats:
        if head is None or head[0] != match_id:
            if head is not None:
                close(head, by_seat)
            head, by_seat = (match_id, sequence, set_id, rotation, rotations), []
        by_seat.append((version_id, rank))
    if head is not None:
        close(head, by_seat)
    return LadderOutcomes(group(rated), len(rated), adjusted, sorted(used))
