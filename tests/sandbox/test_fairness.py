"""CPU fairness on the real sandbox: a bot is frozen whenever it is not due
to answer, and all its processes together get at most one core.

The attack (issue 10): a bot forks busy children that each call setsid()
(their own scheduler autogroup), so without limits they took most of this
2-core machine and an honest opponent, needing a fraction of a second a
move, forfeited on time. Timing assertions compare the honest bot with
itself against a harmless opponent, with generous margins: the machine is
shared and loaded."""

from __future__ import annotations

import os
import select
import statistics
import textwrap
import time
from pathlib import Path

import pytest

from cardroom.launch import BotLimits
from cardroom.players import InProcessPlayer
from cardroom.runner import TimeControl, run_match
from cardroom.sandbox import probe
from cardroom.sandbox.cgroups import CPU_PERIOD_US

from .conftest import HOSTILE, RecordingLauncher, assert_host_clean, folder_bot

pytestmark = pytest.mark.sandbox

# Generous clocks: the honest bot must never forfeit on a loaded machine.
SLOW = TimeControl(startup_ms=20_000, per_move_ms=10_000, overage_ms=20_000, total_ms=300_000, end_grace_ms=500)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def missing(*names: str) -> list[str]:
    """Which of these limits the probe found not in force (weak mode)."""
    return [limit.name for limit in probe().missing_limits() if limit.name in names]


def move_times(record, seat: int) -> list[int]:
    return [e["ms"] for e in record.replay["events"] if e["by"] == seat and not e.get("forfeit")]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes (alive ones)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def test_cpu_hog_neither_slows_the_honest_seat_nor_gets_more_than_one_core(recording: RecordingLauncher):
    if missing("cpu", "freezer"):
        pytest.skip(f"not in force here (weak mode): {missing('cpu', 'freezer')}")
    honest = str(HOSTILE / "honest_thinker.py")
    hog = str(HOSTILE / "cpu_hog.py")
    baseline = run_match("allegory", ["builtin:random", honest], seed=11, time=SLOW, launcher=recording)
    assert baseline.replay["result"]["forfeits"] == []

    first = len(recording.procs)  # the hog (seat 0) is the next process started
    seen = {"checks": 0, "not_frozen": [], "cpu": 0.0, "procs": 0, "quota": None}

    def watch(index: int, event: dict) -> None:
        # Between two decisions the runner has paused every bot: the hog
        # (the first process this match started) must be frozen, always.
        hog_proc = recording.procs[first]
        seen["checks"] += 1
        if hog_proc.frozen() is not True:
            seen["not_frozen"].append(index)
        cpu_cg, freezer_cg = hog_proc.cgroup("cpu"), hog_proc.cgroup("freezer")
        pids = [int(x) for x in (freezer_cg / "cgroup.procs").read_text().split()]
        seen["cpu"] = cpu_seconds(pids)
        seen["procs"] = len(pids)
        v1_quota = cpu_cg / "cpu.cfs_quota_us"
        seen["quota"] = v1_quota.read_text().strip() if v1_quota.exists() else (cpu_cg / "cpu.max").read_text().split()[0]

    attacked = run_match("allegory", [hog, honest], seed=11, time=SLOW, launcher=recording, on_event=watch)
    assert attacked.replay["result"]["forfeits"] == [], attacked.replay["result"]["forfeits"]
    normal, under_attack = statistics.median(move_times(baseline, 1)), statistics.median(move_times(attacked, 1))
    print(f"honest bot, median ms per move: {normal} against a random bot, {under_attack} against the CPU hog")
    # Generous: with the fix it measured 0.8-1.1x here under a load of 10-17; without
    # it 1.4x under that load, and several times slower on a quiet machine.
    assert under_attack <= 1.5 * normal + 50, (normal, under_attack, move_times(attacked, 1))

    assert seen["checks"] > 10 and seen["not_frozen"] == [], f"the hog ran between moves at events {seen['not_frozen']}"
    # Held to one core: its quota is one period's worth, and all it used
    # (its children spin whenever it is thawed) fits in one core over the
    # time it was thawed: its own moves.
    assert seen["procs"] >= 7, "the hog's busy children are in its cgroup"
    assert seen["quota"] == str(CPU_PERIOD_US)
    thawed_s = sum(move_times(attacked, 0)) / 1000
    print(f"the hog used {seen['cpu']:.2f} s of CPU in {thawed_s:.2f} s thawed")
    assert seen["cpu"] <= 1.15 * thawed_s + 0.2, (seen["cpu"], thawed_s)
    assert_host_clean(recording.procs)


