"""Load test of the production set-up on this machine, loopback only:
nginx (the repository's deploy/nginx configuration, started here) in front of
gunicorn (config/gunicorn.py: sync workers) on PostgreSQL, with a private
Redis as the shared cache (CACHE_URL). Four scenarios (``make load-test``:
reads, slow and bigevent):

    make load-test                       # = .venv/bin/python benchmarks/load_test.py
    .venv/bin/python benchmarks/load_test.py --clients 50 --duration 60 --workers 5
    .venv/bin/python benchmarks/load_test.py --scenarios slow --slow-clients 50
    .venv/bin/python benchmarks/load_test.py --scenarios event --event-clients 50
    .venv/bin/python benchmarks/load_test.py --scenarios bigevent --real-matches 0 --bench-matches 0 --bots 0

(a) ``reads``: public reads, ``--clients`` (50) concurrent clients for
    ``--duration`` (60) seconds. Target: >= 400 requests/s, p95 < 250 ms,
    zero errors.
(b) ``slow``: ``--slow-clients`` (50) half-open connections through the proxy
    (half stop in their headers, half in their body; re-opened when nginx
    drops them), held for ``--slow-duration`` (30) seconds, while one client
    sends a trivial GET (/api/games/) after another. Target: p95 < 100 ms,
    zero errors.
(c) ``event``: a 128-entry round robin (8,128 matches, seeded once with
    synthetic results, all but ``--event-open`` (200) of them finished)
    whose results keep coming in (``--event-rate`` a second, each counted and
    its standings refreshed as a worker would: the real service, in a
    process of its own on the same cache) while ``--event-clients`` (50)
    anonymous clients ask for its standings, one request after another
    (``--event-pause`` seconds apart, 0), for ``--event-duration`` (30)
    seconds. Beside them one client (a process of its own) asks for an
    unrelated API resource (/api/ladders/) in a loop: alone, then beside the
    same crowd asking for a ladder's standings (the baseline: a page served
    from the same caches, so what the crowd's own load costs the 2 cores is
    told from what the event adds), then beside the crowd on the event.
    Target: the event's standings' p95 < 50 ms, the unrelated call's p95
    beside them within 20% of its baseline.
(d) ``bigevent``: a finished round robin of ``--big-entries`` (1,000)
    entries, ``--big-rounds`` (3) rounds at tables of 2 (1,500 matches,
    synthetic results, seeded once), read by ``--big-clients`` (10)
    clients for ``--big-duration`` (15) seconds, each in turn asking for
    its page (/tournaments/{id}/, sometimes a later page of the standings),
    its API answer, a page of its entries and its archive.zip, every
    request with a random parameter no page knows (the cache-busting
    kind): anonymous, then signed in (a session each for the pages, a token
    for the API). Before each, ``--big-alone`` (5) seconds of one client
    alone. Target: p95 < 50 ms anonymous, < 100 ms signed in (issue 36).

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
2. redis-server (a private one, on a free loopback port, memory-capped, no
   persistence) is the cache; gunicorn (``--workers``, default 2 x cores + 1)
   serves ``config.wsgi:application`` on 127.0.0.1; nginx (``--nginx-workers``)
   listens on another loopback port and proxies to it;
3. the reads: ``--clients`` threads each send one request after another on a
   kept-alive connection to nginx, as browsers do (``Accept-Encoding: gzip``)
   for ``--duration`` seconds, in turn: standings, match list, match detail,
   replay (pages, filters and ids drawn at random: many match ids and bot
   filters are asked once, and so miss the cache);
4. prints per endpoint: requests, requests/s, p50/p95/p99/max latency, errors
   (anything but a 200, or no answer within --timeout), then a summary table
   of each scenario against its target, and the machine's load (uptime).
   Exit status 1 on any error. First, ``--baseline`` seconds (10) of one
   client alone show what a request costs without queueing. Then the CPU
   time per request of gunicorn, nginx, Redis, gunicorn's PostgreSQL
   backends and the clients: what a quiet machine's cores would have to
   give. ``--requests N`` stops the reads after N requests, so that a run on
   a loaded machine sends the same requests (and so meets the same cache
   hits) as one on a quiet machine would: compare CPU per request at equal N.

The clients run on the same machine (2 cores here): their own CPU use is part
of the latency measured, and so is everything else the machine runs.
"""

from __future__ import annotations

