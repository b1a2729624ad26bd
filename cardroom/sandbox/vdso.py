"""The kernel's vDSO, flushed and loaded on every CPU before a bot thaws
after another (decision 273).

The kernel maps one physical copy of its clock code (the vDSO) and of its
data ([vvar]: the clock's, getrandom's; [vvar_vclock]: a hypervisor's
clock) into every process of the host; no seat can be given a copy of its
own (decision 268). A Flush+Reload across it needs no system call: the
receiving seat flushes the lines with ``clflush`` at the end of its move,
the sending seat runs (or flushes) the lines it chooses at its own, and the
receiver times a load of each at its next move: cached means the sender
touched it. If the worker flushes every line of those pages between the
two turns and loads each again on every CPU the bots may run on, every
core's own caches hold every line, alike whatever the sender did, and the
receiver's load says nothing. (AMD's L2 is per core and its L3 a victim
cache of the L2s: a line loaded on one core only would still come quicker
to a receiver on the core the sender used; hence each CPU in turn.)

Only the pages a read reaches are loaded: some pages of [vvar] (the time
namespace's, outside one; a hypervisor clock's the host does not have)
fault with SIGBUS, which would kill the worker, and tell a bot nothing
either: it cannot read them. Which they are is found once, in children.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import mmap
import os
import platform
import subprocess
import sys
from collections.abc import Iterable

PAGE = 4096
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
# void flush(char *p, size_t n), x86-64: for (i = 0; i < n; i += 64)
# clflush p[i]; then mfence. (xor eax,eax; cmp rax,rsi; jae done; clflush
# [rdi+rax]; add rax,64; jmp loop; done: mfence; ret.) No library offers
# clflush to Python; the same 21 bytes as the hostile bot's.
_CLFLUSH_X86_64 = bytes.fromhex("31c04839f0730a0fae3c074883c040ebf10faef0c3")


SHARED = ("[vdso]", "[vvar]", "[vvar_vclock]")

# Run in a child: read one page of the shared mappings (by its index, in the
# order of /proc/self/maps); it dies of SIGBUS where nothing backs the page.
_TRY_PAGE = """
import ctypes, sys
pages = []
for line in open("/proc/self/maps"):
    fields = line.split()
    if len(fields) >= 6 and fields[5] in sys.argv[2:]:
        low, high = (int(x, 16) for x in fields[0].split("-"))
        pages.extend(range(low, high, int(sys.argv[1])))
ctypes.string_at(pages[int(sys.argv[-1])], 1)
"""


def shared_pages(maps_lines: Iterable[str]) -> list[int]:
    """The pages of this process's mappings of the host's one copy of the
    vDSO and its data, in the order of /proc/self/maps."""
    pages: list[int] = []
    for line in maps_lines:
        fields = line.split()
        if len(fields) >= 6 and fields[5] in SHARED:
            low, high = (int(x, 16) for x in fields[0].split("-"))
            pages.extend(range(low, high, PAGE))
    return pages


def backed(count: int) -> list[bool]:
    """Which of the ``count`` shared pages a read can reach: each tried in a
    child of its own (a page of [vvar] that nothing backs, the time
    namespace's outside one, say, is a SIGBUS: this process would die). The
    kernel lays the pages out alike in every process outside a time
    namespace."""
    children = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _TRY_PAGE, str(PAGE), *SHARED, str(index)], stderr=subprocess.DEVNULL
        )
        for index in range(count)
    ]
    return [child.wait() == 0 for child in children]


def shared_ranges(pages: list[int], reachable: list[bool]) -> list[tuple[int, int]]:
    """(address, length) of the reachable pages, neighbours joined."""
    ranges: list[tuple[int, int]] = []
    for page, ok in zip(pages, reachable, strict=True):
        if not ok:
            continue
        if ranges and ranges[-1][0] + ranges[-1][1] == page:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + PAGE)
        else:
            ranges.append((page, PAGE))
    return ranges


def line_flusher():
    """clflush of a range, as a function (an executable page of its own,
    written, then made read-and-execute only); None off x86-64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    page = mmap.mmap(-1, PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    page.write(_CLFLUSH_X86_64)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    if _LIBC.mprotect(address, PAGE, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
        return None
    flush = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)(address)
    flush.page = page  # kept mapped as long as the function lives
    return flush


class VdsoWarmer:
    """Flushes every cache line of the host's shared vDSO pages and loads
    each again on each CPU this thread may run on (``os.sched_setaffinity``
    of the calling thread, one CPU after another, then back to where it
    was)."""

    def __init__(self, ranges: list[tuple[int, int]]):
        if not any(length for _, length in ranges):
            raise ValueError("no page of [vdso] or [vvar] in /proc/self/maps that a read reaches")
        self.ranges = ranges
        self.bytes = sum(length for _, length in ranges)
        self._flush = line_flusher()
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
    @functools.cache
    def of_this_process(cls) -> VdsoWarmer:
        """One for the process (its launchers share it: the bot thawed
        last is the process's), found once (0.3 s at load 10: the children)."""
        with open("/proc/self/maps") as maps:
            pages = shared_pages(maps)
        return cls(shared_ranges(pages, backed(len(pages))))

    def load_here(self) -> None:
        # One copy of each range: memcpy reads every 64-byte line of it
        # (20 KiB here: far below where a copy turns to non-temporal loads).
        for address, length in self.ranges:
            ctypes.string_at(address, length)

    def warm(self) -> None:
        """Flush the lines out of every cache (``clflush`` reaches every
        core's), then load them on every CPU, so that every core's own
        caches hold them, and hold them alike whatever a bot did with them
        (loads alone left the lines a sender had run a little likelier to
        be cached still when the receiver looked, under load: 52-56% of
        bits right where chance is 50%; the flush took that to chance).
        On each other CPU first, then where this thread was (see below).
        For the while, the thread is a real-time one (SCHED_FIFO, where it
        may be): a move to a CPU that another process holds then takes it at
        once, not at that process's next turn (at load 10: 0.17 ms at the
        90th percentile, against 2.4-2.8 ms). A thread that may not move (a
        CPU taken away meanwhile) has loaded them where it is, and goes on."""
        self.warmed += 1
        if self._flush is not None:
            for address, length in self.ranges:
                self._flush(address, length)
        allowed = os.sched_getaffinity(0)
        if len(allowed) == 1:
            self.load_here()
            return
        policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except OSError:  # not allowed: the moves wait their turn
            policy = None
        try:
            # back where it was last: the worker's own lines stay in that
            # core's caches (left on the other core, the next decision cost
            # several times more)
            here = _LIBC.sched_getcpu()
            last = [here] if here in allowed else []
            for cpu in sorted(allowed - {here}) + last:
                os.sched_setaffinity(0, (cpu,))
                self.load_here()
        except OSError:
            self.load_here()
        finally:
            os.sched_setaffinity(0, allowed)
            if policy is not None:
                os.sched_setscheduler(0, policy, param)
