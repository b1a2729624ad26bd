"""Fixtures of the sandbox suite: the real bwrap launcher (skipped, with the
probe's reason, only where bubblewrap truly cannot work) and the checks of
the host after a bot is gone."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from cardroom.launch import BotLimits, BotProcess, Launcher
from cardroom.sandbox import SandboxUnavailable, get_launcher, processes_of_uid, state_dir, uid_range
from cardroom.sandbox import probe as sandbox_probe
from cardroom.sandbox.uids import try_lease_uid

HOSTILE = Path(__file__).resolve().parent / "hostile"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bwrap_launcher() -> Launcher:
    try:
        return get_launcher("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"the bwrap sandbox is unavailable here: {exc}")


def launcher_like(base, **changes):
    """A new bwrap launcher set up as ``base`` (the probe's), but for
    ``changes`` (its constructor's keyword arguments)."""
    from cardroom.sandbox import BwrapLauncher

    settings = {"prlimit": base.prlimit, "tmpfs_mounts": base.tmpfs_mounts, "seccomp": base.seccomp, **changes}
    return BwrapLauncher(base.bwrap, base.controllers, **settings)


class RecordingLauncher(Launcher):
    """The real bwrap launcher, remembering every process it started (so the
    test knows each bot's uid, run folder and cgroups)."""

    name = "bwrap"
    isolated = True

    def __init__(self, inner: Launcher, every_seat_as: int | None = None):
        self.inner = inner
        self.procs: list[BotProcess] = []
        # A control may start every seat as one (one copy of the image for
        # all, as before decision 268), to show what another defence stops.
        self.every_seat_as = every_seat_as

    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> BotProcess:
        proc = self.inner.spawn(root, argv, limits, seat if self.every_seat_as is None else self.every_seat_as)
        self.procs.append(proc)
        return proc


@pytest.fixture
def reprobe(monkeypatch):
    """Run a probe under monkeypatches, then restore the real one."""
    yield lambda: sandbox_probe(refresh=True)
    monkeypatch.undo()
    sandbox_probe(refresh=True)


@pytest.fixture
def recording(bwrap_launcher: Launcher) -> RecordingLauncher:
    return RecordingLauncher(bwrap_launcher)


def files_owned_by(uids: set[int], roots: list[Path]) -> list[str]:
    """Every file or folder under ``roots`` owned by one of ``uids``."""
    found: list[str] = []

    def walk(path: str, depth: int) -> None:
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid in uids:
                found.append(entry.path)
            if stat.S_ISDIR(st.st_mode) and depth < 12:
                walk(entry.path, depth + 1)

    for root in roots:
        if root.exists():
            try:
                st = os.lstat(root)
                if st.st_uid in uids:
                    found.append(str(root))
            except OSError:
                pass
            walk(str(root), 0)
    return found


def zombie_children(uids: set[int] | None = None, since: int = 0) -> list[int]:
    """Our children that died and were never reaped (of the bot uids: other
    tests of the session may leave orphans of their own, which this process,
    a child subreaper once the sandbox is probed, inherits), started at or
    after ``since`` (clock ticks since boot)."""
    me = str(os.getpid())
    if uids is None:
        uids = set(uid_range())
    zombies = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() != me or not fields.get("State", "").strip().startswith("Z"):
            continue
        if {int(x) for x in fields.get("Uid", "").split()} & uids and _started_since(int(name), since):
            zombies.append(int(name))
    return zombies


def uid_is_free(uid: int) -> bool:
    fd = os.open(state_dir() / "locks" / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        assert exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
        return False
    finally:
        os.close(fd)


def leased_by_this_process(uid: int) -> bool:
    """Is ``uid``'s lease held by this process (a launcher of this test's),
    rather than by another process's bot? (/proc/locks names each flock's
    holder and the lock file's inode.)"""
    inode = os.stat(state_dir() / "locks" / f"{uid}.lock").st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[4] == str(os.getpid()):
            if int(fields[5].rsplit(":", 1)[1]) == inode:
                return True
    return False


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_test_started = [0]  # clock ticks since boot when the running test began


@pytest.fixture(autouse=True)
def _note_when_the_test_started():
    _test_started[0] = int(float(Path("/proc/uptime").read_text().split()[0]) * _CLOCK_TICKS) - 1
    yield


def _started_since(pid: int, since: int) -> bool:
    """Did ``pid`` start at or after ``since`` (clock ticks since boot)? A
    process already gone counts as such."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return int(stat.rsplit(")", 1)[1].split()[19]) >= since


def _leftovers(uid: int, since: int) -> list[int]:
    return [pid for pid in processes_of_uid(uid, include_zombies=True) if _started_since(pid, since)]


def describe_processes(pids: list[int]) -> list[str]:
    """What each process is (for a failure message): name, state, parent,
    command line, cgroups."""
    out = []
    for pid in pids:
        try:
            status = dict(
                line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line
            )
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            cgroups = Path(f"/proc/{pid}/cgroup").read_text().replace("\n", " ").strip()
        except OSError:
            out.append(f"{pid}: gone")
            continue
        out.append(f"{pid}: {status.get('Name')} {status.get('State')} ppid {status.get('PPid')} [{cmd}] {cgroups}")
    return out


def assert_host_clean(procs: list[BotProcess]) -> None:
    """After the bots are gone: none of their processes, files, cgroups,
    zombies or uid leases is left on the host.

    Each uid is looked at while this test holds its lease. The ladder tests
    run beside this suite, and a uid freed here may be leased at once to one
    of their bots, whose processes, run folder, cgroups and tmpfs (all named
    by uid) are not ours: a CI run once failed on such a tmpfs. A uid that
    another process holds by then was released by ours (the lease check),
    and what it has now is that process's bot's."""
    assert procs, "no sandboxed bot was started"
    uids = {p.uid for p in procs}  # type: ignore[attr-defined]
    # Only processes started since the test began: an earlier test's stray
    # of a uid the pool has handed out again is not these bots'.
    since = _test_started[0]
    held = {}
    try:
        for uid in uids:
            # (a moment's grace: a launcher's cleanup may still be letting it go)
            deadline = time.monotonic() + 10
            lease = try_lease_uid(uid)
            while lease is None and leased_by_this_process(uid) and time.monotonic() < deadline:
                time.sleep(0.05)
                lease = try_lease_uid(uid)
            if lease is None:
                assert not leased_by_this_process(uid), f"uid {uid} is still leased"
            else:
                held[uid] = lease
        for proc in procs:
            uid = proc.uid  # type: ignore[attr-defined]
            if uid not in held:
                continue
            # (the kernel finishes SIGKILLed processes asynchronously: a moment's grace on a loaded machine)
            deadline = time.monotonic() + 10
            while _leftovers(uid, since) and time.monotonic() < deadline:
                time.sleep(0.05)
            left = _leftovers(uid, since)
            assert left == [], f"processes of bot uid {uid} are left: {describe_processes(left)}"
            assert not proc.run_dir.exists(), f"run folder {proc.run_dir} is left"  # type: ignore[attr-defined]
            for cgroup in proc.cgroups:  # type: ignore[attr-defined]
                assert not cgroup.exists(), f"cgroup {cgroup} is left"
            for mount in getattr(proc, "mounts", []):
                assert not os.path.ismount(mount) and not mount.exists(), f"tmpfs mount {mount} is left"
        roots = [Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"), state_dir(), Path("/run/user")]
        files = files_owned_by(set(held), roots)
        assert files == [], f"files owned by bot uids left: {files[:10]}"
    finally:
        for lease in held.values():
            lease.release()
    assert zombie_children(uids, since) == [], "zombie children left"


def folder_bot(tmp_path: Path, program: str, config: dict | None = None, extra: dict[str, str] | None = None) -> Path:
    """A folder package: the hostile program as main.py, plus a manifest and
    its config.json."""
    folder = tmp_path / Path(program).stem
    folder.mkdir()
    shutil.copyfile(HOSTILE / program, folder / "main.py")
    (folder / "cardroom.toml").write_text(f'entry = "main.py"\nprotocol = 1\nname = "{Path(program).stem}"\n')
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    return folder
