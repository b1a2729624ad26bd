"""The hostile bots again, in C and in JavaScript, in full matches through
the REAL sandbox (as test_hostile_bots.py does for Python): a fork bomb, a
memory hog, a network probe and a file snooper, each contained, its seat
forfeiting for the right reason, the match finished for the others, and the
host left clean (no process, file, cgroup, zombie or lease of the bot's uid).
The C bots are built here with the machine's gcc; the node memory hog fills
Buffers outside V8's heap, which no RLIMIT_AS bounds for node: the memory
cgroup must."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from cardroom.runner import TimeControl
from cardroom.sandbox import state_dir

from .conftest import HOSTILE, REPO, RecordingLauncher, assert_host_clean
from .native import compile_c
from .test_hostile_bots import OPPONENTS, _accepted_nothing, _listener, check_forfeit, play

pytestmark = pytest.mark.sandbox

LANGUAGES = ["c", "js"]


@pytest.fixture
def clean_host(recording: RecordingLauncher):
    yield recording
    assert_host_clean(recording.procs)


@pytest.fixture(scope="session")
def c_bots(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("hostile-c")
    return {name: compile_c(f"{name}.c", out / name) for name in ("fork_bomb", "memory_hog", "network", "snooper")}


@pytest.fixture
def hostile(c_bots, tmp_path):
    """hostile(name, language, targets): a package of the hostile bot."""

    def make(name: str, language: str, targets: list[str] | None = None) -> Path:
        folder = tmp_path / f"{name}-{language}"
        folder.mkdir()
        if language == "c":
            shutil.copy2(c_bots[name], folder / "bot")
            manifest = 'entry = "bot"\nruntime = "native"\n'
        else:
            shutil.copyfile(HOSTILE / f"{name}.js", folder / "main.js")
            shutil.copyfile(HOSTILE / "node_bot.js", folder / "node_bot.js")
            manifest = 'entry = "main.js"\nruntime = "node"\n'
        (folder / "cardroom.toml").write_text(f'{manifest}protocol = 1\nname = "{name}-{language}"\n')
        (folder / "targets").write_text("".join(f"{t}\n" for t in targets or []))
        return folder

    return make


@pytest.mark.parametrize("language", LANGUAGES)
def test_fork_bomb_is_bounded(clean_host, hostile, language):
    record = play(clean_host, [hostile("fork_bomb", language), *OPPONENTS])
    log = check_forfeit(record, 0, "timeout")
    assert "fork refused after" in log, log[-2000:]
    made = int(log.split("fork refused after ")[1].split()[0])
    assert made < 32, f"{made} forks succeeded; the limit is 32 processes per bot"
    assert made > 0 and "ENOENT" not in log, log[-2000:]  # it forked: the limit, not a missing program, stopped it


SLOW = TimeControl(startup_ms=15_000, per_move_ms=5_000, overage_ms=0, total_ms=30_000, end_grace_ms=300)


def test_c_memory_hog_is_stopped_by_its_address_space(clean_host, hostile):
    record = play(clean_host, [hostile("memory_hog", "c"), *OPPONENTS], time=SLOW)
    log = check_forfeit(record, 0, "crash")
    assert "HOGGED" not in log, log[-2000:]
    reached = int(log.split("memory hog reached ")[1].split()[0])
    assert reached <= 512, f"the bot got {reached} MiB; its limit is 512 MiB"
    # The forfeit says why, naming the limit (malloc failed; it exited with 1).
    [forfeit] = [f for f in record.forfeits if f.seat == 0]
    assert "exited with status 1 (near its memory limit: it held" in forfeit.detail and "an allocation past 512 MiB fails)" in forfeit.detail, forfeit


def test_node_memory_hog_is_stopped_by_the_memory_cgroup(clean_host, hostile):
    record = play(clean_host, [hostile("memory_hog", "js"), *OPPONENTS], time=SLOW)
    log = check_forfeit(record, 0, "crash")
    assert "HOGGED" not in log, log[-2000:]
    reached = max(int(part.split()[0]) for part in log.split("memory hog reached ")[1:])
    # 561 MiB for the whole bot (512 + /tmp + /dev/shm + slack), node itself included.
    assert reached <= 561, f"the bot got {reached} MiB; its limit is 512 MiB"
    [forfeit] = [f for f in record.forfeits if f.seat == 0]
    assert "killed by signal 9 (the kernel stopped it at its memory limit: 512 MiB for the bot's processes)" in forfeit.detail, forfeit


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_network(clean_host, hostile, language):
    v4 = _listener(socket.AF_INET, "127.0.0.1")
    v6 = _listener(socket.AF_INET6, "::1")
    try:
        targets = [
            f"127.0.0.1 {v4.getsockname()[1]}",
            f"::1 {v6.getsockname()[1]}",
            "127.0.0.1 6379",
            "1.1.1.1 53",
        ]
        record = play(clean_host, [hostile("network", language, targets), *OPPONENTS])
        log = check_forfeit(record, 0, "exit")
        assert "CONNECTED" not in log, log
        for target in targets:
            assert f"BLOCKED {target}" in log, log
        assert _accepted_nothing(v4), "the 127.0.0.1 listener received a connection"
        assert _accepted_nothing(v6), "the ::1 listener received a connection"
    finally:
        v4.close()
        v6.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_cannot_read_host_files(clean_host, hostile, language):
    targets = ["/etc/shadow", "/root", "/root/.bashrc", str(REPO / "pyproject.toml"), "/work", "/home", str(state_dir() / "runs"), "/run"]
    record = play(clean_host, [hostile("snooper", language, targets), *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "READ " not in log, log
    for target in targets:
        assert f"BLOCKED {target}" in log, log
