"""Each ladder's luck-adjusted ranking (docs/ladder.md, "The adjusted
rating on the ladder"): ``ladder.ranking.rank`` over the ladder's rated matches, each seat
counting its rank points less its luck where the luck is known
(ladder.services.luck), its plain rank points where it is not.

Kept as a stored snapshot (AdjustedRanking, one AdjustedRating row per
version), recomputed by a periodic task when the ladder has new results or
new luck since the last one (``refresh_all``), never on a request: a fit
over every match of a ladder is too dear to repeat per match or per page
(decision 250 has the figures). Elo and OpenSkill are untouched.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from ladder import caching
from ladder.models import AdjustedRanking, AdjustedRating, Ladder, Match, MatchLuck, Participant
from ladder.ranking import MODEL, Outcome, rank
from ladder.selectors import seat_payoffs
from ladder.selectors.duplicate_sets import Played, group, sets_of

log = logging.getLogger("cardroom.adjusted")


@dataclass(frozen=True)
class Inputs:
    """What a ladder's ranking is computed from, and how to tell it changed."""

    outcomes: list[Outcome]
    adjusted: int  # outcomes whose payoffs have the luck taken out
    value_functions: list[str]


def counted_payoffs(ranks: list[int], luck: list[float] | None) -> list[float]:
    """Each seat's payoff as the ranking counts it: its rank points, less
    its luck when that is known (the API's ``adjusted``, else ``payoff``)."""
    points = seat_payoffs(ranks)
    if luck is None:
        return points
    return [p - x for p, x in zip(points, luck)]


def _rated(ladder_id: int):
    return Match.objects.filter(ladder_id=ladder_id, kind=Match.Kind.LADDER, rating_sequence__isnull=False)


def _seats(ladder_id: int) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """(match id, [(version id, rank)] by seat) of every rated match of the
    ladder, in the order they were rated (streamed)."""
    rows = (
        Participant.objects.filter(match__in=_rated(ladder_id))
        .order_by("match__rating_sequence", "seat")
        .values_list("match_id", "version_id", "rank")
        .iterator(chunk_size=10_000)
    )
    current, seats = None, []
    for match_id, version_id, rank_ in rows:
        if match_id != current:
            if current is not None:
                yield current, seats
            current, seats = match_id, []
        seats.append((version_id, rank_))
    if current is not None:
        yield current, seats


def inputs(ladder_id: int) -> Inputs:
    """The ladder's outcomes: one per rated match, and one per complete
    duplicate set (its rotations' mean, ``matches=k``: decision 255)."""
    luck = {
        match_id: (value_function, values)
        for match_id, value_function, values in MatchLuck.objects.filter(match__in=_rated(ladder_id), error="")
        .exclude(luck=None)
        .values_list("match_id", "value_function", "luck")
    }
    sets = sets_of(ladder_id)
    played, adjusted, used = [], 0, set()
    for match_id, seats in _seats(ladder_id):
        known = luck.get(match_id)
        values = known[1] if known is not None and len(known[1]) == len(seats) else None
        if values is not None:
            adjusted += 1
            used.add(known[0])
        payoffs = counted_payoffs([r for _v, r in seats], values)
        played.append(Played(match_id, tuple(v for v, _r in seats), tuple(payoffs), *sets.get(match_id, (None, 1))))
    return Inputs(group(played), adjusted, sorted(used))


def _marks(ladder_id: int) -> tuple[int, int]:
    """(rated matches, luck rows) of the ladder: a change in either means its
    ranking is behind. Counts, not the last rating_sequence: results commit
    in an order their sequence numbers need not follow."""
    return _rated(ladder_id).count(), MatchLuck.objects.filter(match__ladder_id=ladder_id).count()


def is_stale(ladder: Ladder) -> bool:
    snapshot = AdjustedRanking.objects.filter(ladder=ladder).first()
    if snapshot is None:
        return True
    return (snapshot.rated_matches, snapshot.luck_rows) != _marks(ladder.pk) or snapshot.model != MODEL


def refresh(ladder: Ladder) -> AdjustedRanking:
    """Recompute the ladder's ranking from its stored results and store it."""
    started = time.monotonic()
    marks = _marks(ladder.pk)  # first: a result that lands meanwhile is counted again next time, never missed
    given = inputs(ladder.pk)
    ranks = rank(given.outcomes) if given.outcomes else []
    ms = round(1000 * (time.monotonic() - started))
    with transaction.atomic():
        snapshot, _ = AdjustedRanking.objects.select_for_update().get_or_create(
            ladder=ladder, defaults={"model": MODEL}
        )
        snapshot.model = MODEL
        snapshot.value_functions = given.value_functions
        snapshot.matches = len(given.outcomes)
        snapshot.adjusted_matches = given.adjusted
        snapshot.rated_matches, snapshot.luck_rows = marks
        settled = [r.matches for r in ranks if r.settled]
        snapshot.settle_matches = round(statistics.median(settled)) if settled else None
        snapshot.computed = timezone.now()
        snapshot.compute_ms = ms
        snapshot.save()
        AdjustedRating.objects.filter(ladder=ladder).delete()
        AdjustedRating.objects.bulk_create(
            AdjustedRating(
                ladder=ladder, version_id=r.version, rating=r.rating, low=r.low, high=r.high, matches=r.matches,
                place=r.place, settled=r.settled, more_matches=r.more_matches,
            )
            for r in ranks
        )  # fmt: skip
        caching.bump(caching.RATINGS)
    log.info("adjusted ranking refreshed", extra={"ladder_id": ladder.pk, "matches": len(given.outcomes), "ms": ms})
    return snapshot


def refresh_all() -> list[int]:
    """Refresh the ranking of every active ladder that has new results or
    new luck since its last one; the ids refreshed."""
    done = []
    for ladder in Ladder.objects.filter(active=True).order_by("pk"):
        if not is_stale(ladder):
            continue
        try:
            refresh(ladder)
        except Exception:  # the last ranking stays shown; the next period tries again
            log.exception("adjusted ranking not refreshed", extra={"ladder_id": ladder.pk})
            continue
        done.append(ladder.pk)
    return done
