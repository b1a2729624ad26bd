"""The probe (does the sandbox work here, and with which limits?) and
``get_launcher``, which picks the launcher from ``CARDROOM_SANDBOX``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cardroom.fdwait import fd_ready
from cardroom.launch import BotLimits, Launcher, PlainLauncher, StartupRefused

from .botexec import bot_exec_program
from .bwrap import BwrapLauncher, BwrapProcess, UnsandboxedLauncher, remove_old_run_user_folders
from .cgroups import CONTROLLERS, _detect_controller
from .config import (
    DEFAULT_UIDS,
    MIN_BWRAP,
    START_TIMEOUT_S,
    WEAK_LIMITS_ENV,
    SandboxError,
    SandboxUnavailable,
    _prepare_state_dir,
    file_cache_bytes,
    state_dir,
    uid_collisions,
    uid_range,
    weak_limits_allowed,
)
from .filecache import sweep as sweep_file_cache
from .image import prepare_runs
from .ready_proc import READY_LISTING, READY_VIEW
from .reaping import _set_child_subreaper, sweep_stale
from .seccomp import SeccompFilter, SeccompUnavailable, get_filter
from .tmpfs import check_tmpfs_mounts

# -- probe ------------------------------------------------------------------------------------


@dataclass
class LimitStatus:
    """One limit the sandbox puts on every bot: in force here or not, and why."""

    name: str  # e.g. "memory", "cpu", "seccomp"
    what: str  # what it limits, for people
    in_force: bool
    detail: str  # how it is applied, or why it cannot be
    fix: str = ""  # what to do about it, when not in force

    def describe(self) -> str:
        state = "in force" if self.in_force else "NOT IN FORCE"
        fix = f"; fix: {self.fix}" if self.fix and not self.in_force else ""
        return f"{self.name} ({self.what}): {state}: {self.detail}{fix}"


def _runtimes() -> str:
    """Which runtimes' programs this machine has (docs/runtimes.md): a bot of a
    missing one is refused by the launcher as the platform's problem."""
    from cardroom.launch import bot_python
    from cardroom.runtimes import bot_node

    from .bwrap import NUMPY_DIR

    def where(path: str) -> str:
        return path if os.access(path, os.X_OK) else f"{path} MISSING"

    numpy = "with numpy" if NUMPY_DIR.is_dir() else "numpy MISSING (python3-numpy)"
    glibc = os.confstr("CS_GNU_LIBC_VERSION") or "libc"
    return f"python {where(bot_python())} {numpy}; node {where(bot_node())}; native ({glibc})"


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
    limits: list[LimitStatus] = field(default_factory=list)
    weak_limits: bool = False  # CARDROOM_SANDBOX_WEAK_LIMITS: runs without the missing ones

    def missing_limits(self) -> list[LimitStatus]:
        return [limit for limit in self.limits if not limit.in_force]

    def limits_summary(self) -> str:
        """One line: which limits are in force (the status page, the worker's log)."""
        held = [limit.name for limit in self.limits if limit.in_force]
        missing = [limit.name for limit in self.missing_limits()]
        text = "limits in force: " + (", ".join(held) or "none")
        if missing:
            text += "; NOT in force: " + ", ".join(missing) + (f" ({WEAK_LIMITS_ENV}=1)" if self.weak_limits else "")
        return text

    def describe(self) -> str:
        lines = [
            f"sandbox: {'bwrap works' if self.ok else 'UNAVAILABLE'}",
            f"  bubblewrap: {self.bwrap or 'not found'}{' (' + self.bwrap_version + ')' if self.bwrap_version else ''}",
            f"  running as root: {'yes' if self.root else 'no'}",
            f"  user namespaces: {self.userns}",
            f"  rlimits: {self.rlimits}",
            f"  user namespaces inside a sandbox: {self.nested_userns}",
            f"  child subreaper: {'yes' if self.subreaper else 'no'}",
            f"  bot uids: {self.uids}",
            f"  state folder: {self.state_dir}",
            f"  runtimes: {_runtimes()}",
        ]
        if self.limits:
            lines.append("  limits:" + (f" (weak mode, {WEAK_LIMITS_ENV}=1)" if self.weak_limits else ""))
            lines += [f"    {limit.describe()}" for limit in self.limits]
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
        file_cache_bytes()  # a bad setting refuses here, not at a bot's start
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
    # After the folder exists: bot-exec is built into it, and a first start
    # on a freshly booted host (an empty /run) must find it as any other.
    prlimit = shutil.which("prlimit") or ("/usr/bin/prlimit" if os.access("/usr/bin/prlimit", os.X_OK) else None)
    bot_exec, bot_exec_note = bot_exec_program()
    if prlimit is None and bot_exec is None:  # one of the two sets each bot's rlimits
        report.error = (
            f"neither bot-exec ({bot_exec_note}) nor prlimit (util-linux) is here to set each bot's rlimits; "
            "install a C compiler or prlimit (Debian/Ubuntu: apt-get install gcc util-linux, or run "
            f"scripts/install-system-packages.sh), {FIX_NONE}"
        )
        return report, None
    collisions = uid_collisions(uids)
    if collisions:
        report.error = (
            f"the bot uids {report.uids} are in use on this machine: {', '.join(collisions[:5])}"
            f"{' and more' if len(collisions) > 5 else ''}; set CARDROOM_SANDBOX_UIDS to a range no account, group "
            f"or subordinate-id range uses (the default, {DEFAULT_UIDS}, lies outside what systemd and Debian allocate)"
        )
        return report, None
    controllers = []
    for name in CONTROLLERS:
        controller, note = _detect_controller(name)
        if controller is not None:
            controllers.append(controller)
        what, fix = LIMIT_TEXTS[name]
        report.limits.append(LimitStatus(name, what, controller is not None, note, fix))
        if name == "memory":
            report.memory_cgroup = note if controller else f"skipped ({note}); rlimits only"
        elif name == "pids":
            report.pids_cgroup = note if controller else f"skipped ({note}); rlimits only"
    tmpfs_error = check_tmpfs_mounts()
    memory_held = any(c.name == "memory" for c in controllers)
    if tmpfs_error is None:
        tmpfs_status = LimitStatus("tmpfs", TMPFS_WHAT, True, "mounted per bot with size= and nr_inodes=")
    else:
        # bwrap's own tmpfs has a size limit only; each inode's kernel memory
        # is charged to the bot's memory cgroup, which then bounds them.
        why = f"cannot mount an inode-limited tmpfs here ({tmpfs_error}): bwrap's --size limits the size"
        tmpfs_status = LimitStatus(
            "tmpfs",
            TMPFS_WHAT,
            memory_held,
            f"{why}; the number of inodes is bounded by the memory cgroup (their kernel memory is charged to it)"
            if memory_held
            else f"{why}, and nothing bounds the number of inodes",
            "run the worker with CAP_SYS_ADMIN in its mount namespace, or give it the memory cgroup",
        )
    report.limits.append(tmpfs_status)
    seccomp_filter, seccomp_status = _seccomp_filter()
    report.limits.append(seccomp_status)
    # Without bot-exec there is no start-up gate: a bot may make pipes,
    # sockets and memfds all match long, whose inode numbers cross between
    # the seats of a match (tests/sandbox/test_covert_channels.py).
    report.limits.append(
        LimitStatus(
            "gate",
            GATE_WHAT,
            bot_exec is not None,
            f"bot-exec: {bot_exec_note}" if bot_exec is not None else f"no bot-exec ({bot_exec_note})",
            GATE_FIX,
        )
    )
    refusal = _refuse_missing_limits(report)
    if refusal:
        report.error = refusal
        return report, None
    runs_in_memory, runs_how = prepare_runs()
    swept = sweep_stale(controllers) + remove_old_run_user_folders()
    sweep_file_cache()  # bots' files no run has linked for a while
    if swept:
        report.notes.append(f"removed {len(swept)} run folders, cgroups and /run/user folders left behind by workers that died or by earlier versions")
    try:
        launcher = BwrapLauncher(
            bwrap,
            controllers,
            prlimit=prlimit,
            tmpfs_mounts=tmpfs_error is None,
            seccomp=seccomp_filter,
            bot_exec=bot_exec or "",
            bot_exec_note=bot_exec_note,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        # The runtimes' image (decision 175): a full disk or memory, no ldd ...
        report.error = f"cannot prepare the runtimes' files for the bots in {state_dir()}: {exc}; {FIX_NONE}"
        return report, None
    image = launcher.image
    files_status = LimitStatus(
        "files",
        FILES_WHAT,
        image.in_memory and runs_in_memory,
        f"the runtimes' image: {image.how}, {image.size_bytes / 2**20:.0f} MiB in {image.files} files; "
        f"the run folders and file cache: {runs_how}",
        FILES_FIX,
    )
    report.limits.append(files_status)
    refusal = _refuse_missing_limits(report)
    if refusal:
        report.error = refusal
        return report, None
    report.nested_userns = "blocked (--disable-userns)" if launcher.disable_userns else "allowed (bubblewrap < 0.8)"
    if launcher.bot_exec is not None:
        report.rlimits = f"set by bot-exec before bwrap starts: {launcher.bot_exec_note}"
    else:
        report.rlimits = f"set by {prlimit} before bwrap starts (a slower start: no bot-exec, {launcher.bot_exec_note})"
    error = _trial_run(launcher, report)
    proc_note = "remounted with subset=pid: the bot's processes only" if launcher.proc_subset else "every host file covered by a bind"
    if error and launcher.proc_subset:
        # Where the worker may not look into the bot's /proc/PID (a container
        # without ptrace rights over other uids) it cannot remount the bot's
        # procfs: every host file is covered by a bind instead (decision 177).
        launcher.proc_subset = False
        proc_note = f"every host file covered by a bind (the remount failed: {error})"
        error = _trial_run(launcher, report)
    report.notes.append(f"/proc: {proc_note}")
    if launcher.bot_exec is not None:
        report.notes.append("start-up gate: new pipes, sockets, memfds, shared memory and pidfds refused once a bot is ready")
        if launcher.proc_subset and any(c.name == "freezer" for c in launcher.controllers):
            report.notes.append(f"/proc once a bot is ready: {', '.join(READY_VIEW)} only, static (decision 267)")
        else:
            report.notes.append("/proc once a bot is ready: its live procfs still (it needs subset=pid and the freezer)")
    else:
        report.notes.append("start-up gate: none (it needs bot-exec): a bot may make pipes and sockets all match long")
    if error and launcher.dev is not None:
        # Never refuse for want of the prepared /dev: one built per bot instead.
        launcher.dev = None
        launcher.dev_note = f"built for each bot (the test bot failed with the prepared /dev: {error})"
        error = _trial_run(launcher, report)
    report.notes.append(f"/dev: {launcher.dev_note}")
    if error:
        report.error = error
        return report, None
    report.ok = True
    return report, launcher


TMPFS_WHAT = "size and inodes of /tmp and /dev/shm"
FILES_WHAT = "what a bot reads is in memory: no read leaves a trace (page cache, access time) for a later bot"
FILES_FIX = (
    "run the worker with CAP_SYS_ADMIN in its mount namespace (it mounts the tmpfs), or put CARDROOM_SANDBOX_DIR "
    "on a tmpfs mounted noatime (docs/operations.md)"
)
CGROUP_FIX = (
    "give the worker a writable, delegated cgroup (see docs/operations.md: systemd Delegate=yes, or in Docker "
    "--cgroupns=private with a writable /sys/fs/cgroup)"
)
LIMIT_TEXTS = {
    "memory": ("memory of all the bot's processes, cgroup", CGROUP_FIX),
    "pids": ("number of processes, cgroup", CGROUP_FIX),
    "cpu": ("one core for all the bot's processes, cgroup cpu quota", CGROUP_FIX),
    "cpuacct": ("CPU time of all the bot's processes, frozen or not, charged to its clock, cgroup cpuacct", CGROUP_FIX),
    "freezer": ("frozen when not its move, cgroup freezer", CGROUP_FIX),
}


GATE_WHAT = "start-up gate: no new pipe, socket, memfd, shared memory or pidfd once a bot is ready (bot-exec)"
GATE_FIX = (
    "install a C compiler (Debian/Ubuntu: apt-get install gcc) so the worker builds bot-exec in the sandbox "
    "folder, or ship the prebuilt one beside cardroom/sandbox/botexec.py (the image does)"
)
SECCOMP_WHAT = "system calls a bot never needs: locks, inotify, keyrings, io_uring and AIO, sockets but AF_UNIX ..."


def _seccomp_filter() -> tuple[SeccompFilter | None, LimitStatus]:
    """The bots' seccomp filter (None if it cannot be built) and its status."""
    try:
        built = get_filter()
    except SeccompUnavailable as exc:
        return None, LimitStatus("seccomp", SECCOMP_WHAT, False, str(exc), "install libseccomp2 and the pyseccomp package")
    return built, LimitStatus("seccomp", SECCOMP_WHAT, True, built.describe())


def _refuse_missing_limits(report: ProbeReport) -> str | None:
    """Fail closed: the error if a limit is missing and the operator has not
    opted into the weak mode; with it, a note and None."""
    missing = report.missing_limits()
    if not missing:
        return None
    report.weak_limits = weak_limits_allowed()
    names = ", ".join(limit.name for limit in missing)
    if report.weak_limits:
        report.notes.append(f"{WEAK_LIMITS_ENV}=1: bots run WITHOUT these limits: {names}")
        return None
    reasons = "; ".join(limit.detail for limit in missing)
    fixes = "; ".join(dict.fromkeys(limit.fix for limit in missing if limit.fix))
    return (
        f"limits that cannot be applied here: {names} ({reasons}). Refusing to run bots without them: {fixes}; "
        f"or set {WEAK_LIMITS_ENV}=1 to run them with the weaker limits that remain (not for a public ladder)"
    )


PROBE_BOT = b"""import os, socket, sys
line = sys.stdin.readline()
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    net = "open"
except OSError:
    net = "none"
try:  # refused by the seccomp filter (EPERM), when it is in force
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
    netlink = "allowed"
except OSError as exc:
    netlink = "denied" if exc.errno == 1 else "failed"
try:  # the devices of /dev work (a prepared /dev: decision 159)
    with open("/dev/null", "wb") as null, open("/dev/urandom", "rb") as urandom:
        null.write(b"x")
        dev = "ok" if len(urandom.read(8)) == 8 else "short"
except OSError as exc:
    dev = "failed"
sys.stdout.write("cardroom-probe %d %s %s %s\\n" % (os.getuid(), net, netlink, dev))
sys.stdout.flush()
sys.stdin.readline()  # (its /proc switched meanwhile, as when a bot is ready: decision 267)
sys.stdout.write("cardroom-proc %s\\n" % ",".join(sorted(os.listdir("/proc"))))
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
            out = _read_line(proc.stdout_fd)
            elapsed = (time.monotonic() - started) * 1000
            if not out.startswith(b"cardroom-probe "):
                os.set_blocking(proc.stderr_fd, False)
                try:
                    err = os.read(proc.stderr_fd, 65536)
                except OSError:
                    err = b""
                report.userns = "failed"
                return _explain(" ".join(err.decode("utf-8", "replace").split())[:500] or "the test bot printed nothing")
            _, uid, net, netlink, dev = out.decode().split()
            report.userns = "work (unprivileged, as the bot's uid)"
            report.start_ms = elapsed
            if net != "none":
                return "the test bot reached the network from inside the sandbox; refusing to run bots here"
            if int(uid) == 0:
                return "the test bot ran as uid 0 inside the sandbox; refusing to run bots here"
            if dev != "ok":
                return f"/dev/null or /dev/urandom does not work in the sandbox ({launcher.dev_note}); refusing to run bots here"
            if launcher.seccomp is not None and netlink != "denied":
                return (
                    f"the seccomp filter is not in force in the sandbox (a netlink socket was {netlink}); "
                    f"refusing to run bots without it, or set {WEAK_LIMITS_ENV}=1 to run them without it"
                )
            return _trial_ready(proc)
        finally:
            proc.kill()
    return None


def _trial_ready(proc: BwrapProcess) -> str | None:
    """The trial bot's /proc switched as a ready bot's is (decision 267);
    None if it shows the static texts only afterwards (or the launcher does
    not switch: no gate or no freezer, the weak modes)."""
    proc.pause()
    try:
        proc.close_startup()
    except (SandboxError, StartupRefused) as exc:
        return f"cannot replace a ready bot's /proc with static texts: {exc}; refusing to run bots here"
    proc.resume()
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    line = _read_line(proc.stdout_fd)
    if proc.proc_switch_s is not None and line != f"cardroom-proc {','.join(READY_LISTING)}".encode():
        return f"a ready bot's /proc is not the static texts after the switch ({line[:200]!r}); refusing to run bots here"
    return None


def _read_line(fd: int) -> bytes:
    out = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    while b"\n" not in out and time.monotonic() < deadline:
        if not fd_ready(fd, deadline - time.monotonic()):
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
    return out.strip()


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
    elif "seccomp" in lower:
        fix = (
            "the kernel refused the bots' seccomp filter (a kernel without CONFIG_SECCOMP_FILTER, or a container "
            "profile that forbids seccomp(2)); " + DOCKER_HINT
        )
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


def local_launcher() -> Launcher:
    """The launcher for matches on an author's own machine (``cardroom play``
    and ``cardroom tournament``): as ``get_launcher()``, except that with
    ``CARDROOM_SANDBOX`` unset and no working sandbox here (not root, no
    bubblewrap, ...) the bots run unsandboxed after one warning line that
    says why, instead of the command failing. The ladder's workers never
    fall back: they call ``get_launcher()``, which refuses."""
    if os.environ.get("CARDROOM_SANDBOX", "").strip():
        return get_launcher()
    report = probe()
    if report.ok and _LAUNCHER is not None:
        return _LAUNCHER
    global _FALLBACK
    if _FALLBACK is None:
        print(fallback_warning(report.error or "the sandbox does not work here"), file=sys.stderr, flush=True)
        _FALLBACK = PlainLauncher()
    return _FALLBACK


_FALLBACK: Launcher | None = None


def fallback_warning(error: str) -> str:
    """One line: why the bots run unsandboxed, and what the ladder does
    differently (``error`` is the probe's; its first clause is the why)."""
    why = re.split(r"[:;(]", error, maxsplit=1)[0].strip().rstrip(".") or error
    limits = BotLimits()
    return (
        f"cardroom: warning: bots run WITHOUT the sandbox here ({why}); the ladder runs each bot in bubblewrap "
        f"as its own uid, with no network, one core and {limits.memory_bytes // 2**20} MiB, and a bot that breaks "
        "those limits forfeits there (CARDROOM_SANDBOX=bwrap refuses instead of this fallback)"
    )


def main() -> int:
    report = probe()
    print(report.describe())
    return 0 if report.ok else 1
