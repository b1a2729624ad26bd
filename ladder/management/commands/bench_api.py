"""Benchmark the read API on a big ladder: standings, the match list and a
match's detail, through Django's test Client, with N requests each; prints
p50/p95 latency and the queries per request at two page sizes (the query
count must not grow with the page size). Not a test: a tool for a dedicated
database, e.g.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/cardroom_bench
    manage.py migrate
    manage.py bench_api --seed-data     # seeds once (10,000 bots, 1,000,000 matches), then measures
    manage.py bench_api                 # measures again, on the same data
    manage.py bench_api --explain       # and prints EXPLAIN ANALYZE of each endpoint's queries

Seeding is bulk SQL on PostgreSQL (INSERT ... SELECT generate_series), in
one transaction: the bench ladder either exists whole or not at all, so
``--seed-data`` again reuses it. Every tenth match has the same bot in it
(as built-in bots are busy on a real ladder), for ``?bot=`` on a long history.

The seeded bots are allegory bots with an active version whose package does
not exist, and the matches' replay files do not exist either: never point
workers (or the default Allegory ladders' matchmaking) at this database.
Seeding skips foreign-key triggers when it may (superuser): about 2.5 minutes
for the default size on a 2-core machine.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ladder import rating_math as calc
from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating

GOAL_MS = 50.0


def qn(name: str) -> str:
    return connection.ops.quote_name(name)


def _insert_select(model, given: dict[str, tuple[str, list]], source: str, source_params: list) -> tuple[str, list]:
    """``INSERT INTO <model's table> (...) SELECT ... <source>``: ``given``
    maps columns to SQL expressions (with their parameters); every other
    column gets its field's default, or NULL, so the seed keeps working when
    a field with a default is added to a model."""
    columns, exprs, params = [], [], []
    for f in model._meta.concrete_fields:
        if f.column in given:
            sql, p = given[f.column]
        elif f.primary_key:
            continue
        elif f.null:
            sql, p = "NULL", []
        else:
            default = f.get_default()
            if default is None:
                raise CommandError(f"bench_api does not know what to seed in {model.__name__}.{f.name} (no default)")
            sql, p = "%s", [f.get_db_prep_save(default, connection)]
        columns.append(qn(f.column))
        exprs.append(sql)
        params.extend(p)
    return f"INSERT INTO {qn(model._meta.db_table)} ({', '.join(columns)}) SELECT {', '.join(exprs)} {source}", params + source_params


def _ladder_name(bots: int, matches: int) -> str:
    return f"bench: allegory 2p, {bots} bots, {matches} matches"


@dataclass
class Result:
    endpoint: str
    page_size: int | None
    times_ms: list[float]
    queries: set[int]
    statuses: set[int]
    cpu_ms: list[float] = field(default_factory=list)  # this process's CPU (the app's work)
    db_ms: list[float] = field(default_factory=list)  # time in the queries, as Django measures it

    def pct(self, p: float) -> float:
        xs = sorted(self.times_ms)
        return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


class Command(BaseCommand):
    help = "Seed a big ladder (--seed-data) and measure the standings, match list and match detail endpoints."

    def add_arguments(self, parser):
        parser.add_argument("--seed-data", action="store_true", help="seed the bench ladder first (if not there yet)")
        parser.add_argument("--bots", type=int, default=10_000)
        parser.add_argument("--matches", type=int, default=1_000_000)
        parser.add_argument("--requests", type=int, default=200, help="requests per endpoint and page size")
        parser.add_argument("--page-sizes", type=int, nargs="+", default=[10, 100])
        parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of each endpoint's queries")
        parser.add_argument("--seed", type=int, default=1, help="random seed of the request mix")

    # --- seeding ---------------------------------------------------------------

    def handle(self, *args, **opts):
        name = _ladder_name(opts["bots"], opts["matches"])
        ladder = Ladder.objects.filter(name=name).first()
        if ladder is None:
            if not opts["seed_data"]:
                raise CommandError(f"no bench data ({name!r}): run with --seed-data first")
            ladder = self.seed(name, opts["bots"], opts["matches"])
        else:
            self.stdout.write(f"reusing the bench data: {name!r} (ladder {ladder.pk})")
        self.measure(ladder, opts)

    def seed(self, name: str, bots: int, matches: int) -> Ladder:
        if connection.vendor != "postgresql":
            raise CommandError("--seed-data seeds with PostgreSQL's generate_series: use a PostgreSQL DATABASE_URL")
        if bots < 2 or matches < 1:
            raise CommandError("--bots at least 2, --matches at least 1")
        t0 = time.perf_counter()
        owners = max(1, bots // 10)
        tag = f"b{bots}m{matches}"
        t = {m._meta.model_name: m._meta.db_table for m in (Bot, BotVersion, Ladder, Match, Participant, Rating)}
        with transaction.atomic(), connection.cursor() as c:
            ladder = Ladder.objects.create(name=name, game="allegory", players_per_match=2, active=False)
            # The rows are consistent by construction: skip the foreign-key
            # triggers (millions of deferred checks at commit) where allowed.
            try:
                with transaction.atomic():
                    c.execute("SET LOCAL session_replication_role = replica")
            except DatabaseError:
                self.stdout.write("  (not a superuser: foreign keys checked at commit, slower)")

            def step(label, sql, params=()):
                s = time.perf_counter()
                c.execute(sql, params)
                self.stdout.write(f"  {label}: {c.rowcount if c.rowcount >= 0 else ''} ({time.perf_counter() - s:.1f} s)")

            self.stdout.write(f"seeding {name!r} ...")
            user = get_user_model()
            owner_prefix, bot_prefix = f"bench-{tag}-owner-", f"bench-{tag}-"
            step("owners", *_insert_select(user, {
                "password": ("'!'", []), "username": ("%s || i", [owner_prefix]), "date_joined": ("now()", []),
            }, "FROM generate_series(0, %s - 1) i", [owners]))
            step("bots", *_insert_select(Bot, {
                "owner_id": ("u.id", []), "game": ("'allegory'", []), "name": ("%s || lpad(i::text, 6, '0')", [bot_prefix]),
                "created": ("now()", []),
            }, f"FROM generate_series(0, %s - 1) i JOIN {qn(user._meta.db_table)} u ON u.username = %s || (i %% %s)",
               [bots, owner_prefix, owners]))
            step("versions", *_insert_select(BotVersion, {
                "bot_id": ("b.id", []), "number": ("1", []), "package": ("'bench/' || b.name || '.py'", []),
                "filename": ("'bot.py'", []), "sha256": ("md5(b.name) || md5(b.name)", []), "size": ("1", []),
                "status": ("'active'", []), "created": ("now()", []), "activated": ("now()", []),
            }, f"FROM {t['bot']} b WHERE b.name LIKE %s", [bot_prefix + "%"]))
            step("current versions", f"""
                UPDATE {t['bot']} b SET current_version_id = v.id FROM {t['botversion']} v
                WHERE v.bot_id = b.id AND b.name LIKE %s
            """, [bot_prefix + "%"])
            # The bots numbered 0..bots-1 (their ids need not be contiguous).
            c.execute(f"""
                CREATE TEMPORARY TABLE bench_bots ON COMMIT DROP AS
                SELECT (row_number() OVER (ORDER BY b.id) - 1)::int AS idx, b.id AS bot_id, b.current_version_id AS version_id
                FROM {t['bot']} b WHERE b.name LIKE %s
            """, [bot_prefix + "%"])
            c.execute("CREATE UNIQUE INDEX ON bench_bots (idx)")
            c.execute("ANALYZE bench_bots")
            # One match a minute, the last one a minute ago; ids first_id + 1.. first_id + matches.
            c.execute(f"SELECT coalesce(max(id), 0) FROM {t['match']}")
            (first_id,) = c.fetchone()
            step("matches", *_insert_select(Match, {
                "id": ("%s + i", [first_id]), "ladder_id": ("%s", [ladder.pk]), "kind": ("'ladder'", []),
                "game": ("'allegory'", []), "options": ("'{}'::jsonb", []), "num_players": ("2", []),
                "seed": ("(i * 2654435761) %% 4294967296", []), "status": ("'finished'", []), "attempts": ("1", []),
                "worker": ("'bench'", []), "replay": ("'replays/bench/match-' || i || '.json.gz'", []),
                "num_events": ("40 + i %% 30", []), "created": ("ts - interval '30 seconds'", []),
                "enqueued": ("ts - interval '30 seconds'", []), "started": ("ts - interval '20 seconds'", []),
                "finished": ("ts", []),
            }, "FROM (SELECT i, now() - (%s - i) * interval '1 minute' AS ts FROM generate_series(1::bigint, %s) i) s",
               [matches, matches]))
            c.execute(f"SELECT setval(pg_get_serial_sequence('{t['match']}', 'id'), (SELECT max(id) FROM {t['match']}))")
            # Two distinct bots a match, spread pseudo-randomly: seat 0 bot a, seat 1 bot a + k (k in 1..bots-1);
            # every tenth match, seat 1 is bot 0 (bot 1 if a is 0): one bot in a tenth of all matches.
            won = "(m.i + s.seat) %% 2 = 0"
            step("participants", *_insert_select(Participant, {
                "match_id": ("%s + m.i", [first_id]), "seat": ("s.seat", []), "bot_id": ("bb.bot_id", []),
                "version_id": ("bb.version_id", []), "score": (f"CASE WHEN {won} THEN 30 ELSE 20 END", []),
                "rank": (f"CASE WHEN {won} THEN 1 ELSE 2 END", []), "log_size": ("0", []),
                "elo_before": ("1500 + (m.i %% 97) - 48", []),
                "elo_after": (f"1500 + (m.i %% 97) - 48 + CASE WHEN {won} THEN 8 ELSE -8 END", []),
                "mu_before": ("25.0", []), "mu_after": (f"25.0 + CASE WHEN {won} THEN 0.5 ELSE -0.5 END", []),
                "sigma_before": ("2.0", []), "sigma_after": ("1.99", []),
            }, """
                FROM (
                    SELECT i, (i * 7919) %% %s AS a, ((i * 7919) %% %s + 1 + (i * 104729) %% (%s - 1)) %% %s AS b
                    FROM generate_series(1::bigint, %s) i
                ) m
                CROSS JOIN (VALUES (0), (1)) s(seat)
                JOIN bench_bots bb ON bb.idx = CASE
                    WHEN s.seat = 0 THEN m.a
                    WHEN m.i %% 10 = 0 THEN CASE WHEN m.a = 0 THEN 1 ELSE 0 END
                    ELSE m.b END
            """, [bots, bots, bots, bots, matches]))
            step("ratings", *_insert_select(Rating, {
                "ladder_id": ("%s", [ladder.pk]), "bot_id": ("bb.bot_id", []), "version_id": ("bb.version_id", []),
                "elo": ("e.elo", []), "mu": ("e.mu", []), "sigma": ("1.5", []), "ordinal": ("e.mu - 4.5", []),
                "games": ("coalesce(g.games, 0)", []), "wins": ("coalesce(g.wins, 0)", []), "forfeits": ("0", []),
                "provisional": ("coalesce(g.games, 0) < %s", [calc.PROVISIONAL_GAMES]),
                "version_games": ("coalesce(g.games, 0)", []), "last_played": ("g.last_played", []),
            }, f"""
                FROM bench_bots bb
                CROSS JOIN LATERAL (SELECT round((1500 + 300 * sin(bb.idx * 12.9898) * cos(bb.idx * 4.1414))::numeric, 2) AS elo,
                                           %s + 8 * sin(bb.idx * 7.77) AS mu) e
                LEFT JOIN (
                    SELECT p.bot_id, count(*) AS games, count(*) FILTER (WHERE p.rank = 1) AS wins, max(m.finished) AS last_played
                    FROM {t['participant']} p JOIN {t['match']} m ON m.id = p.match_id
                    WHERE m.ladder_id = %s GROUP BY p.bot_id
                ) g ON g.bot_id = bb.bot_id
            """, [calc.MU_START, ladder.pk]))
        with connection.cursor() as c:
            for table in (get_user_model()._meta.db_table, t["bot"], t["botversion"], t["match"], t["participant"], t["rating"]):
                c.execute(f"ANALYZE {table}")
        self.stdout.write(f"seeded in {time.perf_counter() - t0:.0f} s")
        return ladder

    # --- measuring ---------------------------------------------------------------

    def measure(self, ladder: Ladder, opts) -> None:
        rng = random.Random(opts["seed"])
        n = opts["requests"]
        client = Client()
        bot_ids = list(Rating.objects.filter(ladder=ladder).values_list("bot_id", flat=True))
        lo, hi = (
            Match.objects.filter(ladder=ladder).order_by("id").values_list("id", flat=True).first(),
            Match.objects.filter(ladder=ladder).order_by("-id").values_list("id", flat=True).first(),
        )
        if not bot_ids or lo is None:
            raise CommandError(f"ladder {ladder.pk} has no bots or no matches: seed again")
        standings_count = Rating.objects.filter(ladder=ladder).count()

        def standings(size):
            page = rng.randint(1, max(1, standings_count // size))
            return f"/api/ladders/{ladder.pk}/standings/?page_size={size}&page={page}"

        def match_list(size):
            return f"/api/matches/?page_size={size}"

        def match_list_ladder(size):
            return f"/api/matches/?ladder={ladder.pk}&status=finished&page_size={size}"

        def match_list_bot(size):
            return f"/api/matches/?bot={rng.choice(bot_ids)}&page_size={size}"

        busiest = Rating.objects.filter(ladder=ladder).order_by("-games").values_list("bot_id", flat=True).first()

        def match_list_busy_bot(size):
            return f"/api/matches/?bot={busiest}&page_size={size}"

        def match_detail(_size):
            return f"/api/matches/{rng.randint(lo, hi)}/"

        endpoints = [
            ("standings (random page)", standings, True),
            ("matches (newest)", match_list, True),
            ("matches ?ladder&status", match_list_ladder, True),
            ("matches ?bot (random bot)", match_list_bot, True),
            ("matches ?bot (busiest bot)", match_list_busy_bot, True),
            ("matches (next page by cursor)", None, True),
            ("match detail (random id)", match_detail, False),
        ]
        results: list[Result] = []
        for label, make, paged in endpoints:
            for size in opts["page_sizes"] if paged else [None]:
                if make is None:
                    urls = self._cursor_pages(client, match_list(size), n)
                else:
                    urls = [make(size) for _ in range(n)]
                for url in urls[:5]:  # warm up (connections, caches, plans)
                    client.get(url)
                res = Result(label, size, [], set(), set())
                for url in urls:
                    with CaptureQueriesContext(connection) as ctx:
                        t0, c0 = time.perf_counter(), time.process_time()
                        response = client.get(url)
                        res.times_ms.append((time.perf_counter() - t0) * 1000)
                        res.cpu_ms.append((time.process_time() - c0) * 1000)
                    res.db_ms.append(sum(float(q["time"]) for q in ctx.captured_queries) * 1000)
                    res.queries.add(len(ctx.captured_queries))
                    res.statuses.add(response.status_code)
                results.append(res)
                if opts["explain"]:
                    self._explain(client, urls[0])
        self._report(results, opts)

    def _cursor_pages(self, client: Client, first: str, n: int) -> list[str]:
        """The URLs of the next pages after the first, as a client paging on would follow them."""
        urls, url = [], first
        while len(urls) < n:
            body = client.get(url).json()
            url = body.get("next")
            if not url:
                break
            url = url.split("testserver", 1)[-1]
            urls.append(url)
        return urls or [first]

    def _explain(self, client: Client, url: str) -> None:
        with CaptureQueriesContext(connection) as ctx:
            client.get(url)
        self.stdout.write(f"\nEXPLAIN ANALYZE for {url}")
        with connection.cursor() as c:
            for q in ctx.captured_queries:
                sql = q["sql"]
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                self.stdout.write(f"-- {sql[:300]}{'...' if len(sql) > 300 else ''}")
                explain = "EXPLAIN (ANALYZE, BUFFERS) " if connection.vendor == "postgresql" else "EXPLAIN QUERY PLAN "
                c.execute(explain + sql)
                for row in c.fetchall():
                    self.stdout.write("   " + " ".join(map(str, row)))

    def _report(self, results: list[Result], opts) -> None:
        self.stdout.write("")
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        self.stdout.write(
            f"{opts['requests']} requests each, Django test Client, database {connection.vendor} "
            f"({connection.settings_dict.get('NAME')}), {os.cpu_count()} CPUs, load average {load:.1f}; "
            f"goal p95 < {GOAL_MS:.0f} ms"
        )
        self.stdout.write("(cpu: this process's CPU time, the app's own work; db: time in queries; both medians)")
        self.stdout.write(
            f"{'endpoint':32} {'page':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8} {'db p50':>8} {'queries':>8}  status"
        )
        slow, growing = [], []
        by_endpoint: dict[str, list[Result]] = {}
        for r in results:
            by_endpoint.setdefault(r.endpoint, []).append(r)
            p95 = r.pct(95)
            flag = "ok" if p95 < GOAL_MS and r.statuses == {200} else "SLOW" if p95 >= GOAL_MS else "ERROR"
            if flag != "ok":
                slow.append(r)
            self.stdout.write(
                f"{r.endpoint:32} {r.page_size or '-':>5} {statistics.median(r.times_ms):8.1f} {p95:8.1f} "
                f"{max(r.times_ms):8.1f} {statistics.median(r.cpu_ms):8.1f} {statistics.median(r.db_ms):8.1f} "
                f"{'/'.join(map(str, sorted(r.queries))):>8}  {flag} {sorted(r.statuses)}"
            )
        for endpoint, rs in by_endpoint.items():
            counts = {q for r in rs for q in r.queries}
            if len(counts) > 1:
                growing.append(endpoint)
        if growing:
            self.stdout.write(self.style.ERROR(f"the query count changes with the page size: {', '.join(growing)}"))
        else:
            self.stdout.write("queries per request: the same at every page size")
        if slow:
            self.stdout.write(self.style.WARNING(f"{len(slow)} measurement(s) miss the goal or failed"))
        else:
            self.stdout.write(self.style.SUCCESS(f"every endpoint: p95 under {GOAL_MS:.0f} ms"))
