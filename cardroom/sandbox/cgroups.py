"""Per-bot cgroups (v1 or v2): finding where we may create them, setting
their limits, moving a bot in, killing what is inside, removing them."""

from __future__ import annotations

import errno
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# The cgroups a bot is held in: what each limits (the probe's report).
# "cpuacct" counts the CPU time of all the bot's processes, frozen or not
# (v1's cpuacct.usage; on v2 the core cpu.stat's usage_usec): a bot's kernel
# work goes on after a freeze until it returns to user space, and the
# runner charges that time to the bot's clock (decision 115).
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
# Controllers that are core files of every cgroup v2 (nothing to enable).
_V2_CORE = ("freezer", "cpuacct")
# The cpu quota's period: a bot gets quota/period of one core. Short, because
# the quota is an average over a period: a bot frozen for most of one (while
# the others move) starts its own move with the period's quota unspent and
# may spend it on both cores at once. With 100 ms a CPU hog's children took
# 1.2x its thawed time on a quiet 2-core machine; with 10 ms the burst is at
# most 10 ms of CPU a move.
CPU_PERIOD_US = 10_000
# Unused quota a bot may carry over, a fifth of its quota (decision 75).
# Without it, a single thread held to exactly one core by a 10 ms period is
# throttled at about every other period boundary (the kernel's refill comes
# a little late), 1-7% of its time: an honest bot's move took longer than
# one core's worth. With it, none in 2 s here; and a bot thawed after
# waiting can use at most this much more than one core's worth in its move's
# first period.
CPU_BURST_FRACTION = 5


