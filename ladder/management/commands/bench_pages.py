"""Benchmark the web pages' server time on a big ladder: the leaderboard
(default order and the sorts that need a window function), the bot page
(a random bot, and the busiest one) and the match page, each rendered N
times through Django's test Client; prints p50/p95 and the queries per page.
Not a test: a tool for a dedicated PostgreSQL database, e.g.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/cardroom_web_bench
    manage.py migrate
    manage.py bench_pages --seed-data   # seeds once (10,000 bots, 1,000,000 matches), then measures
    manage.py bench_pages               # measures again, on the same data

The data is bench_api's (``manage.py bench_api --seed-data`` makes the same
ladder, and this command reuses its seeder); the rating history the bot
page's chart reads (RatingChange, one row per rated seat) is added here
from the seeded seats when it is missing.
"""

from __future__ import annotations

import os
import random
import statistics
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ladder.models import Ladder, Match, Participant, Rating, RatingChange

GOAL_MS = 100.0


class Command(BaseCommand):
    help = "Measure the leaderboard, bot and match pages on the bench ladder (seed it with --seed-data)."

    def add_arguments(self, parser):
        parser.add_argument("--seed-data", action="store_true", help="seed the bench ladder first (if not there yet)")
        parser.add_argument("--bots", type=int, default=10_000)
        parser.add_argument("--matches", type=int, default=1_000_000)
        parser.add_argument("--requests", type=int, default=100, help="renders per page")
        parser.add_argument("--seed", type=int, default=1, help="random seed of the request mix")

    def handle(self, *args, **opts):
        from ladder.management.commands import bench_api

        name = bench_api._ladder_name(opts["bots"], opts["matches"])
        ladder = Ladder.objects.filter(name=name).first()
        if ladder is None:
            if not opts["seed_data"]:
                raise CommandError(f"no bench data ({name!r}): run with --seed-data first")
            seeder = bench_api.Command(stdout=self.stdout, stderr=self.stderr)
            ladder = seeder.seed(name, opts["bots"], opts["matches"])
        else:
            self.stdout.write(f"reusing the bench data: {name!r} (ladder {ladder.pk})")
        self.ensure_rating_history(ladder)
        self.measure(ladder, opts)

    # --- the chart's data ----------------------------------------------------------

    def ensure_rating_history(self, ladder: Ladder) -> None:
        rating = Rating.objects.filter(ladder=ladder).order_by("-games").first()
        if rating is None or RatingChange.objects.filter(rating=rating).exists():
            return
        if connection.vendor != "postgresql":
            raise CommandError("adding the rating history of the bench data needs PostgreSQL")
        t = {m._meta.model_name: m._meta.db_table for m in (Match, Participant, Rating, RatingChange)}
        self.stdout.write("adding the rating history (one RatingChange per seeded seat) ...")
        t0 = time.perf_counter()
        with transaction.atomic(), connection.cursor() as c:
            try:
                with transaction.atomic():
                    c.execute("SET LOCAL session_replication_role = replica")
            except DatabaseError:
                pass
            c.execute(
                f"""
                INSERT INTO {t['ratingchange']} (rating_id, match_id, participant_id, version_id, elo_before, elo_after,
                    mu_before, mu_after, sigma_before, sigma_after, created)
                SELECT r.id, p.match_id, p.id, p.version_id, p.elo_before, p.elo_after,
                    p.mu_before, p.mu_after, p.sigma_before, p.sigma_after, m.finished
                FROM {t['participant']} p
                JOIN {t['match']} m ON m.id = p.match_id
                JOIN {t['rating']} r ON r.ladder_id = m.ladder_id AND r.bot_id = p.bot_id
                WHERE m.ladder_id = %s AND p.elo_after IS NOT NULL
                ORDER BY p.match_id, p.seat
                """,
                [ladder.pk],
            )
            self.stdout.write(f"  rating changes: {c.rowcount} ({time.perf_counter() - t0:.1f} s)")
        with connection.cursor() as c:
            c.execute(f"ANALYZE {t['ratingchange']}")

    # --- measuring -------------------------------------------------------------------

    def measure(self, ladder: Ladder, opts) -> None:
        rng = random.Random(opts["seed"])
        n = opts["requests"]
        client = Client()
        bot_ids = list(Rating.objects.filter(ladder=ladder).values_list("bot_id", flat=True))
        if not bot_ids:
            raise CommandError(f"ladder {ladder.pk} has no bots: seed again")
        busiest = Rating.objects.filter(ladder=ladder).order_by("-games").values_list("bot_id", flat=True).first()
        lo = Match.objects.filter(ladder=ladder).order_by("id").values_list("id", flat=True).first()
        hi = Match.objects.filter(ladder=ladder).order_by("-id").values_list("id", flat=True).first()
        pages = max(1, len(bot_ids) // 50)
        base = f"/ladders/{ladder.pk}/"
        cases = [
            ("leaderboard, page 1", lambda: base),
            ("leaderboard, random page", lambda: f"{base}?page={rng.randint(1, pages)}"),
            ("leaderboard by ordinal, random page", lambda: f"{base}?sort=ordinal&page={rng.randint(1, pages)}"),
            ("leaderboard by win rate, random page", lambda: f"{base}?sort=winrate&dir=asc&page={rng.randint(1, pages)}"),
            ("leaderboard refresh (partial)", lambda: f"{base}?page={rng.randint(1, pages)}&partial=1"),
            ("bot page, random bot", lambda: f"/bots/{rng.choice(bot_ids)}/"),
            ("bot page, busiest bot", lambda: f"/bots/{busiest}/"),
            ("match page, random match", lambda: f"/matches/{rng.randint(lo, hi)}/"),
        ]
        self.stdout.write("")
        self.stdout.write(
            f"{n} renders each, Django test Client, database {connection.vendor} ({connection.settings_dict.get('NAME')}), "
            f"{Rating.objects.filter(ladder=ladder).count()} bots, {hi - lo + 1 if lo else 0} matches, "
            f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; goal p95 < {GOAL_MS:.0f} ms"
        )
        self.stdout.write("(cpu: this process's CPU time per render, the app's own work; db: time in queries; medians)")
        self.stdout.write(
            f"{'page':40} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8} {'db p50':>8} {'queries':>8}  status"
        )
        misses = 0
        for label, make in cases:
            urls = [make() for _ in range(n)]
            for url in urls[:3]:  # warm up (connections, plans, template cache)
                client.get(url)
            times, cpus, dbs, queries, statuses = [], [], [], set(), set()
            for url in urls:
                with CaptureQueriesContext(connection) as ctx:
                    t0, c0 = time.perf_counter(), time.process_time()
                    response = client.get(url)
                    times.append((time.perf_counter() - t0) * 1000)
                    cpus.append((time.process_time() - c0) * 1000)
                dbs.append(sum(float(q["time"]) for q in ctx.captured_queries) * 1000)
                queries.add(len(ctx.captured_queries))
                statuses.add(response.status_code)
            xs = sorted(times)
            p95 = xs[min(len(xs) - 1, max(0, round(0.95 * len(xs)) - 1))]
            ok = p95 < GOAL_MS and statuses == {200}
            misses += not ok
            self.stdout.write(
                f"{label:40} {statistics.median(times):8.1f} {p95:8.1f} {max(times):8.1f} {statistics.median(cpus):8.1f} "
                f"{statistics.median(dbs):8.1f} "
                f"{'/'.join(map(str, sorted(queries))):>8}  {'ok' if ok else 'MISS'} {sorted(statuses)}"
            )
        if misses:
            self.stdout.write(self.style.WARNING(f"{misses} page(s) miss the {GOAL_MS:.0f} ms goal (p95) or failed"))
        else:
            self.stdout.write(self.style.SUCCESS(f"every page: p95 under {GOAL_MS:.0f} ms"))
