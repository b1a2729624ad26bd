#!/usr/bin/env python3
"""What the worker's loads of the vDSO between seats cost (decision 273).

    python benchmarks/vdso_loads.py [--loads 2000] [--decisions 2000] [--matches 3]

* one load: ``VdsoWarmer.warm()`` alone (every line of the shared pages,
  on each CPU in turn), N times 2 ms apart; median, 90th and 99th
  percentile, in microseconds;
* a decision when the seats take turns: two sandboxed Python bots (the
  trivial bot of sandbox_bench.py) answering ``ProtocolPlayer.act`` one
  after the other, so that every thaw follows another bot's and loads the
  vDSO; beside them two more bots started with no loads (the launcher as
  before decision 273), the pairs taking turns in blocks of 20 decisions so
  that a busy moment of the machine weighs on both; the median of the
  blocks' means, in microseconds, and their ratio;
* a match: 2-player Allegra matches of two random bots through the
  sandbox, each deal with the loads and without: how many loads each made,
  the worker's CPU time (this thread's) and the wall time per match.

The noise is everything else on the machine: note the load average.
Needs root and bubblewrap.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from sandbox_bench import bench_bot, sample_state  # noqa: E402


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return f"median {at(0.5):8.1f}  p90 {at(0.9):8.1f}  p99 {at(0.99):8.1f}"


def one_load(warmer, n: int) -> None:
    spent = []
    for _ in range(n):
        t0 = time.perf_counter()
        warmer.warm()
        spent.append((time.perf_counter() - t0) * 1e6)
        time.sleep(0.002)
    print(
        f"one load of {warmer.bytes} bytes on {len(os.sched_getaffinity(0))} CPUs (us): {percentiles(spent)}  load {loadavg()}"
    )


def seats_taking_turns(launcher, folder: Path, n: int) -> None:
    from cardroom.players import ProtocolPlayer, StartInfo, TimeControl

    bot = bench_bot("python", folder)
    state = sample_state()
    warmer = launcher.vdso
    pairs: dict[str, list[ProtocolPlayer]] = {}
    try:
        for name, vdso in (("loads", warmer), ("no loads", None)):
            launcher.vdso = vdso
            pairs[name] = [
                ProtocolPlayer(f"{name} {seat}", "bench", bot.root, bot.argv, launcher, bot.limits, seat)
                for seat in (0, 1)
            ]
            for seat, player in enumerate(pairs[name]):
                player.start(StartInfo("allegra", seat, 2, "bench", {}, TimeControl(total_ms=3_600_000), 1))
        launcher.vdso = warmer
        blocks: dict[str, list[float]] = {name: [] for name in pairs}
        for round_ in range(max(1, n // 20) + 2):
            for name, players in pairs.items():
                t0 = time.perf_counter()
                for i in range(20):
                    players[i % 2].act(state, 0)
                if round_ >= 2:  # the first two: warm-up
                    blocks[name].append((time.perf_counter() - t0) * 1e6 / 20)
    finally:
        launcher.vdso = warmer
        for players in pairs.values():
            for player in players:
                player.close()
    with_loads, without = (statistics.median(blocks[name]) for name in ("loads", "no loads"))
    print(
        f"a decision, the seats taking turns (us): {with_loads:.0f} with loads, {without:.0f} without, "
        f"{with_loads / without:.2f}x  load {loadavg()}"
    )


def matches(launcher, n: int) -> None:
    """Each deal played twice, with the loads and without (the launcher as
    before decision 273), one after the other."""
    from cardroom.runner import run_match

    random_bot = str(HERE.parent / "bots" / "random_bot.py")
    warmer = launcher.vdso
    try:
        for seed in range(n):
            for name, vdso in (("loads", warmer), ("no loads", None)):
                launcher.vdso = vdso
                before, cpu = warmer.warmed, time.thread_time()
                record = run_match("allegra", [random_bot, random_bot], seed=seed, launcher=launcher)
                print(
                    f"match {seed}, {name:8}: {len(record.replay['events'])} events, {warmer.warmed - before} loads, "
                    f"the worker's CPU {(time.thread_time() - cpu) * 1000:.0f} ms, wall {record.elapsed_ms} ms  "
                    f"load {loadavg()}"
                )
    finally:
        launcher.vdso = warmer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=2000)
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=3)
    args = parser.parse_args(argv)

    from cardroom.sandbox import SandboxUnavailable, get_launcher

    try:
        launcher = get_launcher("bwrap")
    except SandboxUnavailable as exc:
        print(f"the sandbox is unavailable here: {exc}", file=sys.stderr)
        return 1
    if launcher.vdso is None:
        print("the kernel maps no vDSO here: nothing is loaded", file=sys.stderr)
        return 1
    one_load(launcher.vdso, args.loads)
    with tempfile.TemporaryDirectory(prefix="cardroom-vdso-") as tmp:
        os.chmod(tmp, 0o755)
        seats_taking_turns(launcher, Path(tmp) / "bot", args.decisions)
    matches(launcher, args.matches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
