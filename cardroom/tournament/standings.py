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


def compute(
    game: str, entries: Sequence[str], outcomes: Sequence[Outcome], duplicate: bool = False, intervals: bool = True
) -> dict[str, Any]:
    """The standings document (standings.json and the API use it as is).
    ``intervals=False`` leaves out the confidence intervals (a Swiss draw
    needs only the order)."""
    n = len(entries)
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
        for seat, e in enumerate(o.seats):
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
    key = {e: (mean_points[e], mean_margin[e]) for e in range(n)}
    order = sorted(range(n), key=lambda e: (-key[e][0], -key[e][1], e))
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

    def deal_means(e: int) -> dict[int, float]:
        return {d: _f(mean(v)) for d, v in per_deal_points[e].items()}

    rows = []
    for e in order:
        values = [_f(p) for p in points[e]]
        if not intervals:
            interval = stats.Interval(_f(mean_points[e]), None, None, len(values), "none")
        elif duplicate:
            interval = stats.mean_interval(list(deal_means(e).values()), method="t-per-deal")
        else:
            interval = stats.mean_interval(values, method="t-per-match")
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
    if duplicate:
        doc["deals"] = _deal_table(n, per_deal_ranks, per_deal_points, field_deal_ranks)
    return doc


def _differences(order, points, per_deal_points, duplicate: bool) -> list[dict[str, Any]]:
    """A 95% interval for points per match of a minus b, for every pair
    (in standings order: a is ahead of b)."""
    out = []
    for a, b in itertools.combinations(order, 2):
        if duplicate:
            shared = sorted(set(per_deal_points[a]) & set(per_deal_points[b]))
            diffs = [
                _f(sum(per_deal_points[a][d], Fraction(0)) / len(per_deal_points[a][d]))
                - _f(sum(per_deal_points[b][d], Fraction(0)) / len(per_deal_points[b][d]))
                for d in shared
            ]
            interval = stats.paired_interval(diffs)
        else:
            interval = stats.welch_interval([_f(p) for p in points[a]], [_f(p) for p in points[b]])
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
