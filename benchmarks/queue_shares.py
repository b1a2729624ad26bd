"""An event beside a ladder running at full rate: the event's share of the
matches played, against the share the docs promise (docs/operations.md,
"Queues and their shares": half, while the ladder's and the events' queues
both wait and no validation does).

    .venv/bin/python benchmarks/queue_shares.py --event-matches 40 --workers 1 --concurrency 2

A database of its own (``cardroom_bench_queues`` on the PostgreSQL in
BENCH_DATABASE_URL) is created and migrated; Redis is the broker in
CELERY_BROKER_URL (default db 4 on 127.0.0.1:6379: flushed before and after).
The ladder queue is kept full as the scheduler keeps it at full rate, only
more so: ``--ladder-backlog`` (300) built-in Allegory 2-player matches are
queued and sent before anything starts, far more than the run plays. Then a
40-match event of the built-in bots is created (its matches go to the
events' queue, ``CARDROOM_TOURNAMENT_IN_FLIGHT`` at a time), real workers
start (``celery -A config worker``, no -Q: every queue, sandbox as
configured), and the script waits for the event to finish. It reports the
event's matches a minute and the ladder's over the same span, the event's
share of all the matches finished in it, and the event messages re-sent as
stale (a message waiting longer than CARDROOM_RESEND_STALE_SECONDS).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ladder_backlog import ROOT, bench_env, fresh_django, queue_allegory_backlog, start_worker, stop


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/cardroom_bench_queues"))
    p.add_argument("--broker-url", default=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/4"))
    p.add_argument("--event-matches", type=int, default=40)
    p.add_argument("--ladder-backlog", type=int, default=300)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--timeout", type=float, default=900.0)
    return p.parse_args(argv)


def env_for(args) -> dict[str, str]:
    return bench_env(args.database_url, args.broker_url, "bench-queues")


def main(argv=None) -> int:
    args = parse_args(argv)
    fresh_django(args.database_url, env_for(args))
    import redis
    from django.contrib.auth import get_user_model
    from django.db.models import Max, Min

    from ladder.models import Match
    from ladder.services import tournaments

    broker = redis.Redis.from_url(args.broker_url)
    broker.flushdb()
    _ladder, builtins = queue_allegory_backlog(args.ladder_backlog)
    staff = get_user_model().objects.create_user("bench-staff", is_staff=True)
    t = tournaments.create_tournament(
        user=staff, name="share bench", game="allegory", format="round-robin", bots=[v.bot for v in builtins[:2]],
        table_size=2, deals=args.event_matches, seed=1,
    )  # fmt: skip
    load_before = open("/proc/loadavg").read().strip()
    procs = []
    for w in range(args.workers):
        log = ROOT / "var" / "bench-queues" / f"worker-{w}.log"
        procs.append(start_worker(f"bench{w}", log, env_for(args), [f"--concurrency={args.concurrency}"]))
    sent_before = set()
    resent = 0
    try:
        deadline = time.monotonic() + args.timeout
        while True:
            t.refresh_from_db()
            if t.status == "finished" or time.monotonic() > deadline:
                break
            # the reaper's sweep, as beat sends it every 15 s: feeds the event, re-sends what is stale
            fed = tournaments.feed_all()
            resent += sum(fed.values()) if sent_before else 0
            sent_before = set(fed)
            time.sleep(15)
    finally:
        for p in procs:
            stop(p)
        broker.flushdb()
    event = Match.objects.filter(tournament_slot__tournament=t, status="finished")
    first, last = event.aggregate(a=Min("started"), b=Max("finished")).values()
    span = (last - first).total_seconds() if first and last else float("nan")
    ladder_done = Match.objects.filter(kind="ladder", status="finished", finished__gte=first, finished__lte=last).count()
    n = event.count()
    print(f"event: {n}/{args.event_matches} matches finished (status {t.status}) in {span:.0f} s; "
          f"the ladder finished {ladder_done} in that span; ladder backlog left {Match.objects.filter(kind='ladder', status='queued').count()}")  # fmt: skip
    print(f"event rate {n / span * 60:.1f} matches/min, ladder rate {ladder_done / span * 60:.1f} matches/min")
    print(f"event's share of the matches finished: {n / (n + ladder_done):.2f} (the docs promise 0.50)")
    print(f"event messages sent again by the sweep (stale or fed): {resent}")
    print(f"workers {args.workers} x concurrency {args.concurrency}; load before: {load_before}; after: {open('/proc/loadavg').read().strip()}")
    return 0 if t.status == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
