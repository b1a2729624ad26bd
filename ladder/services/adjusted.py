"""Each ladder's luck-adjusted ranking (docs/ladder.md, "The adjusted
rating on the ladder"): ``ladder.ranking.rank`` over the outcomes that
``ladder.selectors.outcomes`` reads (its one reader of which matches count:
Elo's rated ones, each seat's rank points less its luck where the luck is
known, a complete duplicate set as one outcome).

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

from django.db import transaction
from django.utils import timezone

from ladder import caching
from ladder.models import AdjustedRanking, AdjustedRating, Ladder, MatchLuck
from ladder.ranking import MODEL, rank
from ladder.selectors.outcomes import ladder_outcomes, rated_matches

log = logging.getLogger("cardroom.adjusted")


def _marks(ladder_id: int) -> tuple[int, int]:
    """(rated matches, luck rows) of the ladder: a change in either means its
    ranking is behind. Counts, not the last rating_sequence: results commit
    in an order their sequence numbers need not follow."""
    return rated_matches(ladder_id).count(), MatchLuck.objects.filter(match__ladder_id=ladder_id).count()


def is_stale(ladder: Ladder) -> bool:
    snapshot = AdjustedRanking.objects.filter(ladder=ladder).first()
    if snapshot is None:
        return True
    return (snapshot.rated_matches, snapshot.luck_rows) != _marks(ladder.pk) or snapshot.model != MODEL


def refresh(ladder: Ladder) -> AdjustedRanking:
    """Recompute the ladder's ranking from its stored results and store it."""
    started = time.monotonic()
    marks = _marks(ladder.pk)  # first: a result that lands meanwhile is counted again next time, never missed
    given = ladder_outcomes(ladder.pk)
    ranks = rank(given.outcomes) if given.outcomes else []
    ms = round(1000 * (time.monotonic() - started))
    with transaction.atomic():
        snapshot, _ = AdjustedRanking.objects.select_for_update().get_or_create(
            ladder=ladder, defaults={"model": MODEL}
        )
        snapshot.model = MODEL
        snapshot.value_functions = given.value_functions
        snapshot.matches = given.matches  # matches, not outcomes: a set counts its k rotations
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
    log.info("adjusted ranking refreshed", extra={"ladder_id": ladder.pk, "matches": given.matches, "ms": ms})
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
