"""Limits fail closed, on the real sandbox: where a cgroup cannot be
applied the sandbox refuses to run bots (unless the operator opts into the
weak mode, which then says what is missing); /tmp and /dev/shm hold a
bounded number of files; the uid pool may not collide with an account."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import sys

import pytest

import cardroom.sandbox as sandbox
from cardroom.launch import BotLimits
from cardroom.sandbox import SandboxUnavailable, get_launcher, uid_collisions

from .conftest import REPO, RecordingLauncher, assert_host_clean
from .test_hostile_bots import OPPONENTS, check_forfeit, folder_bot, play

pytestmark = pytest.mark.sandbox

# In a mount namespace of its own, every cgroup hierarchy remounted read-only
# (what Docker does by default), then the command: a real unwritable
# /sys/fs/cgroup for that process only.
READ_ONLY_CGROUPS = (
    "set -e; for m in $(awk '$3 ~ /^cgroup2?$/ {print $2}' /proc/mounts); do "
    "mount -o remount,bind,ro \"$m\"; done; exec \"$@\""
)


def run_with_read_only_cgroups(args: list[str], **env: str) -> subprocess.CompletedProcess:
    if not shutil.which("unshare") or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to remount the cgroups read-only in a private mount namespace")
    environ = {k: v for k, v in os.environ.items() if k != sandbox.WEAK_LIMITS_ENV}
    environ.update(env)
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", READ_ONLY_CGROUPS, "sh", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_unwritable_cgroups_refuse_to_run_bots(bwrap_launcher):
    result = run_with_read_only_cgroups([sys.executable, "-m", "cardroom.sandbox"])
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "sandbox: UNAVAILABLE" in out
    error = next(line for line in out.splitlines() if line.strip().startswith("error:"))
    assert "limits that cannot be applied here: memory, pids, cpu, cpuacct, freezer" in error, error
    assert "Read-only file system" in error  # what failed
    assert "delegated cgroup" in error and f"{sandbox.WEAK_LIMITS_ENV}=1" in error  # how to fix it
    for name in ("memory", "pids", "cpu", "freezer"):
        assert f"    {name} (" in out and "NOT IN FORCE" in out


WEAK_MATCH = """
import sys
from cardroom.runner import run_match
from cardroom.sandbox import get_launcher, probe
launcher = get_launcher("bwrap")
print(probe().limits_summary())
record = run_match("allegory", [sys.argv[1], "builtin:random"], seed=3, launcher=launcher)
print("forfeits:", record.replay["result"]["forfeits"])
"""


def test_weak_mode_runs_bots_and_says_what_is_missing(bwrap_launcher):
    bot = REPO / "bots" / "random_bot.py"
    result = run_with_read_only_cgroups([sys.executable, "-c", WEAK_MATCH, str(bot)], **{sandbox.WEAK_LIMITS_ENV: "1"})
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "NOT in force: memory, pids, cpu, cpuacct, freezer (CARDROOM_SANDBOX_WEAK_LIMITS=1)" in out, out
    assert "limits in force: tmpfs" in out
    assert "forfeits: []" in out, out


@pytest.mark.parametrize("path", ["/tmp", "/dev/shm"])
def test_300k_files_are_stopped(clean_host_limits, tmp_path, path):
    if "tmpfs" in [limit.name for limit in sandbox.probe().missing_limits()]:
        pytest.skip("inode-limited tmpfs not in force here (weak mode)")
    bot = folder_bot(tmp_path, "file_creator.py", {"path": path})
    record = play(clean_host_limits, [bot, *OPPONENTS])
    log = check_forfeit(record, 0, "crash")
    assert "ALL FILES CREATED" not in log, log[-2000:]
    made = int(log.split("created ")[1].split()[0])
    limit = BotLimits().tmp_inodes if path == "/tmp" else BotLimits().shm_inodes
    assert made < limit, f"the bot made {made} files in {path}; the limit is {limit} inodes"
    assert "No space left on device" in log, log[-2000:]


FILE_MAKER = """
import os, sys
made = 0
try:
    for i in range(300_000):
        os.close(os.open(f"/tmp/f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
finally:
    sys.stderr.write(f"created {made} files\\n")
print("ALL FILES CREATED", flush=True)
"""


def test_without_our_mounts_the_memory_cgroup_bounds_the_files(bwrap_launcher, tmp_path):
    """Where the worker cannot mount an inode-limited tmpfs, bwrap's own
    (size-limited) tmpfs is used: each inode's kernel memory is charged to
    the bot's memory cgroup, which stops a bot creating files without end."""
    if "memory" in [limit.name for limit in sandbox.probe().missing_limits()]:
        pytest.skip("no memory cgroup here (weak mode)")
    launcher = sandbox.BwrapLauncher(bwrap_launcher.bwrap, bwrap_launcher.controllers, tmpfs_mounts=False)
    root = tmp_path / "bot"
    root.mkdir()
    (root / "bot.py").write_text(FILE_MAKER)
    proc = launcher.spawn(root, ["/usr/bin/python3", "bot.py"], BotLimits(memory_bytes=64 * 1024 * 1024))
    try:
        status = proc.wait(120)
        os.set_blocking(proc.stdout_fd, False)
        try:
            out = os.read(proc.stdout_fd, 4096)
        except OSError:
            out = b""
    finally:
        proc.kill()
    assert status is not None and status != 0, "the bot was not stopped"
    assert b"ALL FILES CREATED" not in out
    assert proc.mounts == []  # bwrap's own tmpfs, none of ours
    assert_host_clean([proc])


@pytest.fixture
def clean_host_limits(recording: RecordingLauncher):
    yield recording
    assert_host_clean(recording.procs)


def test_a_uid_pool_used_by_an_account_is_refused(bwrap_launcher, monkeypatch, reprobe):
    account = next((u for u in pwd.getpwall() if 1000 <= u.pw_uid < 2**32 - 1), None)
    if account is None:
        pytest.skip("no account with a uid of 1000 or more on this machine")
    monkeypatch.setenv("CARDROOM_SANDBOX_UIDS", f"{account.pw_uid - 5}-{account.pw_uid + 5}")
    report = reprobe()
    assert not report.ok
    assert f"user {account.pw_name!r} (uid {account.pw_uid})" in report.error
    assert "set CARDROOM_SANDBOX_UIDS to a range no account" in report.error
    with pytest.raises(SandboxUnavailable, match="are in use on this machine"):
        get_launcher("bwrap")


def test_the_default_pool_is_free_here():
    assert uid_collisions(sandbox.uid_range()) == [] or os.environ.get("CARDROOM_SANDBOX_UIDS")


def test_collisions_name_groups_too():
    group = next((g for g in grp.getgrall() if g.gr_gid >= 1000), None) or grp.getgrgid(0)
    found = uid_collisions(range(group.gr_gid, group.gr_gid + 1))
    assert f"group {group.gr_name!r} (gid {group.gr_gid})" in found
