"""The bot's /proc once it is ready (decision 267), through the real
sandbox: before ``ready`` it is the bot's procfs (its processes and the five
static texts); from ``ready`` on only the five static texts, with no procfs
behind them. A bot that keeps a way into its procfs across ``ready`` (a
descriptor, an O_PATH one, a working folder, a thread's or a child's, a
descriptor in flight in a socket of its own) is killed there: it forfeits before its first move, and never reads a number
through what it kept."""

from __future__ import annotations

import re
import shutil

import pytest

from cardroom.players import CRASH
from cardroom.sandbox.ready_proc import LIVE, READY_VIEW

from .conftest import HOSTILE, assert_host_clean
from .native import node_package
from .test_hostile_bots import OPPONENTS, check_forfeit, folder_bot, play

pytestmark = pytest.mark.sandbox


@pytest.fixture
def clean_host(recording):
    yield recording
    assert_host_clean(recording.procs)


def seen(log: str, when: str) -> dict[str, str]:
    return dict(re.findall(rf"^{when} (\w+) (.*)$", log, re.M))


def test_after_ready_proc_is_five_static_texts_and_dev_has_no_zero(clean_host, tmp_path):
    record = play(clean_host, [folder_bot(tmp_path, "proc_keeper.py", {"how": "none"}), *OPPONENTS])
    log = record.logs[0]
    assert not record.replay["result"]["forfeits"], log[-2000:]
    before, after = seen(log, "before"), seen(log, "after")
    assert before["self"] == "1" and "self" in before["proc"].split(","), log[-2000:]
    assert after["proc"].split(",") == sorted((*READY_VIEW, "self")), log[-2000:]
    assert after["self"] == "0", log[-2000:]
    # /proc/self keeps the bot's own live stat and statm (Node's memoryUsage), nothing else
    assert after["selflist"] == ",".join(sorted(LIVE)), log[-2000:]
    own_pid, resident = after["ownstat"].split(",")
    assert own_pid == before["ownstat"].split(",")[0] and int(resident) > 0, log[-2000:]  # the same process
    assert before["zero"] == after["zero"] == "0", log[-2000:]
    assert re.search(r"^unreadable ENOENT$", log, re.M), log[-2000:]  # no /proc/self/fd/N: nothing to read
    assert re.search(r"^uncover EPERM$", log, re.M), log[-2000:]  # the procfs beneath stays covered
    # what a runtime reads there still reads the same
    assert after["cpus"] == before["cpus"] == "1", log[-2000:]
    assert after["memtotal"] == before["memtotal"], log[-2000:]


@pytest.mark.parametrize("how", ["fd", "opath", "cwd", "thread", "child", "inflight"])
def test_a_bot_that_keeps_its_procfs_across_ready_is_killed(clean_host, tmp_path, how):
    record = play(clean_host, [folder_bot(tmp_path, "proc_keeper.py", {"how": how}), *OPPONENTS])
    log = check_forfeit(record, 0, CRASH)
    assert f"kept {how}" in log, log[-2000:]
    assert "kept a way into its procfs across its ready reply" in log, log[-2000:]
    assert not re.search(r"^(read|unreadable) ", log, re.M), log[-2000:]  # it never moved


def test_what_node_reads_of_proc_once_ready(clean_host, tmp_path):
    """os.cpus, os.totalmem, os.loadavg and os.uptime read the static
    texts; process.memoryUsage reads /proc/self/stat, the bot's own live
    file bound there (process.resourceUsage is getrusage)."""
    folder = node_package(tmp_path / "proc-after-ready-js", HOSTILE / "proc_after_ready.js")
    shutil.copyfile(HOSTILE / "node_bot.js", folder / "node_bot.js")
    log = play(clean_host, [folder, *OPPONENTS]).logs[0]  # (node_bot.js reads no more after its attack)
    node = seen(log, "node")
    assert node["cpus"] == "1" and node["loadavg"] == "0,0,0" and node["uptime"] == "0", log[-2000:]
    assert int(node["totalmem"]) > 0 and int(node["maxrss"]) > 0, log[-2000:]
    assert int(node["rss"]) > 0, log[-2000:]
