"""The kernel's vDSO, cached on every CPU before a bot thaws (decision 273).

The kernel maps one physical copy of its clock code (the vDSO) and of the
clock's data (the first page of [vvar]) into every process of the host; no
seat can be given a copy of its own (decision 268). A Flush+Reload across it
needs no system call: the receiving seat flushes the lines with ``clflush``
at the end of its move, the sending seat runs (or flushes) the lines it
chooses at its own, and the receiver times a load of each at its next move:
cached means the sender touched it. If the worker loads every line of those
pages between the two turns, on every CPU the bots may run on, every line
is cached in every core's own caches whatever the sender did, and the
receiver's load says nothing. (AMD's L2 is per core and its L3 a victim
cache of the L2s: a line loaded on one core only would still come quicker
to a receiver on the core the sender used; hence each CPU in turn.)

Only the pages every process can read are loaded: the other pages of [vvar]
(the time namespace's page, unused ones) fault with SIGBUS when nothing
backs them, and a load there would kill the worker.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from collections.abc import Iterable

PAGE = 4096


def shared_ranges(maps_lines: Iterable[str]) -> list[tuple[int, int]]:
    """(address, length) of what this process maps that is the host's one
    copy and always backed: all of [vdso], the first page of [vvar] (the
    clock's data every clock read goes through)."""
    ranges = []
    for line in maps_lines:
        fields = line.split()
        if len(fields) < 6 or fields[5] not in ("[vdso]", "[vvar]"):
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        ranges.append((low, high - low if fields[5] == "[vdso]" else PAGE))
    return ranges


class VdsoWarmer:
    """Loads every cache line of the host's shared vDSO pages on each CPU
    this thread may run on (``os.sched_setaffinity`` of the calling thread,
    one CPU after another, then back to what it was)."""

    def __init__(self, ranges: list[tuple[int, int]]):
        if not any(length for _, length in ranges):
            raise ValueError("no [vdso] in /proc/self/maps")
        self.ranges = ranges
        self.bytes = sum(length for _, length in ranges)
        self._tokens = itertools.count()
        self._last_thawed = -1
        self.warmed = 0  # how many times: for the tests and the benchmarks

    def new_token(self) -> int:
        """A number for a bot process, never reused (a pid may be)."""
        return next(self._tokens)

    def before_thaw(self, token: int) -> None:
        """Warm unless the bot about to thaw is the one thawed last (its own
        moves in a row: nobody else of this worker ran between)."""
        if token != self._last_thawed:
            self.warm()
            self._last_thawed = token

    @classmethod
    def of_this_process(cls) -> VdsoWarmer:
        with open("/proc/self/maps") as maps:
            return cls(shared_ranges(maps))

    def load_here(self) -> None:
        # One copy of each range: memcpy reads every 64-byte line of it
        # (8-16 KiB: far below where a copy turns to non-temporal loads).
        for address, length in self.ranges:
            ctypes.string_at(address, length)

    def warm(self) -> None:
        """Load the lines on every CPU, so that every core's own caches hold
        them; a thread that may not move (a CPU taken away meanwhile) loads
        them where it is and goes on."""
        self.warmed += 1
        allowed = os.sched_getaffinity(0)
        if len(allowed) == 1:
            self.load_here()
            return
        try:
            for cpu in sorted(allowed):
                os.sched_setaffinity(0, (cpu,))
                self.load_here()
        except OSError:
            self.load_here()
        finally:
            os.sched_setaffinity(0, allowed)
