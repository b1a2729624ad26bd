"""Reads of the ladder's duplicate sets (ladder.services.duplicate_sets,
decision 255): whether a set's deal may be shown yet. How a set counts in
the adjusted rating (a complete set is one result standing for its k
matches) is ladder.selectors.outcomes's, the ranking's one reader."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from ladder.models import Match

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
