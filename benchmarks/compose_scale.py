"""Scale-out on the real compose stack: matches per minute with 1, 2 and 3
worker containers.

    make bench-compose        # = scripts/containers/run.sh .venv/bin/python benchmarks/compose_scale.py
    scripts/containers/run.sh .venv/bin/python benchmarks/compose_scale.py --workers 1 2 3 --matches 80 --rounds 2

Run through scripts/containers/run.sh, which starts the private Docker daemon,
builds the images and tears everything down afterwards. The stack is
docker-compose.yml with the test override (tests/containers/stack.py), the
scheduler stopped (this measures the workers, not matchmaking). The matches
are benchmarks/throughput.py's: ``--matches`` 4-player games, half Allegory
and half Allegra, of four distinct built-in protocol bots a table, each bot a
program in the bubblewrap sandbox of a worker container; each run gets a
fresh batch with the same seeds and lineups, created and sent inside the web
container (so the bots' files are in the stack's media volume). A run's time
is the database's own: from the first message sent to the last result
recorded. Runs alternate (1, 2, 3, 1, 2, 3, ...) for ``--rounds`` rounds;
each count's figure is its median.

Each run also says where the machine's CPU went: how many of its cores were
busy on average (/proc/stat), and the CPU milliseconds per match of each
service's containers (their cpuacct cgroups; a worker's bots are in its own).
When one worker already keeps more than one core busy, no number of workers
can double its rate on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.containers.stack import Stack, docker_host  # noqa: E402

# Run inside the web container, with benchmarks/throughput.py copied beside it.
INSIDE = """
import json, os, sys
sys.path.insert(0, "/tmp/cardroom-bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
import throughput
from ladder.services import enqueue, match_kinds
lineups = throughput.four_player_lineups()
ids = throughput.make_batch(int(sys.argv[1]), int(sys.argv[2]), lineups)
for pk in ids:
    match_kinds.send_match(pk)
print(json.dumps(ids))
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3], help="worker container counts")
    p.add_argument("--matches", type=int, default=80, help="matches per run")
    p.add_argument("--rounds", type=int, default=2, help="rounds of runs; each count's median")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--timeout", type=float, default=900, help="seconds a run may take")
    return p.parse_args(argv)


SERVICES = ("worker", "db", "redis", "cache", "web", "proxy")


def busy_jiffies() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def _cpuacct_usage(pid: int) -> int | None:
    """Nanoseconds of CPU used by the cpuacct cgroup of ``pid`` (cgroup v1
    cpuacct.usage, or v2 cpu.stat usage_usec)."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            usage = Path("/sys/fs/cgroup/cpuacct") / path.lstrip("/") / "cpuacct.usage"
            return int(usage.read_text()) if usage.exists() else None
        if controllers == "" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            stat = Path("/sys/fs/cgroup") / path.lstrip("/") / "cpu.stat"
            for row in stat.read_text().splitlines():
                if row.startswith("usage_usec "):
                    return int(row.split()[1]) * 1000
    return None


def service_cpu(stack: Stack) -> dict[str, int]:
    """Nanoseconds of CPU used so far by each service's running containers."""
    out: dict[str, int] = {}
    for service in SERVICES:
        for info in stack.containers(service):
            usage = _cpuacct_usage(info["State"]["Pid"])
            if usage is not None:
                out[service] = out.get(service, 0) + usage
    return out


def alive_workers(stack: Stack) -> int:
    return stack.sql("SELECT count(*) FROM ladder_workerheartbeat WHERE last_seen > now() - interval '5 seconds'")[0][0]


def run_batch(stack: Stack, n: int, seed: int, timeout: float) -> tuple[float, int]:
    """(seconds from the first message to the last result, failed matches)."""
    web = stack.containers("web")[0]["Id"]
    stack.docker("exec", web, "mkdir", "-p", "/tmp/cardroom-bench")
    stack.docker("cp", str(ROOT / "benchmarks" / "throughput.py"), f"{web}:/tmp/cardroom-bench/throughput.py")
    out = stack.compose("exec", "-T", "web", "python3", "-c", INSIDE, str(n), str(seed)).stdout
    ids = json.loads(out.strip().splitlines()[-1])
    deadline = time.monotonic() + timeout
    while True:
        (done,) = stack.sql("SELECT count(*) FROM ladder_match WHERE id = ANY(%s) AND status IN ('finished', 'failed')", (ids,))[0:1][0]
        if done == len(ids):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"only {done}/{len(ids)} matches done after {timeout} s")
        time.sleep(0.5)
    (seconds, failed), = stack.sql(
        "SELECT extract(epoch FROM max(finished) - min(enqueued)), count(*) FILTER (WHERE status = 'failed') "
        "FROM ladder_match WHERE id = ANY(%s)", (ids,),
    )  # fmt: skip
    return float(seconds), failed


def main(argv=None) -> int:
    args = parse_args(argv)
    if docker_host() is None:
        print("compose_scale: run it through scripts/containers/run.sh (make bench-compose)", file=sys.stderr)
        return 2
    stack = Stack()
    stack.down()
    stack.up(workers=min(args.workers))
    try:
        stack.compose("stop", "scheduler")
        results: dict[int, list[float]] = {n: [] for n in args.workers}
        for rnd in range(args.rounds):
            for count in args.workers:
                stack.scale_workers(count)
                deadline = time.monotonic() + 120
                while alive_workers(stack) != count:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{count} worker(s) not beating after 120 s")
                    time.sleep(1)
                load = os.getloadavg()[0]
                cpu_before, (busy0, total0), t0 = service_cpu(stack), busy_jiffies(), time.monotonic()
                seconds, failed = run_batch(stack, args.matches, args.seed, args.timeout)
                cpu_after, (busy1, total1), wall = service_cpu(stack), busy_jiffies(), time.monotonic() - t0
                rate = args.matches / seconds * 60
                results[count].append(rate)
                cores = (busy1 - busy0) / (total1 - total0) * (os.cpu_count() or 1)
                per_match = {s: (cpu_after.get(s, 0) - cpu_before.get(s, 0)) / 1e6 / args.matches for s in SERVICES}
                spent = ", ".join(f"{s} {ms:.0f}" for s, ms in per_match.items() if ms >= 0.5)
                print(
                    f"round {rnd + 1}: {count} worker(s): {args.matches} matches in {seconds:.1f} s = "
                    f"{rate:.1f} matches/min ({failed} failed; load before {load:.2f}); "
                    f"{cores:.2f} cores busy over {wall:.0f} s; CPU ms a match: {spent}", flush=True,
                )  # fmt: skip
        base = statistics.median(results[args.workers[0]])
        print(f"\n| workers | matches/min (median of {args.rounds}) | vs {args.workers[0]} |\n|---|---|---|")
        for count in args.workers:
            m = statistics.median(results[count])
            print(f"| {count} | {m:.1f} | {m / base:.2f}x |")
        print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores: {os.cpu_count()})")
    finally:
        stack.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
