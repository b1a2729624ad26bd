"""Finding, killing and reaping a bot's processes, and sweeping away what
workers that died left behind."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from cardroom.fdwait import fd_ready

from .cgroups import _Controller
from .config import runs_dir, uid_range
from .tmpfs import tmpfs_dir, unmount_bot_tmpfs, unmount_tmpfs
from .uids import try_lease_uid

PR_SET_CHILD_SUBREAPER = 36


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


def _pid_namespace(pid: int) -> tuple[int, int] | None:
    """(device, inode) of the pid namespace of ``pid``: what names it."""
    try:
        st = os.stat(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
    return st.st_dev, st.st_ino


def kill_namespace(pidns: tuple[int, int], timeout: float = 2.0) -> list[int]:
    """SIGKILL every process of the pid namespace ``pidns`` (a bot's
    sandbox), and only those: never "everything of this uid", which on a
    host could name a process that is not the bot's. Returns the pids still
    alive (zombies aside) after ``timeout`` (normally none)."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or _pid_namespace(int(name)) != pidns:
                continue
            if _status_fields(name).get("State", "Z").startswith(("Z", "X")):
                continue
            left.append(int(name))
            pidfd = _pidfd_open(int(name))
            if pidfd is None:
                continue
            try:
                if _pid_namespace(int(name)) == pidns:  # still the same process (pidfd pins it)
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            finally:
                os.close(pidfd)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.005)


def kill_sandbox_strays(uid: int, run_dir: Path, settle: float = 0.0) -> list[int]:
    """SIGKILL what a start that never finished can leave of ``uid`` outside
    its cgroups (it stopped before moving them in), and only that:

    * a process of ``uid`` in a pid namespace of its own: a sandbox's (no
      other process runs as a pool uid, and nobody else holds this uid: we
      do). bwrap's child sets its parent-death signal only just before it
      executes the bot, so if the outer bwrap dies first (its own
      parent-death signal, when the worker dies) the child either waits
      for it forever (on its eventfd) or, released by the dead worker's
      closed --block-fd, goes on to start the bot outside the cgroups;
    * our launcher of ``uid`` (bot-exec or prlimit, then the outer bwrap:
      this run folder is an argument of its command line).

    A host process of ``uid`` that is neither is left alone. ``settle``:
    scan again until a scan finds nothing, for at least that long (a
    launcher we lost track of may still be starting: it matches once it
    has executed). Called only when a start did not finish, or its run
    folder says so (a /proc scan at every start would cost milliseconds)."""
    killed: list[int] = []
    deadline = time.monotonic() + settle
    give_up = deadline + 2.0
    while True:
        found = _kill_strays_once(uid, str(run_dir).encode())
        killed += [pid for pid in found if pid not in killed]
        now = time.monotonic()
        if (not found and now >= deadline) or now >= give_up:
            return killed
        time.sleep(0.005)


def _kill_strays_once(uid: int, folder: bytes) -> list[int]:
    found = []
    for pid in processes_of_uid(uid):
        if len(_status_fields(pid).get("NSpid", "").split()) < 2:  # not in a sandbox: our launcher?
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if folder not in f.read().split(b"\0"):
                        continue
            except OSError:
                continue
        pidfd = _pidfd_open(pid)
        if pidfd is None:
            continue
        try:
            if uid in _uids_of(_status_fields(pid)):  # still the same process (pidfd pins it)
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                found.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
        finally:
            os.close(pidfd)
    return found


def freezer_first(controllers: list[_Controller]) -> list[_Controller]:
    """The freezer's cgroup swept first: a frozen task (cgroup v1) acts on
    its SIGKILL only once thawed, and the other controllers' sweeps would
    each wait for it in vain."""
    return sorted(controllers, key=lambda controller: controller.name != "freezer")


def _cleanup(
    popen: subprocess.Popen | None,
    inner_pidfd: int | None,
    pidns: tuple[int, int] | None,
    cgroups: list[tuple[_Controller, Path]],
    run_dir: Path | None,
    mounts: list[Path] | None = None,
) -> bool:
    """Kill and clean up after a bot; True if all of its processes are known
    to be gone (its pid 1 was seen to exit, and its cgroups are removed)."""
    # 1. The bot, pid 1 of its namespace, first: its death kills the whole
    #    pid namespace (double-forked, setsid daemons included); the kernel
    #    has reaped them all by the time pid 1 itself is seen to exit. Then
    #    the outer bwrap (normally exiting by itself by now). A frozen bot
    #    acts on its SIGKILL only once thawed.
    if inner_pidfd is not None:
        try:
            signal.pidfd_send_signal(inner_pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for controller, path in cgroups:
        if controller.name == "freezer":
            try:
                controller.thaw(path)
            except OSError:
                pass
    if popen is not None:
        try:
            popen.kill()
        except ProcessLookupError:
            pass
    # 2. Wait for both; if the outer bwrap died first, the bot was re-parented
    #    to us (we are a child subreaper): reap it through its pidfd, never
    #    by bare pid (which could by now name another of our children).
    bot_gone = inner_pidfd is None
    if inner_pidfd is not None:
        bot_gone = _wait_pidfd(inner_pidfd, 5.0)
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
    # 3. Anything still in the bot's cgroups (nothing, normally), and, if pid
    #    1 was not seen to exit, in its pid namespace: only the bot's own
    #    processes, never a host process that happens to share its uid.
    for controller, path in cgroups:
        controller.kill_all(path)
    if not bot_gone and pidns is not None:
        kill_namespace(pidns)
    for controller, path in cgroups:
        controller.remove(path)
    for mount in mounts or []:
        unmount_tmpfs(mount)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
    return bot_gone and inner_pidfd is not None and not any(path.exists() for _, path in cgroups)


def _wait_pidfd(pidfd: int, timeout: float) -> bool:
    """Wait for the process to exit; whether it did."""
    try:
        return fd_ready(pidfd, timeout)
    except OSError:
        return False


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


def sweep_stale(controllers: list[_Controller]) -> list[str]:
    """Remove what workers that died without cleaning up left behind: run
    folders and per-bot cgroups of uids nobody holds (each taken under its
    uid's lock, so nothing in use is touched). Returns what was removed."""
    removed: list[str] = []
    pool = uid_range()
    stale: dict[int, list[Path]] = {}
    for folder in [runs_dir(), tmpfs_dir()] + [c.base for c in controllers]:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            m = re.fullmatch(r"uid-(\d+)", entry.name)
            if m and int(m.group(1)) in pool:
                stale.setdefault(int(m.group(1)), []).append(entry)
    for uid, paths in sorted(stale.items()):
        lease = try_lease_uid(uid)
        if lease is None:
            continue  # in use
        try:
            # Cgroups first (what is in them is the dead worker's bots, and
            # only that), then the tmpfs mounts and run folders.
            order = [c.base for c in freezer_first(controllers)]
            paths.sort(key=lambda path: order.index(path.parent) if path.parent in order else len(order))
            run_dir = runs_dir() / f"uid-{uid}"
            if run_dir in paths:
                kill_sandbox_strays(uid, run_dir)
            for path in paths:
                controller = next((c for c in controllers if path.parent == c.base), None)
                if controller is not None:
                    controller.kill_all(path)
                    controller.remove(path)
                elif path.parent == tmpfs_dir():
                    unmount_bot_tmpfs(path)
                else:
                    shutil.rmtree(path, ignore_errors=True)
                if not path.exists():
                    removed.append(str(path))
        finally:
            lease.release()
    return removed