@dataclass
class _Controller:
    """One cgroup controller (``memory``, ``pids``, ``cpu``, ``cpuacct`` or
    ``freezer``) we may create children in. (On cgroup v2, "freezer" is the
    core ``cgroup.freeze`` file of the unified hierarchy and "cpuacct" the
    core ``cpu.stat``, not controllers.)"""

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
                # memsw may never be below the limit: raise it first (a
                # leftover cgroup may hold a lower one), set it again after.
                memsw = path / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    _write(memsw, str(limit), quiet=True)
                _write(path / "memory.limit_in_bytes", str(limit))
                if memsw.exists():
                    _write(memsw, str(limit), quiet=True)
            else:
                _write(path / "memory.max", str(limit))
                if (path / "memory.swap.max").exists():
                    _write(path / "memory.swap.max", "0", quiet=True)
        elif self.name == "pids":
            _write(path / "pids.max", str(limit))
        elif self.name == "cpu":  # ``limit``: microseconds of CPU time per CPU_PERIOD_US
            # Linux 5.14+; without it a bot only gets less. The kernel refuses
            # a quota below the burst, and a leftover cgroup may hold a larger
            # one: no burst first, the new one last.
            burst = path / ("cpu.cfs_burst_us" if self.version == 1 else "cpu.max.burst")
            has_burst = burst.exists()
            if has_burst:
                _write(burst, "0", quiet=True)
            if self.version == 1:
                _write(path / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(path / "cpu.cfs_quota_us", str(limit))
            else:
                _write(path / "cpu.max", f"{limit} {CPU_PERIOD_US}")
            if has_burst:
                _write(burst, str(limit // CPU_BURST_FRACTION), quiet=True)
        elif self.name == "freezer":  # a cgroup left behind may still be frozen
            self.thaw(path)
        return path  # cpuacct: only counts

    def cpu_usage_ns(self, path: Path) -> int | None:
        """CPU time used by all the cgroup's processes so far (nanoseconds),
        or None once it is gone (cpuacct only)."""
        try:
            if self.version == 1:
                return int((path / "cpuacct.usage").read_bytes())
            for line in (path / "cpu.stat").read_bytes().splitlines():
                key, _, value = line.partition(b" ")
                if key == b"usage_usec":
                    return int(value) * 1000
        except (OSError, ValueError):
            pass
        return None

    def memory_report(self, path: Path) -> tuple[int | None, int]:
        """(the most memory the cgroup's processes held at once, in bytes,
        or None where the kernel does not say; how many of them the kernel
        killed for its limit) (memory only)."""
        peak_file, events_file = ("memory.max_usage_in_bytes", "memory.oom_control") if self.version == 1 else ("memory.peak", "memory.events")
        peak = kills = None
        try:
            peak = int((path / peak_file).read_bytes())
        except (OSError, ValueError):
            pass
        try:
            for line in (path / events_file).read_bytes().splitlines():
                key, _, value = line.partition(b" ")
                if key == b"oom_kill":
                    kills = int(value)
        except (OSError, ValueError):
            pass
        return peak, kills or 0

    def freeze(self, path: Path) -> None:
        """Stop every process of the cgroup (the kernel finishes the job
        asynchronously, within microseconds: a running task is stopped at
        its next return to user space)."""
        if self.version == 1:
            _write(path / "freezer.state", "FROZEN")
        else:
            _write(path / "cgroup.freeze", "1")

    def thaw(self, path: Path) -> None:
        if self.version == 1:
            _write(path / "freezer.state", "THAWED")
        else:
            _write(path / "cgroup.freeze", "0")

    def freezer_file(self, path: Path) -> tuple[int, bytes, bytes]:
        """An open descriptor of the cgroup's freeze file and the values that
        freeze and thaw it (for a bot frozen and thawed at every decision)."""
        if self.version == 1:
            return os.open(path / "freezer.state", os.O_WRONLY | os.O_CLOEXEC), b"FROZEN", b"THAWED"
        return os.open(path / "cgroup.freeze", os.O_WRONLY | os.O_CLOEXEC), b"1", b"0"

    def frozen(self, path: Path) -> bool:
        """Is the cgroup (asked to be) frozen?"""
        try:
            if self.version == 1:
                return (path / "freezer.state").read_text().strip() in ("FROZEN", "FREEZING")
            return (path / "cgroup.freeze").read_text().strip() == "1"
        except OSError:
            return False

    def settled_frozen(self, path: Path) -> bool:
        """Has the kernel frozen every task of the cgroup (none is still in
        a system call, on its way to the freezer)?"""
        try:
            if self.version == 1:
                return (path / "freezer.state").read_text().strip() == "FROZEN"
            return "frozen 1" in (path / "cgroup.events").read_text().splitlines()
        except OSError:
            return False

    def tasks(self, path: Path) -> list[int]:
        """Every thread of the cgroup (their ids, as the host's /proc names
        them)."""
        return [int(x) for x in (path / ("tasks" if self.version == 1 else "cgroup.threads")).read_text().split()]

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
            if self.name == "freezer":
                # A frozen task (cgroup v1) acts on its SIGKILL only once thawed.
                try:
                    self.thaw(path)
                except OSError:
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
            if name not in _V2_CORE and name not in available:
                return None, f"cgroup v2: the {name} controller is not available in {here}"
            return _setup_base(name, 2, here)
    return None, f"no cgroup hierarchy with the {name} controller"


def _keep_freezer_active(base: Path) -> None:
    """Keep one empty cgroup frozen for good. The v1 freezer switches a
    kernel static key on when a first cgroup freezes and off when the last
    one thaws, patching kernel text on every CPU each time (60 us a write
    here); with this one always frozen, freezing and thawing a bot costs
    about a microsecond."""
    anchor = base / "keep-frozen"
    anchor.mkdir(exist_ok=True)
    if (anchor / "freezer.state").read_text().strip() != "FROZEN":
        _write(anchor / "freezer.state", "FROZEN")


def _setup_base(name: str, version: int, here: Path) -> tuple[_Controller | None, str]:
    base = here / "cardroom-sandbox"
    try:
        delegate = version == 2 and name not in _V2_CORE  # core files need no enabling
        if delegate:
            for parent in (here,):
                enabled = (parent / "cgroup.subtree_control").read_text().split()
                if name not in enabled:
                    _write(parent / "cgroup.subtree_control", f"+{name}")
        base.mkdir(exist_ok=True)
        if delegate:
            enabled = (base / "cgroup.subtree_control").read_text().split()
            if name not in enabled:
                _write(base / "cgroup.subtree_control", f"+{name}")
        controller = _Controller(name, version, base)
        if name == "freezer" and version == 1:
            _keep_freezer_active(base)
        test = base / f"probe-{os.getpid()}-{threading.get_ident()}"
        test.mkdir(exist_ok=True)
        try:
            if name == "cpuacct":  # nothing to set: it must count
                if controller.cpu_usage_ns(test) is None:
                    raise OSError(errno.ENOENT, f"no CPU usage in {test}")
                return controller, f"cgroup v{version} cpuacct: per-bot CPU time under {base}"
            limit_file, value = {
                "memory": ("memory.limit_in_bytes" if version == 1 else "memory.max", str(64 * 1024 * 1024)),
                "pids": ("pids.max", "16"),
                "cpu": ("cpu.cfs_quota_us", str(CPU_PERIOD_US)) if version == 1 else ("cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}"),
                "freezer": ("freezer.state", "THAWED") if version == 1 else ("cgroup.freeze", "0"),
            }[name]
            _write(test / limit_file, value)
        finally:
            test.rmdir()
    except OSError as exc:
        hint = ""
        if version == 2 and exc.errno == errno.EBUSY:
            hint = " (the worker's own cgroup holds processes: start it in a delegated cgroup, e.g. systemd Delegate=yes)"
        return None, f"cgroup v{version} {name}: cannot create child cgroups under {here}: {exc.strerror or exc}{hint}"
    return controller, f"cgroup v{version} {name}: per-bot cgroups under {base}"
