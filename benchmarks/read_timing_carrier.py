"""What carries a read's duration from one seat to the next (issue 35,
decision 268), outside the sandbox so each suspect can be taken away alone.

A sender and a receiver take turns like two seats of a match (one process
here, moved to the sender's CPU and then the receiver's: the caches are
physical, so the process does not matter): at its turn the sender reads,
of a block of 8 files of a tmpfs (the image is one), the files whose bit
is 1; at its next turn the receiver reads each file of the block twice,
as tests/sandbox/hostile/visible.py's probe does, and decodes by the first
read's duration over the second: below 3 is "read before" (the test's
"time" oracle), and by rank, the 4 files with the lowest ratio (the
"rank" oracle: the code has half the bits 1). Between the turns the
worker does one of:

- ``none``: nothing;
- ``flush``: ``clflush`` of every line of the block's files through a
  read-only mapping (exactly the data the sender could have left in a CPU
  cache, nothing else: the page's LRU state, the inode, the page table
  entries of the kernel stay as they were);
- ``sweep``: copies a buffer of ``--sweep-mib`` onto itself on each CPU
  (what the worker could do between seats to evict the caches);
- ``copy``: nothing, but the receiver reads its own copies of the files
  (made before the sender read: other pages, as each seat's copy of the
  image is).

Prints, for each action and placement, the bits right of those probed by
each decoder, the median first/second ratio of files sent and not sent,
and the area under the curve of that ratio (0.5: no information). Run as root on a
quiet host: ``python benchmarks/read_timing_carrier.py``."""

from __future__ import annotations

import argparse
import ctypes
import mmap
import os
import random
import statistics
import sys
import tempfile
import time

BITS = 8


def read_all(path: str) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


def timed_read(path: str) -> int:
    started = time.perf_counter_ns()
    read_all(path)
    return time.perf_counter_ns() - started


def probe(path: str) -> tuple[int, int]:
    os.stat(path)
    return timed_read(path), timed_read(path)


_libc = ctypes.CDLL(None)


def _flush_stub():
    # void flush(char *p, size_t n): for (i = 0; i < n; i += 64) clflush(p + i); mfence
    code = bytes.fromhex(
        "31c0"  # xor eax, eax
        "4839f0"  # cmp rax, rsi
        "730a"  # jae done
        "0fae3c07"  # clflush [rdi + rax]
        "4883c040"  # add rax, 64
        "ebf1"  # jmp loop (to cmp)
        "0faef0"  # mfence
        "c3"  # ret
    )
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return page, ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)(address)


def flush_file(path: str) -> None:
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        mapped = _libc.mmap
        mapped.restype = ctypes.c_void_p
        mapped.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        base = mapped(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        _FLUSH_FN(base, size)
        _libc.munmap(ctypes.c_void_p(base), ctypes.c_size_t(size))
    finally:
        os.close(fd)


_FLUSH_PAGE, _FLUSH_FN = _flush_stub()


def sweep(buffer: bytearray, cpus: list[int]) -> None:
    """Copy ``buffer`` into itself shifted by a line, on each CPU in turn:
    every line of it read and written (memmove: at memory speed)."""
    mine = os.sched_getaffinity(0)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    for cpu in cpus:
        os.sched_setaffinity(0, {cpu})
        ctypes.memmove(base, base + 64, len(buffer) - 64)
    os.sched_setaffinity(0, mine)


def auc(sent: list[float], unsent: list[float]) -> float:
    """P(a sent file's ratio < a file not sent's): 0.5 is no information;
    the best threshold's accuracy is at least as far from 0.5 as this."""
    wins = sum((s < u) + 0.5 * (s == u) for s in sent for u in unsent)
    return wins / (len(sent) * len(unsent))


def make_files(folder: str, count: int, rng: random.Random, sizes: tuple[int, int]) -> tuple[list[str], dict[str, str]]:
    """``count`` files of ``sizes`` bytes (at least, at most), and a copy of each."""
    paths, copies = [], {}
    for i in range(count):
        path = os.path.join(folder, f"f{i:04d}")
        with open(path, "wb") as f:
            f.write(os.urandom(rng.randint(*sizes)))
        paths.append(path)
        copies[path] = f"{path}.copy"
        with open(path, "rb") as f, open(copies[path], "wb") as out:
            out.write(f.read())
    return paths, copies


def run_generic(paths, sender_cpu, receiver_cpu, seed, between, probed=lambda path: path):
    blocks = [paths[i : i + BITS] for i in range(0, len(paths) - BITS + 1, BITS)]
    message = random.Random(seed)
    values = [sum(1 << i for i in message.sample(range(BITS), BITS // 2)) for _ in blocks]
    right = ranked = count = 0
    sent_ratios, unsent_ratios = [], []
    mine = os.sched_getaffinity(0)
    for block, value in zip(blocks, values):
        if sender_cpu is not None:
            os.sched_setaffinity(0, {sender_cpu})
        for i, path in enumerate(block):
            if value >> i & 1:
                read_all(path)
        os.sched_setaffinity(0, mine)
        between(block)
        if receiver_cpu is not None:
            os.sched_setaffinity(0, {receiver_cpu})
        ratios = []
        for i, path in enumerate(block):
            first, second = probe(probed(path))
            was_sent = bool(value >> i & 1)
            right += (first < 3 * second) == was_sent
            count += 1
            ratios.append(first / second)
            (sent_ratios if was_sent else unsent_ratios).append(first / second)
        quickest = set(sorted(range(BITS), key=ratios.__getitem__)[: BITS // 2])
        ranked += sum((i in quickest) == bool(value >> i & 1) for i in range(BITS))
        os.sched_setaffinity(0, mine)
    return right, ranked, count, sent_ratios, unsent_ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--sweep-mib", type=int, default=64)
    parser.add_argument("--folder", default="/dev/shm")
    parser.add_argument("--sizes", default="4096-262144", help="the files' sizes in bytes, SMALLEST-LARGEST")
    parser.add_argument("--actions", default="none,flush,sweep,copy")
    args = parser.parse_args()
    rng = random.Random(1)
    buffer = bytearray(os.urandom(args.sweep_mib << 20))
    print(f"load average {os.getloadavg()}", flush=True)
    placements = {"same CPU": (0, 0), "other CPU": (0, 1), "free": (None, None)}
    sizes = tuple(int(x) for x in args.sizes.split("-"))
    for action in args.actions.split(","):
        for name, (s, r) in placements.items():
            with tempfile.TemporaryDirectory(dir=args.folder) as folder:
                paths, copies = make_files(folder, args.files, rng, sizes)
                sweep(buffer, sorted(os.sched_getaffinity(0)))  # the fresh files out of the caches
                if action == "flush":
                    right, ranked, probed, sent, unsent = run_generic(
                        paths, s, r, 2, between=lambda block: [flush_file(p) for p in block]
                    )
                elif action == "copy":
                    right, ranked, probed, sent, unsent = run_generic(
                        paths, s, r, 2, lambda block: None, copies.__getitem__
                    )
                elif action == "none":
                    right, ranked, probed, sent, unsent = run_generic(paths, s, r, 2, between=lambda block: None)
                else:
                    right, ranked, probed, sent, unsent = run_generic(
                        paths, s, r, 2, between=lambda block: sweep(buffer, sorted(os.sched_getaffinity(0)))
                    )
            print(
                f"{action:6s} {name:10s} right {right}/{probed}, by rank {ranked}/{probed}  median first/second: sent {statistics.median(sent):.2f}"
                f" not sent {statistics.median(unsent):.2f}  AUC {auc(sent, unsent):.3f}  load {os.getloadavg()[0]:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
