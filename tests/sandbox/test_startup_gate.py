"""The start-up gate (decision 237), for every runtime through the real
sandbox: a bot makes a pipe, a socket, a memfd, shared memory, a pidfd (or,
in node, a Unix socket and a child process) as it starts, and again once
the match plays. Before ``ready`` every one is made (Node's libuv needs its
pipes); after, each fails with EPERM, and the bot plays on unharmed (a
refused call is an error it can handle, not a kill)."""

from __future__ import annotations

import re
import shutil

import pytest

from cardroom.runner import TimeControl, run_match
from cardroom.sandbox.startup_gate import REFUSALS_ANSWERED

from .conftest import HOSTILE, assert_host_clean
from .native import compile_c, native_package, node_package

pytestmark = pytest.mark.sandbox

TIME = TimeControl(startup_ms=15_000, per_move_ms=2_000, overage_ms=2_000, total_ms=60_000, end_grace_ms=500)
KINDS = {
    "python": ["pipe", "socket", "socketpair", "memfd", "shared", "pidfd"],
    "native": ["pipe", "socket", "socketpair", "memfd", "shared", "pidfd"],
    "node": ["socket", "child"],
}


@pytest.fixture
def clean_host(recording):
    yield recording
    assert_host_clean(recording.procs)


def gate_bot(runtime: str, tmp_path):
    if runtime == "python":
        folder = tmp_path / "new-files-py"
        folder.mkdir()
        shutil.copyfile(HOSTILE / "new_files.py", folder / "main.py")
        (folder / "cardroom.toml").write_text('entry = "main.py"\nprotocol = 1\nname = "new-files-py"\n')
        return folder
    if runtime == "node":
        folder = node_package(tmp_path / "new-files-js", HOSTILE / "new_files.js")
        shutil.copyfile(HOSTILE / "node_bot.js", folder / "node_bot.js")
        return folder
    return native_package(tmp_path / "new-files-c", compile_c("new_files.c", tmp_path / "build" / "new_files"))


@pytest.mark.parametrize("runtime", list(KINDS))
def test_new_files_are_made_at_start_and_refused_once_the_match_plays(clean_host, tmp_path, runtime):
    record = run_match(
        "allegra", [str(gate_bot(runtime, tmp_path)), "builtin:random"], seed=7, time=TIME, launcher=clean_host
    )
    log = record.logs[0]
    outcomes = {(when, kind): result for when, kind, result in re.findall(r"^(before|after) (\w+) (\S+)$", log, re.M)}
    for kind in KINDS[runtime]:
        assert outcomes.get(("before", kind)) == "ok", (kind, log[-2000:])
        assert outcomes.get(("after", kind)) == "EPERM", (kind, log[-2000:])
    assert not record.replay["result"]["forfeits"], (record.replay["result"]["forfeits"], log[-2000:])


def test_a_bot_that_keeps_trying_costs_the_worker_a_bounded_effort(clean_host, tmp_path):
    """Each refusal is the worker's CPU: after REFUSALS_ANSWERED the gate
    lets go of the listener, and the kernel refuses the rest (ENOSYS)."""
    record = run_match(
        "allegra", [str(gate_bot("python", tmp_path)), "builtin:random"], seed=7, time=TIME, launcher=clean_host
    )
    log = record.logs[0]
    # the first move's round took one refusal of each kind, the loop the rest
    expected = f"pipe refused {REFUSALS_ANSWERED - len(KINDS['python'])} times, then ENOSYS"
    assert expected in log, log[-2000:]
    assert not record.replay["result"]["forfeits"], log[-2000:]
