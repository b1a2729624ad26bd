"""Hostile bots in full matches through the REAL sandbox.

Each bot under ``hostile/`` answers the protocol normally for a move or two,
then misbehaves. It plays Allegra against built-in bots through
``run_match`` and the real bwrap launcher; the test checks that the seat
forfeits with the right reason, that the match still finishes for the others
(every seat ranked, the forfeiter last) and that the host is clean
afterwards: no process of the bot's uid, no file owned by it, no cgroup, no
zombie, no uid lease left.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cardroom.players import MAX_LOG_BYTES
from cardroom.runner import TimeControl, run_match
from cardroom.sandbox import state_dir
from engine.replay import verify

from .conftest import HOSTILE, REPO, RecordingLauncher, assert_host_clean, folder_bot

pytestmark = pytest.mark.sandbox

TIME = TimeControl(startup_ms=15_000, per_move_ms=300, overage_ms=200, total_ms=30_000, end_grace_ms=300)
OPPONENTS = ["builtin:random", "builtin:random"]


def play(recording: RecordingLauncher, bots: list[str | Path], seed: int = 7, time: TimeControl = TIME):
    record = run_match("allegra", [str(b) for b in bots], seed=seed, time=time, launcher=recording)
    result = record.replay["result"]
    assert len(result["ranks"]) == len(bots), "every seat is ranked"
    assert len(result["scores"]) == len(bots)
    return record


def forfeit_of(record, seat: int) -> dict:
    forfeits = {f["seat"]: f for f in record.replay["result"]["forfeits"]}
    assert seat in forfeits, f"seat {seat} did not forfeit; log:\n{record.logs[seat][-2000:]}"
    return forfeits[seat]


def check_forfeit(record, seat: int, reason: str) -> str:
    """The seat forfeited for ``reason`` and ranks strictly last; returns its log."""
    forfeit = forfeit_of(record, seat)
    log = record.logs[seat]
    assert forfeit["reason"] == reason, f"forfeit {forfeit} (expected {reason}); log:\n{log[-2000:]}"
    ranks = record.replay["result"]["ranks"]
    others = [r for s, r in enumerate(ranks) if s != seat]
    assert ranks[seat] == len(ranks) and all(r < ranks[seat] for r in others), ranks
    # The default policy played the seat from the forfeit on.
    events = record.replay["events"]
    assert forfeit["event"] <= len(events)
    assert all(e.get("forfeit") for e in events[forfeit["event"] :] if e["by"] == seat)
    return log


@pytest.fixture
def clean_host(recording: RecordingLauncher):
    yield recording
    assert_host_clean(recording.procs)


# -- resources -------------------------------------------------------------------------


def test_fork_bomb_is_bounded(clean_host):
    record = play(clean_host, [HOSTILE / "fork_bomb.py", *OPPONENTS])
    log = check_forfeit(record, 0, "timeout")
    assert "fork refused after" in log, log[-2000:]
    made = int(log.split("fork refused after ")[1].split()[0])
    assert made < 32, f"{made} forks succeeded; the limit is 32 processes per bot"


def test_memory_hog_of_2_gib_is_stopped(clean_host):
    # Touching 512 MiB takes this machine kind about half a second: give the
    # move time enough that the memory limit, not the clock, stops the bot.
    slow = TimeControl(startup_ms=15_000, per_move_ms=5_000, overage_ms=0, total_ms=30_000, end_grace_ms=300)
    record = play(clean_host, [HOSTILE / "memory_hog.py", *OPPONENTS], time=slow)
    log = check_forfeit(record, 0, "crash")
    assert "MemoryError" in log and "HOGGED" not in log, log[-2000:]
    reached = int(log.split("memory hog reached ")[1].split()[0])
    assert reached <= 512, f"the bot got {reached} MiB; its limit is 512 MiB"
    [forfeit] = [f for f in record.forfeits if f.seat == 0]
    assert "(near its memory limit: it held" in forfeit.detail and "an allocation past 512 MiB fails)" in forfeit.detail, forfeit


def test_busy_loop_times_out(clean_host):
    record = play(clean_host, [HOSTILE / "busy_loop.py", *OPPONENTS])
    check_forfeit(record, 0, "timeout")


def test_sleeper_times_out(clean_host):
    record = play(clean_host, [HOSTILE / "sleeper.py", *OPPONENTS])
    check_forfeit(record, 0, "timeout")


def test_daemon_does_not_outlive_the_bot(clean_host):
    record = play(clean_host, [HOSTILE / "daemon.py", *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "daemon started" in log
    # assert_host_clean (the fixture) checks that no process of its uid is left.


# -- the network ---------------------------------------------------------------------------


def _listener(family: int, host: str) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(16)
    sock.setblocking(False)
    return sock


def _accepted_nothing(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def test_no_network(clean_host, tmp_path):
    v4 = _listener(socket.AF_INET, "127.0.0.1")
    try:
        v6 = _listener(socket.AF_INET6, "::1")
    except OSError as exc:  # pragma: no cover - hosts without IPv6
        pytest.skip(f"no ::1 on this host: {exc}")
    try:
        port4, port6 = v4.getsockname()[1], v6.getsockname()[1]
        targets = [
            ["127.0.0.1", 6379],  # Redis
            ["127.0.0.1", 5432],  # PostgreSQL
            ["127.0.0.1", port4],
            ["::1", port6],
            ["::1", 6379],
            ["1.1.1.1", 53],
        ]
        bot = folder_bot(tmp_path, "network.py", {"targets": targets})
        record = play(clean_host, [bot, *OPPONENTS])
        log = check_forfeit(record, 0, "exit")
        assert "CONNECTED" not in log, log
        for host, port in targets:
            assert f"BLOCKED {host} {port}" in log, log
        assert _accepted_nothing(v4), "the 127.0.0.1 listener received a connection"
        assert _accepted_nothing(v6), "the ::1 listener received a connection"
    finally:
        v4.close()
        v6.close()


# -- reading what is not the bot's --------------------------------------------------------


@pytest.mark.parametrize(
    "targets",
    [
        pytest.param(["/etc/shadow", "/etc/gshadow"], id="etc-shadow"),
        pytest.param(["/root", "/root/.bashrc", "/root/.ssh", "/root/.pyenv"], id="root-home"),
        pytest.param([str(REPO), str(REPO / "pyproject.toml"), "/work/main", "/work", "/home"], id="project"),
    ],
)
def test_cannot_read_host_files(clean_host, tmp_path, targets):
    bot = folder_bot(tmp_path, "reader.py", {"targets": targets})
    record = play(clean_host, [bot, *OPPONENTS])
    log = check_forfeit(record, 0, "exit")
    assert "READ " not in log, log
    for target in targets:
        assert f"BLOCKED {target}" in log, log


def test_cannot_read_another_bots_files(clean_host, tmp_path):
    keeper = folder_bot(tmp_path, "keeper.py", extra={"secret.txt": "the keeper's secret\n"})
    targets = [
        str(keeper),
        str(keeper / "secret.txt"),
        str(state_dir()),
        str(state_dir() / "runs" / "*" / "secret.txt"),
        "/run",
        "/proc/*/root/bot/secret.txt",
        "/bot/secret.txt",
    ]
    reader = folder_bot(tmp_path, "reader.py", {"targets": targets})
    record = play(clean_host, [reader, keeper, "builtin:random"])
    log = check_forfeit(record, 0, "exit")
    assert "READ " not in log, log
    assert 1 not in {f["seat"] for f in record.replay["result"]["forfeits"]}, "the keeper played the match out"
    assert len(clean_host.procs) == 2 and clean_host.procs[0].uid != clean_host.procs[1].uid


# -- writing -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/tmp/fill", "/dev/shm/fill"])
def test_cannot_fill_a_disk(clean_host, tmp_path, path):
    bot = folder_bot(tmp_path, "disk_filler.py", {"path": path})
    record = play(clean_host, [bot, *OPPONENTS])
    log = check_forfeit(record, 0, "crash")
    wrote = int(log.split("wrote ")[1].split()[0])
    assert wrote <= 16, f"wrote {wrote} MiB to {path}"
    assert "No space left on device" in log or "File too large" in log or "wrote" in log


# -- output ----------------------------------------------------------------------------------------


def test_100_mb_stdout_line(clean_host):
    record = play(clean_host, [HOSTILE / "stdout_one_line.py", *OPPONENTS])
    check_forfeit(record, 0, "output_limit")


def test_100_mb_stdout_in_many_lines(clean_host):
    record = play(clean_host, [HOSTILE / "stdout_many_lines.py", *OPPONENTS])
    check_forfeit(record, 0, "invalid_json")


def test_100_mb_stderr_is_capped_and_the_match_is_fine(clean_host):
    record = play(clean_host, [HOSTILE / "stderr_flood.py", *OPPONENTS])
    assert record.replay["result"]["forfeits"] == [], record.replay["result"]
    log = record.logs[0]
    assert len(log.encode()) <= MAX_LOG_BYTES + 200
    assert f"[log cut at {MAX_LOG_BYTES} bytes]" in log


def test_closing_stdout_early(clean_host):
    record = play(clean_host, [HOSTILE / "close_stdout.py", *OPPONENTS])
    check_forfeit(record, 0, "exit")


def test_garbage_output(clean_host):
    record = play(clean_host, [HOSTILE / "garbage.py", *OPPONENTS])
    check_forfeit(record, 0, "invalid_json")


@pytest.mark.parametrize(
    "bomb, reason",
    [
        ("deep_list", "invalid_json"),
        ("deep_object", "invalid_json"),
        ("deep_action", "invalid_json"),
        ("huge_int", "invalid_json"),
        ("huge_float", "invalid_json"),
        ("nan", "invalid_json"),
        ("duplicate_keys", "invalid_json"),
        ("invalid_utf8", "invalid_json"),
        ("lone_surrogate", "invalid_json"),
        ("nul", "invalid_json"),
        ("huge_string", "illegal_action"),
        ("unhashable_type", "illegal_action"),
    ],
)
def test_json_bomb_is_the_bots_forfeit(clean_host, tmp_path, bomb, reason):
    """A reply made to break the parser (issue 25: 200,000 levels deep was a
    RecursionError, 5,000 digits a ValueError: the runner crashed, no
    replay) is the seat's forfeit, with a short detail, and the replay and
    the log are clean JSON and UTF-8."""
    bot = folder_bot(tmp_path, "json_bomb.py", {"bomb": bomb})
    record = play(clean_host, [bot, *OPPONENTS])
    log = check_forfeit(record, 0, reason)
    assert "json bomb: sending" in log
    assert len(record.forfeits[0].detail) <= 600, record.forfeits[0].detail
    text = json.dumps(record.replay, allow_nan=False)
    text.encode("utf-8")
    log.encode("utf-8")
    verify(json.loads(text))


def test_wrong_message(clean_host):
    record = play(clean_host, [HOSTILE / "wrong_message.py", *OPPONENTS])
    check_forfeit(record, 0, "invalid_message")


def test_illegal_action(clean_host):
    record = play(clean_host, [HOSTILE / "illegal.py", *OPPONENTS])
    check_forfeit(record, 0, "illegal_action")


def test_crash(clean_host):
    record = play(clean_host, [HOSTILE / "crasher.py", *OPPONENTS])
    log = check_forfeit(record, 0, "crash")
    assert "deliberate crash on move 3" in log


def test_two_hostile_bots_in_one_match(clean_host):
    """Two misbehaving seats, each in its own sandbox; both forfeit, share
    the last rank, and the built-in bot's match finishes."""
    record = play(clean_host, [HOSTILE / "busy_loop.py", HOSTILE / "fork_bomb.py", "builtin:random"])
    forfeits = {f["seat"]: f["reason"] for f in record.replay["result"]["forfeits"]}
    assert forfeits == {0: "timeout", 1: "timeout"}
    assert record.replay["result"]["ranks"] == [2, 2, 1]
