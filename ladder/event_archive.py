"""An ended event as one zip: ``standings.json`` (the layout the command
line's ``cardroom tournament`` writes, with the standings as stored when the
event ended) and ``replays/match-NNNN.json``, every finished match's replay
(format v1). A read, like ladder.selectors: nothing here writes.

Streamed with the standard library's zipfile onto a sink that is not
seekable (so each member is written with a data descriptor): the response
yields the bytes as they are made, each replay decompressed and deflated in
64 KiB pieces, and ``standings.json``'s match list written a page of rows at
a time, so memory holds a page of rows and a piece of a replay, never the
archive (the zip's central directory, some 100 bytes a member, aside).

What is served is that stream stored once (``stored``): in the file storage
under ``event-archives/<event>/<fingerprint>.zip``, the fingerprint being of
everything the archive holds that can change after the event ended (its
row, stored standings, entries' names and owners, its matches' states), and
itself kept in the shared cache until a write bumps the public reads. A
request for an unchanged event reads the fingerprint from the cache and
sends the stored file; the archive is built again only when what it holds
changed (decision 201).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import tempfile
import zipfile
from collections.abc import Iterator

from django.core.files import File
from django.core.files.storage import default_storage
from django.db.models import Count, Max

from cardroom.tournament.local import replay_file
from ladder import caching, selectors
from ladder.models import Match, Participant, Tournament, TournamentEntry, TournamentMatch, TournamentStandings

log = logging.getLogger(__name__)

PIECE = 64 * 1024
PAGE = 500


class _Sink:
    """A write-only stream: what zipfile writes waits here until taken."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> Iterator[bytes]:
        if self.parts:
            data, self.parts = b"".join(self.parts), []
            yield data


def filename(t: Tournament) -> str:
    return f"cardroom-event-{t.pk}.zip"


def _pages(t: Tournament) -> Iterator[list[dict]]:
    """The event's matches in number order, a page at a time, each with its
    seats' results."""
    last = -1
    while True:
        rows = list(
            TournamentMatch.objects.filter(tournament=t, number__gt=last)
            .order_by("number")
            .values("number", "round", "table", "deal", "rotation", "seats", "keyed_chance", "match_id", "match__seed", "match__status", "match__replay", "luck")[:PAGE]
        )
        if not rows:
            return
        results: dict[int, list] = {}
        for match_id, seat, rank, score, forfeit in (
            Participant.objects.filter(match_id__in=[r["match_id"] for r in rows])
            .order_by("match_id", "seat")
            .values_list("match_id", "seat", "rank", "score", "forfeit_reason")
        ):
            results.setdefault(match_id, []).append((seat, rank, score, forfeit))
        for r in rows:
            r["results"] = results.get(r["match_id"], [])
        yield rows
        last = rows[-1]["number"]


def _match_row(r: dict, total: int) -> dict:
    finished = r["match__status"] == Match.Status.FINISHED
    return {
        "number": r["number"], "round": r["round"], "table": r["table"], "deal": r["deal"], "rotation": r["rotation"],
        "seats": r["seats"], "seed": r["match__seed"], "keyed_chance": r["keyed_chance"], "match": r["match_id"],
        "status": r["match__status"], "replay": f"replays/{replay_file(r['number'], total)}" if finished else None,
        "ranks": [x[1] for x in r["results"]] if finished else None,
        "scores": [x[2] for x in r["results"]] if finished else None,
        "forfeits": [x[0] for x in r["results"] if x[3]] if finished else None,
        # the luck behind the adjusted standings (cardroom.luck), null where not known
        "luck": r["luck"],
    }  # fmt: skip


