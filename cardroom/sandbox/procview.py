"""The bot's ``/proc``: its own processes, nothing of the host's (decision
177).

The sandbox's ``/proc`` is a procfs of the bot's pid namespace, but every
file at its top that is not a process's is the host's: counters every seat
reads and moves (``meminfo``, ``loadavg``, ``stat``, ``diskstats``,
``vmstat``, ``pressure/*``, ``interrupts``, ``softirqs``, ``zoneinfo``,
``buddyinfo`` ...) and host details (``cmdline``, ``key-users``,
``partitions`` ...). Each is covered by a read-only bind: an empty file or
folder from the image, or, where a runtime reads it, a static file that
carries nothing (``REPLACED``): Node reads ``meminfo``, ``cpuinfo`` and
``stat`` (``os.totalmem``, ``os.cpus``), glibc counts the processors in
``stat`` when there is no ``/sys``. ``meminfo`` is the bot's own memory
limit, free in full; ``stat`` and ``cpuinfo`` show the one core a bot has.

What stays: the processes' folders, ``self`` and ``thread-self``, ``net``
and ``sysvipc`` (the bot's own network and IPC namespaces), ``mounts`` (a
link into ``self``), ``version`` (``uname`` says as much); ``sys`` is an
empty folder (decision 93). A file that only root may read is left as it
is: the bot cannot open it. Anything else the kernel adds later is hidden
too: what is covered is every entry of the host's ``/proc`` not in
``KEPT``, read when the launcher starts.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Shown as the kernel has them (sys: covered by an empty folder of its own).
KEPT = frozenset({"self", "thread-self", "net", "sysvipc", "mounts", "version", "sys"})
# A runtime reads these: static content. meminfo is made per memory limit
# (``meminfo``); the others are the same for every bot.
STAT = (
    "cpu  0 0 0 0 0 0 0 0 0 0\n"
    "cpu0 0 0 0 0 0 0 0 0 0 0\n"
    "intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
)
LOADAVG = "0.00 0.00 0.00 1/1 1\n"
UPTIME = "0.00 0.00\n"
MEMINFO = "meminfo"


def _cpuinfo() -> str:
    """The host's first processor, without its current clock speed (which
    moves with the load on a machine that scales its frequency)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "processor\t: 0\n\n"
    first = text.split("\n\n", 1)[0]
    return "\n".join(line for line in first.splitlines() if not line.startswith("cpu MHz")) + "\n\n"


def meminfo(memory_bytes: int) -> bytes:
    """/proc/meminfo of a bot with ``memory_bytes``: all of it, all free."""
    kib = memory_bytes // 1024
    lines = [("MemTotal", kib), ("MemFree", kib), ("MemAvailable", kib)]
    lines += [(name, 0) for name in ("Buffers", "Cached", "SwapCached", "SwapTotal", "SwapFree", "Shmem")]
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in lines).encode()


def covered() -> dict[str, bytes | None]:
    """Each entry of ``/proc`` to cover: its content (None: an empty folder).
    What only root may read, and what is ``KEPT``, is left alone."""
    out: dict[str, bytes | None] = {}
    replaced = {"stat": STAT, "loadavg": LOADAVG, "uptime": UPTIME, "cpuinfo": _cpuinfo()}
    for name in sorted(os.listdir("/proc")):
        if name.isdigit() or name in KEPT:
            continue
        try:
            st = os.lstat(f"/proc/{name}")
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            continue  # self, thread-self, net, mounts are kept; no other link is a host's file
        if stat.S_ISDIR(st.st_mode):
            out[name] = None
        elif name == MEMINFO:
            continue  # per bot: the launcher binds meminfo(limit)
        elif st.st_mode & 0o044 or name in replaced:
            out[name] = replaced.get(name, "").encode()
    return out
