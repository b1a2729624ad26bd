"""Match throughput: matches completed per minute with 1 worker, then with 2
workers, on the same matches, and the ratio.

    make bench-throughput               # = .venv/bin/python benchmarks/throughput.py
    .venv/bin/python benchmarks/throughput.py --matches 120 --workers 1 2 --rounds 3

The set-up is production's, on this machine: PostgreSQL (a dedicated database,
``cardroom_throughput`` on THROUGHPUT_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/cardroom_throughput), a private Redis
started here on a free port (so no other test run's worker takes a message),
and real ``celery -A config worker`` processes, each one process with
concurrency 1 and prefetch 1 (one match at a time, as docker-compose runs
them). The matches: ``--matches`` 4-player games, half Allegory and half
Allegra, of built-in protocol bots (four distinct bots a table, greedy and
random ones: programs started per match, in the bubblewrap sandbox). Each run
gets a fresh batch with the same seeds and lineups; the workers are started
and ready first, then every match is sent at once, and the clock runs from
the first message to the last result. The runs alternate (1 worker, 2
workers, 1, 2, ...) for ``--rounds`` rounds, and each count's figure is its
median: a slow spell of the (virtual) machine weighs on both alike. No
scheduler runs: this measures the workers, not matchmaking (whose ceiling is
printed: CARDROOM_QUEUE_TARGET matches per ladder every MATCHMAKING_INTERVAL
seconds).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/cardroom_throughput"
VAR = ROOT / "var" / "throughput"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("THROUGHPUT_DATABASE_URL", DEFAULT_URL))
    p.add_argument("--matches", type=int, default=120, help="matches per run")
    p.add_argument(
        "--rounds", type=int, default=3,
        help="rounds of runs (1 worker, then 2, ...); the figures are each count's median over the rounds",
    )  # fmt: skip
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure")
    p.add_argument("--sandbox", default="bwrap", help="bwrap (default) or none")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--think-ms", type=int, default=0,
        help="bots that also think (sleep) this long a move: how far workers scale when bots use their clock",
    )  # fmt: skip
    p.add_argument("--timeout", type=float, default=900, help="seconds a run may take")
    return p.parse_args(argv)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


class Redis:
    def __init__(self):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="cardroom-throughput-redis-"))
        self.proc = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.dir), "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
        )  # fmt: skip
        import redis

        deadline = time.monotonic() + 15
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=1).ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def environment(args, broker: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL",)}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": args.database_url,
            "CELERY_BROKER_URL": broker,
            "SECRET_KEY": env.get("SECRET_KEY") or "throughput-not-a-secret",
            "CARDROOM_VAR_DIR": str(VAR),
            "CARDROOM_MEDIA_ROOT": str(VAR / "media"),
            "CARDROOM_SANDBOX": args.sandbox,
            "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS": "0",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def ensure_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True, connect_timeout=5) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _program(kind: str, game: str, think_ms: int) -> bytes:
    from bots import builtin_program

    source = builtin_program(kind, game).read_text()
    if think_ms:
        marker = 'if __name__ == "__main__":\n    run(choose)'
        assert marker in source, "the built-in bot's main block changed"
        source = source.replace(
            marker,
            'if __name__ == "__main__":\n    import time as _time\n    _choose = choose\n'
            f"    run(lambda o, l, r: (_time.sleep({think_ms / 1000}), _choose(o, l, r))[1])",
        )
    return source.encode()


def four_player_lineups(think_ms: int = 0) -> dict[str, list]:
    """Four distinct built-in bots per game (two greedy, two random copies,
    marked built-in: the sandbox runs them as programs like any bot);
    with ``think_ms``, copies that sleep that long before each move."""
    from django.core.files.base import ContentFile

    from bots import builtin_program
    from ladder.models import Bot, BotVersion
    from ladder.services import bots as bot_services

    owner = bot_services.system_user()
    lineups = {}
    for game in ("allegory", "allegra"):
        versions = []
        for kind in ("greedy", "random"):
            for n in (1, 2):
                name = f"tp-{kind}-{n}" + (f"-think{think_ms}" if think_ms else "")
                bot, _ = Bot.objects.get_or_create(
                    game=game, name=name, defaults={"owner": owner, "builtin": True, "description": "throughput benchmark"}
                )
                # The program's own file name: "random.py" would hide the
                # standard module (benchmarks before 2026-11-30 did that: their
                # random bots crashed at once; a database they left is mended).
                filename = builtin_program(kind, game).name
                if bot.current_version is None:
                    data = _program(kind, game, think_ms)
                    version = BotVersion(bot=bot, number=1, filename=filename, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
                    version.package.save(f"tp-{game}-{name}.py", ContentFile(data), save=False)
                    version.save()
                    bot_services.activate_version(version)
                    bot.refresh_from_db()
                BotVersion.objects.filter(pk=bot.current_version_id).exclude(filename=filename).update(filename=filename)
                versions.append(BotVersion.objects.select_related("bot").get(pk=bot.current_version_id))
        lineups[game] = versions
    return lineups


def make_batch(n: int, seed: int, lineups) -> list[int]:
    from ladder.models import Ladder
    from ladder.services import matches

    rng = random.Random(seed)
    ladders = {g: Ladder.objects.get(game=g, players_per_match=4, name__in=[x for x, _, _ in _defaults()]) for g in lineups}
    Ladder.objects.update(active=False)  # (no scheduler runs; and none may top up these ladders meanwhile)
    ids = []
    for i in range(n):
        game = ("allegory", "allegra")[i % 2]
        versions = list(lineups[game])
        rng.shuffle(versions)
        ids.append(matches.create_match(ladder=ladders[game], versions=versions, seed=rng.randrange(2**40)).pk)
    return ids


def _defaults():
    from ladder.services.bots import DEFAULT_LADDERS

    return DEFAULT_LADDERS


class Worker:
    def __init__(self, name: str, env: dict[str, str]):
        self.name = name
        self.log = VAR / f"worker-{name}.log"
        self.out = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "worker", "--pool", "prefork", "--concurrency", "1",
             "--prefetch-multiplier", "1", "-n", f"{name}@%h", "-Q", "celery", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT, env=env, stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_parent,
        )  # fmt: skip

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise SystemExit(f"worker {self.name} exited: see {self.log}")
        return " ready." in self.log.read_text(errors="replace")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.out.close()


HZ = os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / HZ, sum(fields[:8]) / HZ


def process_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds of every live process, its reaped children included
    (a worker's pool process counts its bots', the postmaster its backends')."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (comm, sum(int(x) for x in rest[11:15]) / HZ)
    return found


def our_backends() -> list[int]:
    """The PostgreSQL backends serving this benchmark's database."""
    from django.db import connection

    with connection.cursor() as c:
        c.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        return [row[0] for row in c.fetchall()]


