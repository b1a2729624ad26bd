"""``cardroom tournament``: a whole event on this machine.

Matches run in worker processes (``jobs`` of them; one process per core
plays built-in bots in parallel, which threads could not). Each worker plays
its match with the ordinary runner, writes the replay itself (a replay never
crosses a pipe) and hands back only the result. Swiss rounds are drawn when
the previous round is complete; within a round, every match is independent.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardroom.launch import Launcher
from cardroom.players import TimeControl
from cardroom.runner import run_match
from cardroom.tournament import event, schedule
from cardroom.tournament.schedule import EventSpec, MatchPlan


@dataclass(frozen=True)
class Entry:
    name: str
    bot: str  # the BOT argument: builtin:NAME or a path


def entry_names(bots: Sequence[str]) -> list[Entry]:
    """One entry per BOT argument; the same bot twice is two entries
    (``random``, ``random#2``)."""
    seen: dict[str, int] = {}
    entries = []
    for bot in bots:
        base = bot.split(":", 1)[1] if bot.startswith("builtin:") else Path(bot.rstrip("/")).stem or bot
        seen[base] = seen.get(base, 0) + 1
        entries.append(Entry(base if seen[base] == 1 else f"{base}#{seen[base]}", bot))
    return entries


def replay_name(plan: MatchPlan, total: int) -> str:
    return replay_file(plan.number, total)


def replay_file(number: int, total: int) -> str:
    """The replay's file name in an event's folder (or the site's archive of it)."""
    width = max(4, len(str(total - 1)))
    return f"match-{number:0{width}d}.json"


def dump_json(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":")) + "\n"


# -- one match, in a worker process ----------------------------------------

_job: dict[str, Any] = {}


def _init_worker(job: dict[str, Any], cores=None) -> None:
    _job.clear()
    _job.update(job)
    if cores is not None:
        # One core per worker: a worker that the scheduler moves between cores
        # (to make room for the parent or a kernel thread) loses its warm
        # caches, which cost about a tenth of the speed-up on this machine.
        # A worker started to replace a dead one finds no core left and floats.
        try:
            os.sched_setaffinity(0, {cores.get(timeout=1)})
        except (queue.Empty, OSError):
            pass


def _worker_pool(jobs: int, job: dict[str, Any]) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("fork")  # the workers inherit the imported engine and bots
    cores = None
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if 1 < jobs <= len(allowed):
        cores = context.Queue()
        for core in allowed[:jobs]:
            cores.put(core)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=(job, cores))


def _play_one(plan: MatchPlan) -> dict[str, Any]:
    job = _job
    entries: list[Entry] = job["entries"]
    # No match_id: run_match draws an opaque one. An id made of the event
    # seed (``local-<seed>-<n>``) told every bot its deal.
    record = run_match(
        job["game"],
        [entries[e].bot for e in plan.seats],
        seed=plan.seed,
        options=job["options"],
        time=job["time"],
        names=[entries[e].name for e in plan.seats],
        chance=event.chance_for(plan),
        launcher=job["launcher"],
    )
    path = Path(job["replays"]) / replay_name(plan, job["total"])
    path.write_text(dump_json(record.replay), encoding="utf-8")
    return {"number": plan.number, "result": record.replay["result"], "luck": match_luck(record.replay) if job["luck"] else None}


def match_luck(replay: dict[str, Any]) -> dict[str, Any] | None:
    """The match's luck for the adjusted standings (cardroom.luck), or None
    where the estimator cannot read the replay (its plain points then stand)."""
    from cardroom.luck import luck_of
    from engine.replay import ReplayError

    try:
        report = luck_of(replay)
    except ReplayError:
        return None
    return {"value_function": report.value_function, "luck": [s.luck for s in report.seats], "adjusted": [s.adjusted for s in report.seats]}


# -- the event ---------------------------------------------------------------


@dataclass
class LocalResult:
    spec: EventSpec
    entries: list[Entry]
    standings: dict[str, Any]
    document: dict[str, Any]
    played: int
    total: int


def run_event(
    spec: EventSpec,
    entries: Sequence[Entry],
    out: Path,
    *,
    jobs: int = 1,
    time: TimeControl | None = None,
    progress: Callable[[int, int], None] | None = None,
    launcher: Launcher | None = None,
    luck: bool = False,
    decided_by: str = "plain",
) -> LocalResult:
    """Play the event. ``luck``: each match's luck too (the standings'
    adjusted columns; implied by ``decided_by="adjusted"``)."""
    time = time or TimeControl()
    out = Path(out)
    replays = out / "replays"
    replays.mkdir(parents=True, exist_ok=True)
    total = schedule.total_matches(spec)
    job = {
        "game": spec.game,
        "options": dict(spec.options),
        "time": time,
        "launcher": launcher,
        "entries": list(entries),
        "replays": str(replays),
        "total": total,
        "luck": luck or decided_by == "adjusted",
    }
    outcomes = []
    lucks: dict[int, dict[str, Any] | None] = {}
    plans_by_number: dict[int, MatchPlan] = {}
    done = 0
    if progress:
        progress(0, total)
    pool = _worker_pool(jobs, job) if jobs > 1 else None
    if pool is None:
        _init_worker(job)
    try:
        for batch in range(event.batch_count(spec)):
            plans = event.batch_plans(spec, batch, outcomes, first_number=len(outcomes))
            plans_by_number.update((p.number, p) for p in plans)
            for finished in _run_batch(pool, plans, jobs):
                outcomes.append(event.outcome_of(plans_by_number[finished["number"]], finished["result"], finished["luck"]))
                lucks[finished["number"]] = finished["luck"]
                done += 1
                if progress:
                    progress(done, total)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    names = [e.name for e in entries]
    table = event.standings_of(spec, names, outcomes, decided_by=decided_by)
    document = {
        "format": "cardroom-tournament-standings",
        "version": 1,
        "event": {
            **spec.as_dict(),
            "pairing": schedule.pairing(spec),
            "rounds": schedule.num_rounds(spec),
            "matches": total,
            "time": {"startup_ms": time.startup_ms, "per_move_ms": time.per_move_ms, "overage_ms": time.overage_ms, "total_ms": time.total_ms},
        },
        "entries": [{"entry": i, "name": e.name, "bot": e.bot} for i, e in enumerate(entries)],
        "matches": [
            {**plans_by_number[o.number].as_dict(), "replay": f"replays/{replay_name(plans_by_number[o.number], total)}",
             "ranks": list(o.ranks), "scores": list(o.scores), "forfeits": list(o.forfeits),
             **({"luck": lucks[o.number]} if job["luck"] else {})}
            for o in sorted(outcomes, key=lambda o: o.number)
        ],
        **table,
    }
    (out / "standings.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return LocalResult(spec, list(entries), table, document, done, total)


def _run_batch(pool: ProcessPoolExecutor | None, plans: list[MatchPlan], jobs: int):
    if pool is None:
        for plan in plans:
            yield _play_one(plan)
        return
    # Keep a bounded number of matches in flight (a huge event does not
    # queue all its futures at once).
    pending = set()
    it = iter(plans)
    limit = 4 * jobs
    for plan in it:
        pending.add(pool.submit(_play_one, plan))
        if len(pending) >= limit:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for fut in done:
            yield fut.result()


class ProgressBar:
    """A one-line bar on a terminal (standard error); nothing when piped."""

    def __init__(self, stream=None, width: int = 40):
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = self.stream.isatty()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        filled = self.width * done // max(total, 1)
        if filled == self._last and done not in (0, total):
            return
        self._last = filled
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} matches")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
