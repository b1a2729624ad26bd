"""The bots' seccomp filter: the system calls a bot never needs, denied.

Built once per worker process with libseccomp (through ``pyseccomp``, a
ctypes binding to the system's libseccomp2: no compiler, no CPython build
dependency, works in any virtualenv) and handed to bubblewrap as a compiled
BPF program on ``--seccomp FD``; bwrap installs it as the last step before it
executes the bot, after no_new_privs, so it binds the bot and everything the
bot starts, for good.

What it denies, and why (docs/bot-authors.md lists it for bot authors):

* channels between sandboxes: ``flock`` and the lock, lease and notify
  commands of ``fcntl`` (locks and dnotify on the shared read-only ``/usr``
  cross sandboxes), inotify and fanotify, the page-cache probe
  ``preadv2``/``pwritev2`` with ``RWF_NOWAIT`` and ``cachestat``, and
  evicting shared pages from the page cache (``posix_fadvise`` with
  ``POSIX_FADV_DONTNEED``, ``madvise`` with ``MADV_COLD``/``MADV_PAGEOUT``);
* kernel attack surface no bot needs: keyrings, bpf, perf events,
  userfaultfd, io_uring, mounts, new namespaces (``unshare``, ``setns``, and
  ``clone`` with a ``CLONE_NEW*`` flag), ptrace and cross-process memory
  access, ``personality``, modules, kexec, reboot, swap, quotas and the
  like;
* host-wide kernel resources outside the bot's cgroups: the native
  asynchronous I/O calls (``io_setup`` takes slots of the host's one
  ``fs.aio-max-nr`` quota), and every socket family but AF_UNIX (a TCP
  socket's buffers count against the host's one ``net.ipv4.tcp_mem``, not
  the bot's memory cgroup; each bot's network namespace holds only a
  loopback anyway: decision 91); so no AF_INET, AF_INET6, AF_NETLINK,
  AF_PACKET, AF_VSOCK, AF_ALG ...

Denied calls fail with EPERM rather than killing the bot, so that CPython
degrades the way it does for any refused call. Two exceptions fail with
ENOSYS, as on a kernel without them: ``clone3``, which makes glibc fall back
to ``clone``, whose flags the filter can inspect (clone3 passes them in
memory, out of its reach); and the ``io_*`` calls, the answer of a kernel
built without AIO, which every user of them handles (glibc's POSIX aio uses
threads, not these calls).

A second filter, installed by bot-exec inside the sandbox, refuses new
pipes, sockets, memfds, shared memory and pidfds once the bot has answered
``ready`` (the start-up gate: ``startup_gate``, decision 237); this one
cannot, since the runtimes need some of them to start.

The filter is for the native architecture only; a system call made through
another ABI (``int 0x80`` on x86-64, the x32 ABI) fails with EPERM as a
whole, so no call escapes the rules by a different number.
"""

from __future__ import annotations

import errno
import os
import threading
from dataclasses import dataclass

__all__ = ["DENIED", "SeccompFilter", "SeccompUnavailable", "build_filter", "filter_fd", "get_filter"]


class SeccompUnavailable(RuntimeError):
    """The filter cannot be built here; the message says why and how to fix it."""


@dataclass(frozen=True)
class Denied:
    """A system call (or some of its uses) the filter refuses."""

    syscall: str
    why: str
    arg: int | None = None  # the argument the rule looks at, if only some uses are denied
    values: tuple[int, ...] = ()  # ... which it denies when equal to one of these (low 32 bits)
    flags: tuple[int, ...] = ()  # ... or when it has one of these bits set
    error: int = errno.EPERM


# fcntl commands: locks (POSIX and open-file-description), leases, dnotify.
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
LOCK_COMMANDS = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY)

AF_UNIX = 1
ALLOWED_FAMILIES = (AF_UNIX,)
CLONE_NEW_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
RWF_NOWAIT = 0x00000008
POSIX_FADV_DONTNEED = 4
MADV_COLD, MADV_PAGEOUT = 20, 21

_SIGNALLING = "a channel between sandboxes through files they share"
_KERNEL = "kernel attack surface no bot needs"

