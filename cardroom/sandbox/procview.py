"""The bot's ``/proc``: its own processes, nothing of the host's (decision
177).

The sandbox's ``/proc`` is a procfs of the bot's pid namespace, but every
file at its top that is not a process's is the host's: counters every seat
reads and moves (``meminfo``, ``loadavg``, ``stat``, ``diskstats``,
``vmstat``, ``pressure/*``, ``interrupts``, ``softirqs``, ``zoneinfo``,
``buddyinfo`` ...) and host details (``cmdline``, ``key-users``,
``partitions`` ...).

Where the kernel allows (Linux 5.8+) and the bot's start waits for a
hand-over anyway (the shim, bot-exec), the launcher remounts the bot's
procfs with ``subset=pid`` once bwrap has built the sandbox and before the
bot's code runs (``show_only_processes``): ``/proc`` then lists the bot's
processes, ``self`` and ``thread-self`` and nothing else, and any other
name is ENOENT, whatever a later kernel adds. Before that, bwrap binds over
it the few files a runtime reads (``REPLACED``), static texts that carry
nothing, which stay reachable: Node reads ``meminfo``, ``cpuinfo``,
``stat``, ``loadavg`` and ``uptime`` (``os.totalmem``, ``os.cpus`` ...),
glibc counts the processors in ``stat`` when there is no ``/sys``.
``meminfo`` is the bot's own memory limit, free in full; ``stat`` and
``cpuinfo`` show the one core a bot has.

Otherwise (an older kernel, or a start without a hand-over) every entry of
the host's ``/proc`` not in ``KEPT`` is covered by a read-only bind: an
empty file or folder from the image, or the same static texts (``covered``;
files only root may read are left: the bot cannot open them). That costs
bwrap a mount each (38 here).
"""

from __future__ import annotations

import ctypes
import os
import re
import stat
import time
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


# -- only the processes: procfs's subset=pid -------------------------------------------

# Where the bot's procfs can show its processes only (Linux 5.8): then the
# launcher binds just ``REPLACED`` (and the empty sys) and remounts the
# procfs with ``subset=pid`` once bwrap has built the sandbox, before the
# bot's code runs; every other entry, present or future, is gone (ENOENT),
# and no bind per host file costs bwrap a mount.
REPLACED = ("meminfo", "stat", "cpuinfo", "loadavg", "uptime")
_SYS_FSPICK, _SYS_FSCONFIG = 433, 431  # x86-64
FSPICK_CLOEXEC = 0x1
FSCONFIG_SET_STRING, FSCONFIG_CMD_RECONFIGURE = 1, 7

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def subset_supported() -> bool:
    """Does this kernel's procfs take ``subset=pid`` on a remount (5.8+)?"""
    release = os.uname().release
    m = re.match(r"(\d+)\.(\d+)", release)
    return os.uname().machine == "x86_64" and m is not None and (int(m.group(1)), int(m.group(2))) >= (5, 8)


def show_only_processes(inner_pid: int, bwrap: os.stat_result, deadline: float) -> None:
    """Once the sandbox of ``inner_pid`` is built (bwrap has executed the
    program after it: its executable is no longer ``bwrap``), remount its
    procfs with ``subset=pid``. Raises OSError if it cannot be done: the
    caller must not start the bot then."""
    exe = f"/proc/{inner_pid}/exe"
    while True:
        st = os.stat(exe)  # FileNotFoundError: the process is gone
        if (st.st_dev, st.st_ino) != (bwrap.st_dev, bwrap.st_ino):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"bwrap did not finish the sandbox of {inner_pid}")
        time.sleep(0.0002)
    path = f"/proc/{inner_pid}/root/proc"
    # Never the host's own procfs (a superblock every process shares).
    if os.stat(path).st_dev == os.stat("/proc").st_dev:
        raise OSError(f"{path} is the host's /proc")
    fd = _libc.syscall(ctypes.c_long(_SYS_FSPICK), ctypes.c_long(-100), os.fsencode(path), ctypes.c_long(FSPICK_CLOEXEC))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"fspick {path}: {os.strerror(err)}")
    try:
        for command, key, value in ((FSCONFIG_SET_STRING, b"subset", b"pid"), (FSCONFIG_CMD_RECONFIGURE, None, None)):
            if _libc.syscall(ctypes.c_long(_SYS_FSCONFIG), ctypes.c_long(fd), ctypes.c_long(command), key, value, ctypes.c_long(0)) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"remounting {path} with subset=pid: {os.strerror(err)}")
    finally:
        os.close(fd)
