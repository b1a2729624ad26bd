"""Kernel resources outside a bot's cgroups (issue 25): host-wide quotas a
seat could exhaust for the whole host, and host-wide counters two seats
could pass a message through, each at its own moves. Hostile bots in full
matches through the real sandbox, as in test_hostile_bots."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardroom.runner import TimeControl
from cardroom.sandbox import bwrap as sandbox_launcher

from .channels import covert_match
from .conftest import HOSTILE, assert_host_clean
from .test_hostile_bots import OPPONENTS, check_forfeit, play
from .test_sandbox import run

pytestmark = pytest.mark.sandbox

COVERT_TIME = TimeControl(startup_ms=20_000, per_move_ms=2_000, overage_ms=5_000, total_ms=120_000, end_grace_ms=1_000)


@pytest.fixture
def clean_host(recording):
    yield recording
    assert_host_clean(recording.procs)


def test_tcp_hog_pins_no_host_tcp_memory(clean_host):
    """16 loopback connections pinned 61 MiB of the host's TCP memory while
    the bot's cgroup showed 4 MiB: a bot gets no TCP (decision 91)."""
    record = play(clean_host, [HOSTILE / "tcp_hog.py", *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "pinned" not in log, log[-2000:]
    assert "tcp refused: EPERM" in log, log[-2000:]


def test_aio_hog_takes_no_async_io_slots(clean_host):
    record = play(clean_host, [HOSTILE / "aio_hog.py", *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "took" not in log, log[-2000:]
    assert "aio refused: ENOSYS" in log, log[-2000:]  # as from a kernel without AIO


def test_pty_hog_gets_no_pty(clean_host):
    record = play(clean_host, [HOSTILE / "pty_hog.py", *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "opened" not in log, log[-2000:]
    assert "pty refused: ENOENT" in log, log[-2000:]  # no /dev/ptmx


@pytest.mark.parametrize(("channel", "bits"), [("aio", 16), ("pty", 4)])
def test_nothing_crosses_through_aio_nr_or_pty_nr(clean_host, tmp_path, channel, bits):
    """A sender seat moves the host's count of async-I/O slots or of ptys at
    its moves, the receiver reads it at its own (in /proc/sys) and decodes.
    Before this change 16-bit words crossed without an error: now the
    sender cannot move either counter and the receiver cannot read it."""
    crossing = covert_match(clean_host, tmp_path, channel, bits, COVERT_TIME)
    assert crossing.moves >= 10, f"the receiver moved {crossing.moves} times"
    assert crossing.correct == 0, f"{crossing.correct} of {crossing.decoded} symbols crossed"
    assert "received" not in crossing.receiver_log, crossing.receiver_log[-2000:]
    refused = {"aio": "aio refused: ENOSYS", "pty": "pty refused: ENOENT"}[channel]
    assert refused in crossing.sender_log, crossing.sender_log[-2000:]
    assert f"{channel} unreadable: ENOENT" in crossing.receiver_log, crossing.receiver_log[-2000:]


SYSCTLS = """
    import json, os
    # /proc/sys: not there (subset=pid, decision 177), or an empty folder.
    out = {"proc_sys": os.listdir("/proc/sys") if os.path.isdir("/proc/sys") else [], "pts": os.listdir("/dev/pts") if os.path.isdir("/dev/pts") else []}
    for path in ("/proc/sys/fs/aio-nr", "/proc/sys/kernel/pty/nr", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"):
        try:
            open(path).read()
            out[path] = "read"
        except OSError as exc:
            out[path] = exc.strerror
    json.dump(out, open(1, "w"))
"""


def test_no_sysctl_and_no_pty_is_visible(bwrap_launcher, tmp_path):
    info, err, status = run(bwrap_launcher, tmp_path, SYSCTLS)
    assert status == 0, err
    assert info["proc_sys"] == [] and info["pts"] == [], info
    assert {k: v for k, v in info.items() if k.startswith("/proc/sys/")} == dict.fromkeys(
        ["/proc/sys/fs/aio-nr", "/proc/sys/kernel/pty/nr", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr"],
        "No such file or directory",
    )


def test_a_bot_leaves_no_run_user_folder(bwrap_launcher, tmp_path):
    """bubblewrap (0.3.2 on) needs no /run/user/UID: nothing is made there
    for a bot's uid, and what older versions made is swept at start-up."""
    sandbox_launcher.remove_old_run_user_folders()  # another worker's, before this version
    info, err, status = run(bwrap_launcher, tmp_path, "import json, os; json.dump(os.getuid(), open(1, 'w'))")
    assert status == 0, err
    assert not Path(f"/run/user/{info}").exists(), f"/run/user/{info} is left"


def test_old_run_user_folders_are_swept_and_nothing_else(bwrap_launcher):
    from cardroom.sandbox import uid_range

    pool = uid_range()
    old, used, linked, foreign = pool[-1], pool[-2], pool[-3], pool.start - 1
    base = Path("/run/user")
    made = []
    try:
        for uid in (old, used, foreign):
            (base / str(uid) / ".bubblewrap").mkdir(parents=True, exist_ok=True)
            made.append(base / str(uid))
        (base / str(used) / "kept").write_text("someone's\n")
        (base / str(linked)).symlink_to(base / str(foreign))  # a link is never followed
        made.append(base / str(linked))
        sandbox_launcher.remove_old_run_user_folders()
        assert not (base / str(old)).exists()
        assert (base / str(used) / "kept").exists() and (base / str(foreign) / ".bubblewrap").exists()
    finally:
        for folder in made:
            if folder.is_symlink():
                folder.unlink()
                continue
            for path in sorted(folder.rglob("*"), reverse=True):
                path.unlink() if path.is_file() else path.rmdir()
            if folder.exists():
                folder.rmdir()