SPINNER = """
    import sys, threading, time

    def spin():
        while True:
            pass

    threading.Thread(target=spin, daemon=True).start()
    for line in sys.stdin:
        print(time.process_time(), flush=True)
"""


def ask_cpu(proc) -> float:
    proc.stdin.write(b"?\n")
    proc.stdin.flush()
    out = b""
    deadline = time.monotonic() + 20
    while not out.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout_fd], [], [], 1)
        if ready:
            out += os.read(proc.stdout_fd, 4096)
    return float(out)


def spinning_bot(launcher, tmp_path):
    """A sandboxed SPINNER that has answered once: (the process, the CPU
    seconds it has used so far)."""
    if missing("freezer"):
        pytest.skip("the freezer is not in force here (weak mode)")
    root = tmp_path / "bot"
    root.mkdir()
    (root / "bot.py").write_text(textwrap.dedent(SPINNER))
    proc = launcher.spawn(root, ["/usr/bin/python3", "bot.py"], BotLimits())
    try:
        return proc, ask_cpu(proc)
    except BaseException:
        proc.kill()
        raise


def test_a_paused_bot_gets_no_cpu(bwrap_launcher, tmp_path):
    """Frozen, a bot's threads (and children) do not run at all; thawed, they
    run on."""
    proc, first = spinning_bot(bwrap_launcher, tmp_path)
    try:
        proc.pause()
        assert proc.frozen() is True
        time.sleep(1.5)
        proc.resume()
        assert proc.frozen() is False
        after_pause = ask_cpu(proc)
        time.sleep(1.5)
        after_run = ask_cpu(proc)
    finally:
        proc.kill()
    print(f"CPU used: {after_pause - first:.3f} s in 1.5 s frozen, {after_run - after_pause:.3f} s in 1.5 s thawed")
    assert after_pause - first < 0.05, "the bot ran while frozen"
    assert after_run - after_pause > 0.1, "the bot did not run on once thawed"
    assert_host_clean([proc])


THINKER = """
    import sys, time

    for line in sys.stdin:
        until = time.process_time() + float(line)
        while time.process_time() < until:
            pass
        print("done", flush=True)
"""


def cpu_stat(proc) -> dict[str, int]:
    """The cpu cgroup's counters (v1 and v2 both have nr_periods and nr_throttled)."""
    return {k: int(v) for k, v in (line.split() for line in (proc.cgroup("cpu") / "cpu.stat").read_text().splitlines())}


def test_a_single_thread_gets_its_whole_core(bwrap_launcher, tmp_path):
    """One core's worth means a whole core to a one-threaded bot: thinking
    flat out for 1.5 s over five moves (thawed for each, frozen between),
    it is hardly ever throttled. Held to exactly one period's quota, it was
    throttled at about every other 10 ms period boundary (100 times in 2 s,
    1-7% of its time) before the cgroup could carry unused quota over."""
    if missing("cpu", "freezer"):
        pytest.skip(f"not in force here (weak mode): {missing('cpu', 'freezer')}")
    root = tmp_path / "bot"
    root.mkdir()
    (root / "bot.py").write_text(textwrap.dedent(THINKER))
    proc = bwrap_launcher.spawn(root, ["/usr/bin/python3", "bot.py"], BotLimits())
    cpu = proc.cgroup("cpu")
    if not (cpu / "cpu.cfs_burst_us").exists() and not (cpu / "cpu.max.burst").exists():
        proc.kill()
        pytest.skip("this kernel cannot carry quota over (cfs burst: Linux 5.14+)")
    try:
        before = cpu_stat(proc)
        for _ in range(5):
            proc.resume()
            proc.stdin.write(b"0.3\n")
            proc.stdin.flush()
            answer = b""
            while not answer.endswith(b"\n"):  # unbuffered: "done" and "\n" may come apart
                ready, _, _ = select.select([proc.stdout_fd], [], [], 30)
                assert ready, "the bot did not answer"
                answer += os.read(proc.stdout_fd, 100)
            assert answer == b"done\n"
            proc.pause()
            time.sleep(0.05)
        after = cpu_stat(proc)
    finally:
        proc.kill()
    throttled = after["nr_throttled"] - before["nr_throttled"]
    periods = after["nr_periods"] - before["nr_periods"]
    print(f"throttled in {throttled} of {periods} periods")
    # 0 on a quiet machine, a few on a busy one; without the burst 43-50%.
    assert throttled <= periods // 10, f"a one-threaded bot was throttled in {throttled} of {periods} periods"
    assert_host_clean([proc])


