#!/usr/bin/env python3
"""Start-up time and memory of the starter kits (bots/starters/), each run
as its manifest says, in the bwrap sandbox and started plainly:

    python benchmarks/starter_kits.py [--starts 10] [--kits python-numpy,python-onnx]

* start: from ``Launcher.spawn`` to the kit's ``ready`` reply to a real
  ``start`` message (the interpreter, numpy's import, the SDK, the ONNX
  kit's ONNX Runtime import and its two sessions: all a real bot pays once
  per match); the median of N starts, sandboxed and plain
  taking turns so that a busy moment of the machine weighs on both;
* memory: the resident set (VmRSS) of the bot's processes just after
  ``ready``, summed; in the sandbox those of its cgroup, so bubblewrap's
  own process is not counted. The median of the N starts.

The C++ and Rust kits are built with their Makefiles into a temporary
folder first. Needs root and bubblewrap for the sandboxed column. The
figures are in docs/runtimes.md, with the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.sandbox_bench import START, Wire  # noqa: E402
from cardroom.launch import BotLimits, Launcher, PlainLauncher  # noqa: E402
from cardroom.packages import BotPackage, load_bot_package, package_argv  # noqa: E402
from cardroom.runtimes import runtime_limits  # noqa: E402

STARTERS = Path(__file__).resolve().parent.parent / "bots" / "starters"
KITS = ("python-numpy", "python-onnx", "node", "cpp", "rust")
BUILT = ("cpp", "rust")  # kits built with `make` (their .gitignore's products left out of the copy)


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def bot_pids(proc) -> list[int]:
    """The bot's own processes: its freezer cgroup's in the sandbox (the
    outer bwrap joins the bot's other cgroups but not that one), else its
    pid."""
    cgroup = proc.cgroup("freezer") if hasattr(proc, "cgroup") else None
    if cgroup is not None:
        return [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
    return [proc.pid]


def start_once(launcher: Launcher, package: BotPackage) -> tuple[float, int]:
    """(ms from spawn to ready, KiB resident after ready)."""
    limits = runtime_limits(package.runtime, BotLimits())
    line = (json.dumps(START) + "\n").encode()
    t0 = time.perf_counter()
    proc = launcher.spawn(package.root, package_argv(package, limits), limits)
    try:
        wire = Wire(proc)
        wire.send(line)
        assert json.loads(wire.line(timeout=20))["type"] == "ready"
        elapsed = (time.perf_counter() - t0) * 1000
        proc.pause()  # as the players do after ready
        resident = sum(rss_kib(pid) for pid in bot_pids(proc))
    finally:
        proc.kill()
    return elapsed, resident


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--kits", default=",".join(KITS), help="which kits, comma-separated (default: all)")
    args = parser.parse_args(argv)
    kits = [name for name in args.kits.split(",") if name]
    unknown = sorted(set(kits) - set(KITS))
    if unknown:
        parser.error(f"no kit {', '.join(unknown)}; the kits are {', '.join(KITS)}")
    from cardroom.sandbox import get_launcher

    launchers = [("plain", PlainLauncher()), ("sandbox", get_launcher("bwrap"))]
    with tempfile.TemporaryDirectory(prefix="starter-bench-") as tmp:
        work = Path(tmp)
        for name in (n for n in BUILT if n in kits):
            shutil.copytree(STARTERS / name, work / name, ignore=shutil.ignore_patterns("bot", "target", "Cargo.lock"))
            subprocess.run(["make", "-s"], cwd=work / name, check=True, capture_output=True)
        folders = {name: work / name if name in BUILT else STARTERS / name for name in kits}
        packages = {name: load_bot_package(folder, work / "unpacked") for name, folder in folders.items()}
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, {args.starts} starts each")
        print(f"{'kit':14} {'runtime':8} {'start plain':>12} {'start sandbox':>14} {'ratio':>6} {'RSS plain':>10} {'RSS sandbox':>12}")
        for name, package in packages.items():
            samples: dict[str, list[tuple[float, int]]] = {label: [] for label, _ in launchers}
            for _ in range(args.starts):
                for label, launcher in launchers:
                    samples[label].append(start_once(launcher, package))
            ms = {label: statistics.median(s for s, _ in runs) for label, runs in samples.items()}
            kib = {label: statistics.median(r for _, r in runs) for label, runs in samples.items()}
            print(
                f"{name:14} {package.runtime:8} {ms['plain']:10.1f}ms {ms['sandbox']:12.1f}ms {ms['sandbox'] / ms['plain']:6.2f}"
                f" {kib['plain'] / 1024:8.1f}MiB {kib['sandbox'] / 1024:10.1f}MiB"
            )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
