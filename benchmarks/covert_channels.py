#!/usr/bin/env python3
"""How much a covert channel through a host-wide counter carries between
two seats of one match, measured in the real sandbox.

    python benchmarks/covert_channels.py [--channels threads,forks,...] [--matches 1]

For each channel and symbol width, a 2-player Allegra match between the
sender and the receiver of tests/sandbox/hostile/covert.py: at each of its
moves the sender adds a symbol of B bits to the counter's level, which it
holds while frozen (or bumps the counter, for forks); at each of its own
moves the receiver reads the counter and decodes the change since its
previous move. The counters:

* aio: /proc/sys/fs/aio-nr, moved by io_setup (both refused now: expect
  nothing decoded);
* pty: /proc/sys/kernel/pty/nr, moved by opening /dev/ptmx (likewise);
* threads: the host's thread count in /proc/loadavg (sysinfo's "procs"
  too), moved by tasks the sender keeps asleep (at most 30: the bot's
  process limit, which its outer bwrap shares);
* forks: "processes" in /proc/stat (forks since boot), bumped by children
  that exit at once;
* lastpid: the last pid in /proc/loadavg, bumped by the same forks: it is
  the reader's own pid namespace's, so nothing should cross;
* shmem: "Shmem" in /proc/meminfo, moved by pages the sender keeps in its
  /tmp (a tmpfs, 16 MiB);
* anon: "MemFree" in /proc/meminfo, moved by MiB of anonymous memory the
  sender keeps touched.

A step is how many counter units (slots, tasks, forks, pages, MiB) one
symbol step moves: the kernel folds the page counters of /proc/meminfo in
from per-CPU counters in batches, so a step of one page is mostly lost.

Each decoded symbol is checked against what the sender sent since the
receiver's move before (the replay gives the order of moves). Printed per
channel and width: symbols decoded, how many were right, and the bits per
move that makes: B for an error-free run, else the capacity of a B-bit
symmetric channel with the measured error rate (B - H(p) - p log2(2^B - 1)).
The noise is everything else on the machine: note the load average.
Needs root and bubblewrap.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cardroom.runner import TimeControl  # noqa: E402

# channel -> [(bits per symbol, counter units per symbol step)]
WIDTHS = {
    "aio": [(16, 1)],
    "pty": [(4, 1)],
    "threads": [(1, 1), (2, 1), (3, 1), (4, 1)],
    "forks": [(2, 1), (4, 1), (6, 1), (8, 1)],
    "lastpid": [(4, 1)],
    "shmem": [(4, 1), (4, 16), (6, 16), (8, 16), (2, 64), (4, 64), (6, 64)],
    "anon": [(2, 1), (2, 4), (4, 4), (6, 4), (2, 16), (4, 16)],
}
TIME = TimeControl(startup_ms=20_000, per_move_ms=3_000, overage_ms=10_000, total_ms=600_000, end_grace_ms=1_000)


def bits_per_move(bits: int, decoded: int, correct: int) -> float:
    """The capacity of a symmetric channel of 2**bits symbols with the
    measured error rate (an error-free run: all its bits)."""
    if decoded == 0:
        return 0.0
    p = 1 - correct / decoded
    if p == 0:
        return float(bits)
    entropy = -p * math.log2(p) - ((1 - p) * math.log2(1 - p) if p < 1 else 0.0)
    return max(0.0, bits - entropy - p * math.log2(2**bits - 1))


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--channels", default=",".join(WIDTHS), help="comma-separated: " + ", ".join(WIDTHS))
    parser.add_argument("--matches", type=int, default=1, help="matches per channel and width (different deals)")
    args = parser.parse_args(argv)

    from cardroom.sandbox import SandboxUnavailable, get_launcher
    from tests.sandbox.channels import covert_match

    try:
        launcher = get_launcher("bwrap")
    except SandboxUnavailable as exc:
        print(f"the sandbox is unavailable here: {exc}", file=sys.stderr)
        return 1
    print(f"load average before: {loadavg()}")
    print(f"{'channel':8} {'bits':>4} {'step':>5} {'decoded':>8} {'right':>6} {'bits/move':>9}  load")
    with tempfile.TemporaryDirectory(prefix="cardroom-covert-") as tmp:
        for channel in args.channels.split(","):
            for bits, scale in WIDTHS[channel]:
                decoded = correct = 0
                for match in range(args.matches):
                    crossing = covert_match(
                        launcher, Path(tmp) / f"m{match}", channel, bits, TIME, 5 + match, 7 + match, scale
                    )
                    decoded += crossing.decoded
                    correct += crossing.correct
                print(
                    f"{channel:8} {bits:4} {scale:5} {decoded:8} {correct:6} {bits_per_move(bits, decoded, correct):9.2f}  {loadavg()}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
