"""Reads of the ladders' luck-adjusted rankings (stored by
ladder.services.adjusted): what the standings (API and leaderboard) and a
bot's page show beside Elo, and what informative pairing reads
(``strengths``). A page costs two queries however many rows."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from ladder.models import AdjustedRanking, AdjustedRating, Bot, BotVersion, Ladder


def ranking(ladder_id: int) -> dict[str, Any] | None:
    """The ranking's inputs and model, as the API gives them (None before
    its first computation)."""
    snapshot = AdjustedRanking.objects.filter(ladder_id=ladder_id).first()
    if snapshot is None:
        return None
    return {
        "model": snapshot.model,
        "value_functions": snapshot.value_functions,
        "matches": snapshot.matches,
        "adjusted_matches": snapshot.adjusted_matches,
        "settle_matches": snapshot.settle_matches,
        "computed": snapshot.computed,
    }


def unranked(version: BotVersion | None, settle_matches: int | None) -> dict[str, Any]:
    """A version the ranking does not hold yet (new, or played since it was
    computed): not settled; about as many matches as the ladder's settled
    versions have played, when any is."""
    return {
        "version": version.pk if version else None,
        "version_number": version.number if version else None,
        "rating": None, "low": None, "high": None, "place": None, "matches": 0,
        "settled": False, "more_matches": settle_matches,
    }  # fmt: skip


def _row(r: AdjustedRating, number: int) -> dict[str, Any]:
    return {
        "version": r.version_id, "version_number": number,
        "rating": r.rating, "low": r.low, "high": r.high, "place": r.place, "matches": r.matches,
        "settled": r.settled, "more_matches": r.more_matches,
    }  # fmt: skip


def for_bots(ladder_id: int, bot_ids: list[int], settle_matches: int | None) -> dict[int, dict[str, Any]]:
    """{bot id: the adjusted figures of the version it plays now} on the
    ladder (the bots with no version left out)."""
    current = {
        bot_id: (version_id, number)
        for bot_id, version_id, number in Bot.objects.filter(pk__in=bot_ids, current_version__isnull=False)
        .order_by()
        .values_list("pk", "current_version_id", "current_version__number")
    }
    rows = {
        r.version_id: r
        for r in AdjustedRating.objects.filter(ladder_id=ladder_id, version_id__in=[v for v, _n in current.values()])
    }
    out = {}
    for bot_id, (version_id, number) in current.items():
        r = rows.get(version_id)
        if r is not None:
            out[bot_id] = _row(r, number)
        else:
            out[bot_id] = {**unranked(None, settle_matches), "version": version_id, "version_number": number}
    return out


def for_version(version: BotVersion) -> dict[int, dict[str, Any]]:
    """{ladder id: the version's adjusted figures there, with the ladder's
    ``ladder_name``} on every active ladder of its game (unranked ones
    included: a version just validated is not settled, and needs about the
    ladder's ``settle_matches``). Three queries."""
    snapshots = {
        s.ladder_id: s
        for s in AdjustedRanking.objects.filter(ladder__game=version.bot.game, ladder__active=True).order_by()
    }
    rows = {r.ladder_id: r for r in AdjustedRating.objects.filter(version=version, ladder__active=True)}
    ladders = Ladder.objects.filter(game=version.bot.game, active=True).order_by("pk").values_list("pk", "name")
    out = {}
    for ladder_id, name in ladders:
        r = rows.get(ladder_id)
        if r is not None:
            out[ladder_id] = _row(r, version.number)
        else:
            snapshot = snapshots.get(ladder_id)
            out[ladder_id] = unranked(version, snapshot.settle_matches if snapshot else None)
        out[ladder_id]["ladder_name"] = name
    return out


def strengths(ladder_id: int, bot_ids: list[int]) -> dict[int, tuple[float, float]]:
    """{bot id: (rating, half-width of its 95% interval)} of the version each
    bot plays now, in the ladder's stored ranking; bots whose current version
    it does not hold yet (new, or not computed since) left out. One query."""
    rows = (
        AdjustedRating.objects.filter(
            ladder_id=ladder_id, version__bot_id__in=bot_ids, version__bot__current_version=F("version")
        )
        .order_by()
        .values_list("version__bot_id", "rating", "low", "high")
    )
    return {bot_id: (rating, (high - low) / 2) for bot_id, rating, low, high in rows}
