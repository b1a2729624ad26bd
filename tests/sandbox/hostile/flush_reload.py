"""Hostile bot pair: a covert channel between two seats through the one
thing every process of the host still shares that a bot can map, the
kernel's vDSO (decision 268). Flush+Reload: at the end of each of its moves
the receiver flushes the vDSO's cache lines (clflush needs only a readable
mapping); at its move the sender calls time() (glibc's goes to the vDSO's
__vdso_time) SCALE times for a 1, not at all for a 0; at its next move the
receiver times one load of the line time() runs (rdtscp around it): in the
caches, the sender called.

With "channel": "vdsoflush" the other way round (Flush+Flush's sender):
the receiver calls time() at the end of its move, so that the line is
cached; the sender flushes the whole vDSO for a 1; the receiver's load at
its next move is slow where the sender flushed (decision 273).

config.json: {"role": "send" | "receive", "channel": "vdso" | "vdsoflush",
"bits": 1, "seed": S, "scale": CALLS}. The sender's symbols are drawn from S: "sent J
SYMBOL" at its move J; the receiver, which found the line to watch and its
threshold by calling time() itself before it answered ready, logs
"received K SYMBOL" at its move K (from its second). Where a step is
refused (an executable page for the two machine-code helpers, say), "vdso
refused: WHY", and it plays on. Both play random legal moves."""

import ctypes
import json
import mmap
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from visible import log, play  # noqa: E402

AT_SYSINFO_EHDR = 33
LINE = 64
# void flush(char *p, size_t n): clflush each line of [p, p + n), then mfence
FLUSH = "31c04839f0730a0fae3c074883c040ebf10faef0c3"
# uint64 load_time(char *p): rdtscp; load *p; rdtscp; the difference
LOAD_TIME = "0f01f948c1e2204809d04989c08a070f01f948c1e2204809d04c29c0c3"


def helpers():
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(bytes.fromhex(FLUSH).ljust(64, b"\xcc") + bytes.fromhex(LOAD_TIME))
    base = ctypes.addressof(ctypes.c_char.from_buffer(page))
    flush = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)(base)
    load_time = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(base + 64)
    return page, flush, load_time


def vdso():
    """(address, bytes) of the vDSO: where the auxiliary vector says, as
    long as /proc/self/maps says (two pages where it cannot be read)."""
    libc = ctypes.CDLL(None)
    libc.getauxval.restype = ctypes.c_ulong
    start = libc.getauxval(AT_SYSINFO_EHDR)
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                if line.rstrip().endswith("[vdso]"):
                    low, high = (int(x, 16) for x in line.split()[0].split("-"))
                    return low, high - low
    except OSError:
        pass
    return start, 2 * 4096


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    role, calls = config["role"], int(config.get("scale", 4))
    sender_flushes = config.get("channel") == "vdsoflush"
    libc = ctypes.CDLL(None)
    libc.time.restype = ctypes.c_long
    libc.time.argtypes = [ctypes.c_void_p]
    try:
        _page, flush, load_time = helpers()
        start, size = vdso()
    except (OSError, ValueError) as exc:
        log(f"vdso refused: {exc}")
        play(lambda moves, observation: None)
        return
    state = {"line": None, "threshold": 0, "moves": 0}
    if role == "receive":
        # Which line time() runs, and how quick a load of it is after the
        # call against after a flush alone: medians of 16 rounds of each,
        # one load after each flush (a second would find what the first
        # one's neighbours brought in: the prefetchers).
        lines = range(0, size, LINE)
        called = {line: [] for line in lines}
        alone = {line: [] for line in lines}
        for round_ in range(32):
            for line in lines:
                flush(start, size)
                # what the worker runs between the turns anyway (its clock:
                # clock_gettime), so that no line of that is picked
                time.monotonic()
                time.time()
                if round_ % 2:
                    for _ in range(calls):
                        libc.time(None)
                (called if round_ % 2 else alone)[line].append(load_time(start + line))
        gap = {line: statistics.median(alone[line]) - statistics.median(called[line]) for line in lines}
        best = max(lines, key=gap.__getitem__)
        state["line"] = best
        state["threshold"] = (statistics.median(alone[best]) + statistics.median(called[best])) / 2
        log(
            f"watching +{best:#x}: {statistics.median(called[best])} cycles after a call, {statistics.median(alone[best])} without"
        )
        flush(start, size)
    symbols = random.Random(config["seed"])

    def send(moves, _observation):
        symbol = symbols.randrange(2)
        if sender_flushes:
            if symbol:
                flush(start, size)
        else:
            for _ in range(calls * symbol):
                libc.time(None)
        log(f"sent {moves} {symbol}")

    def receive(moves, _observation):
        cycles = load_time(start + state["line"])
        cached = cycles < state["threshold"]
        if moves > 1:
            log(f"received {moves} {int(not cached if sender_flushes else cached)}")
        if sender_flushes:
            for _ in range(calls):
                libc.time(None)  # cached, unless the sender's next move flushes it
        else:
            flush(start, size)  # the sender's next move brings back what it runs

    play(send if role == "send" else receive, config["seed"] + (1 if role == "send" else 2))


main()
