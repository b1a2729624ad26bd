"""Chaos rerun: SIGKILL a worker in the middle of a match, again and again.
Each time, once the next worker has started, no match folder of the dead one
is left (cardroom.scratch: it swept them), and in the end every match is
recorded exactly once.

    flock /tmp/cardroom-heavy.lock .venv/bin/python benchmarks/chaos_worker_kill.py --kills 10

Round i: worker i starts (and sweeps); the folders worker i-1 had when it was
killed must be gone. The reaper (called here, as beat would send it)
re-queues the killed match, worker i plays it to its end; then worker i
starts a new match and is SIGKILLed (the whole process group, as a lost
machine) after a random moment in it. A last worker sweeps and re-runs the
last killed match. The set-up: real ``celery -A config worker`` processes
(tests/ladder/worker_fixtures.py), the sandbox that works here, PostgreSQL
(a dedicated database, CHAOS_DATABASE_URL, default cardroom_chaos), a
private Redis on a free port. Not a timed test: it prints the counts, and
exits 1 if any round failed.

With --long, the kills happen while every worker plays a long match (the
slow bot thinking --long-think seconds a move: a minute and more) and more
wait in the ladder queue, with the real scheduler running: beat and the
scheduler's worker (`-Q scheduler`, decision 194), the reaper every
REAPER_INTERVAL (15 s, its default) and leases of --lease seconds. Each
round kills the worker of one running match (and starts another, so every
worker stays busy) and times the re-deal: from the kill until the reaper
has put the match back in the queue (error kind worker_lost). It prints
each time, their p95 and maximum, and the longest the scheduler's and the
ladder's queues were; it exits 1 if a re-deal took longer than a lease
plus 30 s. --without-scheduler-worker and CARDROOM_SCHEDULER_QUEUE=celery
in the environment give the routing before decision 194, for comparison.

    flock /tmp/cardroom-heavy.lock .venv/bin/python benchmarks/chaos_worker_kill.py --long --kills 6
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
VAR = ROOT / "var" / "chaos"
BOT_FILE = "chaos_bot.py"
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/cardroom_chaos"
LEASE_SECONDS = "3"

from throughput import Redis, ensure_database, setup_django  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("CHAOS_DATABASE_URL", DEFAULT_URL))
    p.add_argument("--kills", type=int, default=10, help="workers to SIGKILL mid-match")
    p.add_argument("--think", type=float, default=0.3, help="seconds the slow bot sleeps a move (a match: about 20 moves)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--long", action="store_true", help="kill while every worker plays a long match; time the re-deals")
    p.add_argument("--workers", type=int, default=2, help="--long: match workers (one process each)")
    p.add_argument("--lease", type=int, default=10, help="--long: the match lease, seconds")
    p.add_argument("--long-think", type=float, default=3.0, help="--long: seconds the slow bot sleeps a move")
    p.add_argument(
        "--without-scheduler-worker", action="store_true",
        help="--long: no scheduler's worker (with CARDROOM_SCHEDULER_QUEUE=celery: the routing before decision 194)",
    )  # fmt: skip
    return p.parse_args(argv)


def match_folders() -> set[Path]:
    """The match folders anywhere a worker makes them (the scratch folder;
    the system's temporary folder, where they went before) with this run's
    bot in them."""
    from django.conf import settings

    found = set()
    for root in (Path(settings.CARDROOM_SCRATCH_DIR), Path(tempfile.gettempdir())):
        for folder in root.glob("cardroom-m*") if root.is_dir() else []:
            if any(p.name == BOT_FILE for p in folder.rglob("*")):
                found.add(folder)
    return found


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
    return value


def main(argv=None) -> int:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    VAR.mkdir(parents=True, exist_ok=True)
    ensure_database(args.database_url)
    redis = Redis()
    env = {
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": args.database_url,
        "CELERY_BROKER_URL": redis.url,
        "CARDROOM_VAR_DIR": str(VAR),
        "CARDROOM_MEDIA_ROOT": str(VAR / "media"),
        "CARDROOM_SCRATCH_DIR": str(VAR / "scratch"),
    }
    try:
        setup_django(env)
        return long_matches(args, rng) if args.long else chaos(args, rng)
    finally:
        redis.stop()


def slow_against_greedy(think: float, total_ms: int):
    """The 2-player Allegory ladder alone, with room for a bot that sleeps
    ``think`` seconds a move; a fresh upload of that bot, and greedy."""
    from django.contrib.auth import get_user_model

    from ladder.models import BotVersion
    from ladder.services import bots as bot_services
    from tests.ladder.worker_fixtures import BOTS, only_ladders

    ladder = only_ladders(
        "allegory", [2], startup_ms=5000, per_move_ms=max(3000, int(think * 1000) + 3000), overage_ms=5000, total_ms=total_ms
    )[2]
    owner, _ = get_user_model().objects.get_or_create(username="chaos")
    bot = bot_services.create_bot(owner=owner, game="allegory", name=f"chaos-{time.time_ns()}")
    source = (BOTS / "slow_bot.py").read_bytes().replace(b"SLEEP = 0.2", f"SLEEP = {think}".encode())
    version = bot_services.upload_version(bot=bot, filename=BOT_FILE, data=source)
    bot_services.activate_version(version)
    slow = BotVersion.objects.select_related("bot").get(pk=version.pk)
    return ladder, slow, BotVersion.objects.get(bot__game="allegory", bot__name="greedy", status="active")


def chaos(args, rng: random.Random) -> int:
    from django.utils import timezone

    from ladder.models import Match, Participant, RatingChange
    from ladder.services import match_kinds, reaper
    from ladder.services import matches as match_services
    from tests.ladder.worker_fixtures import CeleryWorker, sandbox_mode, worker_env

    ladder, slow, greedy = slow_against_greedy(args.think, total_ms=120000)
    print(f"sandbox: {sandbox_mode()}; load average {open('/proc/loadavg').read().split()[:3]}")

    leftovers_before = match_folders()
    killed_ids: list[int] = []
    failures: list[str] = []
    rounds_with_leftovers = 0
    dead_folders: set[Path] = set()
    workers: list[CeleryWorker] = []

    def start_worker(n: int) -> CeleryWorker:
        worker = CeleryWorker(f"chaos{n}", VAR / "logs" / f"worker-{n}.log", worker_env(CARDROOM_MATCH_LEASE_SECONDS=LEASE_SECONDS))
        workers.append(worker)
        return worker.start()

    def rerun_killed() -> None:
        """The reaper re-queues the killed match; the new worker plays it."""
        match_id = killed_ids[-1]
        wait_for(lambda: Match.objects.get(pk=match_id).lease_expires < timezone.now(), 30, "the killed match's lease to lapse")
        reaper.reap_expired_leases()
        wait_for(lambda: Match.objects.get(pk=match_id).status in (Match.Status.FINISHED, Match.Status.FAILED), 120, "the re-run")

    try:
        for n in range(args.kills + 1):
            worker = start_worker(n)
            left = sorted(str(p) for p in dead_folders if p.exists())
            if n:
                print(f"round {n}: worker chaos{n} started; folders of the killed chaos{n - 1} left: {len(left)} of {len(dead_folders)}")
                if left:
                    rounds_with_leftovers += 1
                    failures.append(f"round {n}: left {left}")
                rerun_killed()
            if n == args.kills:
                worker.stop()
                break
            before = match_folders()
            match = match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=rng.randrange(2**31))
            match_kinds.send_match(match.pk)
            wait_for(lambda pk=match.pk: Match.objects.get(pk=pk).status == Match.Status.RUNNING, 30, "the match to start")
            dead_folders = wait_for(lambda before=before: match_folders() - before, 20, "the match's folder")
            time.sleep(rng.uniform(0.5, 3.0))
            if Match.objects.get(pk=match.pk).status != Match.Status.RUNNING:
                failures.append(f"round {n}: match {match.pk} ended before the kill (a slower --think?)")
            worker.kill()
            killed_ids.append(match.pk)
            print(f"round {n}: worker chaos{n} SIGKILLed mid-match {match.pk} with {len(dead_folders)} match folders")
    finally:
        for worker in workers:
            worker.stop()

    recorded_once = 0
    for match_id in killed_ids:
        match = Match.objects.get(pk=match_id)
        changes = RatingChange.objects.filter(match=match).count()
        scored = Participant.objects.filter(match=match, score__isnull=False).count()
        if match.status == Match.Status.FINISHED and match.attempts == 2 and changes == 2 and scored == 2:
            recorded_once += 1
        else:
            failures.append(f"match {match_id}: {match.status}, attempts {match.attempts}, {changes} rating changes, {scored} scored seats")
    left_at_end = match_folders() - leftovers_before
    print(
        f"kills: {len(killed_ids)}; rounds with a folder of the dead worker left after the next started: "
        f"{rounds_with_leftovers}; matches recorded exactly once: "
        f"{recorded_once} of {len(killed_ids)}; match folders left at the end: {len(left_at_end)}"
    )
    print(f"load average {open('/proc/loadavg').read().split()[:3]}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures or left_at_end else 0


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def long_matches(args, rng: random.Random) -> int:
    import redis
    from django.conf import settings

    from ladder.models import Match
    from ladder.services import match_kinds
    from ladder.services import matches as match_services
    from tests.ladder.worker_fixtures import CeleryWorker, beat_process, sandbox_mode, worker_env

    ladder, slow, greedy = slow_against_greedy(args.long_think, total_ms=900_000)
    Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).update(status=Match.Status.CANCELLED)
    # Enough long matches that the ladder queue never empties: every worker
    # busy, some waiting, for every round.
    for _ in range(args.workers + args.kills + 2):
        match = match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=rng.randrange(2**31))
        match_kinds.send_match(match.pk)
    print(f"sandbox: {sandbox_mode()}; {args.workers} workers; lease {args.lease} s; reaper every {settings.REAPER_INTERVAL} s; "
          f"the scheduler's queue: {settings.CARDROOM_QUEUES['scheduler']}; "
          f"load average {open('/proc/loadavg').read().split()[:3]}")  # fmt: skip

    env = {"CARDROOM_MATCH_LEASE_SECONDS": str(args.lease), "CARDROOM_QUEUE_TARGET": "0",
           "CARDROOM_HEARTBEAT_SECONDS": str(max(1, args.lease // 4))}  # fmt: skip
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    workers: list[CeleryWorker] = []
    started = 0
    times: list[float] = []
    failures: list[str] = []
    longest = {settings.CARDROOM_QUEUES["scheduler"]: 0, "celery": 0}

    def start_worker(queues: str | None = None, pool: str = "prefork") -> CeleryWorker:
        nonlocal started
        started += 1
        name = f"chaoslong{started}" if queues is None else "chaossched"
        worker = CeleryWorker(name, VAR / "logs" / f"long-{name}.log", worker_env(**env), pool, queues)
        workers.append(worker)
        return worker.start()

    def playing() -> dict[str, int]:
        """Running matches by the worker node playing them."""
        rows = Match.objects.filter(status=Match.Status.RUNNING, participants__version=slow).values_list("worker", "pk")
        return {w.split(" pid ")[0]: pk for w, pk in rows}

    def sample() -> None:
        for queue in longest:
            longest[queue] = max(longest[queue], broker.llen(queue))

    def all_busy():
        """Every live match worker plays a long match: {its node: the match}."""
        sample()
        busy = {node.split("@")[0] + "@": pk for node, pk in playing().items()}
        alive = [w for w in workers if w.alive() and w.queues is None]
        return all(w.node in busy for w in alive) and busy

    with beat_process(VAR, **env):
        try:
            if not args.without_scheduler_worker:
                start_worker(queues=settings.CARDROOM_QUEUES["scheduler"], pool="threads")
            for _ in range(args.workers):
                start_worker()
            for n in range(args.kills):
                busy = wait_for(all_busy, 180, "every worker to play a long match")
                victims = [w for w in workers if w.alive() and w.queues is None]
                victim = rng.choice(victims)
                match_id = busy[victim.node]
                time.sleep(rng.uniform(0.5, 3.0))
                victim.kill()
                killed = time.monotonic()
                start_worker()  # the others stay busy; this one takes a waiting match

                def dealt(match_id=match_id):
                    sample()
                    return Match.objects.filter(pk=match_id, error_kind="worker_lost").exists()

                wait_for(dealt, 900, f"match {match_id} to be dealt again")  # (before decision 194: minutes)
                took = time.monotonic() - killed
                times.append(took)
                if took > args.lease + 30:
                    failures.append(f"round {n}: match {match_id} dealt again {took:.1f} s after the kill")
                print(f"round {n}: killed the worker of match {match_id}; dealt again after {took:.1f} s")
        finally:
            for worker in workers:
                worker.kill()
    print(
        f"kills: {len(times)}; kill to re-deal: p95 {percentile(times, 95):.1f} s, max {max(times):.1f} s, "
        f"median {percentile(times, 50):.1f} s (lease {args.lease} s, reaper every {settings.REAPER_INTERVAL} s); "
        f"longest queues: {longest}"
    )
    print(f"load average {open('/proc/loadavg').read().split()[:3]}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
