"""Load test of the read API: 50 concurrent clients for 60 seconds against
gunicorn (started here) on PostgreSQL, loopback only.

    make load-test                       # = .venv/bin/python benchmarks/load_test.py
    .venv/bin/python benchmarks/load_test.py --clients 50 --duration 60 --workers 5

What it does:

1. a dedicated database (``cardroom_load`` on the PostgreSQL in
   LOAD_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/cardroom_load)
   is created and migrated if needed, and seeded once:
   * ``--real-matches`` (1,500) real finished matches on the four default
     ladders among ``--bots`` (24) bots per game: played by the real engine
     with in-process built-in players and stored by the real service (replay
     and logs in the file store, results, ratings);
   * plus, for volume, ``manage.py bench_api --seed-data`` with
     ``--bench-bots`` / ``--bench-matches`` (2,000 / 200,000; 0 skips it) when
     that command is there: a big ladder of synthetic matches (they have no
     replay files, so replays are only asked of the real matches);
2. gunicorn (``--workers``, default 2 x cores + 1, sync workers) serves
   ``config.wsgi:application`` on 127.0.0.1 with that database;
3. ``--clients`` threads each send one request after another (a new
   connection each: gunicorn's sync workers do not keep connections alive)
   for ``--duration`` seconds, in turn: standings, match list, match detail,
   replay (pages, filters and ids drawn at random);
4. prints per endpoint: requests, requests/s, p50/p95/p99/max latency, errors
   (anything but a 200, or no answer within --timeout). Exit status 1 on any
   error. First, ``--baseline`` seconds (10) of one client alone show what a
   request costs without queueing.

The client runs on the same machine (2 cores here): its own CPU use is part of
the latency measured.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/cardroom_load"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL", DEFAULT_URL))
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn workers")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a request counts as an error")
    p.add_argument("--bots", type=int, default=24, help="bots per game for the real matches")
    p.add_argument("--real-matches", type=int, default=1500)
    p.add_argument("--bench-bots", type=int, default=2000)
    p.add_argument("--bench-matches", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--baseline", type=float, default=10.0, help="seconds of one client alone first (0: none)")
    return p.parse_args(argv)


# -- the database -------------------------------------------------------------------


def ensure_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True, connect_timeout=5) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def django_env(args) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL",)}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": args.database_url,
            "SECRET_KEY": env.get("SECRET_KEY") or "load-test-not-a-secret",
            "CARDROOM_VAR_DIR": str(ROOT / "var" / "load"),
            "CARDROOM_MEDIA_ROOT": str(ROOT / "var" / "load" / "media"),
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",  # (testserver: bench_api measures with the test client)
            "LOG_LEVEL": "WARNING",
            # No task message leaves this script (and none may reach a real broker).
            "CELERY_BROKER_URL": f"sqla+sqlite:///{ROOT / 'var' / 'load' / 'broker.sqlite3'}",
        }
    )
    return env


def seed(args) -> dict:
    """Migrate and seed (once); returns what the clients ask for."""
    os.environ.update(django_env(args))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.files.base import ContentFile
    from django.core.management import call_command
    from django.db.models import Max, Min

    call_command("migrate", verbosity=0)
    from bots import builtin_program
    from cardroom.runner import run_match
    from ladder.models import Bot, BotVersion, Ladder, Match
    from ladder.services import bots as bot_services
    from ladder.services import matches as match_services

    rng = random.Random(args.seed)
    owner = bot_services.system_user()
    ladders = list(Ladder.objects.filter(name__in=[n for n, _, _ in bot_services.DEFAULT_LADDERS]))
    for game in ("allegory", "allegra"):
        for i in range(args.bots):
            name = f"load-{game[:4]}-{i:03d}"
            if Bot.objects.filter(game=game, name=name).exists():
                continue
            kind = "greedy" if i % 2 else "random"
            program = builtin_program(kind, game)
            data = program.read_bytes()
            bot = Bot.objects.create(owner=owner, game=game, name=name, description=f"load test: {kind}")
            number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
            version = BotVersion(bot=bot, number=number, filename=program.name, sha256=secrets.token_hex(32), size=len(data))
            version.package.save(f"load-{name}.py", ContentFile(data), save=False)
            version.save()
            bot_services.activate_version(version)

    have = Match.objects.filter(ladder__in=ladders, status=Match.Status.FINISHED).count()
    missing = args.real_matches - have
    if missing > 0:
        print(f"seeding {missing} real matches (in-process built-in players, the real result service) ...")
        t0 = time.perf_counter()
        pools = {
            g: list(BotVersion.objects.select_related("bot").filter(bot__game=g, status="active", bot__name__startswith="load-"))
            for g in ("allegory", "allegra")
        }
        for i in range(missing):
            ladder = ladders[i % len(ladders)]
            versions = rng.sample(pools[ladder.game], ladder.players_per_match)
            match = match_services.create_match(ladder=ladder, versions=versions, seed=rng.randrange(2**40))
            claim = match_services.claim_match(match.pk, worker="load-test seeding")
            players = ["builtin:" + ("greedy" if v.filename.startswith("greedy") else "random") for v in versions]
            record = run_match(ladder.game, players, seed=match.seed, options=match.options, match_id=str(match.pk),
                               names=[v.bot.name for v in versions])  # fmt: skip
            assert match_services.record_result(claim, record)
            if (i + 1) % 250 == 0:
                print(f"  {i + 1}/{missing} ({time.perf_counter() - t0:.0f} s)")
        print(f"seeded in {time.perf_counter() - t0:.0f} s")

    if args.bench_matches > 0 and (ROOT / "ladder" / "management" / "commands" / "bench_api.py").exists():
        tag = f"{args.bench_bots} bots, {args.bench_matches} matches"
        if not Ladder.objects.filter(name__contains=tag).exists():
            print(f"seeding the bench ladder ({tag}) with manage.py bench_api --seed-data ...")
            result = subprocess.run(
                [sys.executable, "manage.py", "bench_api", "--seed-data", "--bots", str(args.bench_bots),
                 "--matches", str(args.bench_matches), "--requests", "3", "--page-sizes", "10"],
                cwd=ROOT, env=django_env(args), capture_output=True, text=True, timeout=1800,
            )  # fmt: skip
            if result.returncode != 0:
                print(f"  (bench_api failed, going on with the real matches only)\n{result.stderr[-2000:]}")
    real = list(Match.objects.filter(ladder__in=ladders, status=Match.Status.FINISHED).values_list("id", flat=True))
    all_ladders = list(Ladder.objects.values_list("id", flat=True))
    sizes = {lad: Ladder.objects.get(pk=lad).ratings.count() for lad in all_ladders}
    lo, hi = Match.objects.aggregate(lo=Min("id"), hi=Max("id")).values()
    bot_ids = list(Bot.objects.values_list("id", flat=True)[:5000])
    return {"real": real, "ladders": sizes, "lo": lo, "hi": hi, "bots": bot_ids}


# -- the server -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(args, port: int, logfile: Path) -> subprocess.Popen:
    out = open(logfile, "wb")
    proc = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
         "--backlog", "2048", "--timeout", "60", "--logger-class", "ladder.ops.gunicorn.JsonLogger"],
        cwd=ROOT, env=django_env(args), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited ({proc.returncode}): see {logfile}")
        try:
            status, _ = get(port, "/api/games/", 5)
            if status == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"gunicorn did not answer within 60 s: see {logfile}")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def get(port: int, path: str, timeout: float) -> tuple[int, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Accept": "application/json"})
        response = conn.getresponse()
        body = response.read()
        return response.status, len(body)
    finally:
        conn.close()


# -- the clients ---------------------------------------------------------------------------

ENDPOINTS = ("standings", "match list", "match detail", "replay")


def make_paths(data: dict, rng: random.Random):
    ladders = data["ladders"]
    ladder_ids = list(ladders)

    def standings():
        lad = rng.choice(ladder_ids)
        pages = max(1, ladders[lad] // 50)
        page = 1 if rng.random() < 0.6 else rng.randint(1, pages)
        return f"/api/ladders/{lad}/standings/?page={page}"

    def match_list():
        r = rng.random()
        if r < 0.4:
            return "/api/matches/"
        if r < 0.7:
            return f"/api/matches/?ladder={rng.choice(ladder_ids)}&status=finished"
        return f"/api/matches/?bot={rng.choice(data['bots'])}"

    def match_detail():
        if rng.random() < 0.5:
            return f"/api/matches/{rng.choice(data['real'])}/"
        return f"/api/matches/{rng.randint(data['lo'], data['hi'])}/"

    def replay():
        return f"/api/matches/{rng.choice(data['real'])}/replay/"

    return {"standings": standings, "match list": match_list, "match detail": match_detail, "replay": replay}


def run_clients(args, port: int, data: dict) -> dict:
    results: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, list[str]] = defaultdict(list)
    lock = threading.Lock()
    start = threading.Event()
    deadline_box = [0.0]

    def client(n: int) -> None:
        rng = random.Random(args.seed * 1000 + n)
        paths = make_paths(data, rng)
        turn = n % len(ENDPOINTS)
        start.wait()
        while time.monotonic() < deadline_box[0]:
            name = ENDPOINTS[turn]
            turn = (turn + 1) % len(ENDPOINTS)
            path = paths[name]()
            t0 = time.perf_counter()
            try:
                status, _ = get(port, path, args.timeout)
                problem = None if status == 200 else f"{status} {path}"
            except Exception as exc:  # a timeout, a refused or reset connection
                problem = f"{type(exc).__name__}: {exc} ({path})"
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                if problem:
                    errors[name].append(problem)
                else:
                    results[name].append(ms)

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(args.clients)]
    for t in threads:
        t.start()
    deadline_box[0] = time.monotonic() + args.duration
    t_start = time.monotonic()
    start.set()
    for t in threads:
        t.join(args.duration + args.timeout + 30)
    elapsed = time.monotonic() - t_start
    return {"results": results, "errors": errors, "elapsed": elapsed}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))] if xs else float("nan")


def report(run: dict, args) -> int:
    results, errors, elapsed = run["results"], run["errors"], run["elapsed"]
    print(f"\n{args.clients} clients, {elapsed:.0f} s, gunicorn --workers {args.workers}, {os.cpu_count()} cores")
    print(f"{'endpoint':<14}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>8}")
    total_errors = 0
    for name in ENDPOINTS:
        xs = results.get(name, [])
        errs = errors.get(name, [])
        total_errors += len(errs)
        mean = statistics.fmean(xs) if xs else float("nan")
        print(
            f"{name:<14}{len(xs) + len(errs):>9}{(len(xs) + len(errs)) / elapsed:>8.1f}{pct(xs, 50):>9.1f}"
            f"{pct(xs, 95):>9.1f}{pct(xs, 99):>9.1f}{max(xs) if xs else float('nan'):>9.1f}{len(errs):>8}   (mean {mean:.1f})"
        )
    everything = [x for xs in results.values() for x in xs]
    print(f"{'all':<14}{len(everything) + total_errors:>9}{(len(everything) + total_errors) / elapsed:>8.1f}"
          f"{pct(everything, 50):>9.1f}{pct(everything, 95):>9.1f}{pct(everything, 99):>9.1f}"
          f"{max(everything) if everything else float('nan'):>9.1f}{total_errors:>8}")  # fmt: skip
    if total_errors:
        print("\nerrors (first 10):")
        for name, errs in errors.items():
            for e in errs[:10]:
                print(f"  {name}: {e}")
        return 1
    print("\nzero errors")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("the load test runs on PostgreSQL: give --database-url postgres://…/cardroom_load")
    (ROOT / "var" / "load").mkdir(parents=True, exist_ok=True)
    ensure_database(args.database_url)
    data = seed(args)
    print(f"data: {len(data['real'])} real matches (with replays), match ids {data['lo']}..{data['hi']}, "
          f"ladders {data['ladders']}")  # fmt: skip
    port = free_port()
    logfile = ROOT / "var" / "load" / "gunicorn.log"
    server = start_gunicorn(args, port, logfile)
    try:
        for make in make_paths(data, random.Random(0)).values():  # warm every worker a little
            for _ in range(args.workers):
                get(port, make(), args.timeout)
        if args.baseline > 0:  # one client alone: what a request costs without queueing
            solo = argparse.Namespace(**{**vars(args), "clients": 1, "duration": args.baseline})
            baseline = run_clients(solo, port, data)
        run = run_clients(args, port, data)
    finally:
        stop(server)
    if args.baseline > 0:
        print("\nbaseline: one client alone (service time, no queueing)", end="")
        report(baseline, solo)
    return report(run, args)


if __name__ == "__main__":
    sys.exit(main())
