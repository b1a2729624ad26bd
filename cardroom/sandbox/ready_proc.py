"""The bot's ``/proc`` once it is ready: five static texts, no procfs
(decision 267).

procfs numbers each inode it makes for ``/proc/PID/...`` (``/proc/self/fd/N``
of a descriptor just opened, a new thread's folder) with the host-wide
``get_next_ino()``, the pipes' and sockets' counter: a seat that makes N of
them at its move is read by another that makes one at its own and reads its
number with ``lstat``. No system call filter tells those lookups apart from
what every runtime does, so once the bot answers ``ready`` (and before
anything of the match reaches it) its procfs is put out of its reach
(``BwrapProcess.close_startup``):

1. the bot's cgroup is asked to freeze;
2. meanwhile a thread of the worker with a file-system context of its own
   (``unshare(CLONE_FS)``) enters the bot's mount namespace (``setns`` on
   the bot's pidfd) and attaches over its ``/proc`` a read-only bind of a
   folder of the five texts a runtime reads (``READY_VIEW``: ``meminfo``,
   ``stat``, ``cpuinfo``, ``loadavg``, ``uptime``), cloned from the host's
   tree before it entered (``open_tree``, ``move_mount``), and binds over
   its ``self/stat`` and ``self/statm`` the bot's own live files (``LIVE``:
   Node's ``process.memoryUsage()`` reads ``stat``), cloned from the bot's
   procfs before the view covers it: a bind of a file ends the path there,
   so reading it looks nothing up and makes no inode. The procfs stays
   beneath it, covered: no path leads there, and the bot cannot take the
   cover off (``umount2`` is refused by its seccomp filter, and it has no
   capability in its namespaces). Detaching it as well (``MNT_DETACH``)
   would wait for an RCU grace period, 2.8 ms here under load, and close
   nothing more;
3. once the kernel says every task is frozen
   (``_Controller.settled_frozen``), no call of the bot's is under way: a
   lookup made during the switch has ended, and what it kept is in its
   task's descriptors;
4. every task is checked for a way into the covered procfs (``ways_in``):
   an open descriptor (``O_PATH`` ones too), its working folder or its
   root, or a Unix socket holding descriptors in flight. One is an attack
   (a descriptor of ``/proc/self/fd`` kept across ``ready`` reaches the
   live procfs still): the bot is killed.

Everything that cannot be done fails closed: the bot does not play.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import stat
import threading
from pathlib import Path

from .procview import REPLACED

__all__ = ["READY_VIEW", "READY_LISTING", "LIVE", "pid_inside", "replace_proc", "ways_in", "ready_view_folder"]

READY_VIEW = REPLACED  # what a runtime reads of /proc once it plays (decision 267)
# The bot's own files of its main process, live (a bind of each): what they
# show is the bot's alone (its pid in its namespace, its times and memory).
LIVE = ("stat", "statm")
# What a ready bot lists in /proc: the texts and self/ (holding LIVE).
READY_LISTING = tuple(sorted((*READY_VIEW, "self")))

# x86-64 system call numbers (the sandbox runs there only: procview.subset_supported)
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442
_AT_FDCWD = -100
_AT_EMPTY_PATH, _AT_RECURSIVE = 0x1000, 0x8000
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC = 0x1, 0o2000000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV, _MOUNT_ATTR_NOEXEC = 0x1, 0x2, 0x4, 0x8
_CLONE_FS, _CLONE_NEWNS = 0x200, 0x20000
_SYS_KCMP, _KCMP_FILES, _KCMP_FS = 312, 2, 3

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def ready_view_folder(parent: Path, texts: Path, meminfo_file: Path, seat: int = 0) -> Path:
    """A folder in ``parent`` holding ``READY_VIEW``: ``meminfo_file`` (the
    bot's memory limit) and the others from ``texts`` (the image's static
    /proc texts), root's and read-only, for a bot of ``seat`` (each seat of
    a match reads files of its own: decision 268). Named after what it
    holds, so that workers of two versions on one host never share a stale
    one; made once, then reused."""
    contents = {name: (meminfo_file if name == "meminfo" else texts / name).read_bytes() for name in READY_VIEW}
    digest = hashlib.sha256(repr((sorted(contents.items()), LIVE)).encode()).hexdigest()[:12]
    folder = parent / (f"ready-{digest}" + (f"-seat{seat}" if seat else ""))
    if folder.is_dir():
        return folder
    temporary = folder.with_name(f".{folder.name}.{os.getpid()}.{threading.get_ident()}")
    temporary.mkdir(mode=0o755)
    for name, content in contents.items():
        (temporary / name).write_bytes(content)
        os.chmod(temporary / name, 0o444)
    (temporary / "self").mkdir(mode=0o755)
    for name in LIVE:  # where the live files are bound (replace_proc)
        (temporary / "self" / name).write_bytes(b"")
        os.chmod(temporary / "self" / name, 0o444)
    os.chmod(temporary / "self", 0o555)
    os.chmod(temporary, 0o555)
    try:
        os.rename(temporary, folder)
    except OSError:  # another thread made it first
        shutil.rmtree(temporary, ignore_errors=True)
        if not folder.is_dir():
            raise
    return folder


def pid_inside(host_pid: int) -> int:
    """The pid of the host's process ``host_pid`` in its own (innermost)
    pid namespace: the last of its status's ``NSpid``."""
    for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    raise OSError(f"no NSpid in /proc/{host_pid}/status")


