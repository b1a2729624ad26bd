"""Keeping each rated ladder match's luck (cardroom.luck, docs/luck.md):
per seat, the part of its rank points chance gave it, from the replay.

When: right after the result is committed, by the worker that played the
match, from the replay still in its memory (``keep_luck``). The result is
recorded and rated first, so the luck never delays or loses one; a failure
to compute it is logged and stored as the match's ``MatchLuck.error``, and
the match counts plainly in the adjusted ranking. Matches without luck
(played before this existed, or whose worker died between the two steps)
get it from ``backfill`` (``manage.py backfill_luck``: idempotent, chunked).
Why not a task of its own: decision 250.
"""

from __future__ import annotations

import gzip
import json
import logging
import time
from typing import Any

from django.db import IntegrityError, transaction

from cardroom.luck import luck_of
from ladder import caching
from ladder.models import Match, MatchLuck

log = logging.getLogger("cardroom.luck")

ERROR_CHARS = 500


def compute(replay: dict[str, Any]) -> tuple[str, list[float]]:
    """(value function NAME@VERSION, each seat's luck) of a replay document."""
    report = luck_of(replay)
    return report.value_function, [s.luck for s in report.seats]


def keep_luck(match_id: int, replay: dict[str, Any]) -> MatchLuck | None:
    """Compute and store the luck of a finished match from its replay;
    never raises (the match is recorded already: a failure is logged, and
    stored as the row's ``error`` where the database takes it). Returns the
    row, or None when nothing could be stored (or a row was there)."""
    started = time.process_time()
    try:
        value_function, luck = compute(replay)
        fields: dict[str, Any] = {"value_function": value_function, "luck": luck}
    except Exception as exc:  # the estimator on a replay it cannot read: the match stays plain
        fields = {"error": f"{type(exc).__name__}: {exc}"}
    return _store(match_id, fields, round(1000 * (time.process_time() - started)))


def _store(match_id: int, fields: dict[str, Any], ms: int) -> MatchLuck | None:
    if "error" in fields:
        fields["error"] = fields["error"][:ERROR_CHARS]
        log.warning("luck not computed", extra={"match_id": match_id, "error": fields["error"]})
    try:
        with transaction.atomic():
            row = MatchLuck.objects.create(match_id=match_id, compute_ms=ms, **fields)
    except IntegrityError:  # computed already (a backfill beside the worker): the first row stands
        return None
    except Exception:
        log.exception("luck not stored", extra={"match_id": match_id})
        return None
    caching.bump(caching.MATCHES)  # the match's pages and lists show it now
    log.info("luck kept", extra={"match_id": match_id, "ms": ms})
    return row


def _replay_document(match: Match) -> dict[str, Any]:
    with match.replay.open("rb") as fh:
        return json.loads(gzip.decompress(fh.read()))


def missing(ladder_id: int | None = None):
    """Rated ladder matches with no luck row, oldest first (ids)."""
    qs = Match.objects.filter(
        kind=Match.Kind.LADDER, status=Match.Status.FINISHED, rating_sequence__isnull=False, luck__isnull=True
    )
    if ladder_id is not None:
        qs = qs.filter(ladder_id=ladder_id)
    return qs.order_by("pk").values_list("pk", flat=True)


def backfill(
    chunk: int = 100, limit: int | None = None, ladder_id: int | None = None, retry_failed: bool = False
) -> dict[str, int]:
    """Luck for every rated ladder match that has none, ``chunk`` matches a
    query, oldest first; a match's replay that cannot be read is stored as
    an error row, like a failure in the worker. Idempotent: a match with a
    row is skipped (``retry_failed``: its error row is deleted and tried
    again). ``limit``: at most this many matches."""
    if retry_failed:
        failed = MatchLuck.objects.exclude(error="")
        if ladder_id is not None:
            failed = failed.filter(match__ladder_id=ladder_id)
        failed.delete()
    done = {"computed": 0, "failed": 0}
    after = 0
    while limit is None or done["computed"] + done["failed"] < limit:
        room = chunk if limit is None else min(chunk, limit - done["computed"] - done["failed"])
        ids = list(missing(ladder_id).filter(pk__gt=after)[:room])
        if not ids:
            break
        after = ids[-1]
        for match in Match.objects.filter(pk__in=ids).order_by("pk").only("pk", "replay"):
            try:
                doc = _replay_document(match)
            except Exception as exc:  # a replay file lost or damaged: an error row, as in the worker
                row = _store(match.pk, {"error": f"the replay cannot be read: {type(exc).__name__}: {exc}"}, 0)
            else:
                row = keep_luck(match.pk, doc)
            if row is not None:
                done["failed" if row.error else "computed"] += 1
    return done
