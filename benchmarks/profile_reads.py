"""What a public read costs the web app, in CPU time, without gunicorn,
nginx or the clients around it: the requests of ``make load-test``'s reads
scenario, sent straight to the WSGI application in this one process (the
production settings, PostgreSQL in LOAD_DATABASE_URL, a private Redis as the
shared cache). CPU time is what this process spends, so other work on the
machine slows it down but hardly changes it.

    .venv/bin/python benchmarks/profile_reads.py                 # each endpoint: a miss, then a hit
    .venv/bin/python benchmarks/profile_reads.py --mix 4000      # 4,000 requests of the load test's mix
    .venv/bin/python benchmarks/profile_reads.py --mix 4000 --profile 30   # and cProfile's top 30

The first table sends each sampled URL twice, on a cache emptied first: the
first request misses (the view runs), the second hits (the shared cache
answers). ``--mix N`` then sends N requests drawn as the load test's
clients draw them, on a cache warmed by nothing but those requests.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_test  # noqa: E402  (the same database, data and request mix)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL", load_test.DEFAULT_URL))
    p.add_argument("--samples", type=int, default=40, help="URLs per endpoint for the miss/hit table")
    p.add_argument("--mix", type=int, default=0, help="then this many requests of the load test's mix")
    p.add_argument("--profile", type=int, default=0, help="print cProfile's top N functions of the mix")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    # (what load_test.seed() reads: nothing is seeded when the data is there)
    args.bots, args.real_matches, args.bench_bots, args.bench_matches = 24, 1500, 2000, 200_000
    return args


def environ(path: str) -> dict:
    path_info, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8080",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8080",
        "HTTP_ACCEPT": "application/json",
        "HTTP_ACCEPT_ENCODING": "gzip",
        "HTTP_X_FORWARDED_FOR": "127.0.0.1",
        "HTTP_X_FORWARDED_PROTO": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def call(app, path: str) -> tuple[float, int]:
    """One request as gunicorn makes it: CPU ms and the status."""
    status_box = []

    def start_response(status, headers, exc_info=None):
        status_box.append(int(status.split()[0]))

    t0 = time.process_time()
    result = app(environ(path), start_response)
    try:
        for _chunk in result:
            pass
    finally:
        if hasattr(result, "close"):
            result.close()
    return (time.process_time() - t0) * 1000, status_box[0]


def main(argv=None) -> int:
    args = parse_args(argv)
    var = load_test.ROOT / "var" / "load"
    redis_port = load_test.free_port()
    redis = load_test.start_redis(redis_port, var / "redis-profile")
    try:
        args.cache_url = f"redis://127.0.0.1:{redis_port}/0"
        data = load_test.seed(args)  # sets the environment (load_test.django_env) and Django up
        from django.core.cache import cache
        from django.core.wsgi import get_wsgi_application

        app = get_wsgi_application()
        makers = load_test.make_paths(data, random.Random(args.seed))
        for make in makers.values():  # warm: imports, connections, the URL resolver
            for _ in range(3):
                call(app, make())
        cache.clear()
        print(f"{'endpoint':<14}{'miss ms':>9}{'hit ms':>9}   (CPU, median of {args.samples} URLs)")
        for name, make in makers.items():
            misses, hits = [], []
            for _ in range(args.samples):
                path = make()
                cache.clear()
                ms, status = call(app, path)
                assert status == 200, (status, path)
                misses.append(ms)
                hits.append(call(app, path)[0])
            print(f"{name:<14}{sorted(misses)[len(misses) // 2]:>9.2f}{sorted(hits)[len(hits) // 2]:>9.2f}")
        if args.mix:
            cache.clear()
            rng = random.Random(args.seed + 1)
            paths = load_test.make_paths(data, rng)
            per: dict[str, list[float]] = defaultdict(list)
            profiler = cProfile.Profile(time.process_time) if args.profile else None  # CPU, not wall-clock, time
            if profiler:
                profiler.enable()
            for i in range(args.mix):
                name = load_test.ENDPOINTS[i % len(load_test.ENDPOINTS)]
                per[name].append(call(app, paths[name]())[0])
            if profiler:
                profiler.disable()
            everything = [x for xs in per.values() for x in xs]
            print(f"\nthe load test's mix, {args.mix} requests on a cold cache: CPU ms per request")
            for name, xs in per.items():
                print(f"{name:<14} mean {sum(xs) / len(xs):6.2f}")
            print(f"{'all':<14} mean {sum(everything) / len(everything):6.2f}")
            if profiler:
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.profile)
                print(out.getvalue())
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.profile)
                print(out.getvalue())
    finally:
        load_test.stop(redis)
    return 0


if __name__ == "__main__":
    sys.exit(main())
