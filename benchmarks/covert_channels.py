#!/usr/bin/env python3
"""The channel budget: how much hidden information crosses, measured in the
real sandbox, between the seats of one match and from one match to the
next (a duplicate event's rotation k to rotation k+1).

    python benchmarks/covert_channels.py [--channels threads,forks,...] [--matches 1]
        [--cache-bits 256] [--skip-cache] [--skip-cpu] [--cold-vdso]

Counters between seats: for each channel and symbol width, a 2-player
Allegra match between the sender and the receiver of
tests/sandbox/hostile/covert.py: at each of its moves the sender adds a
symbol of B bits to the counter's level, which it holds while frozen (or
bumps the counter, for forks, reads and time); at each of its own moves
the receiver reads the counter and decodes the change since its previous
move. The counters:

* aio: /proc/sys/fs/aio-nr, moved by io_setup (both refused now: expect
  nothing decoded);
* pty: /proc/sys/kernel/pty/nr, moved by opening /dev/ptmx (likewise);
* threads: the host's thread count in /proc/loadavg (sysinfo's "procs"
  too), moved by tasks the sender keeps asleep (at most 30: the bot's
  process limit, which its outer bwrap shares);
* sysinfo: the same task count through the sysinfo call (no /proc);
* forks: "processes" in /proc/stat (forks since boot), bumped by children
  that exit at once;
* lastpid: the last pid in /proc/loadavg, bumped by the same forks: it is
  the reader's own pid namespace's, so nothing should cross;
* shmem: "Shmem" in /proc/meminfo, moved by pages the sender keeps in its
  /tmp (a tmpfs, 16 MiB);
* anon: "MemFree" in /proc/meminfo, moved by MiB of anonymous memory the
  sender keeps touched;
* cached: "Cached" in /proc/meminfo, moved by a page for each file of one
  page the sender reads that nobody read lately;
* diskstats: the host's reads completed in /proc/diskstats, moved by one
  read request for each small file the sender reads that nobody read
  lately;
* vmstat: "pgpgin" in /proc/vmstat (KiB read from disks), moved by a
  page for each such file of one page;
* softirqs: the BLOCK row of /proc/softirqs, moved by each such read's
  completion;
* cpubusy: the host's busy clock ticks in /proc/stat's cpu row (sysinfo
  and /proc/uptime's idle time say the same), moved by ticks the sender
  keeps the CPU busy before it moves;
* pipeino: the inode number of a new pipe (fstat), which the kernel takes
  from one counter for the whole host's pipes, sockets and anonymous
  inodes (get_next_ino), handed to each CPU in batches of 1024: both seats
  move to CPU 0, the sender makes and closes pipes;
* memfdino: the same for a new memfd's inode number (the kernel's internal
  shmem mount, which also holds SysV shared memory, numbers them all);
  both refused once a bot has answered ready (the start-up gate, decision
  237): expect nothing decoded;
* procino: get_next_ino() again, read and bumped with no new file: a new
  procfs inode (lstat of /proc/self/fd/N for a descriptor just opened);
* zeroino: the shmem counter again, through a shared mapping of /dev/zero
  (a new shmem file; /proc/self/maps shows its number) (decision 238);
  a ready bot has no procfs and no bot has /dev/zero (decision 267): for
  both, expect nothing decoded;
* vdso: Flush+Reload on the kernel's vDSO, the one page of code every
  process of the host maps (tests/sandbox/hostile/flush_reload.py): the
  receiver flushes its lines after each move, the sender calls time()
  SCALE times for a 1, the receiver times a load of time()'s line at its
  next move (decision 268); with --cold-vdso each of its matches is
  played twice, without the worker's flush and loads of the vDSO between
  the seats' turns (as before decision 273) and with them;
* vdsoflush: the same the other way round: the receiver calls time() at
  the end of its move, the sender flushes the vDSO for a 1, the receiver's
  load is slow where it did (decision 273);
* thinktime: the receiver's own clock between its moves, moved by the
  milliseconds the sender waits before it moves (a step of SCALE ms): the
  timing channel through the shared CPU and clock that no sandbox removes,
  since the receiver waits while the sender thinks.

A step is how many counter units (slots, tasks, forks, pages, MiB, reads,
ms) one symbol step moves: the kernel folds the page counters of
/proc/meminfo in from per-CPU counters in batches, so a step of one page is
mostly lost.

Each decoded symbol is checked against what the sender sent since the
receiver's move before (the replay gives the order of moves). Printed per
channel and width: symbols decoded, how many were right, the bits per move
that makes (B for an error-free run, else the capacity of a B-bit
symmetric channel with the measured error rate: B - H(p) - p log2(2^B - 1))
and the bits per match (that times the symbols decoded).

The page cache (tests/sandbox/hostile/pagecache.py): between seats, the
sender reads, in each of its turns of the game, the files of an 8-bit
symbol whose bits are 1 (files it can see, drawn afresh each run: one nobody read lately is
not cached) and the receiver probes them at its next move; from one match
to the next, a writer reads CACHE_BITS files' worth at its first move and a
reader in the following match probes them all. Each oracle is scored
separately: ru_inblock (getrusage), read_bytes (/proc/self/io), the access
time, and the read's duration against a second read. Printed per oracle:
bits decoded, right, error rate, and the bits per match (capacity of a
binary symmetric channel times the bits decoded).

The shared CPU (tests/sandbox/hostile/cpushare.py): bots of two matches
played at once, as two worker processes play them, each against a built-in
random bot; both move onto the first CPU (or, the second time, stay
where the scheduler puts them), and for 8 moves work 0.5 s a
move in slots of a few ms aligned to the wall clock: the sender spins or
sleeps by its bit, the receiver counts its loop's turns (below the median:
1). Printed per slot width: slots both worked in, how many were decoded
right, and the bits per second that makes.

The noise is everything else on the machine: note the load average.
Needs root and bubblewrap.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cardroom.launch import Launcher  # noqa: E402
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
    "cached": [(2, 1), (4, 1), (4, 4)],
    "diskstats": [(1, 1), (2, 1), (3, 1), (4, 1)],
    "sysinfo": [(4, 1)],
    "vmstat": [(2, 1), (4, 1)],
    "softirqs": [(2, 1), (3, 1)],
    "cpubusy": [(2, 1), (2, 2), (4, 2)],
    "pipeino": [(2, 1), (4, 1), (6, 1), (8, 1)],
    "memfdino": [(4, 1), (8, 1)],
    "procino": [(4, 1), (8, 1)],
    "zeroino": [(4, 1), (8, 1)],
    "thinktime": [(2, 2), (4, 2), (4, 5), (6, 5), (4, 20)],
    "vdso": [(1, 1), (1, 4)],
    "vdsoflush": [(1, 1)],
}
TIME = TimeControl(startup_ms=20_000, per_move_ms=3_000, overage_ms=10_000, total_ms=600_000, end_grace_ms=1_000)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def counters(launcher, tmp: Path, channels: list[str], matches: int, cold_vdso: bool = False) -> None:
    """``cold_vdso``: the vdso channel's matches also without the worker's
    loads of the vDSO between turns (as before decision 273), each match
    played both ways in turn."""
    from tests.sandbox.channels import capacity, covert_match

    warmer = getattr(launcher, "vdso", None)
    print(f"{'channel':9} {'bits':>4} {'step':>5} {'decoded':>8} {'right':>6} {'bits/move':>9} {'bits/match':>10}  load")
    for channel in channels:
        modes = {"cold": None, "warm": warmer} if channel.startswith("vdso") and cold_vdso else {"": warmer}
        for bits, scale in WIDTHS[channel]:
            decoded, correct = dict.fromkeys(modes, 0), dict.fromkeys(modes, 0)
            for match in range(matches):
                for mode, vdso in modes.items():
                    launcher.vdso = vdso
                    crossing = covert_match(
                        launcher,
                        tmp / f"{channel}-{bits}-{scale}-m{match}{mode}",
                        channel,
                        bits,
                        TIME,
                        5 + match,
                        7 + match,
                        scale,
                        files_seed=secrets.randbits(32),
                    )
                    decoded[mode] += crossing.decoded
                    correct[mode] += crossing.correct
            launcher.vdso = warmer
            for mode in modes:
                per_move = capacity(bits, decoded[mode], correct[mode])
                name = f"{channel} {mode}".strip()
                print(
                    f"{name:9} {bits:4} {scale:5} {decoded[mode]:8} {correct[mode]:6} {per_move:9.2f} "
                    f"{per_move * decoded[mode] / matches:10.0f}  {loadavg()}",
                    flush=True,
                )


class SharedSeats(Launcher):
    """The launcher as it was before decision 268, for the comparison in
    one run: every seat's bot started as seat 0's (one copy of the image
    and of the file cache's entries for all seats)."""

    def __init__(self, inner):
        self.inner, self.name, self.isolated = inner, inner.name, inner.isolated

    def spawn(self, root, argv, limits, seat=0):
        return self.inner.spawn(root, argv, limits)


def page_cache(launcher, tmp: Path, matches: int, cache_bits: int, shared: bool = False) -> None:
    from tests.sandbox.channels import CacheCrossing, cache_across_matches, cache_between_seats

    if shared:
        launcher = SharedSeats(launcher)
        print("every seat on seat 0's copy of the image (as before decision 268):")
    print(f"{'page cache':26} {'oracle':7} {'decoded':>8} {'right':>6} {'errors':>7} {'p-value':>8} {'bits/match':>10}  load")
    runs = {
        "between seats": lambda folder, seed, match: cache_between_seats(launcher, folder, TIME, seed, 8, 300, 7 + match),
        "to the next match": lambda folder, seed, match: cache_across_matches(launcher, folder, TIME, seed, cache_bits, 7 + match),
    }
    for name, run in runs.items():
        total = CacheCrossing(0)
        for match in range(matches):
            crossing = run(tmp / f"cache-{name.replace(' ', '-')}-m{match}", secrets.randbits(32), match)
            total.bits = crossing.bits
            for oracle in crossing.decoded:
                for mine, theirs in (
                    (total.decoded, crossing.decoded),
                    (total.right, crossing.right),
                    (total.symbols, crossing.symbols),
                    (total.symbols_right, crossing.symbols_right),
                ):
                    mine[oracle] = mine.get(oracle, 0) + theirs[oracle]
        for oracle, decoded in total.decoded.items():
            errors = 1 - total.right[oracle] / decoded
            per_match = total.bits_per_bit(oracle) * decoded / matches
            print(
                f"{name:26} {oracle:7} {decoded:8} {total.right[oracle]:6} {errors:7.1%} {total.p_value(oracle):8.2g}"
                f" {per_match:10.0f}  {loadavg()}",
                flush=True,
            )


def cpu(launcher, tmp: Path, matches: int) -> None:
    from tests.sandbox.channels import capacity, cpu_share

    print(f"{'shared CPU':10} {'slot ms':>7} {'slots':>6} {'right':>6} {'errors':>7} {'bits/s':>7}  load")
    for pin in (True, False):
        for slot_ms in (5, 10, 20, 50):
            slots = right = 0
            for match in range(matches):
                folder = tmp / f"cpu-{pin}-{slot_ms}-m{match}"
                crossing = cpu_share(launcher, folder, TIME, secrets.randbits(32), slot_ms, pin=pin)
                slots, right = slots + crossing.slots, right + crossing.right
            errors = 1 - right / slots if slots else 1.0
            per_second = capacity(1, slots, right) * 1000 / slot_ms
            where = "one CPU" if pin else "anywhere"
            print(f"{where:10} {slot_ms:7} {slots:6} {right:6} {errors:7.1%} {per_second:7.1f}  {loadavg()}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--channels", default=",".join(WIDTHS), help="comma-separated: " + ", ".join(WIDTHS) + "; none: no counter")
    parser.add_argument("--matches", type=int, default=1, help="matches per channel and width (different deals)")
    parser.add_argument("--cache-bits", type=int, default=256, help="bits the page-cache writer leaves for the next match")
    parser.add_argument("--skip-cache", action="store_true", help="leave the page cache out")
    parser.add_argument("--skip-cpu", action="store_true", help="leave the shared CPU out")
    parser.add_argument(
        "--shared-seats", action="store_true", help="the page cache also with every seat on one copy of the image (before)"
    )
    parser.add_argument(
        "--cold-vdso",
        action="store_true",
        help="the vdso channel also without the worker's loads between turns (before)",
    )
    args = parser.parse_args(argv)
    channels = [c for c in args.channels.split(",") if c and c != "none"]
    unknown = [c for c in channels if c not in WIDTHS]
    if unknown:
        parser.error(f"unknown channel(s) {', '.join(unknown)}: pick from {', '.join(WIDTHS)}")

    from cardroom.sandbox import SandboxUnavailable, get_launcher

    try:
        launcher = get_launcher("bwrap")
    except SandboxUnavailable as exc:
        print(f"the sandbox is unavailable here: {exc}", file=sys.stderr)
        return 1
    print(f"load average before: {loadavg()}")
    with tempfile.TemporaryDirectory(prefix="cardroom-covert-") as tmp:
        if channels:
            counters(launcher, Path(tmp), channels, args.matches, args.cold_vdso)
        if not args.skip_cache:
            if args.shared_seats:
                page_cache(launcher, Path(tmp) / "shared", args.matches, args.cache_bits, shared=True)
            page_cache(launcher, Path(tmp), args.matches, args.cache_bits)
        if not args.skip_cpu:
            cpu(launcher, Path(tmp), args.matches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
