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
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

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


if __name__ == "__main__":
    sys.exit(main())