def test_a_frozen_bot_is_killed_all_the_same(bwrap_launcher, tmp_path):
    proc, _ = spinning_bot(bwrap_launcher, tmp_path)
    proc.pause()
    held = f"/proc/self/fd/{proc._freeze_fd}"
    assert os.readlink(held).endswith("freezer.state") or os.readlink(held).endswith("cgroup.freeze")
    started = time.monotonic()
    proc.kill()
    assert time.monotonic() - started < 3, "kill waited for a frozen bot"
    assert proc.poll() is not None
    # Its removed cgroup is not kept in the kernel by our descriptor.
    assert os.readlink(held) == "/dev/null"
    assert_host_clean([proc])


def test_a_freeze_racing_a_kill_from_another_thread_is_undone(bwrap_launcher, tmp_path, monkeypatch):
    """pause() takes no lock: a kill() from another thread may thaw the
    cgroup and send SIGKILL while a pause's write is under way. Forced here:
    the pause's FROZEN lands just after the kill's thaw. A frozen task acts
    on SIGKILL only once thawed, so a freeze left standing there would hold
    a dying bot until the clean-up's 5 s wait; the pause must undo it, and
    the cgroup is thawed when the clean-up removes it."""
    import threading

    import cardroom.sandbox.bwrap as launcher_module
    from cardroom.sandbox.cgroups import _Controller

    proc, _ = spinning_bot(bwrap_launcher, tmp_path)
    kill_thawed, pausing = threading.Event(), threading.Event()
    real_pwrite, real_thaw, real_remove = os.pwrite, _Controller.thaw, _Controller.remove
    failures: list[BaseException] = []
    left_frozen: list[bool] = []

    def late_pwrite(fd, data, offset):
        if threading.current_thread() is pauser and data == proc._freeze_value:
            pausing.set()
            assert kill_thawed.wait(10), "kill() never thawed the cgroup"
        return real_pwrite(fd, data, offset)

    def thaw(self, path):
        real_thaw(self, path)
        if threading.current_thread() is not pauser:
            kill_thawed.set()

    def remove(self, path):
        if self.name == "freezer":
            pauser.join(10)  # its pause is over: what did it leave?
            left_frozen.append(self.frozen(path))
        real_remove(self, path)

    def pause():
        try:
            proc.pause()
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    monkeypatch.setattr(launcher_module.os, "pwrite", late_pwrite)
    monkeypatch.setattr(_Controller, "thaw", thaw)
    monkeypatch.setattr(_Controller, "remove", remove)
    pauser = threading.Thread(target=pause)
    pauser.start()
    assert pausing.wait(10)  # past its check of kill(), about to write FROZEN
    proc.kill()
    pauser.join(10)
    assert not failures, failures
    assert left_frozen == [False], "kill() left the bot's cgroup frozen"
    assert proc.poll() is not None
    proc.pause()  # after kill(): nothing to do, and no error
    proc.resume()
    assert_host_clean([proc])


