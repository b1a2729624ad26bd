"""The probe (does the sandbox work here, and with which limits?) and
``get_launcher``, which picks the launcher from ``CARDROOM_SANDBOX``."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cardroom.launch import BotLimits, Launcher

from .cgroups import _detect_controller
from .config import (
    MIN_BWRAP,
    START_TIMEOUT_S,
    SandboxError,
    SandboxUnavailable,
    _prepare_state_dir,
    state_dir,
    uid_range,
)
from .launcher import BwrapLauncher, UnsandboxedLauncher
from .reaping import _set_child_subreaper, sweep_stale
from .seccomp import WEAK_LIMITS_ENV, SeccompFilter, SeccompUnavailable, get_filter, seccomp_waived

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
    seccomp: str = "not tried"
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
            f"  seccomp: {self.seccomp}",
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
    try:
        seccomp_filter: SeccompFilter | None = get_filter()
        report.seccomp = seccomp_filter.describe()
    except SeccompUnavailable as exc:
        if not seccomp_waived():
            report.seccomp = f"cannot be built: {exc}"
            report.error = (
                f"the bots' seccomp filter cannot be built: {exc}; refusing to run bots without it, "
                f"or set {WEAK_LIMITS_ENV}=1 to run them without it (not for a public ladder)"
            )
            return report, None
        seccomp_filter = None
        setting = f"{WEAK_LIMITS_ENV}={os.environ.get(WEAK_LIMITS_ENV, '')}"
        report.seccomp = f"NOT IN FORCE ({setting}): {exc}"
        report.notes.append(f"{setting}: bots run WITHOUT the seccomp filter")
    launcher = BwrapLauncher(bwrap, controllers, seccomp=seccomp_filter)
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
try:  # refused by the seccomp filter (EPERM), when it is in force
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
    netlink = "allowed"
except OSError as exc:
    netlink = "denied" if exc.errno == 1 else "failed"
sys.stdout.write("cardroom-probe %d %s %s\\n" % (os.getuid(), net, netlink))
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
            _, uid, net, netlink = out.decode().split()
            report.userns = "work (unprivileged, as the bot's uid)"
            report.start_ms = elapsed
            if net != "none":
                return "the test bot reached the network from inside the sandbox; refusing to run bots here"
            if int(uid) == 0:
                return "the test bot ran as uid 0 inside the sandbox; refusing to run bots here"
            if launcher.seccomp is not None and netlink != "denied":
                return (
                    f"the seccomp filter is not in force in the sandbox (a netlink socket was {netlink}); "
                    f"refusing to run bots without it, or set {WEAK_LIMITS_ENV}=1 to run them without it"
                )
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


def main() -> int:
    report = probe()
    print(report.describe())
    return 0 if report.ok else 1