def cpu_spent(before: dict, after: dict, pids) -> float:
    """CPU seconds spent between two snapshots by ``pids`` (a process born
    in between counts whole; a process's reaped children count as its own: a
    pool process's bots, through bwrap)."""
    return sum(max(0.0, after[p][1] - before.get(p, (None, 0.0))[1]) for p in set(pids) if p in after)


def descendants(pid: int) -> list[int]:
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def run(args, env: dict[str, str], count: int, lineups, redis) -> dict:
    from django.db import connection

    from ladder.models import Match
    from ladder.services import match_kinds

    redis_client = __import__("redis").Redis(port=redis.port)
    redis_client.flushall()
    ids = make_batch(args.matches, args.seed, lineups)
    workers = [Worker(f"tp{count}-{i}", env) for i in range(count)]
    try:
        deadline = time.monotonic() + 90
        while not all(w.ready() for w in workers):
            if time.monotonic() > deadline:
                raise SystemExit("workers not ready after 90 s")
            time.sleep(0.2)
        time.sleep(1.0)  # every pool process started
        load_before = os.getloadavg()
        worker_pids = [p for w in workers for p in descendants(w.proc.pid)]
        cpu_before, busy_before = process_cpu(), machine_busy()
        t0 = time.monotonic()
        for pk in ids:
            match_kinds.send_match(pk)
        deadline = t0 + args.timeout
        while True:
            done = Match.objects.filter(pk__in=ids, status__in=[Match.Status.FINISHED, Match.Status.FAILED]).count()
            if done == len(ids):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{count} worker(s): only {done}/{len(ids)} matches done after {args.timeout} s")
            time.sleep(0.1)
        elapsed = time.monotonic() - t0
        busy_after, cpu_after = machine_busy(), process_cpu()
        backends = our_backends()
        load_after = os.getloadavg()
        connection.close()
    finally:
        for w in workers:
            w.stop()
    rows = list(Match.objects.filter(pk__in=ids).values_list("status", "started", "finished", "num_events", "worker"))
    failed = [r for r in rows if r[0] != Match.Status.FINISHED]
    durations = [(f - s).total_seconds() for st, s, f, _, _ in rows if st == Match.Status.FINISHED]
    # What the runner itself took (the worker logs "match finished" with ms): the rest is platform overhead.
    runner_ms = []
    for w in workers:
        runner_ms += [int(x) for x in re.findall(r'"message": "match finished".*?"ms": (\d+)', w.log.read_text(errors="replace"))]
    per_worker = {}
    for *_, worker in rows:
        per_worker[worker.split(" pid")[0]] = per_worker.get(worker.split(" pid")[0], 0) + 1
    return {
        "workers": count,
        "matches": len(ids),
        "failed": len(failed),
        "elapsed": elapsed,
        "per_minute": len(ids) / elapsed * 60,
        "match_s": statistics.fmean(durations) if durations else float("nan"),
        "runner_s": statistics.fmean(runner_ms) / 1000 if runner_ms else float("nan"),
        "events": statistics.fmean([r[3] or 0 for r in rows]),
        "load": (load_before[0], load_after[0]),
        "per_worker": per_worker,
        "cores_busy": (busy_after[0] - busy_before[0]) / elapsed,
        "worker_cpu": cpu_spent(cpu_before, cpu_after, worker_pids),
        "db_cpu": cpu_spent(cpu_before, cpu_after, backends),
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    VAR.mkdir(parents=True, exist_ok=True)
    if args.sandbox == "bwrap":
        probe = subprocess.run([sys.executable, "-m", "cardroom.sandbox"], cwd=ROOT, capture_output=True, text=True)
        if probe.returncode != 0:
            raise SystemExit(f"the bubblewrap sandbox does not work here (or give --sandbox none):\n{probe.stdout}{probe.stderr}")
    ensure_database(args.database_url)
    redis = Redis()
    try:
        env = environment(args, redis.url)
        setup_django(env)
        from django.conf import settings

        lineups = four_player_lineups(args.think_ms)
        thinking = f", bots thinking {args.think_ms} ms a move" if args.think_ms else ""
        print(f"{args.matches} four-player matches a run (half Allegory, half Allegra), sandbox {args.sandbox}, "
              f"{os.cpu_count()} cores, PostgreSQL + Redis{thinking}")  # fmt: skip
        runs: dict[int, list[dict]] = {count: [] for count in args.workers}
        for round_no in range(1, args.rounds + 1):
            # Alternating 1, 2, 1, 2, ...: a slow spell of the machine (a
            # virtual one shares its host) weighs on both counts alike.
            print(f" round {round_no} of {args.rounds}")
            for count in args.workers:
                r = run(args, env, count, lineups, redis)
                runs[count].append(r)
                report(r)
        results = []
        for count in args.workers:
            rates = sorted(r["per_minute"] for r in runs[count])
            median = statistics.median(rates)
            results.append({"workers": count, "per_minute": median, "failed": sum(r["failed"] for r in runs[count])})
            print(f"  {count} worker(s): median {median:.1f} matches/min over {len(rates)} run(s) ({', '.join(f'{x:.1f}' for x in rates)})")
        if len(results) >= 2:
            base = results[0]
            for r in results[1:]:
                ratios = [b["per_minute"] / a["per_minute"] for a, b in zip(runs[base["workers"]], runs[r["workers"]])]
                print(
                    f"  ratio {r['workers']} vs {base['workers']} worker(s): {r['per_minute'] / base['per_minute']:.2f}x "
                    f"(of the medians; round by round: {', '.join(f'{x:.2f}x' for x in ratios)})"
                )
        ceiling = settings.CARDROOM_QUEUE_TARGET * 60 / max(1, int(os.environ.get("MATCHMAKING_INTERVAL", "5")))
        print(f"  matchmaking ceiling (no benchmark): at most {ceiling:.0f} matches/min per active ladder "
              f"(CARDROOM_QUEUE_TARGET={settings.CARDROOM_QUEUE_TARGET} every MATCHMAKING_INTERVAL s)")  # fmt: skip
        return 1 if any(r["failed"] for r in results) else 0
    finally:
        redis.stop()


def report(r: dict) -> None:
    count, n, t = r["workers"], r["matches"], r["elapsed"]
    print(
        f"  {count} worker(s): {n} matches in {t:.1f} s = {r['per_minute']:.1f} matches/min "
        f"(a match: {r['match_s']:.2f} s claimed-to-recorded, {r['runner_s']:.2f} s in the runner, "
        f"{r['events']:.0f} events; failed {r['failed']}; load {r['load'][0]:.1f} -> {r['load'][1]:.1f}; "
        f"per worker {r['per_worker']})"
    )
    print(
        f"      CPU a match: workers (engine, runner, sandbox, 4 bots) {r['worker_cpu'] / n * 1000:.0f} ms, "
        f"their PostgreSQL backends {r['db_cpu'] / n * 1000:.0f} ms; cores used by the benchmark's processes "
        f"{(r['worker_cpu'] + r['db_cpu']) / t:.2f}, by the whole machine {r['cores_busy']:.2f} of {os.cpu_count()}"
    )


if __name__ == "__main__":
    sys.exit(main())
