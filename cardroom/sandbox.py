"""The sandbox for untrusted bot programs (``CARDROOM_SANDBOX=bwrap``).

Every bot process runs

* as its own unprivileged host uid, leased from a pool (61000-61999 by
  default) with ``flock`` lock files, so that no two bots running at the same
  time, in any worker process, ever share a uid. ``RLIMIT_NPROC`` counts per
  uid, and "kill every process of this uid" is a clean-up that cannot miss;
* inside bubblewrap: new user, pid, network, ipc, uts (and cgroup) namespaces,
  so no network at all (only a private loopback with nothing listening), no
  view of the host's processes, a read-only root holding only ``/usr`` (minus
  ``/usr/local`` and the distribution's extra Python packages), the ``/lib``
  links and the few ``/etc`` files the interpreter reads, the bot's own files
  read-only at ``/bot`` (a copy made for this run), a size-limited private
  ``/tmp``, a read-only ``/dev`` holding the usual character devices and a
  tiny ``/dev/shm``, an empty environment but for ``PATH``, ``LANG``, ``HOME``,
  ``TMPDIR`` and ``PYTHONDONTWRITEBYTECODE``/``PYTHONUNBUFFERED``; no
  capabilities, ``no_new_privs``, no user namespaces of its own
  (``--disable-userns``, bubblewrap 0.8+); ``--die-with-parent`` and
  ``--new-session``;
* under rlimits (address space, CPU seconds, processes, file size, open
  files, no core dumps) and, where this machine lets us write cgroups (v1 or
  v2, detected once), in its own memory and pids cgroup.

Start-up, in order: lease a uid; copy the bot's files to
``<state>/runs/uid-N`` (root-owned, readable by the bot's group only); run
``prlimit --as=… -- bwrap … --as-pid-1 …`` as the bot's uid (Popen
``user=``: no ``preexec_fn`` in the threaded runner; prlimit(1) sets the
rlimits on itself before it becomes bwrap, since setting them from outside
would need CAP_SYS_RESOURCE, which root lacks on some machines, this one
included). The bot is pid 1 of its pid namespace (``--as-pid-1``: no init
process to fork, which is measurably faster to start); when it exits, the
kernel kills everything else in the namespace. bwrap reports the bot's host
pid on ``--info-fd``; we move it into the bot's cgroups while its interpreter
starts up, and only then let its code run. The bot's stdin and stdout are
not handed to bwrap: they travel over a Unix socket (SCM_RIGHTS) to a tiny
``sitecustomize`` shim that waits for them inside the bot's own interpreter,
before any of the bot's code, and puts them on fds 0 and 1. So only the bot
holds them (the outer bwrap would otherwise keep them open, and a bot closing
its stdout or stdin would never look closed), and the wait is what holds the
bot's code back until the cgroups are set (for a non-Python program,
bwrap's ``--block-fd`` does that instead).

Clean-up (``BwrapProcess.kill``): SIGKILL the bot, pid 1 of its namespace,
first (the kernel then kills every process of the namespace, daemons
included), then the outer bwrap; reap both (the runner is made a child
subreaper so the bot is reaped even if the outer bwrap died first: it is
waited for through its pidfd, never by bare pid); kill whatever is left in
the bot's cgroups and whatever still runs as the bot's uid; remove the
cgroups and the run folder; release the uid. ``/tmp`` and ``/dev/shm`` are
tmpfs mounts of the sandbox and vanish with it.

``get_launcher()`` picks the launcher from ``CARDROOM_SANDBOX``; the sandbox
is probed once per process, and when it cannot work ``SandboxUnavailable``
says what failed and how to fix it: there is never a silent fallback.
``python -m cardroom.sandbox`` prints the probe report.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import random
import re
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cardroom.launch import BotLimits, BotProcess, Launcher, PlainLauncher, PlainProcess

__all__ = [
    "BOT_DIR",
    "NONE_WARNING",
    "BwrapLauncher",
    "BwrapProcess",
    "ProbeReport",
    "SandboxError",
    "SandboxUnavailable",
    "UnsandboxedLauncher",
    "get_launcher",
    "probe",
    "state_dir",
    "uid_range",
]

MODES = ("bwrap", "none")
NONE_WARNING = "cardroom: WARNING: CARDROOM_SANDBOX=none runs bots without any isolation"
BOT_DIR = "/bot"  # where the bot's files appear inside the sandbox
DEFAULT_UIDS = "61000-61999"
DEFAULT_STATE_DIR = "/run/cardroom-sandbox"
BOT_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
START_TIMEOUT_S = 10.0
MIN_BWRAP = (0, 6)  # --size (tmpfs size limits) appeared in bubblewrap 0.6
CGROUP_SLACK_BYTES = 32 * 1024 * 1024  # bwrap's two helper processes, page cache
PR_SET_CHILD_SUBREAPER = 36


class SandboxUnavailable(RuntimeError):
    """The requested sandbox cannot work here; the message says why and how
    to fix it."""


class SandboxError(RuntimeError):
    """The sandbox failed to start a bot (a platform problem, not the bot's)."""


# -- configuration -------------------------------------------------------------


def uid_range() -> range:
    """The pool of host uids for bots (``CARDROOM_SANDBOX_UIDS``, "first-last")."""
    text = os.environ.get("CARDROOM_SANDBOX_UIDS", DEFAULT_UIDS)
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not m or int(m.group(1)) > int(m.group(2)) or int(m.group(1)) < 1000:
        raise SandboxUnavailable(f"CARDROOM_SANDBOX_UIDS={text!r}: expected a range like {DEFAULT_UIDS} (uids >= 1000)")
    return range(int(m.group(1)), int(m.group(2)) + 1)


def state_dir() -> Path:
    """Where the sandbox keeps its uid locks and run folders
    (``CARDROOM_SANDBOX_DIR``)."""
    return Path(os.environ.get("CARDROOM_SANDBOX_DIR", DEFAULT_STATE_DIR))


def runs_dir() -> Path:
    return state_dir() / "runs"


# -- small process helpers -------------------------------------------------------


def _set_child_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _status_fields(pid: int | str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def _uids_of(fields: dict[str, str]) -> set[int]:
    try:
        return {int(x) for x in fields.get("Uid", "").split()}
    except ValueError:
        return set()


def processes_of_uid(uid: int, include_zombies: bool = False) -> list[int]:
    """Host pids of the processes running as ``uid`` (real, effective, saved
    or filesystem uid). Reads /proc/PID/status: the owner of /proc/PID is not
    enough, since a process can make itself non-dumpable."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _status_fields(name)
        if uid in _uids_of(fields):
            if not include_zombies and fields.get("State", "").startswith(("Z", "X")):
                continue
            found.append(int(name))
    return found


def _pidfd_open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def _kill_pid_if_uid(pid: int, uid: int) -> None:
    """SIGKILL ``pid`` only if it (still) runs as ``uid`` (pidfd: no pid reuse race)."""
    pidfd = _pidfd_open(pid)
    try:
        if uid not in _uids_of(_status_fields(pid)):
            return
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:  # pragma: no cover - kernels before 5.3
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_uid(uid: int, timeout: float = 5.0) -> list[int]:
    """Kill every process of ``uid`` until none is left; returns the pids
    still alive (zombies aside) after ``timeout`` (normally none)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        pids = processes_of_uid(uid)
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            _kill_pid_if_uid(pid, uid)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _kill_uid_quick(uid: int) -> None:
    """Kill the processes whose /proc/PID is owned by ``uid`` (every process
    of that uid, except those that made themselves non-dumpable)."""
    for _ in range(100):
        pids = []
        with os.scandir("/proc") as it:
            for entry in it:
                if entry.name.isdigit():
                    try:
                        if entry.stat(follow_symlinks=False).st_uid == uid:
                            pids.append(int(entry.name))
                    except OSError:
                        pass
        pids = [p for p in pids if not _status_fields(p).get("State", "Z").startswith(("Z", "X"))]
        if not pids:
            return
        for pid in pids:
            _kill_pid_if_uid(pid, uid)
        time.sleep(0.002)


# -- cgroups -----------------------------------------------------------------------


@dataclass
class _Controller:
    """One cgroup controller (``memory`` or ``pids``) we may create children in."""

    name: str
    version: int
    base: Path  # our folder of per-bot cgroups

    def leaf(self, uid: int) -> Path:
        return self.base / f"uid-{uid}"

    def prepare(self, uid: int, limit: int) -> Path:
        path = self.leaf(uid)
        if path.exists():
            self.kill_all(path)
        else:
            path.mkdir()
        if self.name == "memory":
            if self.version == 1:
                _write(path / "memory.limit_in_bytes", str(limit))
                memsw = path / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    _write(memsw, str(limit), quiet=True)
            else:
                _write(path / "memory.max", str(limit))
                if (path / "memory.swap.max").exists():
                    _write(path / "memory.swap.max", "0", quiet=True)
        else:
            _write(path / "pids.max", str(limit))
        return path

    def join(self, path: Path, pid: int) -> None:
        _write(path / "cgroup.procs", str(pid))

    def pids(self, path: Path) -> list[int]:
        try:
            return [int(x) for x in (path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, path: Path, timeout: float = 2.0) -> None:
        kill_file = path / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            _write(kill_file, "1", quiet=True)
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids(path)
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.002)

    def remove(self, path: Path, timeout: float = 1.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # reused (after a kill) the next time this uid is leased
                self.kill_all(path, timeout=0.1)
                time.sleep(0.005)


def _write(path: Path, text: str, quiet: bool = False) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError:
        if not quiet:
            raise


def _cgroup_mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root, fs type, super options) of the cgroup mounts."""
    mounts = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields = left.split()
        rfields = right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        fstype = rfields[0]
        if fstype in ("cgroup", "cgroup2"):
            unescape = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)  # noqa: E731
            mounts.append((unescape(fields[4]), unescape(fields[3]), fstype, set(rfields[2].split(","))))
    return mounts


def _own_cgroups() -> dict[str, str]:
    """controller name (or "" for the v2 unified hierarchy) -> our cgroup path."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            out[""] = path
        for c in controllers.split(","):
            if c:
                out[c] = path
    return out


def _under(mountpoint: str, mount_root: str, path: str) -> Path | None:
    root = mount_root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    rel = path[len(root) :].lstrip("/")
    return Path(mountpoint) / rel


def _detect_controller(name: str) -> tuple[_Controller | None, str]:
    """Find where we may create ``name`` cgroups; (None, why not) otherwise."""
    own = _own_cgroups()
    mounts = _cgroup_mounts()
    if name in own:  # a v1 hierarchy carries it
        for mountpoint, root, fstype, opts in mounts:
            if fstype == "cgroup" and name in opts:
                here = _under(mountpoint, root, own[name])
                if here is not None and here.is_dir():
                    return _setup_base(name, 1, here)
        return None, f"cgroup v1 {name}: hierarchy not mounted"
    if "" in own:
        for mountpoint, root, fstype, _opts in mounts:
            if fstype != "cgroup2":
                continue
            here = _under(mountpoint, root, own[""])
            if here is None or not here.is_dir():
                continue
            try:
                available = (here / "cgroup.controllers").read_text().split()
            except OSError:
                available = []
            if name not in available:
                return None, f"cgroup v2: the {name} controller is not available in {here}"
            return _setup_base(name, 2, here)
    return None, f"no cgroup hierarchy with the {name} controller"


def _setup_base(name: str, version: int, here: Path) -> tuple[_Controller | None, str]:
    base = here / "cardroom-sandbox"
    try:
        if version == 2:
            for parent in (here,):
                enabled = (parent / "cgroup.subtree_control").read_text().split()
                if name not in enabled:
                    _write(parent / "cgroup.subtree_control", f"+{name}")
        base.mkdir(exist_ok=True)
        if version == 2:
            enabled = (base / "cgroup.subtree_control").read_text().split()
            if name not in enabled:
                _write(base / "cgroup.subtree_control", f"+{name}")
        controller = _Controller(name, version, base)
        test = base / f"probe-{os.getpid()}-{threading.get_ident()}"
        test.mkdir(exist_ok=True)
        try:
            limit_file = {"memory": "memory.limit_in_bytes" if version == 1 else "memory.max", "pids": "pids.max"}[name]
            _write(test / limit_file, str(64 * 1024 * 1024) if name == "memory" else "16")
        finally:
            test.rmdir()
    except OSError as exc:
        hint = ""
        if version == 2 and exc.errno == errno.EBUSY:
            hint = " (the worker's own cgroup holds processes: start it in a delegated cgroup, e.g. systemd Delegate=yes)"
        return None, f"cgroup v{version} {name}: cannot create child cgroups under {here}: {exc.strerror or exc}{hint}"
    return controller, f"cgroup v{version} {name}: per-bot cgroups under {base}"


# -- uid pool ------------------------------------------------------------------------


class UidLease:
    """One uid of the pool, held (flock) until ``release()``."""

    def __init__(self, uid: int, fd: int):
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the flock
            self._fd = None


def _ensure_dir(path: Path, mode: int, uid: int = 0, gid: int = 0) -> None:
    try:
        path.mkdir(mode=mode, parents=False)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise SandboxError(f"{path} is not a directory")
    if stat.S_IMODE(st.st_mode) != mode or st.st_uid != uid or st.st_gid != gid:
        os.chown(path, uid, gid)
        os.chmod(path, mode)


def _try_lease(uid: int) -> UidLease | None:
    fd = os.open(state_dir() / "locks" / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return UidLease(uid, fd)


def sweep_stale(controllers: list[_Controller]) -> list[str]:
    """Remove what workers that died without cleaning up left behind: run
    folders and per-bot cgroups of uids nobody holds (each taken under its
    uid's lock, so nothing in use is touched). Returns what was removed."""
    removed: list[str] = []
    pool = uid_range()
    stale: dict[int, list[Path]] = {}
    for folder in [runs_dir()] + [c.base for c in controllers]:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            m = re.fullmatch(r"uid-(\d+)", entry.name)
            if m and int(m.group(1)) in pool:
                stale.setdefault(int(m.group(1)), []).append(entry)
    for uid, paths in sorted(stale.items()):
        lease = _try_lease(uid)
        if lease is None:
            continue  # in use
        try:
            kill_uid(uid)
            for path in paths:
                controller = next((c for c in controllers if path.parent == c.base), None)
                if controller is not None:
                    controller.kill_all(path)
                    controller.remove(path)
                else:
                    shutil.rmtree(path, ignore_errors=True)
                if not path.exists():
                    removed.append(str(path))
        finally:
            lease.release()
    return removed


def lease_uid() -> UidLease:
    """Lease a free uid of the pool (any worker process, any thread)."""
    uids = uid_range()
    start = random.randrange(len(uids))
    for i in range(len(uids)):
        lease = _try_lease(uids[(start + i) % len(uids)])
        if lease is not None:
            return lease
    raise SandboxError(f"all {len(uids)} sandbox uids ({uids.start}-{uids.stop - 1}) are in use")


# -- the process -----------------------------------------------------------------------


class BwrapProcess(BotProcess):
    """A bot running in the sandbox. ``pid`` is the outer bwrap process
    (whose exit status is the bot's), ``inner_pid`` the bot's own process
    (pid 1 of its namespace);
    ``uid``, ``run_dir`` and ``cgroups`` say what it was given on the host."""

    def __init__(
        self,
        popen: subprocess.Popen,
        stdin_fd: int,
        stdout_fd: int,
        inner_pid: int,
        inner_pidfd: int | None,
        lease: UidLease,
        run_dir: Path,
        cgroups: list[tuple[_Controller, Path]],
    ):
        self._popen = popen
        assert popen.stderr is not None
        self.stdin = os.fdopen(stdin_fd, "wb")
        self.stdout_fd = stdout_fd
        self.stderr_fd = popen.stderr.fileno()
        self.pid = popen.pid
        self.inner_pid = inner_pid
        self.uid = lease.uid
        self.run_dir = run_dir
        self.cgroups = [path for _, path in cgroups]
        self._inner_pidfd = inner_pidfd
        self._lease = lease
        self._cgroups = cgroups
        self._killed = False
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        status = self._popen.poll()
        if status is not None and 128 < status <= 128 + 64:
            return -(status - 128)  # bwrap reports "killed by signal N" as 128+N
        return status

    def kill(self) -> None:
        with self._lock:
            if self._killed:
                return
            self._killed = True
        try:
            _cleanup(self._popen, self._inner_pidfd, self.uid, self._cgroups, self.run_dir)
        finally:
            if self._inner_pidfd is not None:
                os.close(self._inner_pidfd)
                self._inner_pidfd = None
            self._lease.release()
            try:
                self.stdin.close()
            except OSError:
                pass
            try:
                os.close(self.stdout_fd)
            except OSError:
                pass
            # stderr stays open: the runner's log thread may still be reading
            # the last lines; it is closed with this object.

    def __del__(self) -> None:
        try:
            if not self._killed:
                self.kill()
            if self._popen.stderr is not None:
                self._popen.stderr.close()
        except Exception:
            pass


def _cleanup(
    popen: subprocess.Popen | None,
    inner_pidfd: int | None,
    uid: int,
    cgroups: list[tuple[_Controller, Path]],
    run_dir: Path | None,
) -> None:
    # 1. The bot, pid 1 of its namespace, first: its death kills the whole
    #    pid namespace (double-forked, setsid daemons included); the kernel
    #    has reaped them all by the time pid 1 itself is seen to exit. Then
    #    the outer bwrap (normally exiting by itself by now).
    if inner_pidfd is not None:
        try:
            signal.pidfd_send_signal(inner_pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if popen is not None:
        try:
            popen.kill()
        except ProcessLookupError:
            pass
    # 2. Wait for both; if the outer bwrap died first, the bot was re-parented
    #    to us (we are a child subreaper): reap it through its pidfd, never
    #    by bare pid (which could by now name another of our children).
    if inner_pidfd is not None:
        _wait_pidfd(inner_pidfd, 5.0)
    if popen is not None:
        try:
            popen.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait
            pass
    if inner_pidfd is not None:
        try:
            os.waitid(os.P_PIDFD, inner_pidfd, os.WEXITED | os.WNOHANG)
        except OSError:  # ChildProcessError: bwrap reaped it, as usual
            pass
    # 3. Anything still in the bot's cgroups (nothing, normally).
    for controller, path in cgroups:
        controller.kill_all(path)
    # 4. Whatever still runs as the bot's uid (there should be nothing). With
    #    cgroups, every sandbox process was in them: a quick scan (the owner
    #    of /proc/PID) is enough; without, read every process's status.
    if cgroups:
        _kill_uid_quick(uid)
    else:
        kill_uid(uid)
    for controller, path in cgroups:
        controller.remove(path)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)


def _wait_pidfd(pidfd: int, timeout: float) -> None:
    try:
        select.select([pidfd], [], [], timeout)
    except OSError:
        pass


# -- the launcher ---------------------------------------------------------------------


def _copy_bot_files(src: Path, dest: Path, gid: int) -> None:
    """Copy the bot's files into ``dest`` (root-owned, readable by ``gid``
    only at the top, by anyone below it); only regular files and folders."""
    dest.mkdir(mode=0o750)
    os.chown(dest, 0, gid)
    os.chmod(dest, 0o750)
    src = Path(src)
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        rel = Path(dirpath).relative_to(src)
        target = dest / rel
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                continue
            os.mkdir(target / name, 0o755)
            os.chmod(target / name, 0o755)
        for name in filenames:
            source = os.path.join(dirpath, name)
            if not stat.S_ISREG(os.lstat(source).st_mode):
                continue
            shutil.copyfile(source, target / name, follow_symlinks=False)
            os.chmod(target / name, 0o644)


def _etc_binds() -> list[str]:
    """The few /etc files the interpreter (and libc) read."""
    args: list[str] = []
    for name in ("ld.so.cache", "localtime", "python3.11"):
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _root_links() -> list[str]:
    """/bin, /lib, /lib64 … as on the host: links into /usr (merged /usr) or
    read-only binds."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _hidden_dirs() -> list[str]:
    """Folders under /usr a bot should not rely on (not the standard library)."""
    found = []
    for path in ("/usr/local", "/usr/lib/python3/dist-packages"):
        if os.path.isdir(path):
            found.append(path)
    return found


def _bwrap_supports(bwrap: str, option: str) -> bool:
    try:
        result = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in result.stdout + result.stderr


class BwrapLauncher(Launcher):
    """Starts bots in bubblewrap, each as its own pool uid (see the module)."""

    name = "bwrap"
    isolated = True

    def __init__(
        self, bwrap: str, controllers: list[_Controller], prlimit: str | None = None, disable_userns: bool | None = None
    ):
        self.bwrap = bwrap
        if disable_userns is None:
            disable_userns = _bwrap_supports(bwrap, "--disable-userns")
        # bubblewrap 0.8+: the bot cannot create user namespaces of its own
        # (less kernel attack surface).
        self.disable_userns = disable_userns
        self.as_pid_1 = True  # the bot is pid 1: no init process to fork
        self.prlimit = prlimit if prlimit is not None else shutil.which("prlimit")
        self.controllers = controllers
        self._static = _root_links() + _etc_binds()
        self._hidden = _hidden_dirs()
        self._empty = state_dir() / "empty"
        self.shim = _install_shim()

    def argv(self, inner_argv: list[str], limits: BotLimits, run_dir: Path, info_fd: int, block_fd: int | None) -> list[str]:
        args = [
            self.bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *(["--disable-userns"] if self.disable_userns else []),
            *(["--as-pid-1"] if self.as_pid_1 else []),
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "cardroom-bot",
            "--ro-bind",
            "/usr",
            "/usr",
            *self._static,
        ]
        for hidden in self._hidden:
            args += ["--ro-bind", str(self._empty), hidden]
        if self.shim is not None:
            args += ["--ro-bind", str(self.shim), SHIM_DIR]
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(limits.shm_bytes),
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
            "--size",
            str(limits.tmp_bytes),
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            str(run_dir),
            BOT_DIR,
            "--remount-ro",
            "/",
            "--chdir",
            BOT_DIR,
            "--info-fd",
            str(info_fd),
            *(["--block-fd", str(block_fd)] if block_fd is not None else []),
            "--",
            *inner_argv,
        ]
        return args

    def spawn(self, root: Path, argv: list[str], limits: BotLimits) -> BotProcess:
        interpreter = argv[0]
        if not interpreter.startswith(("/usr/", "/bin/")):
            raise SandboxError(f"the bot interpreter {interpreter!r} is not under /usr: the sandbox only shows /usr")
        lease = lease_uid()
        uid = lease.uid
        popen: subprocess.Popen | None = None
        inner_pidfd: int | None = None
        cgroups: list[tuple[_Controller, Path]] = []
        run_dir = runs_dir() / f"uid-{uid}"
        fds: list[int] = []
        socks: list[socket.socket] = []
        try:
            # A run folder left behind means a worker died without cleaning
            # up after this uid: make sure nothing of it still runs.
            if os.path.lexists(run_dir):
                kill_uid(uid)
                shutil.rmtree(run_dir)
            _ensure_bwrap_base(uid)
            _copy_bot_files(Path(root), run_dir, uid)
            for controller in self.controllers:
                if controller.name == "memory":
                    limit = limits.memory_bytes + limits.tmp_bytes + limits.shm_bytes + CGROUP_SLACK_BYTES
                else:
                    limit = limits.max_processes  # the bot's own; the outer bwrap stays outside
                cgroups.append((controller, controller.prepare(uid, limit)))

            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            fds += [info_r, info_w]
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            fds += [block_r, block_w]
            stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
            fds += [stdin_r, stdin_w]
            stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
            fds += [stdout_r, stdout_w]
            env = dict(BOT_ENV)
            handover = self.shim is not None and _is_python(argv[0])
            # What keeps the bot's own code from running before its processes
            # are in the cgroups: the shim waiting for its stdin and stdout
            # (the interpreter starts up meanwhile: see below), or else
            # bwrap's --block-fd.
            use_block = bool(cgroups) and not handover
            pass_fds = [info_w] + ([block_r] if use_block else [])
            if handover:
                # The bot's stdin/stdout travel over a socket (SCM_RIGHTS) to
                # the shim in its own interpreter, so that only the bot holds
                # them (bwrap's two helpers would keep them open otherwise: a
                # bot closing its stdout would never look closed).
                parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                socks += [parent_sock, child_sock]
                child_fd = child_sock.fileno()
                dummy_r, dummy_w = os.pipe2(os.O_CLOEXEC)
                fds += [dummy_r, dummy_w]
                env["PYTHONPATH"] = SHIM_DIR
                env[SHIM_ENV] = str(child_fd)
                pass_fds.append(child_fd)
                child_stdin, child_stdout = dummy_r, dummy_w
            else:
                child_stdin, child_stdout = stdin_r, stdout_w
            command = self.argv(argv, limits, run_dir, info_w, block_r if use_block else None)
            if self.prlimit:
                command = _prlimit_prefix(self.prlimit, limits) + command
            popen = subprocess.Popen(
                command,
                preexec_fn=None if self.prlimit else _rlimits_preexec(limits),
                stdin=child_stdin,
                stdout=child_stdout,
                stderr=subprocess.PIPE,
                cwd="/",
                env=env,
                user=uid,
                group=uid,
                extra_groups=[],
                start_new_session=True,
                pass_fds=pass_fds,
                close_fds=True,
            )
            keep = [info_r, block_w, stdin_w, stdout_r, stdin_r, stdout_w]
            for fd in fds:
                if fd not in keep:
                    os.close(fd)
            fds = keep
            if handover:
                child_sock.close()
            inner_pid = _read_child_pid(info_r, popen)
            inner_pidfd = _pidfd_open(inner_pid)
            if inner_pidfd is None or uid not in _uids_of(_status_fields(inner_pid)):
                raise SandboxError(f"the bot's process ({inner_pid}) vanished during start-up")
            if cgroups:
                # Everything in the sandbox descends from this process (pid 1
                # of the sandbox: the bot's interpreter, starting up, before
                # any of the bot's code). The first cgroup move after a quiet
                # spell waits for an RCU grace period and for the forks and
                # execs under way on the machine (from 0.1 ms on an idle
                # machine to 15 ms on a busy one): bwrap's set-up and the
                # interpreter's start-up go on meanwhile.
                for controller, path in cgroups:
                    controller.join(path, inner_pid)
                # Anything it forked before that (nothing, unless bwrap runs
                # an init: without --as-pid-1) goes too; a later fork is born
                # inside.
                for child in _children(inner_pid):
                    if uid in _uids_of(_status_fields(child)):
                        for controller, path in cgroups:
                            controller.join(path, child)
            if use_block:
                try:
                    os.write(block_w, b"1")
                except BrokenPipeError:
                    raise SandboxError(f"bwrap failed to start the sandbox: {_bwrap_error(popen)}") from None
            if handover:
                # Now the bot's code may run: hand it its stdin and stdout.
                try:
                    socket.send_fds(parent_sock, [b"\0"], [stdin_r, stdout_w])
                except OSError:
                    raise SandboxError(f"the bot's interpreter did not start: {_bwrap_error(popen)}") from None
                parent_sock.close()
            for fd in fds:
                if fd not in (stdin_w, stdout_r):
                    os.close(fd)
            fds = [stdin_w, stdout_r]
            process = BwrapProcess(popen, stdin_w, stdout_r, inner_pid, inner_pidfd, lease, run_dir, cgroups)
            fds = []
            return process
        except BaseException:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            for sock in socks:
                sock.close()
            try:
                _cleanup(popen, inner_pidfd, uid, cgroups, run_dir)
            finally:
                if inner_pidfd is not None:
                    os.close(inner_pidfd)
                lease.release()
                if popen is not None and popen.stderr is not None:
                    popen.stderr.close()
            raise


def _children(pid: int) -> list[int]:
    """The children of a (single-threaded) process."""
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:  # pragma: no cover - kernels without CONFIG_PROC_CHILDREN
        if not os.path.exists(f"/proc/{pid}"):
            return []
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit() and _status_fields(name).get("PPid") == str(pid):
                found.append(int(name))
        return found
    except (OSError, ValueError):
        return []


def _is_python(program: str) -> bool:
    return os.path.basename(program).startswith("python")


SHIM_DIR = "/cardroom"  # inside the sandbox, on PYTHONPATH
SHIM_ENV = "CARDROOM_STDIO_FD"
SHIM = f'''"""cardroom sandbox: hands the bot its stdin and stdout.

The platform sends the two pipe ends over a Unix socket (fd ${SHIM_ENV});
this runs at interpreter start-up (sitecustomize), before the bot's code,
puts them on fds 0 and 1, and removes its own traces (the variable, its
folder on sys.path and PYTHONPATH). See cardroom/sandbox.py.
"""


def _cardroom_stdio():
    import os
    import sys
    import _socket

    fd = os.environ.pop("{SHIM_ENV}", None)
    if os.environ.get("PYTHONPATH") == "{SHIM_DIR}":
        del os.environ["PYTHONPATH"]
    while "{SHIM_DIR}" in sys.path:
        sys.path.remove("{SHIM_DIR}")
    if fd is None:
        return
    sock = _socket.socket(fileno=int(fd))
    try:
        _, ancillary, _, _ = sock.recvmsg(1, _socket.CMSG_SPACE(8))
    finally:
        sock.close()
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder, signed=True) for i in range(0, len(data) - 3, 4)]
    if len(fds) == 2:
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
    for extra in fds:
        os.close(extra)


_cardroom_stdio()
del _cardroom_stdio
'''.replace("${SHIM_ENV}", SHIM_ENV)


def _install_shim() -> Path | None:
    """Write the sitecustomize shim (root-owned, world-readable) once."""
    folder = state_dir() / "shim"
    target = folder / "sitecustomize.py"
    try:
        _ensure_dir(folder, 0o755)
        if not target.exists() or target.read_text() != SHIM:
            tmp = folder / f".sitecustomize.{os.getpid()}.{threading.get_ident()}"
            tmp.write_text(SHIM)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
    except OSError:
        return None
    return folder


def _rlimit_pairs(limits: BotLimits) -> list[tuple[str, int, int, int]]:
    """(prlimit option, resource, soft, hard) for every limit a bot gets."""
    return [
        ("as", resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
        ("cpu", resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        ("nproc", resource.RLIMIT_NPROC, limits.max_processes, limits.max_processes),
        ("fsize", resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes),
        ("nofile", resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        ("core", resource.RLIMIT_CORE, 0, 0),
        ("memlock", resource.RLIMIT_MEMLOCK, 0, 0),
        ("msgqueue", resource.RLIMIT_MSGQUEUE, 0, 0),
    ]


def _prlimit_prefix(prlimit: str, limits: BotLimits) -> list[str]:
    """``prlimit --as=… -- `` : the rlimits, set by the (already unprivileged)
    child on itself just before it becomes bwrap. (Setting them from outside
    with prlimit(2) would need CAP_SYS_RESOURCE, which root does not always
    have: the VMs this was developed on drop it from the bounding set.)"""
    return [prlimit] + [f"--{opt}={soft}:{hard}" for opt, _, soft, hard in _rlimit_pairs(limits)] + ["--"]


def _rlimits_preexec(limits: BotLimits):  # pragma: no cover - only without prlimit(1)
    pairs = [(res, soft, hard) for _, res, soft, hard in _rlimit_pairs(limits)]

    def apply() -> None:
        for res, soft, hard in pairs:
            resource.setrlimit(res, (soft, hard))

    return apply


def _read_child_pid(fd: int, popen: subprocess.Popen) -> int:
    """bwrap's --info-fd JSON: {"child-pid": N} (pid 1 of the sandbox: the
    bot itself, with --as-pid-1)."""
    data = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError(f"bwrap did not report its sandbox within {START_TIMEOUT_S:.0f} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        data += chunk
        if b"}" in data:
            try:
                return int(json.loads(data[: data.index(b"}") + 1])["child-pid"])
            except (ValueError, KeyError, TypeError):
                raise SandboxError(f"unexpected bwrap --info-fd output {data[:200]!r}") from None
        if not chunk:
            message = _bwrap_error(popen)
            raise SandboxError(f"bwrap failed to start the sandbox: {message}")


def _bwrap_error(popen: subprocess.Popen) -> str:
    try:
        popen.wait(timeout=5)
    except subprocess.TimeoutExpired:
        popen.kill()
    text = b""
    if popen.stderr is not None:
        os.set_blocking(popen.stderr.fileno(), False)
        try:
            text = popen.stderr.read() or b""
        except OSError:
            pass
    return " ".join(text.decode("utf-8", "replace").split())[:500] or f"exit status {popen.returncode}"


def _ensure_bwrap_base(uid: int) -> None:
    """bwrap (run as ``uid``) needs a folder to mount its root tmpfs on: it
    tries /run/user/UID/.bubblewrap, else creates /tmp/.bubblewrap-UID owned
    by the bot's uid on the host. Provide the first one, owned by root, so the
    bot's uid owns nothing outside its sandbox."""
    base = Path("/run/user")
    if not base.is_dir():
        base.mkdir(mode=0o755, parents=True, exist_ok=True)
    user_dir = base / str(uid)
    if not (user_dir / ".bubblewrap").is_dir():
        _ensure_dir(user_dir, 0o755)
        _ensure_dir(user_dir / ".bubblewrap", 0o755)


def _prepare_state_dir() -> None:
    state = state_dir()
    if not state.is_absolute():
        raise SandboxUnavailable(f"CARDROOM_SANDBOX_DIR={str(state)!r} must be an absolute path")
    state.mkdir(mode=0o711, parents=True, exist_ok=True)
    for parent in state.resolve().parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise SandboxUnavailable(
                f"the bots' uids cannot reach the sandbox folder {state}: {parent} is not searchable by other users; "
                "set CARDROOM_SANDBOX_DIR to a folder whose parents are (the default is /run/cardroom-sandbox)"
            )
    _ensure_dir(state, 0o711)
    _ensure_dir(state / "locks", 0o700)
    _ensure_dir(state / "runs", 0o711)
    _ensure_dir(state / "empty", 0o555)


# -- the none mode ------------------------------------------------------------------------


class UnsandboxedLauncher(PlainLauncher):
    """``CARDROOM_SANDBOX=none``: the plain launcher, with a warning on every
    spawn."""

    name = "none"
    isolated = False

    def spawn(self, root: Path, argv: list[str], limits: BotLimits) -> PlainProcess:
        print(NONE_WARNING, file=sys.stderr, flush=True)
        return super().spawn(root, argv, limits)  # type: ignore[return-value]


# -- probe ------------------------------------------------------------------------------------


@dataclass
class ProbeReport:
    ok: bool
    error: str | None = None
    bwrap: str | None = None
    bwrap_version: str | None = None
    root: bool = False
    userns: str = "not tried"
    memory_cgroup: str = "not tried"
    pids_cgroup: str = "not tried"
    subreaper: bool = False
    nested_userns: str = "not tried"
    rlimits: str = "not tried"
    uids: str = ""
    state_dir: str = ""
    start_ms: float | None = None
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        lines = [
            f"sandbox: {'bwrap works' if self.ok else 'UNAVAILABLE'}",
            f"  bubblewrap: {self.bwrap or 'not found'}{' (' + self.bwrap_version + ')' if self.bwrap_version else ''}",
            f"  running as root: {'yes' if self.root else 'no'}",
            f"  user namespaces: {self.userns}",
            f"  memory limit: {self.memory_cgroup}",
            f"  process limit: {self.pids_cgroup}",
            f"  rlimits: {self.rlimits}",
            f"  user namespaces inside a sandbox: {self.nested_userns}",
            f"  child subreaper: {'yes' if self.subreaper else 'no'}",
            f"  bot uids: {self.uids}",
            f"  state folder: {self.state_dir}",
        ]
        if self.start_ms is not None:
            lines.append(f"  test bot started and answered in {self.start_ms:.1f} ms")
        lines += [f"  note: {n}" for n in self.notes]
        if self.error:
            lines.append(f"  error: {self.error}")
        return "\n".join(lines)


_PROBE: ProbeReport | None = None
_LAUNCHER: BwrapLauncher | None = None
_PROBE_LOCK = threading.Lock()

FIX_NONE = "or set CARDROOM_SANDBOX=none for local development only (no isolation)"
DOCKER_HINT = (
    "in Docker, start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined "
    "--security-opt systempaths=unconfined (no extra capability is needed: bwrap runs as an unprivileged uid)"
)


def probe(refresh: bool = False) -> ProbeReport:
    """Check, once per process, that the bwrap sandbox works here."""
    global _PROBE, _LAUNCHER
    with _PROBE_LOCK:
        if _PROBE is not None and not refresh:
            return _PROBE
        report, launcher = _probe()
        _PROBE, _LAUNCHER = report, launcher
        return report


def _probe() -> tuple[ProbeReport, BwrapLauncher | None]:
    report = ProbeReport(ok=False)
    report.root = os.geteuid() == 0
    report.state_dir = str(state_dir())
    try:
        uids = uid_range()
        report.uids = f"{uids.start}-{uids.stop - 1}"
    except SandboxUnavailable as exc:
        report.error = str(exc)
        return report, None
    bwrap = shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)
    report.bwrap = bwrap
    if bwrap is None:
        report.error = (
            "bubblewrap is not installed (no 'bwrap' on PATH): install it (Debian/Ubuntu: apt-get install bubblewrap, "
            f"or run scripts/install-system-packages.sh), {FIX_NONE}"
        )
        return report, None
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
        report.bwrap_version = out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        report.error = f"{bwrap} --version failed ({exc}): reinstall bubblewrap, {FIX_NONE}"
        return report, None
    m = re.search(r"(\d+)\.(\d+)", report.bwrap_version or "")
    if m and (int(m.group(1)), int(m.group(2))) < MIN_BWRAP:
        report.error = (
            f"{report.bwrap_version} is too old: the sandbox needs bubblewrap {MIN_BWRAP[0]}.{MIN_BWRAP[1]} or newer "
            f"(for size-limited tmpfs); upgrade it, {FIX_NONE}"
        )
        return report, None
    if not report.root:
        report.error = (
            f"the bwrap sandbox must run as root: it starts each bot as its own unprivileged uid ({report.uids}); "
            f"run the worker as root, {FIX_NONE}"
        )
        return report, None
    try:
        max_userns = Path("/proc/sys/user/max_user_namespaces").read_text().strip()
    except OSError:
        max_userns = None
    if max_userns == "0":
        report.userns = "disabled (user.max_user_namespaces = 0)"
        report.error = f"user namespaces are disabled: set sysctl user.max_user_namespaces=15000 (or more), {FIX_NONE}"
        return report, None
    report.subreaper = _set_child_subreaper()
    if not report.subreaper:
        report.notes.append("could not become a child subreaper: a bot orphaned by the death of its outer bwrap would be re-parented to init")
    try:
        _prepare_state_dir()
    except SandboxUnavailable as exc:
        report.error = str(exc)
        return report, None
    except OSError as exc:
        report.error = f"cannot prepare the sandbox folder {state_dir()}: {exc}; set CARDROOM_SANDBOX_DIR to a writable folder"
        return report, None
    controllers = []
    for name in ("memory", "pids"):
        controller, note = _detect_controller(name)
        if controller is not None:
            controllers.append(controller)
            text = note
        else:
            text = f"skipped ({note}); rlimits only"
        if name == "memory":
            report.memory_cgroup = text
        else:
            report.pids_cgroup = text
    swept = sweep_stale(controllers)
    if swept:
        report.notes.append(f"removed {len(swept)} run folders and cgroups left behind by workers that died")
    launcher = BwrapLauncher(bwrap, controllers)
    report.nested_userns = "blocked (--disable-userns)" if launcher.disable_userns else "allowed (bubblewrap < 0.8)"
    report.rlimits = f"set by {launcher.prlimit} before bwrap starts" if launcher.prlimit else "set in the child before exec (no prlimit(1))"
    error = _trial_run(launcher, report)
    if error:
        report.error = error
        return report, None
    report.ok = True
    return report, launcher


PROBE_BOT = b"""import os, socket, sys
line = sys.stdin.readline()
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    net = "open"
except OSError:
    net = "none"
sys.stdout.write("cardroom-probe %d %s\\n" % (os.getuid(), net))
sys.stdout.flush()
"""


def _trial_run(launcher: BwrapLauncher, report: ProbeReport) -> str | None:
    """Start a tiny bot through the real launcher; None if it worked."""
    with tempfile.TemporaryDirectory(prefix="cardroom-probe-") as tmp:
        Path(tmp, "probe.py").write_bytes(PROBE_BOT)
        limits = BotLimits()
        started = time.monotonic()
        try:
            proc = launcher.spawn(Path(tmp), ["/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable, "probe.py"], limits)
        except SandboxError as exc:
            report.userns = "failed"
            return _explain(str(exc))
        except OSError as exc:
            return f"cannot start bwrap: {exc}; {FIX_NONE}"
        try:
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
            out = b""
            deadline = time.monotonic() + START_TIMEOUT_S
            while b"\n" not in out and time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stdout_fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                chunk = os.read(proc.stdout_fd, 4096)
                if not chunk:
                    break
                out += chunk
            elapsed = (time.monotonic() - started) * 1000
            if not out.startswith(b"cardroom-probe "):
                os.set_blocking(proc.stderr_fd, False)
                try:
                    err = os.read(proc.stderr_fd, 65536)
                except OSError:
                    err = b""
                report.userns = "failed"
                return _explain(" ".join(err.decode("utf-8", "replace").split())[:500] or "the test bot printed nothing")
            _, uid, net = out.decode().split()
            report.userns = "work (unprivileged, as the bot's uid)"
            report.start_ms = elapsed
            if net != "none":
                return "the test bot reached the network from inside the sandbox; refusing to run bots here"
            if int(uid) == 0:
                return "the test bot ran as uid 0 inside the sandbox; refusing to run bots here"
        finally:
            proc.kill()
    return None


def _explain(message: str) -> str:
    """bwrap's own error plus what to do about it."""
    lower = message.lower()
    if "creating new namespace" in lower or "no permissions to creat" in lower or "setting up uid map" in lower:
        fix = (
            "unprivileged user namespaces are blocked: allow them (sysctl kernel.unprivileged_userns_clone=1 on old Debian "
            "kernels, kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 23.10+, user.max_user_namespaces > 0); "
            + DOCKER_HINT
        )
    elif "proc" in lower and "mount" in lower:
        fix = "mounting a fresh /proc is refused (a masked /proc, typical of containers); " + DOCKER_HINT
    elif "mount" in lower or "pivot_root" in lower or "operation not permitted" in lower:
        fix = "mounts inside the sandbox are refused (AppArmor/seccomp); " + DOCKER_HINT
    else:
        fix = "check that bubblewrap works: bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib64 /lib64 /usr/bin/true"
    return f"bubblewrap cannot create the sandbox ({message}): {fix}; {FIX_NONE}"


# -- modes --------------------------------------------------------------------------------------


def get_launcher(mode: str | None = None) -> Launcher:
    """The launcher for ``mode`` (default: ``CARDROOM_SANDBOX``, else bwrap)."""
    if mode is None:
        mode = os.environ.get("CARDROOM_SANDBOX", "")
    mode = mode.strip() or "bwrap"
    if mode == "none":
        return UnsandboxedLauncher()
    if mode == "bwrap":
        report = probe()
        if not report.ok or _LAUNCHER is None:
            raise SandboxUnavailable(f"CARDROOM_SANDBOX=bwrap: {report.error}")
        return _LAUNCHER
    raise SandboxUnavailable(
        f"CARDROOM_SANDBOX={mode!r} is not a sandbox mode: use 'bwrap' (the default, bubblewrap isolation) "
        "or 'none' (no isolation, local development only)"
    )


def main() -> int:
    report = probe()
    print(report.describe())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
