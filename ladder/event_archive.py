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
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections.abc import Iterator

from cardroom.tournament.local import replay_file
from ladder import selectors
from ladder.models import Match, Participant, Tournament, TournamentMatch

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
            .values("number", "round", "table", "deal", "rotation", "seats", "keyed_chance", "match_id", "match__seed", "match__status", "match__replay")[:PAGE]
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
            "standings_computed": stored["computed"] and stored["computed"].isoformat(),
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