import argparse
import http.client
import json
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
if str(ROOT) not in sys.path:  # (run as a script, sys.path holds benchmarks/, not the project)
    sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/cardroom_load"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL", DEFAULT_URL))
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn workers")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a request counts as an error")
    p.add_argument("--requests", type=int, default=0,
                   help="stop the reads after this many requests (0: none): the same requests, and so the same "
                        "cache hits, on a loaded machine as on a quiet one, for comparing CPU per request")  # fmt: skip
    p.add_argument("--bots", type=int, default=24, help="bots per game for the real matches")
    p.add_argument("--real-matches", type=int, default=1500)
    p.add_argument("--bench-bots", type=int, default=2000)
    p.add_argument("--bench-matches", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--baseline", type=float, default=10.0, help="seconds of one client alone first (0: none)")
    p.add_argument("--scenarios", default="reads,slow,bigevent", help="comma-separated: reads, slow, event, bigevent")
    p.add_argument("--nginx-workers", type=int, default=1)
    p.add_argument("--slow-clients", type=int, default=50, help="half-open connections held (scenario slow)")
    p.add_argument("--slow-duration", type=float, default=30.0)
    p.add_argument("--event-clients", type=int, default=50, help="clients asking for the event's standings (scenario event)")
    p.add_argument("--event-duration", type=float, default=30.0)
    p.add_argument("--event-entries", type=int, default=128)
    p.add_argument("--event-open", type=int, default=200, help="matches of the event left to finish during the run")
    p.add_argument("--event-rate", type=float, default=2.0, help="results a second coming in during the run")
    p.add_argument("--event-pause", type=float, default=0.0, help="seconds each client of the crowd waits between requests (0: none)")
    p.add_argument("--big-entries", type=int, default=1000, help="entries of the big event (scenario bigevent)")
    p.add_argument("--big-rounds", type=int, default=3, help="rounds of the big event's balanced round robin")
    p.add_argument("--big-clients", type=int, default=10, help="clients reading the big event (scenario bigevent)")
    p.add_argument("--big-duration", type=float, default=15.0, help="seconds of each phase (anonymous, signed in)")
    p.add_argument("--big-alone", type=float, default=5.0, help="seconds of one client alone before each phase (0: none)")
    p.add_argument("--feed-event", type=int, default=0, help=argparse.SUPPRESS)  # (the results' process)
    args = p.parse_args(argv)
    args.scenarios = [x.strip() for x in args.scenarios.split(",") if x.strip()]
    unknown = set(args.scenarios) - {"reads", "slow", "event", "bigevent"}
    if unknown:
        p.error(f"unknown scenarios: {', '.join(sorted(unknown))} (there are: reads, slow, event, bigevent)")
    return args


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
    if getattr(args, "cache_url", None):
        env["CACHE_URL"] = args.cache_url
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


def seed_event(args) -> int:
    """A round robin of --event-entries bots at tables of 2 (once), with
    synthetic results: all its matches finished but --event-open; its
    standings stored. Returns its id."""
    from django.core.files.base import ContentFile

    from bots import builtin_program
    from ladder.models import Bot, BotVersion, Match, Tournament
    from ladder.services import bots as bot_services
    from ladder.services import tournaments

    name = f"load event {args.event_entries}"
    found = Tournament.objects.filter(name=name).first()
    if found is not None:
        return found.pk
    print(f"seeding {name} ...")
    t0 = time.perf_counter()
    owner, staff = _event_owners()
    program = builtin_program("random", "allegra")
    data = program.read_bytes()
    field = []
    for i in range(args.event_entries):
        bot, created = Bot.objects.get_or_create(owner=owner, game="allegra", name=f"event-{i:03d}", defaults={"description": "load test event"})
        if created:
            version = BotVersion(bot=bot, number=1, filename=program.name, sha256=secrets.token_hex(32), size=len(data))
            version.package.save(f"event-{i:03d}.py", ContentFile(data), save=False)
            version.save()
            bot_services.activate_version(version)
            bot.refresh_from_db()
        field.append(bot)
    t = tournaments.create_tournament(user=staff, name=name, game="allegra", format="round-robin", bots=field, table_size=2, seed=args.seed)
    Tournament.objects.filter(pk=t.pk).update(status=Tournament.Status.PAUSED)  # nothing plays them: this process feeds results
    ids = list(Match.objects.filter(tournament_slot__tournament=t).order_by("tournament_slot__number").values_list("pk", flat=True))
    done = ids[: max(0, len(ids) - args.event_open)]
    _finish_synthetically(done, random.Random(args.seed))
    Tournament.objects.filter(pk=t.pk).update(results_recorded=len(done))
    tournaments.refresh_standings(t.pk, force=True)
    print(f"  {len(ids)} matches, {len(done)} finished, in {time.perf_counter() - t0:.0f} s")
    return t.pk


def _event_owners():
    """(The bots' owner: the system user; a staff user, who creates events.)"""
    from ladder.services import bots as bot_services

    owner = bot_services.system_user()
    staff = type(owner).objects.filter(is_staff=True).first() or owner
    if not staff.is_staff:
        staff.is_staff = True
        staff.save(update_fields=["is_staff"])
    return owner, staff


def _finish_synthetically(match_ids: list[int], rng: random.Random) -> None:
    """The matches finished with synthetic results (no replay), 2,000 at a time."""
    from django.db import transaction
    from django.utils import timezone

    from ladder.models import Match, Participant

    for start in range(0, len(match_ids), 2000):
        chunk = match_ids[start : start + 2000]
        parts = list(Participant.objects.filter(match_id__in=chunk))
        by_match: dict[int, list] = defaultdict(list)
        for p in parts:
            by_match[p.match_id].append(p)
        for seats in by_match.values():
            _synthetic_result(seats, rng)
        with transaction.atomic():
            Participant.objects.bulk_update(parts, ["score", "rank"])
            Match.objects.filter(pk__in=chunk).update(status=Match.Status.FINISHED, finished=timezone.now())


def _synthetic_result(seats, rng: random.Random) -> None:
    """Allegra scores (lower is better) and the ranks they give."""
    for p in seats:
        p.score = rng.randint(-10, 60)
    ordered = sorted(seats, key=lambda p: p.score)
    for p in seats:
        p.rank = 1 + sum(1 for o in ordered if o.score < p.score)


def feed_event(args) -> None:
    """The results' process (scenario event): a result of the event every
    1/--event-rate s, counted and its standings refreshed as the worker that
    records it does (ladder.services.tournaments; the spacing applies), on
    the server's cache. Runs until killed."""
    os.environ.update(gunicorn_env(args))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import models, transaction
    from django.utils import timezone

    from ladder import caching
    from ladder.models import Match, Participant, Tournament
    from ladder.services import tournaments

    rng = random.Random(args.seed + 1)
    open_ids = list(Match.objects.filter(tournament_slot__tournament_id=args.feed_event, status=Match.Status.QUEUED).values_list("pk", flat=True))
    refreshed = 0
    for match_id in open_ids:
        t0 = time.monotonic()
        seats = list(Participant.objects.filter(match_id=match_id))
        _synthetic_result(seats, rng)
        with transaction.atomic():
            Participant.objects.bulk_update(seats, ["score", "rank"])
            Match.objects.filter(pk=match_id).update(status=Match.Status.FINISHED, finished=timezone.now())
            Tournament.objects.filter(pk=args.feed_event).update(results_recorded=models.F("results_recorded") + 1)
            caching.bump(caching.MATCHES)  # (a recorded match's save does)
        refreshed += tournaments.refresh_standings(args.feed_event)
        print(f"result {match_id} refreshed {refreshed}", flush=True)
        time.sleep(max(0.0, 1 / args.event_rate - (time.monotonic() - t0)))


def unplay_event(args, tournament_id: int) -> None:
    """Back to --event-open matches to play (what feed_event finished of
    them in an earlier run goes back), so each run starts alike."""
    from ladder.models import Match, Participant, Tournament
    from ladder.services import tournaments

    ids = list(Match.objects.filter(tournament_slot__tournament_id=tournament_id).order_by("tournament_slot__number").values_list("pk", flat=True))
    reopen = ids[max(0, len(ids) - args.event_open) :]
    Participant.objects.filter(match_id__in=reopen).update(score=None, rank=None)
    Match.objects.filter(pk__in=reopen).update(status=Match.Status.QUEUED, finished=None)
    Tournament.objects.filter(pk=tournament_id).update(results_recorded=len(ids) - len(reopen))
    tournaments.TournamentStandings.objects.filter(pk=tournament_id).update(results=0, not_before=None)
    tournaments.refresh_standings(tournament_id, force=True)


# The unrelated call's client (scenario event): argv port, path, seconds, timeout.
PROBE = """
import http.client, json, sys, time
port, path, seconds, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
ms, errors, conn, end = [], [], None, time.monotonic() + seconds
while time.monotonic() < end:
    t0 = time.perf_counter()
    try:
        conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", path, headers={"Accept": "application/json", "Accept-Encoding": "gzip"})
        response = conn.getresponse()
        response.read()
        (ms.append((time.perf_counter() - t0) * 1000) if response.status == 200 else errors.append(str(response.status)))
    except Exception as exc:
        errors.append(repr(exc))
        conn = None
print(json.dumps({"ms": ms, "errors": errors}))
"""


def run_event(args, port: int, tournament_id: int) -> dict:
    """Scenario (c): the unrelated call alone, then beside the crowd asking
    for the standings while results come in."""
    from ladder.models import Ladder, TournamentStandings

    unplay_event(args, tournament_id)
    compute_ms = TournamentStandings.objects.get(pk=tournament_id).compute_ms
    unrelated, standings = "/api/ladders/", f"/api/tournaments/{tournament_id}/standings/"
    stop_at = [0.0]

    def loop(path: str, sink: list, errors: list) -> None:
        conn = KeptAlive(port, args.timeout)
        while time.monotonic() < stop_at[0]:
            time.sleep(args.event_pause)
            t0 = time.perf_counter()
            try:
                status, _ = conn.get(path)
                (sink.append((time.perf_counter() - t0) * 1000) if status == 200 else errors.append(f"{status} {path}"))
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        conn.close()

    def phase(crowd: int, path: str = standings) -> tuple[list, list, list]:
        # The unrelated call from a process of its own: beside 50 busy
        # threads of this one it would mostly measure waits for their GIL.
        probe_proc = subprocess.Popen(
            [sys.executable, "-c", PROBE, str(port), unrelated, str(args.event_duration), str(args.timeout)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        crowd_ms, errors = [], []
        threads = [threading.Thread(target=loop, args=(path, crowd_ms, errors), daemon=True) for _ in range(crowd)]
        stop_at[0] = time.monotonic() + args.event_duration
        for th in threads:
            th.start()
        for th in threads:
            th.join(args.event_duration + args.timeout + 30)
        out, _ = probe_proc.communicate(timeout=args.event_duration + args.timeout + 30)
        found = json.loads(out)
        return found["ms"], crowd_ms, errors + found["errors"]

    get(port, standings, args.timeout)
    alone, _, errors_alone = phase(0)
    # The control: the same crowd on a page served from the same caches (a
    # ladder's standings), so what the crowd's own load costs the machine
    # (2 cores: clients, nginx and the app share them) is told from what the
    # event's standings add.
    control_path = f"/api/ladders/{Ladder.objects.order_by('pk').values_list('pk', flat=True).first()}/standings/"
    control, control_ms, errors_control = phase(args.event_clients, control_path)
    feeder = subprocess.Popen(
        [sys.executable, __file__, "--feed-event", str(tournament_id), "--event-rate", str(args.event_rate),
         "--database-url", args.database_url, "--seed", str(args.seed), "--duration", str(args.duration), "--baseline", str(args.baseline)],
        cwd=ROOT, env={**gunicorn_env(args), "CACHE_URL": args.cache_url}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        probe, crowd_ms, errors = phase(args.event_clients)
    finally:
        stop(feeder)
    lines = [ln for ln in (feeder.stdout.read() if feeder.stdout else "").splitlines() if ln.startswith("result ")]
    stored = TournamentStandings.objects.get(pk=tournament_id)
    print(f"\nevent: {args.event_clients} clients on {standings} for {args.event_duration:.0f} s; {len(lines)} results came in, "
          f"standings stored {lines[-1].split()[-1] if lines else 0} times (one computation: {stored.compute_ms} ms; "
          f"at the start {compute_ms} ms)")  # fmt: skip
    print(f"{'':<28}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    rows = (
        ("unrelated alone", alone), ("unrelated, crowd on ladder", control), ("the ladder's standings", control_ms),
        ("unrelated, crowd on event", probe), ("the event's standings", crowd_ms),
    )  # fmt: skip
    for label, xs in rows:
        print(f"{label:<28}{len(xs):>9}{len(xs) / args.event_duration:>8.1f}{pct(xs, 50):>9.1f}{pct(xs, 95):>9.1f}{pct(xs, 99):>9.1f}{max(xs) if xs else float('nan'):>9.1f}")
    return {
        "standings_p95": pct(crowd_ms, 95), "unrelated_p95": pct(probe, 95), "baseline_p95": pct(control, 95),
        "alone_p95": pct(alone, 95), "errors": len(errors) + len(errors_alone) + len(errors_control), "results": len(lines),
    }


# -- scenario (d): a big event ------------------------------------------------------------------


def seed_big_event(args) -> dict:
    """A finished round robin of --big-entries bots at tables of 2, a
    balanced schedule of --big-rounds rounds (1,000 and 3: 1,500 matches),
    with synthetic results and its final table stored (once); and
    --big-clients readers, each signed in (a session and an API token).
    Returns the event's id and the readers' credentials."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.utils import timezone
    from django.utils.module_loading import import_string
    from rest_framework.authtoken.models import Token

    from ladder.models import Bot, BotVersion, Match, Tournament
    from ladder.services import bots as bot_services
    from ladder.services import tournaments

    name = f"load big event {args.big_entries}x{args.big_rounds}"
    t = Tournament.objects.filter(name=name).first()
    if t is None:
        print(f"seeding {name} ...")
        t0 = time.perf_counter()
        owner, staff = _event_owners()
        # In bulk, without packages: nothing runs them (the results are synthetic).
        names = [f"big-{i:04d}" for i in range(args.big_entries)]
        have = set(Bot.objects.filter(game="allegory", name__in=names).values_list("name", flat=True))
        made = Bot.objects.bulk_create(Bot(owner=owner, game="allegory", name=n, description="load test big event") for n in names if n not in have)
        versions = BotVersion.objects.bulk_create(
            BotVersion(bot=b, number=1, filename="bot.py", sha256=secrets.token_hex(32), size=1, status=BotVersion.Status.ACTIVE, activated=timezone.now())
            for b in made
        )  # fmt: skip
        for b, v in zip(made, versions):
            b.current_version = v
        Bot.objects.bulk_update(made, ["current_version"])
        field = list(Bot.objects.filter(game="allegory", name__in=names).select_related("current_version").order_by("name"))
        t = tournaments.create_tournament(user=staff, name=name, game="allegory", format="round-robin", bots=field,
                                          table_size=2, rounds=args.big_rounds, seed=args.seed)  # fmt: skip
        ids = list(Match.objects.filter(tournament_slot__tournament=t).values_list("pk", flat=True))
        _finish_synthetically(ids, random.Random(args.seed))
        Tournament.objects.filter(pk=t.pk).update(results_recorded=len(ids), status=Tournament.Status.FINISHED, finished=timezone.now())
        tournaments.refresh_standings(t.pk, force=True)
        print(f"  {len(field)} entries, {len(ids)} matches, in {time.perf_counter() - t0:.0f} s")
    store = import_module(settings.SESSION_ENGINE).SessionStore
    # (as a password login records it: the first backend that finds users, not the lockout's)
    backend = next(b for b in settings.AUTHENTICATION_BACKENDS if hasattr(import_string(b), "get_user"))
    readers = []
    for i in range(args.big_clients):
        user, _ = type(bot_services.system_user()).objects.get_or_create(username=f"load-reader-{i:02d}")
        session = store()
        session.update({SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: backend, HASH_SESSION_KEY: user.get_session_auth_hash()})
        session.create()
        readers.append({"session": session.session_key, "token": Token.objects.get_or_create(user=user)[0].key})
    return {"id": t.pk, "readers": readers, "entries": args.big_entries}


BIG_ENDPOINTS = ("page", "api", "entries", "archive")
HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"


def big_request(name: str, event: dict, rng: random.Random, reader: dict | None) -> tuple[str, dict]:
    """(Path, headers) of one request of scenario (d): every one with a
    random parameter no page knows (the cache-busting kind); signed in with
    the reader's session (pages) or token (API)."""
    pk, junk = event["id"], f"r={rng.getrandbits(48):x}"
    web = {"Accept": HTML, **({"Cookie": f"sessionid={reader['session']}"} if reader else {})}
    api = {"Authorization": f"Token {reader['token']}"} if reader else {}
    standings = rng.randint(1, -(-event["entries"] // 100)) if rng.random() < 0.4 else 1
    return {
        "page": (f"/tournaments/{pk}/?{junk}" + (f"&standings={standings}" if standings > 1 else ""), web),
        "api": (f"/api/tournaments/{pk}/?{junk}", api),
        "entries": (f"/api/tournaments/{pk}/entries/?page={rng.randint(1, max(1, event['entries'] // 200))}&page_size=200&{junk}", api),
        "archive": (f"/tournaments/{pk}/archive.zip?{junk}", web),
    }[name]


def run_big_event(args, port: int, event: dict, groups: dict[str, int]) -> dict:
    """Scenario (d): --big-clients clients on the big event for
    --big-duration seconds each phase, in turn on its page, its API answer,
    a page of its entries and its archive: anonymous, then signed in."""
    out = {}
    for phase in ("anonymous", "signed in"):
        if args.big_alone > 0:  # what a request costs without queueing
            _big_phase(args, port, event, phase, groups, clients=1, duration=args.big_alone)
        out[phase] = _big_phase(args, port, event, phase, groups, clients=args.big_clients, duration=args.big_duration)
    return out


def _big_phase(args, port: int, event: dict, phase: str, groups: dict[str, int], clients: int, duration: float) -> dict:
    for name in BIG_ENDPOINTS:  # warm: the archive built, each public part rendered once
        path, headers = big_request(name, event, random.Random(0), event["readers"][0] if phase == "signed in" else None)
        KeptAlive(port, args.timeout).get(path, headers)
    results: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + duration

    def client(n: int) -> None:
        rng = random.Random(args.seed * 7919 + n)
        reader = event["readers"][n % len(event["readers"])] if phase == "signed in" else None
        conn, turn = KeptAlive(port, args.timeout), n % len(BIG_ENDPOINTS)
        while time.monotonic() < stop_at:
            name = BIG_ENDPOINTS[turn]
            turn = (turn + 1) % len(BIG_ENDPOINTS)
            path, headers = big_request(name, event, rng, reader)
            t0 = time.perf_counter()
            try:
                status, _ = conn.get(path, headers)
                problem = None if status == 200 else f"{status} {path}"
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc} ({path})"
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                (errors.append(problem) if problem else results[name].append(ms))
        conn.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    before = cpu_snapshot(args, groups)
    for th in threads:
        th.start()
    for th in threads:
        th.join(duration + args.timeout + 30)
    after = cpu_snapshot(args, groups)
    print(f"\nbig event ({event['entries']} entries), {phase}: {clients} client{'s' if clients > 1 else ' alone'} for {duration:.0f} s, "
          f"each request with a random unknown parameter")  # fmt: skip
    print(f"{'endpoint':<10}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name in BIG_ENDPOINTS:
        xs = results[name]
        print(f"{name:<10}{len(xs):>9}{len(xs) / duration:>8.1f}{pct(xs, 50):>9.1f}{pct(xs, 95):>9.1f}{pct(xs, 99):>9.1f}{max(xs) if xs else float('nan'):>9.1f}")
    for e in errors[:10]:
        print(f"  error: {e}")
    print_cpu_per_request(before, after, sum(len(xs) for xs in results.values()) + len(errors))
    return {"p95": {name: pct(results[name], 95) for name in BIG_ENDPOINTS}, "errors": len(errors)}


# -- the server -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port: int, workdir: Path) -> subprocess.Popen:
    """A private cache: loopback only, memory-capped, nothing written to disk."""
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
         "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru", "--dir", str(workdir)],
        stdout=open(workdir / "redis.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"redis-server exited ({proc.returncode}): see {workdir / 'redis.log'}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise SystemExit("redis-server did not answer within 20 s")


# gunicorn's PostgreSQL backends go by this name (their CPU time is counted).
WEB_APPLICATION_NAME = "cardroom-load-test-web"


def gunicorn_env(args) -> dict[str, str]:
    env = django_env(args)
    sep = "&" if "?" in args.database_url else "?"
    env["DATABASE_URL"] = f"{args.database_url}{sep}application_name={WEB_APPLICATION_NAME}"
    # Each worker keeps its one connection for the whole run (the default,
    # 60 s, would replace it once or twice: a negligible cost, but the
    # replaced backend's CPU time could no longer be counted).
    env["DB_CONN_MAX_AGE"] = str(int(args.duration + args.baseline + 600))
    return env


def start_gunicorn(args, port: int, logfile: Path) -> subprocess.Popen:
    out = open(logfile, "wb")
    proc = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--config", "python:config.gunicorn",
         "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers), "--access-logfile", "/dev/null"],
        cwd=ROOT, env=gunicorn_env(args), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
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


class KeptAlive:
    """One client's connection to nginx, kept open between requests (and
    opened again after an error), as a browser's is."""

    HEADERS = {"Accept": "application/json", "Accept-Encoding": "gzip"}

    def __init__(self, port: int, timeout: float):
        self.port, self.timeout, self.conn = port, timeout, None

    def get(self, path: str, headers: dict | None = None) -> tuple[int, int]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            self.conn.request("GET", path, headers={**self.HEADERS, **(headers or {})})
            response = self.conn.getresponse()
            body = response.read()
            if response.will_close:
                self.close()
            return response.status, len(body)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


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
    budget = [getattr(args, "requests", 0) or -1]  # requests left to send (-1: no limit)

    def client(n: int) -> None:
        rng = random.Random(args.seed * 1000 + n)
        paths = make_paths(data, rng)
        turn = n % len(ENDPOINTS)
        conn = KeptAlive(port, args.timeout)
        start.wait()
        while time.monotonic() < deadline_box[0]:
            with lock:
                if budget[0] == 0:
                    break
                budget[0] -= 1
            name = ENDPOINTS[turn]
            turn = (turn + 1) % len(ENDPOINTS)
            path = paths[name]()
            t0 = time.perf_counter()
            try:
                status, _ = conn.get(path)
                problem = None if status == 200 else f"{status} {path}"
            except Exception as exc:  # a timeout, a refused or reset connection
                problem = f"{type(exc).__name__}: {exc} ({path})"
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                if problem:
                    errors[name].append(problem)
                else:
                    results[name].append(ms)
        conn.close()

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


def report(run: dict, args) -> dict:
    """Prints the per-endpoint table; returns the figures over all requests."""
    results, errors, elapsed = run["results"], run["errors"], run["elapsed"]
    print(f"\n{args.clients} clients, {elapsed:.0f} s, gunicorn --workers {args.workers}, {os.cpu_count()} cores, through nginx")
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
    return {
        "requests": len(everything) + total_errors,
        "rate": (len(everything) + total_errors) / elapsed,
        "p95": pct(everything, 95),
        "errors": total_errors,
    }


# -- scenario (b): slow clients ------------------------------------------------------------


def _open_half(port: int, n: int) -> socket.socket:
    from ladder.hosting.proxy import half_open

    s = half_open(port, n)
    s.setblocking(False)
    return s


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(4096, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def run_slow_clients(args, port: int) -> dict:
    """``--slow-clients`` half-open connections held open for the whole run
    (one dropped by nginx's timeouts is replaced at once), while one client
    sends a trivial GET after another on fresh connections."""
    held = [_open_half(port, n) for n in range(args.slow_clients)]
    opened = len(held)
    stop_at = time.monotonic() + args.slow_duration
    times: list[float] = []
    errors: list[str] = []
    try:
        time.sleep(1)  # every one of them is in nginx's hands before we measure
        while time.monotonic() < stop_at:
            for i, s in enumerate(held):
                if _closed(s):
                    s.close()
                    held[i] = _open_half(port, i)
                    opened += 1
            t0 = time.perf_counter()
            try:
                status, _ = get(port, "/api/games/", args.timeout)
                if status != 200:
                    errors.append(f"{status} /api/games/")
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            else:
                times.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.02)
    finally:
        for s in held:
            s.close()
    print(f"\nslow clients: {args.slow_clients} half-open connections held for {args.slow_duration:.0f} s "
          f"({opened} opened in all, as nginx timed them out), one client sending GET /api/games/")  # fmt: skip
    print(f"  {len(times) + len(errors)} requests, p50 {pct(times, 50):.1f} ms, p95 {pct(times, 95):.1f} ms, "
          f"max {max(times) if times else float('nan'):.1f} ms, {len(errors)} errors")  # fmt: skip
    for e in errors[:10]:
        print(f"  error: {e}")
    return {"requests": len(times) + len(errors), "p95": pct(times, 95), "errors": len(errors)}


# -- the summary ------------------------------------------------------------------------------


def _proc_cpu(stat: str) -> tuple[int, int]:
    """(process group, clock ticks of CPU: user + system, its own and its
    reaped children's) from a /proc/PID/stat line. The children's count: a
    gunicorn worker recycled (max_requests) during a run is reaped by the
    master, and its time moves there."""
    fields = stat.rsplit(")", 1)[1].split()  # (after the name: state, ppid, pgrp, ...)
    return int(fields[2]), sum(int(x) for x in fields[11:15])


def cpu_seconds(pgids: list[int]) -> float:
    """CPU time used so far by every live process in these process groups:
    what the servers cost, which other work on the machine slows down but
    does not add to."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            pgrp, ticks = _proc_cpu((entry / "stat").read_text())
        except (OSError, IndexError, ValueError):
            continue
        if pgrp in pgids:
            total += ticks
    return total / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds(args) -> float | None:
    """CPU time used so far by the PostgreSQL backends serving gunicorn (by
    their application_name; DB_CONN_MAX_AGE keeps them for the whole run).
    None when they cannot be seen (PostgreSQL on another machine)."""
    import psycopg

    try:
        with psycopg.connect(args.database_url, connect_timeout=5) as conn:
            pids = [row[0] for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (WEB_APPLICATION_NAME,))]  # fmt: skip
    except psycopg.Error:
        return None
    total = 0
    for pid in pids:
        try:
            total += _proc_cpu(Path(f"/proc/{pid}/stat").read_text())[1]
        except (OSError, IndexError, ValueError):
            return None
    return total / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(args, groups: dict[str, int]) -> dict:
    """CPU seconds used so far by the servers' process groups, gunicorn's
    PostgreSQL backends (None when not seen) and this process (the clients)."""
    own = os.times()
    return {**{k: cpu_seconds([g]) for k, g in groups.items()}, "postgres": postgres_cpu_seconds(args), "clients": own.user + own.system}


def print_cpu_per_request(before: dict, after: dict, requests: int) -> None:
    """What a request cost each part in CPU between two snapshots: the
    figure a loaded machine disturbs least (it slows work down, but adds
    no CPU time to it)."""
    if not requests:
        return
    per = {k: (after[k] - before[k]) * 1000 / requests for k in before if before[k] is not None and after[k] is not None}
    all_ms = sum(per.values())
    print("CPU per request (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in per.items())
          + f"; in all {all_ms:.2f}: on {os.cpu_count()} idle cores, about "
          f"{os.cpu_count() * 1000 / all_ms:.0f} requests/s at most")  # fmt: skip


def machine_load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except OSError:
        return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def summary(rows: list[tuple[str, str, str, str, bool]], load_before: str, load_after: str) -> None:
    print("\n== summary ==")
    print(f"{'scenario':<34}{'measure':<12}{'target':>12}{'measured':>14}  result")
    for scenario, measure, target, measured, ok in rows:
        print(f"{scenario:<34}{measure:<12}{target:>12}{measured:>14}  {'PASS' if ok else 'FAIL'}")
    print(f"machine load before: {load_before}")
    print(f"machine load after:  {load_after}")
    print("(the clients share the machine with the servers; other work on it disturbs the figures)")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.feed_event:
        feed_event(args)
        return 0
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("the load test runs on PostgreSQL: give --database-url postgres://…/cardroom_load")
    from ladder.hosting.proxy import LocalProxy, nginx_binary

    if nginx_binary() is None:
        raise SystemExit("nginx is not installed: bash scripts/install-system-packages.sh")
    var = ROOT / "var" / "load"
    (var / "static").mkdir(parents=True, exist_ok=True)
    ensure_database(args.database_url)
    data = seed(args)
    event_id = seed_event(args) if "event" in args.scenarios else None
    big_event = seed_big_event(args) if "bigevent" in args.scenarios else None
    print(f"data: {len(data['real'])} real matches (with replays), match ids {data['lo']}..{data['hi']}, "
          f"ladders {data['ladders']}")  # fmt: skip
    load_before = machine_load()
    redis_port, port = free_port(), free_port()
    redis = start_redis(redis_port, var / "redis")
    args.cache_url = f"redis://127.0.0.1:{redis_port}/0"
    server = proxy = None
    rows: list[tuple[str, str, str, str, bool]] = []
    try:
        server = start_gunicorn(args, port, var / "gunicorn.log")
        proxy = LocalProxy(upstream_port=port, var_dir=var, workers=args.nginx_workers).start()
        front = proxy.port
        print(f"nginx on 127.0.0.1:{front} -> gunicorn on 127.0.0.1:{port} ({args.workers} sync workers), "
              f"cache: redis on 127.0.0.1:{redis_port}")  # fmt: skip
        if "reads" in args.scenarios:
            for make in make_paths(data, random.Random(0)).values():  # warm every worker a little
                for _ in range(args.workers):
                    get(front, make(), args.timeout)
            if args.baseline > 0:  # one client alone: what a request costs without queueing
                solo = argparse.Namespace(**{**vars(args), "clients": 1, "duration": args.baseline, "requests": 0})
                baseline = run_clients(solo, front, data)
                print("\nbaseline: one client alone (service time, no queueing)", end="")
                report(baseline, solo)
            groups = {"gunicorn": server.pid, "nginx": proxy.proc.pid, "redis": redis.pid}
            before = cpu_snapshot(args, groups)
            run = run_clients(args, front, data)
            after = cpu_snapshot(args, groups)
            reads = report(run, args)
            print_cpu_per_request(before, after, sum(len(x) for x in run["results"].values()) + sum(len(x) for x in run["errors"].values()))
            name = f"(a) reads: {args.clients} clients, {args.duration:.0f} s"
            rows += [
                (name, "req/s", ">= 400", f"{reads['rate']:.1f}", reads["rate"] >= 400),
                (name, "p95 ms", "< 250", f"{reads['p95']:.1f}", reads["p95"] < 250),
                (name, "errors", "0", str(reads["errors"]), reads["errors"] == 0),
            ]
        if "slow" in args.scenarios:
            slow = run_slow_clients(args, front)
            name = f"(b) slow: {args.slow_clients} half-open, {args.slow_duration:.0f} s"
            rows += [
                (name, "GET p95 ms", "< 100", f"{slow['p95']:.1f}", slow["p95"] < 100),
                (name, "errors", "0", str(slow["errors"]), slow["errors"] == 0),
            ]
        if "event" in args.scenarios:
            ev = run_event(args, front, event_id)
            name = f"(c) event: {args.event_clients} clients, {args.event_duration:.0f} s"
            ratio = ev["unrelated_p95"] / ev["baseline_p95"]
            rows += [
                (name, "p95 ms", "< 50", f"{ev['standings_p95']:.1f}", ev["standings_p95"] < 50),
                (name, "unrelated", "<= 1.20x", f"{ratio:.2f}x", ratio <= 1.2),
                (name, "vs alone", "(shown)", f"{ev['unrelated_p95'] / ev['alone_p95']:.2f}x", True),
                (name, "errors", "0", str(ev["errors"]), ev["errors"] == 0),
            ]
        if "bigevent" in args.scenarios:
            big = run_big_event(args, front, big_event, {"gunicorn": server.pid, "nginx": proxy.proc.pid, "redis": redis.pid})
            for phase, target in (("anonymous", 50), ("signed in", 100)):
                name = f"(d) big event, {phase}"
                rows += [(name, f"{e} p95", f"< {target}", f"{big[phase]['p95'][e]:.1f}", big[phase]["p95"][e] < target) for e in BIG_ENDPOINTS]
                rows.append((name, "errors", "0", str(big[phase]["errors"]), big[phase]["errors"] == 0))
    finally:
        if proxy is not None:
            proxy.stop()
        if server is not None:
            stop(server)
        stop(redis)
    summary(rows, load_before, machine_load())
    # Exit status 1 on any error (the latency and rate targets are reported only:
    # they depend on what else the machine runs).
    return 0 if all(ok for _scenario, measure, _target, _measured, ok in rows if measure == "errors") else 1


if __name__ == "__main__":
    sys.exit(main())
