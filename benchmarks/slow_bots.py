"""Abuse scenario "slow bots": one user uploads three bots that use 90% of
their move time; the ladder's match rate for the other users' bots must stay
at least half of what it is without them (issue 11).

    .venv/bin/python benchmarks/slow_bots.py              # (make load-test-slow-bots)
    .venv/bin/python benchmarks/slow_bots.py --seconds 240 --workers 2

The set-up is production's, on this machine, as in benchmarks/throughput.py
(whose helpers it uses): PostgreSQL (database ``cardroom_slowbots`` on
SLOWBOTS_DATABASE_URL), a private Redis, real ``celery -A config worker``
processes (concurrency 1 each, the bubblewrap sandbox), and matchmaking
(``top_up_queues``, what the scheduler runs) every MATCHMAKING_INTERVAL
seconds from this process. One ladder plays: Allegory, 2 players, the default
time control (1 s a move). Three users own one quick bot each (copies of the
built-in programs, uploaded bots like any other), beside the two built-ins.

1. **Baseline**: ``--seconds`` of play; the figure is the matches per minute
   that seat at least one of the three users' bots.
2. **Slow bots**: a fourth user's three bots arrive, each sleeping 90% of the
   move time before every move (as if validated: they are activated
   directly); ``--seconds`` more, measured from their arrival.

PASS when the rate of phase 2 is at least half that of phase 1. Each owner's
charged worker-seconds (Participant.worker_ms) are printed too. The database
is flushed at the start of every run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import throughput as tp  # noqa: E402 (the benchmark helpers beside this file)

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/cardroom_slowbots"
OTHERS = [("alice", "greedy"), ("bob", "random"), ("carol", "greedy")]
SLOW_USER = "mallory"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("SLOWBOTS_DATABASE_URL", DEFAULT_URL))
    p.add_argument("--seconds", type=float, default=180, help="length of each phase")
    p.add_argument("--workers", type=int, default=2, help="worker processes (one match each at a time)")
    p.add_argument("--think", type=float, default=0.9, help="the slow bots' thinking, as a fraction of the move time")
    p.add_argument("--sandbox", default="bwrap", help="bwrap (default) or none")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between matchmaking runs")
    return p.parse_args(argv)


def upload_as_validated(owner, game: str, name: str, data: bytes, filename: str):
    """A version stored and activated, as one that passed validation."""
    import hashlib

    from django.core.files.base import ContentFile

    from ladder.models import BotVersion
    from ladder.services import bots as bot_services

    bot = bot_services.create_bot(owner=owner, game=game, name=name)
    version = BotVersion(bot=bot, number=1, filename=filename, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    version.package.save(f"{game}-{name}-v1-{filename}", ContentFile(data), save=False)
    version.save()
    bot_services.activate_version(version)
    return bot


def others_rate(since, until, owners) -> tuple[int, float]:
    from ladder.models import Match

    done = (
        Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.FINISHED, finished__gte=since, finished__lt=until)
        .filter(participants__bot__owner__in=owners)
        .distinct()
        .count()
    )
    return done, done / max(1e-9, (until - since).total_seconds()) * 60


def play_for(seconds: float, interval: float) -> None:
    from ladder.services import matchmaking, reaper

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        matchmaking.top_up_queues()
        reaper.reap_expired_leases()
        time.sleep(min(interval, max(0.0, end - time.monotonic())))


def charged_by_owner(since) -> dict[str, tuple[int, float]]:
    from django.db.models import Count, Sum

    from ladder.models import Participant

    rows = (
        Participant.objects.filter(match__finished__gte=since, worker_ms__isnull=False, match__kind="ladder")
        .values_list("bot__owner__username")
        .annotate(seats=Count("id"), ms=Sum("worker_ms"))
        .order_by("bot__owner__username")
    )
    return {name: (seats, (ms or 0) / 1000) for name, seats, ms in rows}


def main(argv=None) -> int:
    args = parse_args(argv)
    tp.VAR.mkdir(parents=True, exist_ok=True)
    if args.sandbox == "bwrap":
        import subprocess

        probe = subprocess.run([sys.executable, "-m", "cardroom.sandbox"], cwd=tp.ROOT, capture_output=True, text=True)
        if probe.returncode != 0:
            raise SystemExit(f"the bubblewrap sandbox does not work here (or give --sandbox none):\n{probe.stdout}{probe.stderr}")
    tp.ensure_database(args.database_url)
    redis = tp.Redis()
    workers = []
    try:
        env = tp.environment(argparse.Namespace(database_url=args.database_url, sandbox=args.sandbox), redis.url)
        if args.sandbox == "none":
            env["CARDROOM_ALLOW_UNSANDBOXED_UPLOADS"] = "1"
        tp.setup_django(env)
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.utils import timezone

        from bots import builtin_program
        from ladder.models import Ladder

        call_command("flush", interactive=False, verbosity=0)  # (post_migrate installs the defaults again)
        Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
        ladder = Ladder.objects.get(game="allegory", players_per_match=2)
        users = get_user_model().objects
        others = []
        for name, kind in OTHERS:
            user = users.create(username=name)
            program = builtin_program(kind, "allegory")
            upload_as_validated(user, "allegory", f"{name}-{kind}", program.read_bytes(), program.name)
            others.append(user)
        think_ms = int(ladder.per_move_ms * args.think)
        print(
            f"slow bots: Allegory 2-player ladder ({ladder.per_move_ms} ms a move), {args.workers} worker(s), "
            f"sandbox {args.sandbox}, {os.cpu_count()} cores; {len(OTHERS)} users with a quick bot each, the 2 built-ins; "
            f"then {SLOW_USER}'s 3 bots thinking {think_ms} ms a move; {args.seconds:.0f} s a phase"
        )
        print(f"  load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (uptime's 1, 5, 15 min)")
        workers = [tp.Worker(f"slow{i}", env) for i in range(args.workers)]
        deadline = time.monotonic() + 90
        while not all(w.ready() for w in workers):
            if time.monotonic() > deadline:
                raise SystemExit("workers not ready after 90 s")
            time.sleep(0.2)

        t0 = timezone.now()
        play_for(args.seconds, args.interval)
        t1 = timezone.now()
        base_n, base_rate = others_rate(t0, t1, others)
        print(f"  phase 1, without the slow bots: {base_n} matches with the users' bots = {base_rate:.1f}/min")

        slow_user = users.create(username=SLOW_USER)
        slow_program = tp._program("random", "allegory", think_ms)
        for i in range(3):
            upload_as_validated(slow_user, "allegory", f"{SLOW_USER}-slow{i + 1}", slow_program, "random_bot.py")
        t2 = timezone.now()
        play_for(args.seconds, args.interval)
        t3 = timezone.now()
        slow_n, slow_rate = others_rate(t2, t3, others)
        ratio = slow_rate / base_rate if base_rate else 0.0
        from ladder.models import Match

        slow_matches = Match.objects.filter(finished__gte=t2, participants__bot__owner=slow_user).distinct()
        lengths = [(m.finished - m.started).total_seconds() for m in slow_matches if m.started and m.finished]
        print(f"  phase 2, with the slow bots: {slow_n} matches with the users' bots = {slow_rate:.1f}/min")
        print(
            f"  {SLOW_USER}'s matches finished in phase 2: {len(lengths)}"
            + (f" (each {min(lengths):.0f}-{max(lengths):.0f} s)" if lengths else "")
        )
        print("  worker-seconds charged in phase 2, by owner (seats, seconds):")
        for name, (seats, secs) in charged_by_owner(t2).items():
            print(f"    {name:10s} {seats:4d} seats {secs:8.1f} s")
        print(f"  load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        verdict = "PASS" if ratio >= 0.5 else "FAIL"
        print(f"  {verdict}: the users' match rate with the slow bots is {ratio:.0%} of the rate without (need >= 50%)")
        return 0 if ratio >= 0.5 else 1
    finally:
        for w in workers:
            w.stop()
        redis.stop()


if __name__ == "__main__":
    sys.exit(main())
