"""Empty network namespaces for the bots, made once and reused (decision 165).

Every bot runs in a network namespace of its own, with no interface but a
loopback that is down. bwrap's ``--unshare-net`` made a new one for each
bot (and brought its loopback up): 1.7-2.8 ms of a native bot's start here,
and more of the kernel's time to tear it down afterwards. A worker process
now keeps the namespaces its bots used, held by a descriptor each, and gives
one to each bot it starts: bot-exec joins it before it becomes the bot's
uid.

Why a used one is as good as a new one: it is lent to one bot at a time,
and taken back only when everything of that bot is known to be gone
(``release(clean=True)``); the namespace belongs to the host's user
namespace, over which a bot has no capability, so it cannot bring an
interface up, add an address, a route or a firewall rule, or change a
sysctl; and the only sockets a bot may make are AF_UNIX (the seccomp
filter), whose names in the namespace's abstract space go with the bot's
sockets. So it holds nothing of an earlier bot, and two bots never share
one, concurrent seats of a match included.

Where one cannot be made (no CAP_SYS_ADMIN), ``acquire`` returns None and
the launcher asks bwrap for a new one, as before: never the host's.

A forked process (a prefork pool's child, a tournament's job) inherits the
pool's descriptors with its memory, and the same namespace could then be
lent in two processes at once: a pool belongs to the process that made it,
and in any other it starts empty, closing its copies (what was lent before
the fork is closed, never pooled, when it comes back).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

CLONE_NEWNET = 0x40000000
KEEP_FREE = 8  # namespaces kept for reuse at most; more are closed


class NetnsPool:
    """The network namespaces of one worker process's bots."""

    def __init__(self) -> None:
        self._free: list[int] = []
        self._lent: set[int] = set()
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self.problem: str | None = None  # why none can be made here (then the launcher's --unshare-net)

    def acquire(self) -> int | None:
        """A descriptor of an empty network namespace, lent until ``release``;
        None where none can be made."""
        with self._lock:
            self._own()
            if self._free:
                fd = self._free.pop()
                self._lent.add(fd)
                return fd
        if self.problem is not None:
            return None
        fd, problem = _new_namespace()
        if fd is None:
            self.problem = problem
            return None
        with self._lock:
            self._own()
            self._lent.add(fd)
        return fd

    def release(self, fd: int, clean: bool) -> None:
        """Take ``fd`` back: kept for the next bot if ``clean`` (every process
        that used it is known to be gone), else closed."""
        with self._lock:
            self._own()
            lent_here = fd in self._lent
            self._lent.discard(fd)
            if clean and lent_here and len(self._free) < KEEP_FREE:
                self._free.append(fd)
                return
        os.close(fd)

    def _own(self) -> None:
        """(With the lock.) In a process forked from the pool's own: start
        empty (decision 165)."""
        if self._pid == os.getpid():
            return
        for fd in self._free:
            os.close(fd)  # this process's copies; the parent's stay open
        self._free, self._lent, self._pid = [], set(), os.getpid()

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for fd in free:
            os.close(fd)


def _new_namespace() -> tuple[int | None, str | None]:
    """Made in a thread of its own: unshare(2) moves only the calling thread
    into the new namespace, whose descriptor it opens before it ends (the
    worker's other threads never leave the host's)."""
    result: list = [None, "the thread that makes it did not run"]

    def make() -> None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            if libc.unshare(CLONE_NEWNET) != 0:
                result[1] = f"unshare(CLONE_NEWNET) failed: {os.strerror(ctypes.get_errno())}"
                return
            result[0] = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            result[1] = f"cannot open the new namespace: {exc}"

    thread = threading.Thread(target=make, name="cardroom-netns", daemon=True)
    thread.start()
    thread.join()
    return result[0], None if result[0] is not None else result[1]