def test_the_cgroup_v2_freezer_stops_a_process_and_kill_reaches_it():
    """cgroup v2's freezer (``cgroup.freeze``), on this machine's unified
    hierarchy (a hybrid host: the v1 freezer is what bots get here)."""
    import subprocess
    import sys

    from cardroom.sandbox.cgroups import _cgroup_mounts, _own_cgroups, _setup_base, _under

    own = _own_cgroups().get("")
    here = next(
        (_under(mp, root, own) for mp, root, fstype, _ in _cgroup_mounts() if fstype == "cgroup2" and own is not None),
        None,
    )
    if here is None or os.geteuid() != 0:
        pytest.skip("no cgroup v2 hierarchy here (or not root)")
    controller, note = _setup_base("freezer", 2, here)
    if controller is None:
        pytest.skip(note)
    leaf = controller.prepare(1920099970, 0)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        controller.join(leaf, spinner.pid)
        controller.freeze(leaf)
        assert controller.frozen(leaf)
        time.sleep(0.3)  # let it settle into the freeze
        before = cpu_seconds([spinner.pid])
        time.sleep(1.0)
        frozen_cpu = cpu_seconds([spinner.pid]) - before
        controller.thaw(leaf)
        assert not controller.frozen(leaf)
        time.sleep(1.0)
        thawed_cpu = cpu_seconds([spinner.pid]) - before - frozen_cpu
        controller.freeze(leaf)
        controller.kill_all(leaf)  # a frozen process is killed all the same
        assert spinner.wait(timeout=5) == -9
    finally:
        if spinner.poll() is None:
            spinner.kill()
            spinner.wait()
        controller.remove(leaf)
    print(f"v2 freezer: {frozen_cpu:.2f} s of CPU in 1 s frozen, {thawed_cpu:.2f} s in 1 s thawed")
    assert frozen_cpu <= 0.02 and thawed_cpu >= 0.05
    assert not leaf.exists()


def test_cpu_time_is_counted_per_cgroup_on_v1_and_v2():
    """What the runner charges between moves: the CPU time of everything in
    the bot's cgroup, read from the v1 cpuacct hierarchy or v2's core
    cpu.stat (this hybrid host has both), frozen or not."""
    import subprocess
    import sys

    from cardroom.sandbox.cgroups import _cgroup_mounts, _detect_controller, _own_cgroups, _setup_base, _under

    if os.geteuid() != 0:
        pytest.skip("not root")
    controllers = []
    v1, note = _detect_controller("cpuacct")
    if v1 is not None:
        controllers.append(v1)
    own = _own_cgroups().get("")
    here = next((_under(mp, root, own) for mp, root, fstype, _ in _cgroup_mounts() if fstype == "cgroup2" and own is not None), None)
    if here is not None:
        v2, _ = _setup_base("cpuacct", 2, here)
        if v2 is not None and v2.version == 2:
            controllers.append(v2)
    if not controllers:
        pytest.skip(f"no cgroup counts CPU here: {note}")
    for controller in controllers:
        leaf = controller.prepare(1920099971, 0)
        spinner = subprocess.Popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass"])
        try:
            before = controller.cpu_usage_ns(leaf)
            controller.join(leaf, spinner.pid)
            assert spinner.wait(timeout=30) == 0
            used_ms = (controller.cpu_usage_ns(leaf) - before) / 1e6
        finally:
            if spinner.poll() is None:
                spinner.kill()
                spinner.wait()
            controller.remove(leaf)
        # The spinner's 200 ms (less what it used before it joined).
        assert 100 <= used_ms <= 400, (controller.version, used_ms)
        assert controller.cpu_usage_ns(leaf) is None  # gone: nothing to read


