"""A seat's log holds everything the bot wrote, up to the cap, then a visible
``[log cut at N bytes]`` line; it is never silently short (issue 10, item 6).

The bot writes its tail in its last instant, after 'end', and exits at once:
the runner must not read the log before the thread draining the bot's stderr
has reached its end. Many matches at once load the machine, as a worker does.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from cardroom.players import MAX_LOG_BYTES
from cardroom.runner import TimeControl, run_match

from .conftest import RecordingLauncher, assert_host_clean
from .test_hostile_bots import folder_bot

pytestmark = pytest.mark.sandbox

TIME = TimeControl(startup_ms=30_000, per_move_ms=2_000, overage_ms=5_000, total_ms=60_000, end_grace_ms=5_000)
TAIL = 40


def expected_tail() -> str:
    return "".join(f"tail line {i} of {TAIL}\n" for i in range(1, TAIL + 1)) + "LAST LINE\n"


def play_many(launcher: RecordingLauncher, bot, matches: int, at_once: int, busy: int = 0):
    """``matches`` matches, ``at_once`` at a time, beside ``busy`` processes
    that keep the CPUs busy (a loaded worker machine)."""

    def one(seed: int):
        return run_match("allegra", [str(bot), "builtin:random"], seed=seed, time=TIME, launcher=launcher)

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            return list(pool.map(one, range(matches)))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_the_tail_written_just_before_exit_is_always_kept(recording, tmp_path):
    bulk = 60_000  # most of a pipe's worth still unread when the bot exits
    bot = folder_bot(tmp_path, "log_tail.py", config={"bulk_bytes": bulk, "tail": TAIL})
    records = play_many(recording, bot, matches=40, at_once=4, busy=2)
    short = []
    for seed, record in enumerate(records):
        assert record.forfeits == [], record.logs[0][-500:]
        log = record.logs[0]
        if not log.endswith(expected_tail()):
            short.append((seed, len(log), log[-120:]))
    assert short == [], f"{len(short)} of {len(records)} logs lost their tail: {short[:3]}"
    assert_host_clean(recording.procs)


def test_a_log_over_the_cap_is_cut_visibly(recording, tmp_path):
    bot = folder_bot(tmp_path, "log_tail.py", config={"bulk_bytes": MAX_LOG_BYTES + 100_000, "tail": TAIL})
    for record in play_many(recording, bot, matches=6, at_once=3):
        log = record.logs[0]
        kept, marker, rest = log.partition(f"\n[log cut at {MAX_LOG_BYTES} bytes]\n")
        assert marker, log[-300:]
        assert len(kept.encode()) == MAX_LOG_BYTES and rest == ""
        assert set(kept) <= {".", "\n"}, "the first bytes are what the bot wrote first"
    assert_host_clean(recording.procs)
