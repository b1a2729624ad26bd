"""The ladder's match rate with and without casual matches held open
(issue 24, "Load"; decision 135): 20 casual matches, each waiting on its
person, must leave the ladder's rate within 10% of its rate without them.

    .venv/bin/python benchmarks/casual_load.py --casual 20 --phase-seconds 120

A database of its own (``cardroom_bench_casual`` on the PostgreSQL in
BENCH_DATABASE_URL) is created and migrated; Redis is the broker in
CELERY_BROKER_URL (default db 4 on 127.0.0.1:6379: flushed before and
after). The ladder's queue is kept full: ``--ladder-backlog`` built-in
Allegory 2-player matches are queued before anything starts, more than the
run plays. One ladder worker (``celery -A config worker``, no -Q, as make
demo and the compose stack run it; ``--concurrency`` processes) plays them,
and the casual worker (``-Q casual --pool threads``, as they run it too)
plays the casual matches. The phases, each ``--phase-seconds`` long:

1. without: the ladder alone (the casual worker runs, with nothing to do);
2. with: ``--casual`` casual matches started through the service the API
   calls (one user each, the person in seat 0 against built-in bots in the
   sandbox), measured once every one of them awaits its person's move: their
   bots frozen, the worker polling for an answer that never comes, each
   person's page "polling" (its last-poll time written every 2 s, as the
   GET does), so none is forfeited;
3. without again, once the casual matches are cancelled out of the way
   (their bots exit): the two baselines bracket the loaded phase, so a drift
   of the machine's load shows as their difference.

The rate is ladder matches finished a minute within each phase. It prints
both rates, the ratio (target: with/without >= 0.90) and the load average
before and after each phase: on a shared machine the absolute rates are
noise; the ratio, taken side by side, is the figure.

With ``--held N`` it measures instead what one casual worker holds (issue
36; decisions 202-205): N casual matches held open by N/3 accounts, 3 each,
two accounts to an address, each seat answered once a move clock, just
before it runs out (``--move-seconds``), as the holders of the issue did;
one casual worker (``--casual-concurrency`` threads, 256 as the compose
stack runs it). Once every held match awaits its person it prints the
worker's memory (its own resident set, and its bots' proportional set size,
summed over every process below it), its threads, the database connections
of the benchmark's database, and then ``--newcomers`` times the time from a
new person's start (the service POST /api/play/ calls) to their match
running and to its first move awaiting them: the target is under 10 s.

    .venv/bin/python benchmarks/casual_load.py --held 200
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import timedelta

from ladder_backlog import ROOT, bench_env, fresh_django, queue_allegory_backlog, start_worker, stop


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/cardroom_bench_casual"))
    p.add_argument("--broker-url", default=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/4"))
    p.add_argument("--casual", type=int, default=20, help="casual matches held open (default 20)")
    p.add_argument("--casual-players", type=int, default=3, help="players of each casual match (the person and N-1 bots)")
    p.add_argument("--ladder-backlog", type=int, default=600)
    p.add_argument("--concurrency", type=int, default=2, help="the ladder worker's processes")
    p.add_argument("--phase-seconds", type=float, default=120.0)
    # 90 s: with 20 s the ladder's rate still rose 9-11% between the two
    # baselines of one run (a worker warming up), more than the effect measured.
    p.add_argument("--warmup-seconds", type=float, default=90.0)
    p.add_argument("--held", type=int, default=0, help="measure one casual worker holding this many matches instead (see above)")
    p.add_argument("--casual-concurrency", type=int, default=256, help="the casual worker's threads (--held)")
    p.add_argument("--move-seconds", type=int, default=30, help="the person's move clock (--held): each holder answers just before it runs out")
    p.add_argument("--newcomers", type=int, default=5, help="new persons' matches timed while the others are held (--held)")
    return p.parse_args(argv)


def env_for(args) -> dict[str, str]:
    return bench_env(
        args.database_url, args.broker_url, "bench-casual",
        # the persons never answer: no move clock may run out within the run
        CARDROOM_CASUAL_MOVE_SECONDS="3600",
        CARDROOM_CASUAL_OPEN_PER_USER="1",
        # a cancelled match's worker finds out within 5 s (a third of the lease)
        CARDROOM_MATCH_LEASE_SECONDS="15",
    )  # fmt: skip


def loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.held:
        return held(args)
    fresh_django(args.database_url, env_for(args))
    import redis
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from ladder.models import CasualSeat, Match
    from ladder.services import casual

    broker = redis.Redis.from_url(args.broker_url)
    broker.flushdb()
    queue_allegory_backlog(args.ladder_backlog)

    def rate(seconds: float) -> tuple[float, str, str]:
        before = loadavg()
        t0 = timezone.now()
        time.sleep(seconds)
        t1 = timezone.now()
        done = Match.objects.filter(kind="ladder", status="finished", finished__gte=t0, finished__lt=t1).count()
        return done / (t1 - t0).total_seconds() * 60, before, loadavg()

    logs = ROOT / "var" / "bench-casual"
    ladder_worker = start_worker("ladder", logs / "worker-ladder.log", env_for(args), [f"--concurrency={args.concurrency}", "--prefetch-multiplier=1"])
    casual_worker = start_worker(
        "casual", logs / "worker-casual.log", env_for(args), ["-Q", "casual", "--pool", "threads", f"--concurrency={max(args.casual, 1)}"]
    )
    polling = threading.Event()
    results = {}
    try:
        time.sleep(args.warmup_seconds)
        results["without (before)"] = rate(args.phase_seconds)

        users = [get_user_model().objects.create_user(f"person{i}") for i in range(args.casual)]
        opponents = ["builtin:greedy", "builtin:random"] * 3
        started = [
            casual.start(user=u, game="allegory", num_players=args.casual_players, opponents=opponents[: args.casual_players - 1], seat=0).pk
            for u in users
        ]

        def pages():  # each person's page asks for the seat: the GET's write of last_poll
            while not polling.wait(2.0):
                CasualSeat.objects.filter(pk__in=started).update(last_poll=timezone.now())

        poller = threading.Thread(target=pages, daemon=True)
        poller.start()
        deadline = time.monotonic() + 300
        while CasualSeat.objects.filter(pk__in=started, match__status="running").exclude(message="").count() < len(started):
            if time.monotonic() > deadline:
                raise SystemExit("the casual matches did not all come to await their person within 300 s")
            time.sleep(1)
        results[f"with {args.casual} casual matches waiting"] = rate(args.phase_seconds)
        waiting = CasualSeat.objects.filter(pk__in=started, match__status="running").exclude(message="").count()

        # Out of the way: cancelled, each match's worker finds its lease gone
        # at the next renewal (a third of CARDROOM_MATCH_LEASE_SECONDS) and
        # stops, its bots killed as at any match's end.
        polling.set()
        Match.objects.filter(pk__in=started).update(status="cancelled")
        time.sleep(10)
        stop(casual_worker, grace=20)
        time.sleep(args.warmup_seconds / 2)
        results["without (after)"] = rate(args.phase_seconds)
    finally:
        polling.set()
        for proc in (ladder_worker, casual_worker):
            if proc.poll() is None:
                stop(proc, grace=20)
        broker.flushdb()

    for label, (per_minute, before, after) in results.items():
        print(f"{label:>40}: {per_minute:6.1f} ladder matches/min   (load average {before} -> {after})")
    without = (results["without (before)"][0] + results["without (after)"][0]) / 2
    with_casual = results[f"with {args.casual} casual matches waiting"][0]
    print(f"casual matches still awaiting their person at the end of the loaded phase: {waiting}/{len(started)}")
    print(f"ratio with/without: {with_casual / without:.3f} (target >= 0.90); the two baselines differ by "
          f"{abs(results['without (before)'][0] - results['without (after)'][0]) / without:.1%}")  # fmt: skip
    print(f"ladder worker: {args.concurrency} processes; casual worker: threads x {max(args.casual, 1)}; {os.cpu_count()} cores")
    return 0


# -- one casual worker holding many matches (--held) --------------------------------------


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (from /proc's parent links)."""
    parent = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    parent[int(entry.name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier}
        found.extend(frontier)
    return found


def kib(pid: int, path: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory(worker_pid: int) -> dict[str, float]:
    """The worker's own resident set, and what every process below it (the
    sandboxes and bots) adds: proportional set sizes, so pages the bots share
    (the interpreter, the SDK) count once in all, not once a bot."""
    below = descendants(worker_pid)
    return {
        "worker_rss_mib": kib(worker_pid, "status", "VmRSS") / 1024,
        "worker_threads": kib(worker_pid, "status", "Threads"),
        "processes_below": len(below),
        "below_pss_mib": sum(kib(pid, "smaps_rollup", "Pss") for pid in below) / 1024,
        "below_rss_mib": sum(kib(pid, "status", "VmRSS") for pid in below) / 1024,
    }


def connections(database_url: str) -> int:
    import psycopg

    base, name = database_url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [name]).fetchone()[0]


def held(args) -> int:
    env = bench_env(
        args.database_url, args.broker_url, "bench-casual",
        CARDROOM_CASUAL_MOVE_SECONDS=str(args.move_seconds),
        CARDROOM_CASUAL_TOTAL_SECONDS=str(3 * 3600),  # the holders are not to run out within the run
        CARDROOM_CASUAL_OPEN_PER_USER="3",
        CARDROOM_CASUAL_OPEN_PER_ADDRESS="6",
    )  # fmt: skip
    fresh_django(args.database_url, env)
    import redis
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from ladder.models import CasualSeat, Match
    from ladder.services import casual

    broker = redis.Redis.from_url(args.broker_url)
    broker.flushdb()
    worker = start_worker(
        "casual", ROOT / "var" / "bench-casual" / "worker-casual.log", env,
        ["-Q", "casual", "--pool", "threads", f"--concurrency={args.casual_concurrency}", "--prefetch-multiplier=1"],
    )  # fmt: skip
    stop_holding = threading.Event()
    try:
        time.sleep(10)  # the worker starts
        idle = memory(worker.pid)
        idle_connections = connections(args.database_url)
        accounts = (args.held + 2) // 3
        users = [get_user_model().objects.create_user(f"holder{i}") for i in range(accounts)]
        t0 = time.monotonic()
        held_ids = [
            casual.start(user=u, game="allegory", num_players=2, opponents=["builtin:greedy"], seat=0, address=f"10.1.{i // 2 // 250}.{i // 2 % 250 + 1}").pk
            for i, u in enumerate(users)
            for _ in range(3)
        ][: args.held]
        answered = [0]

        def holders():
            # Each page asks for its seat (the idle clock), and each seat is
            # answered once its move clock is nearly out (80% gone).
            while not stop_holding.wait(1.0):
                now = timezone.now()
                CasualSeat.objects.filter(pk__in=held_ids).update(last_poll=now)
                due = CasualSeat.objects.filter(
                    pk__in=held_ids, answer__isnull=True, move_deadline__lt=now + timedelta(seconds=args.move_seconds * 0.2)
                ).exclude(message="")
                for seat in due:
                    act = json.loads(seat.message)
                    if act["type"] != "act":
                        continue
                    try:
                        casual.answer(user=seat.user, match_id=seat.pk, body={"action": act["legal"][0], "decision": seat.decision})
                        answered[0] += 1
                    except casual.ServiceError:
                        pass  # the worker moved on meanwhile

        holder = threading.Thread(target=holders, daemon=True)
        holder.start()
        deadline = time.monotonic() + 900
        while CasualSeat.objects.filter(pk__in=held_ids, match__status="running").count() < len(held_ids):
            if time.monotonic() > deadline:
                raise SystemExit("the held matches did not all start within 900 s")
            time.sleep(2)
        all_running = time.monotonic() - t0
        time.sleep(args.move_seconds)  # every seat through a move clock at least once
        loaded = memory(worker.pid)
        loaded_connections = connections(args.database_url)
        still = Match.objects.filter(pk__in=held_ids, status="running").count()
        waits = []
        for n in range(args.newcomers):
            person = get_user_model().objects.create_user(f"newcomer{n}")
            started = time.monotonic()
            match_id = casual.start(user=person, game="allegory", num_players=2, opponents=["builtin:greedy"], seat=0, address=f"10.9.0.{n + 1}").pk
            running_at = None
            while time.monotonic() - started < 120:
                row = CasualSeat.objects.filter(pk=match_id).values("match__status", "message").get()
                if running_at is None and row["match__status"] == "running":
                    running_at = time.monotonic() - started
                if row["message"]:
                    break
                time.sleep(0.05)
            waits.append((running_at, time.monotonic() - started))
            Match.objects.filter(pk=match_id).update(status="cancelled")  # out of the way: its thread ends at the next renewal
            time.sleep(2)
        held_at_end = Match.objects.filter(pk__in=held_ids, status="running").count()
    finally:
        stop_holding.set()
        try:
            # Out of the way: each match's thread finds its lease gone at the next renewal.
            Match.objects.filter(kind="casual", status__in=["queued", "running"]).update(status="cancelled")
            time.sleep(5)
        finally:
            stop(worker, grace=30)
            broker.flushdb()

    print(f"one casual worker, threads x {args.casual_concurrency}; {os.cpu_count()} cores; load average {loadavg()}")
    print(f"held matches: {len(held_ids)} ({accounts} accounts x 3, two accounts an address), all running after {all_running:.0f} s; "
          f"still held when measured: {still}, at the end: {held_at_end}; holders' answers sent: {answered[0]} "
          f"(one a seat every ~{args.move_seconds * 0.8:.0f} s)")  # fmt: skip
    print(f"worker resident set: {idle['worker_rss_mib']:.0f} MiB idle, {loaded['worker_rss_mib']:.0f} MiB holding; "
          f"threads {idle['worker_threads']} -> {loaded['worker_threads']}")  # fmt: skip
    print(f"below the worker: {loaded['processes_below']} processes, {loaded['below_pss_mib']:.0f} MiB proportional "
          f"({loaded['below_rss_mib']:.0f} MiB resident summed)")  # fmt: skip
    per_match = (loaded["worker_rss_mib"] - idle["worker_rss_mib"] + loaded["below_pss_mib"]) / max(len(held_ids), 1)
    print(f"per held match: {per_match:.1f} MiB in all ({(loaded['worker_rss_mib'] - idle['worker_rss_mib']) / max(len(held_ids), 1) * 1024:.0f} KiB of it the worker's)")
    print(f"database connections of the benchmark's database: {idle_connections} idle, {loaded_connections} holding")
    for n, (running_at, first_move) in enumerate(waits):
        shown = "never" if running_at is None else f"{running_at:.2f} s"
        print(f"newcomer {n}: running after {shown}, first move awaiting them after {first_move:.2f} s")
    worst = max((w[1] for w in waits), default=0.0)
    print(f"worst newcomer: {worst:.2f} s to their first move (target < 10 s)")
    return 0 if waits and worst < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