THINKER_2MS = """\
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "act":
        end = time.perf_counter() + 0.002  # two milliseconds of thought
        while time.perf_counter() < end:
            pass
        reply = {"type": "action", "action": message["legal"][0]}
    elif message["type"] == "start":
        reply = {"type": "ready"}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


def test_thinking_on_the_runners_own_core_is_on_the_bots_clock(bwrap_launcher, tmp_path):
    """A thawed bot on the runner's core can take the core at once, inside
    the thaw: the clock must already run then. Every move of a bot that
    thinks 2 ms is charged at least 2 ms (with the clock started after the
    thaw, about 1 move in 70 was charged almost nothing)."""
    import random

    from cardroom.players import ProtocolPlayer, StartInfo
    from engine import new_game

    root = tmp_path / "bot"
    root.mkdir()
    (root / "bot.py").write_text(THINKER_2MS)
    state = new_game("allegra", 4).new_initial_state()
    rng = random.Random(3)
    while state.is_chance_node() or state.to_act()[0] != 0:
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
        else:
            seat = state.to_act()[0]
            state.apply(seat, state.random_action(seat, rng))
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(saved)})  # the bot inherits the runner's one core
    player = ProtocolPlayer("thinker", "thinker", root, ["/usr/bin/python3", "bot.py"], bwrap_launcher, BotLimits())
    try:
        player.start(StartInfo("allegra", 0, 4, "clock", {}, TimeControl(total_ms=600_000), 1))
        charged = []
        for _ in range(300):
            before = player._used_ms
            player.act(state, 0)
            charged.append(player._used_ms - before)
    finally:
        os.sched_setaffinity(0, saved)
        player.close()
    short = [round(ms, 3) for ms in charged if ms < 2.0]
    assert short == [], f"{len(short)} of {len(charged)} moves of 2 ms were charged less: {short[:10]}"
    # An honest bot uses no CPU between its moves, and is charged none.
    assert player.cpu_between_moves_ms < 1.0, player.cpu_between_moves_ms


def pondering_player(name: str, ms: float, moves: int) -> InProcessPlayer:
    """A built-in-like seat that takes ``ms`` (asleep: no CPU) for each of
    its first ``moves`` decisions, then answers at once."""
    left = [moves]

    def choose(observation, legal, rng):
        if left[0] > 0:
            left[0] -= 1
            time.sleep(ms / 1000)
        return rng.choice(legal)

    return InProcessPlayer(name, choose)


def test_cpu_used_while_frozen_counts_against_the_clock(recording: RecordingLauncher, tmp_path: Path):
    """Issue 25: a bot answered, then made one long system call; its cgroup
    stayed half-frozen (a freeze lands when a task returns to user space)
    and used 3-4 s of CPU a match on the others' time, which no clock
    counted. freeze_dodge keeps a thread in system calls of at least 150 ms
    of CPU each (resized after every call), its answers instant; while the opponents think (asleep, 60 ms
    each), its cgroup's CPU runs on. Counted against its clock, that spends
    its 100 ms bank within a few moves: it forfeits on time, saying why.
    (Before: no forfeit, or at most a plain timeout.) The calls are longer
    than the bot's 40 ms default so that what leaks in a frozen window stays
    well above what a move may use: each move is allowed its wall time on
    the bot's cores, and on a loaded host a move's wall time grows (a run
    with 40 ms calls once ended without a forfeit beside the whole suite;
    so did one with 25 ms of thinking: the frozen windows are 60 ms now;
    and so did runs whose calls, sized once on a slow first measure, were
    10 ms: the bot resizes them now)."""
    if missing("cpuacct", "freezer"):
        pytest.skip(f"not in force here (weak mode): {missing('cpuacct', 'freezer')}")
    control = TimeControl(startup_ms=20_000, per_move_ms=300, overage_ms=100, total_ms=60_000, end_grace_ms=300)
    opponents = [pondering_player("ponder-1", 60, 40), pondering_player("ponder-2", 60, 40)]
    bot = folder_bot(tmp_path, "freeze_dodge.py", {"work_ms": 150})
    record = run_match("allegra", [str(bot), *opponents], seed=7, time=control, launcher=recording)
    assert "freeze dodge:" in record.logs[0], record.logs[0][-2000:]
    assert [f.seat for f in record.forfeits] == [0], record.replay["result"]["forfeits"]
    forfeit = record.forfeits[0]
    assert forfeit.reason == "timeout" and "of CPU between its moves" in forfeit.detail, forfeit.detail
    charged = int(forfeit.detail.split("used ")[1].split(" ms")[0])
    # Most of its 100 ms bank was CPU while frozen. Not all of it need be:
    # a slow move spends the bank too (the first run after a boot, on cold
    # caches, once forfeited here with less than 100 ms charged between moves).
    assert charged >= 50, forfeit.detail
    assert_host_clean(recording.procs)
