"""How much faster `cardroom tournament` is with more worker processes.

    .venv/bin/python benchmarks/tournament_speed.py [--matches 200] [--rounds 1] [--jobs 1,2]

Plays the same event (Allegra, greedy and three random built-in bots at one
table of 4, round-robin with MATCHES deals, seed 1) once per job count per
round, alternating the counts (1, 2, 1, 2, ...) so a change in the machine's
load hits both alike, and prints each count's median wall time and the
speed-up over the first count, with `uptime` before and after (the load of
the rest of the machine disturbs the figure).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOTS = ["builtin:greedy", "builtin:random", "builtin:random", "builtin:random"]


def play(matches: int, jobs: int, out: Path) -> float:
    argv = [sys.executable, "-m", "cardroom", "tournament", "allegra", *BOTS, "--format", "round-robin",
            "--deals", str(matches), "--seed", "1", "--out", str(out), "--jobs", str(jobs)]
    started = time.monotonic()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--jobs", default="1,2")
    args = parser.parse_args()
    counts = [int(j) for j in args.jobs.split(",")]
    times: dict[int, list[float]] = {j: [] for j in counts}
    print(f"before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="cardroom-bench-") as tmp:
        for r in range(args.rounds):
            for j in counts:
                seconds = play(args.matches, j, Path(tmp) / f"r{r}-j{j}")
                times[j].append(seconds)
                print(f"round {r + 1}: --jobs {j}: {seconds:.1f} s ({args.matches / seconds:.2f} matches/s)", flush=True)
    print(f"after: {uptime()}")
    base = statistics.median(times[counts[0]])
    for j in counts:
        med = statistics.median(times[j])
        print(f"--jobs {j}: median {med:.1f} s, speed-up {base / med:.2f}x over --jobs {counts[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
