"""Standings of an event from its match results (docs/tournaments.md).

Points come from ranks: at a table of k, the seat in place p (1 = best)
earns (k - p) / (k - 1): a win is 1, last is 0, and the places between are
spread evenly (4 players: 1, 2/3, 1/3, 0). Seats that share a rank share the
points of the places they cover (two tied on top of a 2-player table: 1/2
each). A forfeiting seat has the rank the engine gives it (below every seat
that did not forfeit), so it earns the points of that place.

The table is ordered by
1. points per match (an entry may have sat out a round);
2. the score margin per match: the entry's score minus the mean score of the
   others at its table, negated for Allegra (lower is better there), so that
   more is better in both games;
3. head-to-head among the entries still tied: over the matches where two or
   more of them sat together, +1 for each of them the entry finished ahead
   of, -1 for each it finished behind;
and entries tied on all three share their place.

Points and margins are exact fractions, so "tied" means exactly equal.

Beside them, where the matches' luck is known (cardroom.luck: each seat's
rank points with the luck of the cards taken out, an unbiased estimate of
the same expectation), every row shows its adjusted points per match with
their interval, and the document the adjusted differences, by the same
interval code as the plain ones. An event decided by the adjusted points
(``decided_by="adjusted"``, chosen by its organizer) is ordered by them
first, then as above; plain is the default.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cardroom.tournament import stats
from engine import get_game_class

# Pairwise intervals are listed for fields up to this size (n^2 grows fast).
MAX_PAIRWISE_FIELD = 64

# What the table's columns mean, in a few words, for whoever reads it
# without the docs at hand (under the table of ``cardroom tournament``).
LEGEND = (
    "points: 1 for a win, 0 for last, evenly between; per game = points / games",
    "margin: per game, score minus the mean of the others at the table (Allegra's negated: more is better)",
    "h2h: among entries level on points and margin, +1 for each finished ahead of, -1 for each behind",
    "see docs/tournaments.md, \"Standings\" (on a cardroom site: /docs/tournaments/#standings)",
)

@dataclass(frozen=True)
class Outcome:
    """One played match: entry by seat, and the result by seat."""

    number: int
    seats: tuple[int, ...]
    ranks: tuple[int, ...]
    scores: tuple[int, ...]
    deal: int = 0
    round: int = 0
    table: int = 0
    forfeits: tuple[int, ...] = ()
    # Each seat's luck-adjusted rank points (cardroom.luck), when known, and
    # the value function's NAME@VERSION they were computed with.
    adjusted: tuple[float, ...] | None = None
    value_function: str | None = None


def rank_points(ranks: Sequence[int]) -> list[Fraction]:
    k = len(ranks)
    out = []
    for r in ranks:
        tied = sum(1 for o in ranks if o == r)
        out.append(Fraction(sum(k - p for p in range(r, r + tied)), tied * (k - 1)))
    return out


def score_margins(scores: Sequence[int], lower_is_better: bool) -> list[Fraction]:
    k = len(scores)
    total = sum(scores)
    sign = -1 if lower_is_better else 1
    return [sign * (Fraction(s) - Fraction(total - s, k - 1)) for s in scores]


def _f(x: Fraction) -> float:
    return float(x)


def _mean_f(values: Sequence[Fraction] | Sequence[float]) -> float:
    """The mean as a float: exact fractions are summed exactly first."""
    return float(sum(values, Fraction(0) if values and isinstance(values[0], Fraction) else 0.0) / len(values))


DECIDERS = ("plain", "adjusted")


def compute(
    game: str,
    entries: Sequence[str],
    outcomes: Sequence[Outcome],
    duplicate: bool = False,
    intervals: bool = True,
    decided_by: str = "plain",
) -> dict[str, Any]:
    """The standings document (standings.json and the API use it as is).
    ``intervals=False`` leaves out the confidence intervals (a Swiss draw
    needs only the order). ``decided_by="adjusted"`` orders the table by the
    luck-adjusted points per match first. The adjusted columns are there
    when some outcome carries its luck, or the adjusted points decide."""
    if decided_by not in DECIDERS:
        raise ValueError(f"decided_by must be one of {', '.join(DECIDERS)}, not {decided_by!r}")
    n = len(entries)
    # A match whose luck is not known counts its plain points here (its luck
    # left in: still an unbiased estimate, only a noisier one).
    adjusted: list[list[float]] = [[] for _ in range(n)]
    adjusted_known = [0] * n
    per_deal_adjusted: list[dict[int, list[float]]] = [defaultdict(list) for _ in range(n)]
    value_functions: set[str] = set()
    lower = get_game_class(game).lower_scores_win
    points: list[list[Fraction]] = [[] for _ in range(n)]
    margins: list[list[Fraction]] = [[] for _ in range(n)]
    wins = [0] * n
    forfeits = [0] * n
    # cross[a][b] = [games together, a's score against b (1 ahead, 1/2 level)]
    cross: dict[tuple[int, int], list[Fraction]] = defaultdict(lambda: [Fraction(0), Fraction(0)])
    per_deal_points: list[dict[int, list[Fraction]]] = [defaultdict(list) for _ in range(n)]
    per_deal_ranks: list[dict[int, list[int]]] = [defaultdict(list) for _ in range(n)]
    field_deal_ranks: dict[int, list[int]] = defaultdict(list)
    for o in outcomes:
        pts = rank_points(o.ranks)
        mrg = score_margins(o.scores, lower)
        if o.value_function is not None:
            value_functions.add(o.value_function)
        for seat, e in enumerate(o.seats):
            adj = _f(pts[seat]) if o.adjusted is None else float(o.adjusted[seat])
            adjusted[e].append(adj)
            adjusted_known[e] += o.adjusted is not None
            per_deal_adjusted[e][o.deal].append(adj)
            points[e].append(pts[seat])
            margins[e].append(mrg[seat])
            wins[e] += o.ranks[seat] == 1
            forfeits[e] += seat in o.forfeits
            per_deal_points[e][o.deal].append(pts[seat])
            per_deal_ranks[e][o.deal].append(o.ranks[seat])
            field_deal_ranks[o.deal].append(o.ranks[seat])
        for sa, sb in itertools.permutations(range(len(o.seats)), 2):
            cell = cross[(o.seats[sa], o.seats[sb])]
            cell[0] += 1
            ra, rb = o.ranks[sa], o.ranks[sb]
            cell[1] += 1 if ra < rb else Fraction(1, 2) if ra == rb else 0

    def mean(values: list[Fraction]) -> Fraction:
        return sum(values, Fraction(0)) / len(values) if values else Fraction(0)

    mean_points = [mean(p) for p in points]
    mean_margin = [mean(m) for m in margins]
    mean_adjusted = [_mean_f(a) if a else 0.0 for a in adjusted]
    show_adjusted = decided_by == "adjusted" or any(o.adjusted is not None for o in outcomes)
    if decided_by == "adjusted":
        key = {e: (mean_adjusted[e], mean_points[e], mean_margin[e]) for e in range(n)}
    else:
        key = {e: (mean_points[e], mean_margin[e]) for e in range(n)}
    order = sorted(range(n), key=lambda e: (*(-k for k in key[e]), e))
    h2h = [0] * n
    place = [0] * n
    i = 0
    while i < n:
        j = i
        while j < n and key[order[j]] == key[order[i]]:
            j += 1
        group = order[i:j]
        if len(group) > 1:
            members = set(group)
            for o in outcomes:
                at = [(seat, e) for seat, e in enumerate(o.seats) if e in members]
                for (sa, a), (sb, _b) in itertools.permutations(at, 2):
                    h2h[a] += (o.ranks[sa] < o.ranks[sb]) - (o.ranks[sa] > o.ranks[sb])
            group.sort(key=lambda e: (-h2h[e], e))
        for pos, e in enumerate(group):
            ahead = sum(1 for other in group[:pos] if h2h[other] > h2h[e])
            place[e] = i + 1 + ahead if len(group) > 1 else i + 1
        order[i:j] = group
        i = j

    rows = []
    for e in order:
        if not intervals:
            interval = stats.Interval(_f(mean_points[e]), None, None, len(points[e]), "none")
        else:
            interval = _entry_interval(points[e], per_deal_points[e], duplicate)
        row = {
            "place": place[e],
            "entry": e,
            "name": entries[e],
            "matches": len(points[e]),
            "points": _f(sum(points[e], Fraction(0))),
            "points_per_match": _f(mean_points[e]),
            "score_margin": _f(mean_margin[e]),
            "head_to_head": h2h[e],
            "wins": wins[e],
            "forfeits": forfeits[e],
            "ci95": interval.within(0.0, 1.0).as_dict(),
        }
        if show_adjusted:
            if not intervals:
                adjusted_interval = stats.Interval(mean_adjusted[e], None, None, len(adjusted[e]), "none")
            else:
                adjusted_interval = _entry_interval(adjusted[e], per_deal_adjusted[e], duplicate)
            row["adjusted"] = {
                "points_per_match": mean_adjusted[e],
                "matches_adjusted": adjusted_known[e],
                "ci95": adjusted_interval.within(0.0, 1.0).as_dict(),
            }
        rows.append(row)

    crosstable = {
        "entries": list(range(n)),
        "cells": [
            [
                None if a == b or (a, b) not in cross else {"games": int(cross[(a, b)][0]), "score": _f(cross[(a, b)][1])}
                for b in range(n)
            ]
            for a in range(n)
        ]
        if n <= MAX_PAIRWISE_FIELD
        else None,
    }
    doc: dict[str, Any] = {
        "game": game,
        "matches_played": len(outcomes),
        "points_table": "(k - place) / (k - 1); shared places share their points",
        "standings": rows,
        "crosstable": crosstable,
    }
    if intervals and n <= MAX_PAIRWISE_FIELD:
        doc["differences"] = _differences(order, points, per_deal_points, duplicate)
    if show_adjusted:
        doc["decided_by"] = decided_by
        doc["value_functions"] = sorted(value_functions)
        if intervals and n <= MAX_PAIRWISE_FIELD:
            doc["adjusted_differences"] = _differences(order, adjusted, per_deal_adjusted, duplicate)
    if duplicate:
        doc["deals"] = _deal_table(n, per_deal_ranks, per_deal_points, field_deal_ranks)
    return doc


def _entry_interval(values, per_deal: dict[int, list], duplicate: bool) -> stats.Interval:
    """An entry's points per match with its 95% interval: over matches, or
    (duplicate) over its per-deal means. ``values``: exact or float points."""
    if duplicate:
        return stats.mean_interval([_mean_f(v) for v in per_deal.values()], method="t-per-deal")
    return stats.mean_interval([float(p) for p in values], method="t-per-match")


def _differences(order, points, per_deal_points, duplicate: bool) -> list[dict[str, Any]]:
    """A 95% interval for points per match of a minus b, for every pair
    (in standings order: a is ahead of b); plain points (exact fractions)
    or adjusted ones (floats) alike."""
    out = []
    for a, b in itertools.combinations(order, 2):
        if duplicate:
            shared = sorted(set(per_deal_points[a]) & set(per_deal_points[b]))
            diffs = [_mean_f(per_deal_points[a][d]) - _mean_f(per_deal_points[b][d]) for d in shared]
            interval = stats.paired_interval(diffs)
        else:
            interval = stats.welch_interval([float(p) for p in points[a]], [float(p) for p in points[b]])
        interval = interval.within(-1.0, 1.0)
        out.append({"a": a, "b": b, "ci95": interval.as_dict(), "significant": interval.excludes_zero()})
    return out


def _deal_table(n, per_deal_ranks, per_deal_points, field_deal_ranks) -> dict[str, Any]:
    """Duplicate: how each entry did on each deal (mean rank over its seat
    rotations), against the field's mean rank on the same cards."""
    deals = sorted(field_deal_ranks)
    field_mean = {d: sum(field_deal_ranks[d]) / len(field_deal_ranks[d]) for d in deals}
    rows = []
    for e in range(n):
        cells = []
        vs = []
        for d in deals:
            ranks = per_deal_ranks[e].get(d)
            if not ranks:
                cells.append(None)
                continue
            m = sum(ranks) / len(ranks)
            vs.append(m - field_mean[d])
            pts = per_deal_points[e][d]
            cells.append({"mean_rank": m, "points": _f(sum(pts, Fraction(0)) / len(pts)), "vs_field": m - field_mean[d]})
        rows.append({"entry": e, "deals": cells, "mean_vs_field": sum(vs) / len(vs) if vs else None})
    return {"deals": deals, "field_mean_rank": [field_mean[d] for d in deals], "entries": rows}