DENIED: tuple[Denied, ...] = (
    Denied("flock", _SIGNALLING),
    Denied("fcntl", _SIGNALLING, arg=1, values=LOCK_COMMANDS),
    *(Denied(name, _SIGNALLING) for name in ("inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch")),
    *(Denied(name, _SIGNALLING) for name in ("fanotify_init", "fanotify_mark")),
    Denied("preadv2", "tells whether a shared file is in the page cache", arg=5, flags=(RWF_NOWAIT,)),
    Denied("pwritev2", "tells whether a shared file is in the page cache", arg=5, flags=(RWF_NOWAIT,)),
    Denied("cachestat", "tells whether a shared file is in the page cache"),
    # Evicting a shared file's pages from the page cache would let a seat
    # write a bit the other reads back by timing, again and again.
    Denied("fadvise64", "evicts a shared file from the page cache", arg=3, values=(POSIX_FADV_DONTNEED,)),
    Denied("madvise", "evicts a shared file from the page cache", arg=2, values=(MADV_COLD, MADV_PAGEOUT)),
    # Socket families: everything but AF_UNIX (the builder turns ``values``
    # into "every other value"). AF_INET and AF_INET6 too: their buffers are
    # charged to the host's TCP and UDP memory, not to the bot's cgroup.
    Denied("socket", "socket families a bot never needs", arg=0, values=ALLOWED_FAMILIES),
    Denied("socketpair", "socket families a bot never needs", arg=0, values=ALLOWED_FAMILIES),
    Denied("clone", "new namespaces", arg=0, flags=CLONE_NEW_FLAGS),
    Denied("clone3", "its flags are out of the filter's reach: glibc falls back to clone", error=errno.ENOSYS),
    *(Denied(name, "new namespaces") for name in ("unshare", "setns")),
    *(Denied(name, "keyrings: " + _KERNEL) for name in ("keyctl", "add_key", "request_key")),
    Denied("bpf", _KERNEL),
    # Memory taken out of the kernel's direct map: kernel surface no bot
    # needs, and outside what the bot's rlimits see (decision 178).
    Denied("memfd_secret", _KERNEL),
    # The host's memory totals, load and task count (what /proc/meminfo and
    # /proc/loadavg showed): counters every seat moves and reads (decision
    # 177). glibc's sysconf(_SC_PHYS_PAGES) ignores the error and answers
    # nonsense; Node, numpy and glibc's qsort work on (docs/bot-authors.md).
    Denied("sysinfo", "the host's memory and task counters: a channel between seats"),
    Denied("perf_event_open", _KERNEL),
    Denied("userfaultfd", _KERNEL),
    *(Denied(name, _KERNEL) for name in ("io_uring_setup", "io_uring_enter", "io_uring_register")),
    # io_setup reserves slots of the host's one async-I/O quota (fs.aio-max-nr),
    # outside any cgroup: one bot could take them all, and their count is a
    # counter every sandbox can read. ENOSYS: a kernel without AIO.
    *(
        Denied(name, "the host's async-I/O quota", error=errno.ENOSYS)
        for name in ("io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents")
    ),
    *(
        Denied(name, "mounts: " + _KERNEL)
        for name in (
            "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
            "fspick", "mount_setattr",
        )
    ),
    *(Denied(name, "access to other processes") for name in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise")),
    Denied("personality", "changes how the kernel reads the bot's calls"),
    *(
        Denied(name, _KERNEL)
        for name in (
            "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
            "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "name_to_handle_at", "open_by_handle_at",
            "lookup_dcookie", "iopl", "ioperm", "modify_ldt", "uselib", "vhangup",
        )
    ),
)

# x86-64 numbers of calls newer than some libseccomp releases (2.5.4 knows
# neither cachestat nor quotactl_fd by name): a filter must not silently
# leave them out.
_X86_64_NUMBERS = {"cachestat": 451, "quotactl_fd": 443, "mount_setattr": 442, "memfd_secret": 447}


class SeccompFilter:
    """The compiled filter (a BPF program for bwrap's ``--seccomp``) and what
    went into it."""

    def __init__(self, program: bytes, arch: str, rules: int, skipped: list[str]):
        self.program = program
        self.arch = arch
        self.rules = rules
        self.skipped = skipped  # calls this architecture does not have

    def describe(self) -> str:
        text = f"seccomp filter of {self.rules} rules ({len(self.program) // 8} BPF instructions, {self.arch}); denied calls fail with EPERM (clone3 and the io_* calls with ENOSYS)"
        if self.skipped:
            text += f"; not on this architecture: {', '.join(self.skipped)}"
        return text


def _load_binding():
    try:
        import pyseccomp
    except ImportError as exc:
        raise SeccompUnavailable(
            f"the pyseccomp package is not installed ({exc}): pip install pyseccomp (it is a dependency of cardroom)"
        ) from None
    except (OSError, AttributeError) as exc:  # the binding found no usable libseccomp
        raise SeccompUnavailable(
            f"libseccomp could not be loaded ({exc}): install it (Debian/Ubuntu: apt-get install libseccomp2, "
            "or run scripts/install-system-packages.sh)"
        ) from None
    return pyseccomp


def build_filter() -> SeccompFilter:
    """Compile the filter with libseccomp; SeccompUnavailable if it cannot be."""
    sc = _load_binding()
    try:
        native = sc.system_arch()
        flt = sc.SyscallFilter(sc.ALLOW)
        # Calls made through another ABI of this CPU fail as a whole.
        flt.set_attr(sc.Attr.ACT_BADARCH, sc.ERRNO(errno.EPERM))
        # A binary tree of syscall numbers rather than a list: every call a
        # bot makes (read and write above all) passes through the filter.
        flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
        arch_name = {sc.Arch.X86_64: "x86_64", sc.Arch.AARCH64: "aarch64"}.get(native, hex(native))
        rules = 0
        skipped: list[str] = []
        for denied in DENIED:
            number = sc.resolve_syscall(sc.Arch.NATIVE, denied.syscall)
            if number < 0:
                number = _X86_64_NUMBERS.get(denied.syscall, -1) if native == sc.Arch.X86_64 else -1
            if number < 0:
                skipped.append(denied.syscall)
                continue
            action = sc.ERRNO(denied.error)
            for args in _conditions(sc, denied):
                flt.add_rule_exactly(action, number, *args)
                rules += 1
        program = _export(flt)
    except OSError as exc:
        raise SeccompUnavailable(
            f"libseccomp failed to build the filter ({exc}): upgrade libseccomp2 (2.5 or newer)"
        ) from None
    return SeccompFilter(program, arch_name, rules, skipped)


def _conditions(sc, denied: Denied) -> list[tuple]:
    """The argument conditions of each rule for ``denied`` (one rule each; a
    rule matches when all its conditions hold)."""
    if denied.arg is None:
        return [()]
    low32 = 0xFFFFFFFF
    if denied.flags:
        return [(sc.Arg(denied.arg, sc.MASKED_EQ, flag, flag),) for flag in denied.flags]
    if denied.syscall in ("socket", "socketpair"):
        # Every family but the allowed ones. The kernel reads the family as
        # an int, but a full 64-bit compare refuses anything with high bits
        # set, so no value above the largest allowed one gets through.
        top = max(denied.values)
        out = [(sc.Arg(denied.arg, sc.GT, top),)]
        out += [(sc.Arg(denied.arg, sc.EQ, v),) for v in range(top) if v not in denied.values]
        return out
    # The kernel reads the command as a 32-bit int: compare the low 32 bits,
    # or 0x1_0000_0006 would pass as F_SETLK.
    return [(sc.Arg(denied.arg, sc.MASKED_EQ, low32, v),) for v in denied.values]


def _export(flt) -> bytes:
    fd = os.memfd_create("cardroom-seccomp-export", os.MFD_CLOEXEC)
    try:
        flt.export_bpf(_Fd(fd))
        size = os.lseek(fd, 0, os.SEEK_END)
        program = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, f"libseccomp exported a BPF program of {len(program)} bytes")
    return program


class _Fd:
    """What pyseccomp's export wants: something with a fileno()."""

    def __init__(self, fd: int):
        self._fd = fd

    def fileno(self) -> int:
        return self._fd


_FILTER: SeccompFilter | None = None
_FILTER_LOCK = threading.Lock()


def get_filter() -> SeccompFilter:
    """The filter of this process (built once)."""
    global _FILTER
    with _FILTER_LOCK:
        if _FILTER is None:
            _FILTER = build_filter()
        return _FILTER


def filter_fd(program: bytes) -> int:
    """A fresh fd holding ``program`` for bwrap's ``--seccomp`` (bwrap reads
    it to its end, so each bot needs its own). The caller closes it."""
    fd = os.memfd_create("cardroom-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)  # a few KiB into a memfd: one write
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
