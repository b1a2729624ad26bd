"""An event's matches, batch by batch, as a pure function of its spec and
the results so far: the command line and the platform both schedule with it.

A round-robin or duplicate event is one batch (all its matches are known at
creation); a Swiss event has one batch per round, drawn when the previous
round is complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardroom.tournament import schedule, standings
from cardroom.tournament.schedule import EventSpec, MatchPlan, Table
from cardroom.tournament.seeds import KeyedChance

__all__ = ["batch_count", "batch_plans", "chance_for", "outcome_of", "standings_of"]


def batch_count(spec: EventSpec) -> int:
    return schedule.num_rounds(spec) if spec.format == "swiss" else 1


def batch_plans(spec: EventSpec, batch: int, outcomes: Sequence[standings.Outcome], first_number: int = 0) -> list[MatchPlan]:
    """The matches of batch ``batch``; for Swiss round r, ``outcomes`` must
    hold every match of rounds 0..r-1."""
    if not 0 <= batch < batch_count(spec):
        raise schedule.ScheduleError(f"the event has no batch {batch}")
    if spec.format != "swiss":
        return schedule.static_matches(spec)
    n = spec.field_size
    if batch == 0:
        ranking = schedule.initial_ranking(spec)
    else:
        doc = standings.compute(spec.game, [str(e) for e in range(n)], outcomes, intervals=False)
        ranking = [row["entry"] for row in doc["standings"]]
    tables = swiss_history(spec, outcomes)
    met = schedule.pairs_of(tables)
    played = [0] * n
    for table in tables:
        for e in table.entries:
            played[e] += 1
    byes = [batch - p for p in played]
    drawn = schedule.swiss_tables(spec, batch, ranking, met, byes)
    return schedule.table_matches(spec, drawn, first_number)


def swiss_history(spec: EventSpec, outcomes: Sequence[standings.Outcome]) -> list[Table]:
    """The tables played so far (one per round and table number)."""
    seen: dict[tuple[int, int], Table] = {}
    for o in outcomes:
        key = (o.round, o.table)
        if key not in seen:
            seen[key] = Table(o.round, o.table, tuple(sorted(o.seats)))
    return list(seen.values())


def chance_for(plan: MatchPlan):
    """The chance source of a match for ``run_match``: a duplicate deal's
    keyed streams, or None (one stream from the seed)."""
    return KeyedChance(plan.seed) if plan.keyed_chance else None


def outcome_of(plan: MatchPlan, result: dict[str, Any], luck: dict[str, Any] | None = None) -> standings.Outcome:
    """``result`` is a replay's result object (scores, ranks, forfeits);
    ``luck``, where known, its luck (``value_function`` and ``adjusted``
    points by seat, as cardroom.luck gives them)."""
    return standings.Outcome(
        number=plan.number,
        seats=tuple(plan.seats),
        ranks=tuple(result["ranks"]),
        scores=tuple(result["scores"]),
        deal=plan.deal,
        round=plan.round,
        table=plan.table,
        forfeits=tuple(f["seat"] for f in result.get("forfeits", [])),
        adjusted=None if luck is None else tuple(luck["adjusted"]),
        value_function=None if luck is None else luck["value_function"],
    )


def standings_of(
    spec: EventSpec, names: Sequence[str], outcomes: Sequence[standings.Outcome], decided_by: str = "plain"
) -> dict[str, Any]:
    """The event's table; ``decided_by`` (the organizer's choice): plain or
    luck-adjusted points per match first (cardroom.tournament.standings)."""
    ordered = sorted(outcomes, key=lambda o: o.number)
    return standings.compute(spec.game, names, ordered, duplicate=spec.format == "duplicate", decided_by=decided_by)