def replace_proc(pidfd: int, view: Path, pid_in_namespace: int) -> None:
    """In the mount namespace of the process ``pidfd`` (``pid_in_namespace`` in
    its own pid namespace), attach a read-only bind of ``view`` over
    ``/proc`` (and what is bound over it), then the process's own ``LIVE``
    files over ``/proc/self/``. Raises OSError if any step fails: the bot
    must not play then."""
    errors: list[BaseException] = []
    # setns into a mount namespace needs a file-system context no other
    # thread shares: a thread of its own, which unshares it and then ends.
    thread = threading.Thread(
        target=_replace_in_thread, args=(pidfd, view, pid_in_namespace, errors), name="replace-proc", daemon=True
    )
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def _open_tree(path: str | Path) -> int:
    return _check(
        _libc.syscall(
            ctypes.c_long(_SYS_OPEN_TREE),
            ctypes.c_long(_AT_FDCWD),
            os.fsencode(path),
            ctypes.c_long(_OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC),
        ),
        f"open_tree {path}",
    )


def _move_mount(tree: int, target: str, what: str) -> None:
    _check(
        _libc.syscall(
            ctypes.c_long(_SYS_MOVE_MOUNT),
            ctypes.c_long(tree),
            b"",
            ctypes.c_long(_AT_FDCWD),
            os.fsencode(target),
            ctypes.c_long(_MOVE_MOUNT_F_EMPTY_PATH),
        ),
        what,
    )


def _replace_in_thread(pidfd: int, view: Path, pid_in_namespace: int, errors: list[BaseException]) -> None:
    tree = -1
    live: list[int] = []
    try:
        # Cloned here, in the worker's namespace, where ``view`` is visible.
        tree = _open_tree(view)
        attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV | _MOUNT_ATTR_NOEXEC, 0, 0, 0)
        _check(
            _libc.syscall(
                ctypes.c_long(_SYS_MOUNT_SETATTR),
                ctypes.c_long(tree),
                b"",
                ctypes.c_long(_AT_EMPTY_PATH | _AT_RECURSIVE),
                ctypes.byref(attr),
                ctypes.c_size_t(ctypes.sizeof(attr)),
            ),
            "mount_setattr read-only",
        )
        _check(_libc.unshare(_CLONE_FS), "unshare(CLONE_FS)")
        _check(_libc.setns(pidfd, _CLONE_NEWNS), "setns into the bot's mount namespace")
        # From here on "/" is the bot's root and "/proc" its procfs: its own
        # files are cloned from there (the pid as the bot sees it), before
        # the view covers it.
        live = [_open_tree(f"/proc/{pid_in_namespace}/{name}") for name in LIVE]
        _move_mount(tree, "/proc", "attaching the static /proc over the procfs")
        for name, file_tree in zip(LIVE, live, strict=True):
            _move_mount(file_tree, f"/proc/self/{name}", f"binding the bot's own {name} in /proc/self")
    except BaseException as exc:  # handed to the caller's thread
        errors.append(exc)
    finally:
        for fd in [tree, *live]:
            if fd >= 0:
                os.close(fd)


def ways_in(tasks: list[int], proc_dev: int) -> list[str]:
    """What of ``tasks`` (thread ids, as the host's /proc names them) still
    reaches the file system ``proc_dev`` (the bot's old procfs), or may: a
    descriptor, a working folder or a root in it, or a socket with
    descriptors in flight (sent, not yet received: they could be the old
    procfs's, and no task holds them till one receives them). Read while
    the bot is frozen. A task that cannot be looked at raises OSError (fail
    closed). Threads that share a table of descriptors (or a working folder
    and root) with one looked at already are not looked at again
    (``kcmp``; where the kernel has no kcmp, every task is)."""
    found = []
    seen_files: list[int] = []
    seen_fs: list[int] = []
    for tid in tasks:
        base = f"/proc/{tid}/task/{tid}"
        places = []
        if not any(_same(tid, other, _KCMP_FS) for other in seen_fs):
            places += [("its working folder", f"{base}/cwd"), ("its root", f"{base}/root")]
            seen_fs.append(tid)
        try:
            if not any(_same(tid, other, _KCMP_FILES) for other in seen_files):
                places += [(f"descriptor {name}", f"{base}/fd/{name}") for name in os.listdir(f"{base}/fd")]
                seen_files.append(tid)
        except FileNotFoundError:
            continue  # it ended (a frozen task is not killed but by us)
        for what, path in places:
            try:
                st = os.stat(path)  # the file behind the link, O_PATH descriptors too
            except FileNotFoundError:
                continue  # a descriptor closed as we listed them: only before the freeze settled
            if st.st_dev == proc_dev:
                found.append(f"thread {tid}: {what}")
            elif stat.S_ISSOCK(st.st_mode):
                in_flight = _descriptors_in_flight(path.replace("/fd/", "/fdinfo/"))
                if in_flight:
                    found.append(f"thread {tid}: {what}, a socket with {in_flight} descriptors in flight")
    return found


def _same(tid: int, other: int, kind: int) -> bool:
    """Do the two tasks share their table of descriptors (``_KCMP_FILES``)
    or their working folder and root (``_KCMP_FS``)? False when unsure."""
    return (
        _libc.syscall(
            ctypes.c_long(_SYS_KCMP),
            ctypes.c_long(tid),
            ctypes.c_long(other),
            ctypes.c_long(kind),
            ctypes.c_long(0),
            ctypes.c_long(0),
        )
        == 0
    )


def _descriptors_in_flight(fdinfo: str) -> int:
    """A Unix socket's descriptors sent and not yet received (its fdinfo's
    ``scm_fds``, Linux 5.6+; a listening socket's: those of its connections
    not yet accepted). Other sockets carry none."""
    try:
        with open(fdinfo) as info:
            for line in info:
                if line.startswith("scm_fds:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0
