"""Every exchange with a bot is bounded by its clock (issue 10, item 1).

The attacker shrinks its stdin pipe to one page and stops consuming it while
still answering (it peeks with tee(2)). A runner that writes with a blocking
write() hangs forever on it: the move clock only starts after the write. Here
the write is part of the move: the attacker forfeits with ``timeout``, the
match ends for everyone, and ``cardroom play`` returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from cardroom.launch import BotLimits, PlainLauncher
from cardroom.players import TIMEOUT, ProtocolPlayer, StartInfo, TimeControl
from cardroom.runner import run_match

from .conftest import REPO, RecordingLauncher, assert_host_clean
from .test_hostile_bots import OPPONENTS, TIME, check_forfeit, folder_bot, play

pytestmark = pytest.mark.sandbox


@pytest.fixture
def clean_host(recording: RecordingLauncher):
    yield recording
    assert_host_clean(recording.procs)


def test_a_bot_that_stops_draining_its_stdin_forfeits_on_time(clean_host, tmp_path):
    bot = folder_bot(tmp_path, "pipe_staller.py")
    started = time.monotonic()
    record = play(clean_host, [bot, *OPPONENTS])
    elapsed = time.monotonic() - started
    log = check_forfeit(record, 0, TIMEOUT)
    assert "stdin pipe shrunk to 4096 bytes" in log, log[-2000:]
    assert "without reading it" in log, "the attacker answered moves while not draining its input"
    assert "did not take its act message in time" in log, log[-2000:]
    # Bounded by the attacker's own clock (300 ms a move + 200 ms bank), not by
    # a hang: generous for a loaded machine.
    assert elapsed < 60, f"the match took {elapsed:.0f} s"


def test_the_honest_seats_keep_their_times_against_a_staller(clean_host, tmp_path):
    """The runner never waits on the staller while another seat's clock runs:
    two stallers in one match each forfeit on their own clock, and the
    built-in seats' recorded move times stay small."""
    staller = folder_bot(tmp_path, "pipe_staller.py")
    record = play(clean_host, [staller, "builtin:random", staller])
    check_forfeit_reasons = {f["seat"]: f["reason"] for f in record.replay["result"]["forfeits"]}
    assert check_forfeit_reasons == {0: TIMEOUT, 2: TIMEOUT}
    honest = [e["ms"] for e in record.replay["events"] if e["by"] == 1]
    assert honest and max(honest) < 200, f"the honest seat's move times: max {max(honest)} ms"


def test_cardroom_play_returns_against_a_staller(tmp_path):
    bot = folder_bot(tmp_path, "pipe_staller.py")
    env = {k: v for k, v in os.environ.items() if k != "CARDROOM_SANDBOX"}  # the real sandbox (the default)
    out = subprocess.run(
        [sys.executable, "-m", "cardroom", "play", "allegra", str(bot), "builtin:random", "--seed", "4",
         "--per-move-ms", "300", "--overage-ms", "200", "--replay", str(tmp_path / "replay.json"),
         "--logs", str(tmp_path / "logs")],  # else the forfeiting seat's log is left in /tmp
        cwd=REPO, capture_output=True, text=True, timeout=180, env=env,
    )
    if "SandboxUnavailable" in out.stderr:
        pytest.skip(f"the bwrap sandbox is unavailable here: {out.stderr.strip()[-300:]}")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "timeout at event" in out.stdout and "did not take its act message in time" in out.stdout, out.stdout
    assert f"(the whole log is {tmp_path / 'logs' / 'seat-0.log'}):" in out.stderr, out.stderr[-2000:]
    replay = json.loads((tmp_path / "replay.json").read_text())
    assert [(f["seat"], f["reason"]) for f in replay["result"]["forfeits"]] == [(0, TIMEOUT)]


def test_end_is_never_waited_on_past_the_grace_period(tmp_path):
    """'end' goes out without waiting; what the pipe cannot take is written
    during the grace period, all seats at once, and then given up."""
    bot = folder_bot(tmp_path, "pipe_staller.py", config={"mode": "never_read"})
    from cardroom.packages import load_bot_package, package_argv

    players = []
    for seat in range(3):
        package = load_bot_package(bot, tmp_path / f"seat-{seat}")
        players.append(ProtocolPlayer("staller", "staller", package.root, package_argv(package), PlainLauncher(), BotLimits()))
    try:
        for seat, player in enumerate(players):
            player.start(StartInfo("allegra", seat, 3, "m", {}, TIME, 1))
        big = {"padding": "x" * 200_000}  # far more than the shrunk pipe holds
        started = time.monotonic()
        for player in players:
            player.end(big, {"scores": [0, 0, 0]})
        told = time.monotonic() - started
        assert told < 1.0, f"telling three stalled bots the match ended took {told:.1f} s"
        from cardroom.runner import _wind_down

        grace = 1.0
        started = time.monotonic()
        _wind_down(players, time.monotonic() + grace)
        waited = time.monotonic() - started
        assert grace - 0.05 <= waited < grace + 2.0, f"three stalled bots held the end up for {waited:.1f} s, not one grace period"
    finally:
        for player in players:
            player.close()


def test_a_match_with_a_staller_plays_unsandboxed_too(tmp_path):
    """The same bound without the sandbox (the CLI's CARDROOM_SANDBOX=none)."""
    bot = folder_bot(tmp_path, "pipe_staller.py")
    time_control = TimeControl(startup_ms=10_000, per_move_ms=300, overage_ms=200, total_ms=30_000, end_grace_ms=300)
    record = run_match("allegra", [str(bot), *OPPONENTS], seed=7, time=time_control, launcher=PlainLauncher())
    assert [(f.seat, f.reason) for f in record.forfeits] == [(0, TIMEOUT)], record.logs[0][-2000:]