def _head(t: Tournament) -> dict:
    stored = selectors.tournament_standings(t)
    table = {k: v for k, v in stored.items() if k not in ("computed", "results_counted")}
    return {
        "format": "cardroom-tournament-standings",
        "version": 1,
        "event": {
            "id": t.pk, "name": t.name, "game": t.game, "format": t.format, "field_size": t.entries.count(),
            "table_size": t.table_size, "deals": t.deals, "rounds": t.rounds, "seed": t.seed, "options": t.options,
            "pairing": t.pairing, "rounds_played": t.num_rounds, "matches": t.total_matches, "status": t.status,
            "time": {"startup_ms": t.startup_ms, "per_move_ms": t.per_move_ms, "overage_ms": t.overage_ms, "total_ms": t.total_ms},
            "starts": t.starts and t.starts.isoformat(), "started": t.started and t.started.isoformat(),
            "finished": t.finished and t.finished.isoformat(), "cancelled_reason": t.cancelled_reason,
            "standings_computed": stored["computed"] and stored["computed"].isoformat(), "decided_by": t.decided_by,
        },  # fmt: skip
        "entries": [{**e, "entered": e["entered"].isoformat()} for e in selectors.tournament_entries(t)],
        **table,
    }


def stream(t: Tournament) -> Iterator[bytes]:
    """The archive's bytes, as they are made."""
    sink = _Sink()
    total = t.total_matches
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("standings.json", "w") as out:
            head = json.dumps(_head(t), indent=1)
            out.write(head[:-2].encode() + b',\n "matches": [')  # (the head's closing "\n}" comes after the matches)
            first = True
            for page in _pages(t):
                for r in page:
                    out.write((b"\n  " if first else b",\n  ") + json.dumps(_match_row(r, total), separators=(",", ":")).encode())
                    first = False
                yield from sink.take()
            out.write(b"\n ]\n}\n")
        yield from sink.take()
        storage = Match._meta.get_field("replay").storage
        for page in _pages(t):
            for r in page:
                if r["match__status"] != Match.Status.FINISHED or not r["match__replay"]:
                    continue
                with storage.open(r["match__replay"], "rb") as stored, gzip.GzipFile(fileobj=stored) as replay, zf.open(
                    f"replays/{replay_file(r['number'], total)}", "w"
                ) as out:
                    while piece := replay.read(PIECE):
                        out.write(piece)
                        yield from sink.take()
                yield from sink.take()
    yield from sink.take()


# -- stored once per change --------------------------------------------------------------

FOLDER = "event-archives"


def fingerprint(t: Tournament) -> str:
    """A digest of what the archive of ``t`` holds that can still change once
    the event has ended: its row, its stored standings, its entries' names,
    owners and versions, and its matches' states (a match running at a
    cancel is still recorded). Four queries, none over participants or
    replays (a finished replay never changes)."""
    parts = [
        list(Tournament.objects.filter(pk=t.pk).values_list()),
        list(TournamentStandings.objects.filter(pk=t.pk).values_list("results", "computed")),
        list(TournamentEntry.objects.filter(tournament=t).order_by("index").values_list("index", "bot_id", "bot__name", "bot__owner__username", "version__number")),
        list(Match.objects.filter(tournament_slot__tournament=t).order_by("status").values_list("status").annotate(n=Count("id"), last=Max("finished"))),
    ]
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()


def stored(t: Tournament) -> tuple[str, str]:
    """(The storage name of the event's archive as it is now, its
    fingerprint): the fingerprint from the shared cache while no write has
    bumped the public reads, the archive built and stored only if none is
    stored for it."""
    name, digest = caching.cached_part(f"event-archive:{t.pk}", caching.PUBLIC_READS["web-tournament"][1], lambda: _store(t))
    if not default_storage.exists(name):  # (removed since: the storage emptied, say)
        name, digest = _store(t)
    return name, digest


def _store(t: Tournament) -> tuple[str, str]:
    digest = fingerprint(t)
    folder = f"{FOLDER}/{t.pk}"
    name = f"{folder}/{digest}.zip"
    if default_storage.exists(name):
        return name, digest
    with tempfile.TemporaryFile() as built:
        for piece in stream(t):
            built.write(piece)
        built.seek(0)
        # (two requests building at once: each stores a whole archive; the storage names the second apart)
        name = default_storage.save(name, File(built, name=name))
    try:
        _dirs, files = default_storage.listdir(folder)
        for old in files:
            if not old.startswith(digest):
                default_storage.delete(f"{folder}/{old}")
    except OSError:
        log.warning("could not remove an event's old archives", exc_info=True, extra={"tournament": t.pk})
    log.info("event archive stored", extra={"tournament": t.pk, "bytes": default_storage.size(name)})
    return name, digest
