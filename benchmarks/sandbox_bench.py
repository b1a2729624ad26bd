#!/usr/bin/env python3
"""What the sandbox costs: plain launcher vs bwrap launcher, side by side.

    python benchmarks/sandbox_bench.py [--starts 20] [--round-trips 2000] [--runtimes python,node,native]

Every figure is taken for each runtime (docs/runtimes.md) with the same trivial
bot in its language (Python, JavaScript, and C built here with gcc), each
against the same program started plainly; and the resident memory of the
bot's process once it has answered ``ready``.

* start: from ``Launcher.spawn`` to the bot's first reply (``ready`` to the
  ``start`` message) for a trivial protocol-v1 bot; median over N starts
  (plus the median of ``kill()``, the clean-up after a match);
* ready to playing: from the ready reply to a bot frozen with its start-up
  over (``pause`` and ``close_startup``: the gate closed, and in the
  sandbox its /proc switched to static texts, decision 267);
* memory: per bot, what its memory cgroup holds once it has answered
  ``ready`` (its processes, the page cache it brought in, its kernel
  memory); per host, the runtimes' image and the tmpfs of the run folders
  (decision 175);
* round trip: one ``act`` message with a real Allegra observation and legal
  list, answered by an ``action``: N decisions, the plain and the sandboxed
  bot running at once and taking turns in blocks of 20; the median of the
  blocks' means. As in a match, each decision thaws the bot first and
  freezes it after its answer (``resume``/``pause``: the cgroup freezer in
  the sandbox, nothing for the plain launcher);
* a decision as a match makes it: ``ProtocolPlayer.act`` on a real state
  (building the observation and legal list included), the same way;
* both measured twice, with the bots on the runner's core and on the other
  core (``sched_setaffinity``). A pipe round trip between two cores costs
  about three times one on a single core (the wake-up crosses cores), so
  left to the scheduler the figure jumps between about 21 and 60 us from
  run to run, for the plain bot as for the sandboxed one: each column is
  compared with the other at the same placement;
* fairness: an honest bot needing a fixed amount of CPU per move, in
  Allegory matches through the sandbox, against a random bot, against a
  one-core thinker (one thread spinning 0.15 s a move), against a CPU hog
  (the same plus busy children that each call setsid()) and against the
  same two as native programs (cpu_hog.c, and built without its children
  for the thinker); its median ms per move in each
  (``--fairness-rounds`` matches each, taking turns).

Both columns are measured in turns (start, start, …), so that a busy moment
of the machine weighs on both alike.

Goals: sandboxed start within 1.5x of plain, round trip within 1.2x, the
honest bot's median against the hog within 1.2x of its median against the
random bot.
Needs root and bubblewrap for the sandboxed column (see docs/bot-authors.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclasses import dataclass  # noqa: E402

from cardroom.launch import BotLimits, BotProcess, Launcher, PlainLauncher  # noqa: E402
from cardroom.runtimes import runtime_argv, runtime_limits  # noqa: E402

TRIVIAL_BOT = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply = {"type": "ready"}
    elif message["type"] == "act":
        reply = {"type": "action", "action": message["legal"][0]}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""

TRIVIAL_JS = """const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "start") process.stdout.write(JSON.stringify({ type: "ready" }) + "\\n");
  else if (message.type === "act") process.stdout.write(JSON.stringify({ type: "action", action: message.legal[0] }) + "\\n");
  else rl.close();
});
"""
RUNTIMES = ("python", "node", "native")


class SeatLauncher(Launcher):
    """The sandbox starting every bot in one seat (``--seat``): seat 0 is
    the image itself, any other seat its own copy of it (decision 268)."""

    def __init__(self, inner: Launcher, seat: int):
        self.inner, self.seat, self.name, self.isolated = inner, seat, inner.name, inner.isolated

    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> BotProcess:
        return self.inner.spawn(root, argv, limits, self.seat)


NATIVE_SOURCES = Path(__file__).resolve().parent.parent / "tests" / "sandbox"


@dataclass(frozen=True)
class BenchBot:
    """The trivial bot of one runtime: its folder, command line and limits."""

    runtime: str
    root: Path
    argv: list[str]
    limits: BotLimits


def bench_bot(runtime: str, folder: Path) -> BenchBot:
    """Write (or, for native, build with gcc) the trivial bot of ``runtime``."""
    import subprocess

    folder.mkdir()
    os.chmod(folder, 0o755)
    if runtime == "python":
        entry = "bot.py"
        (folder / entry).write_text(TRIVIAL_BOT)
    elif runtime == "node":
        entry = "bot.js"
        (folder / entry).write_text(TRIVIAL_JS)
    else:
        entry = "bot"
        source = NATIVE_SOURCES / "runtimes" / "first_legal.c"
        subprocess.run(["gcc", "-O2", "-o", str(folder / entry), str(source)], check=True, capture_output=True)
    limits = runtime_limits(runtime, BotLimits())
    return BenchBot(runtime, folder, runtime_argv(runtime, entry, limits), limits)


def build_native(name: str, folder: Path, children: int | None = None) -> Path:
    """A native package of tests/sandbox/hostile/NAME.c, built with gcc
    (``children``: the CPU hog's number of busy children, 0 for a one-core
    thinker)."""
    import subprocess

    label = name if children is None else f"{name}-{children}"
    package = folder / label
    package.mkdir()
    os.chmod(package, 0o755)
    defines = [] if children is None else [f"-DCHILDREN={children}"]
    source = str(NATIVE_SOURCES / "hostile" / f"{name}.c")
    subprocess.run(["gcc", "-O2", *defines, "-o", str(package / "bot"), source], check=True, capture_output=True)
    (package / "cardroom.toml").write_text(f'entry = "bot"\nprotocol = 1\nruntime = "native"\nname = "{label}-c"\n')
    return package


def resident_kib(proc: BotProcess) -> int:
    """VmRSS of the bot's own process (in the sandbox: pid 1 of its namespace)."""
    pid = getattr(proc, "inner_pid", proc.pid)
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


START = {
    "type": "start",
    "protocol": 1,
    "game": "allegra",
    "seat": 0,
    "num_players": 4,
    "match_id": "bench",
    "options": {},
    "time": {"per_move_ms": 1000, "total_ms": 60000, "overage_ms": 10000},
}


def sample_state():
    """A real mid-game Allegra state (4 players) where seat 0 is to act."""
    from engine import new_game

    game = new_game("allegra", 4)
    state = game.new_initial_state()
    rng = random.Random(7)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        decisions += 1
        if decisions >= 40 and seat == 0:
            return state
        state.apply(seat, state.random_action(seat, rng))
    raise RuntimeError("the game ended before the sample decision")


PLACEMENTS = ("same core", "across cores")


class Placement:
    """Pins the runner (this thread) and the bots it spawns: ``spawning()``
    before the bots start (they inherit the runner's core), ``measuring()``
    once they run (the runner stays, or moves to the other core)."""

    def __init__(self, where: str):
        self.where = where
        self.saved = os.sched_getaffinity(0)
        cores = sorted(self.saved)
        self.bots_core = cores[0]
        self.runner_core = cores[0] if where == "same core" or len(cores) < 2 else cores[1]

    def spawning(self) -> None:
        os.sched_setaffinity(0, {self.bots_core})

    def measuring(self) -> None:
        os.sched_setaffinity(0, {self.runner_core})

    def restore(self) -> None:
        os.sched_setaffinity(0, self.saved)


def bench_player_decisions(launchers: list[tuple[str, Launcher]], bot: BenchBot, n: int, place: Placement) -> dict[str, float]:
    """Microseconds per decision as a match makes it: ``ProtocolPlayer.act``
    (thaw, build and send the observation and legal list, read and parse the
    answer, freeze), the bots taking turns in blocks of 20; the median of the
    blocks' means."""
    from cardroom.players import ProtocolPlayer, StartInfo, TimeControl

    state = sample_state()
    players = {}
    place.spawning()
    try:
        for name, launcher in launchers:
            player = ProtocolPlayer(name, name, bot.root, bot.argv, launcher, bot.limits)
            players[name] = player
            player.start(StartInfo("allegra", 0, 4, "bench", {}, TimeControl(total_ms=3_600_000), 1))
        place.measuring()
        for player in players.values():
            for _ in range(50):  # warm up
                player.act(state, 0)
        blocks: dict[str, list[float]] = {name: [] for name in players}
        for _ in range(max(1, n // 20)):
            for name, player in players.items():
                t0 = time.perf_counter()
                for _ in range(20):
                    player.act(state, 0)
                blocks[name].append((time.perf_counter() - t0) * 1e6 / 20)
        return {name: statistics.median(values) for name, values in blocks.items()}
    finally:
        place.restore()
        for player in players.values():
            player.close()


def act_message() -> bytes:
    """The ``act`` message of ``sample_state`` for seat 0."""
    state = sample_state()
    message = {"type": "act", "observation": state.observation(0), "legal": state.legal_actions(0), "time_left_ms": 55000}
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "sandbox" / "hostile"


class Wire:
    def __init__(self, proc: BotProcess):
        self.proc = proc
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def line(self, timeout: float = 10.0) -> bytes:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout_fd], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("no reply from the bot")
            chunk = os.read(self.proc.stdout_fd, 1 << 16)
            if not chunk:
                raise EOFError("the bot closed its output")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def charged_mib(proc: BotProcess) -> float:
    """What the bot's memory cgroup holds once it has answered ready (its
    processes, the page cache it brought in, its kernel memory); 0 for a
    bot without one (the plain launcher)."""
    cgroup = getattr(proc, "cgroup", lambda name: None)("memory")
    for name in ("memory.usage_in_bytes", "memory.current"):  # cgroup v1, v2
        if cgroup is not None and (cgroup / name).exists():
            return int((cgroup / name).read_text()) / 2**20
    return 0.0


def host_memory(launcher: Launcher) -> str:
    """Memory per host: the runtimes' image, and the tmpfs of the run
    folders and file cache (decision 175), as their file systems count it."""
    from cardroom.sandbox import runs_dir

    view = getattr(launcher, "image", None)
    if view is None:
        return "no image (not the bwrap launcher)"

    def used(folder: Path) -> float:
        st = os.statvfs(folder)
        return (st.f_blocks - st.f_bfree) * st.f_frsize / 2**20

    from cardroom.sandbox.image import size_of

    trees = ", ".join(f"{name} {size_of(view.tree(name))[0] / 2**20:.0f}" for name in ("python", "node", "native"))
    return (
        f"image {view.size_bytes / 2**20:.0f} MiB in {view.files} files ({view.how}; in use by its file system "
        f"{used(view.root):.0f} MiB; trees, shared files counted in each: {trees} MiB); "
        f"run folders and file cache {used(runs_dir()):.1f} MiB"
    )


def start_once(launcher: Launcher, bot: BenchBot) -> tuple[float, float, float, float, float]:
    """(ms from spawn to the ready reply, ms to kill and clean up, MiB
    resident after ready, MiB its memory cgroup holds then, us from the
    ready reply to a bot frozen and ready to play: the freeze, and the
    start-up gate closed and the /proc switched, decision 267)."""
    start_line = (json.dumps(START) + "\n").encode()
    t0 = time.perf_counter()
    proc = launcher.spawn(bot.root, bot.argv, bot.limits)
    wire = Wire(proc)
    wire.send(start_line)
    assert json.loads(wire.line())["type"] == "ready"
    t1 = time.perf_counter()
    proc.pause()  # as the players do after the ready reply
    proc.close_startup()
    t_playing = time.perf_counter()
    rss = resident_kib(proc) / 1024
    charged = charged_mib(proc)
    t_kill = time.perf_counter()
    proc.kill()
    t2 = time.perf_counter()
    return (t1 - t0) * 1000, (t2 - t_kill) * 1000, rss, charged, (t_playing - t1) * 1e6


def bench_starts(launchers: list[tuple[str, Launcher]], bot: BenchBot, runs: int) -> dict[str, tuple[float, ...]]:
    """Medians; the launchers take turns, so that a slow moment of the
    machine hits both columns alike."""
    samples: dict[str, list[tuple[float, ...]]] = {name: [] for name, _ in launchers}
    order = random.Random(0)
    for _ in range(runs):
        # in a new order each time: a start right after a sandboxed bot's
        # clean-up is slower (its cgroups and mounts still going: 1.2-1.4x
        # at load 6-8), and each column must follow each other alike
        for name, launcher in order.sample(launchers, len(launchers)):
            samples[name].append(start_once(launcher, bot))
    return {name: tuple(statistics.median(run[i] for run in runs_) for i in range(5)) for name, runs_ in samples.items()}


FREEZE = True  # --no-freeze: measure the round trip without it, for comparison


def decide(wire: Wire, act: bytes) -> None:
    """One decision as a match makes it (cardroom.players): the act message
    into the pipe while the bot is frozen, thaw, answer, freeze."""
    wire.send(act)
    if FREEZE:
        wire.proc.resume()
    wire.line()
    if FREEZE:
        wire.proc.pause()


def one_core_thinker(folder: Path) -> Path:
    """The CPU hog without its children (one thread spinning as long as the
    hog does a move: fair use of one core), made from the hog itself so that
    the two cannot drift apart."""
    hog = (HOSTILE / "cpu_hog.py").read_text()
    thinker = hog.replace("\nCHILDREN = 6\n", "\nCHILDREN = 0\n")
    assert thinker != hog, "cpu_hog.py no longer sets CHILDREN = 6"
    path = folder / "one_core_thinker.py"
    path.write_text(thinker)
    return path


def bench_fairness(launcher: Launcher, rounds: int, native: bool) -> dict[str, float]:
    """The honest bot's median ms per move against a random bot, against a
    one-core thinker (spinning one thread 0.15 s a move: fair use of CPU),
    against the CPU hog (the same, plus six busy setsid() children) and,
    with ``native``, against that hog in C, in Allegory matches through
    ``launcher`` (taking turns)."""
    from cardroom.runner import TimeControl, run_match

    honest = str(HOSTILE / "honest_thinker.py")
    clock = TimeControl(startup_ms=30_000, per_move_ms=20_000, overage_ms=60_000, total_ms=600_000)
    with tempfile.TemporaryDirectory(prefix="cardroom-bench-") as tmp:
        os.chmod(tmp, 0o755)
        opponents = {"random": "builtin:random", "one core": str(one_core_thinker(Path(tmp))), "hog": str(HOSTILE / "cpu_hog.py")}
        if native:
            # The same pair in C: what a native opponent's fair use of its core
            # does, beside what the attack adds to it.
            opponents["native one core"] = str(build_native("cpu_hog", Path(tmp), children=0))
            opponents["native hog"] = str(build_native("cpu_hog", Path(tmp)))
        times: dict[str, list[int]] = {label: [] for label in opponents}
        for i in range(rounds):
            for label, opponent in opponents.items():
                record = run_match("allegory", [opponent, honest], seed=100 + i, time=clock, launcher=launcher)
                times[label] += [e["ms"] for e in record.replay["events"] if e["by"] == 1 and not e.get("forfeit")]
    return {label: statistics.median(values) for label, values in times.items()}


def bench_round_trips(
    launchers: list[tuple[str, Launcher]], bot: BenchBot, n: int, act: bytes, place: Placement
) -> dict[str, float]:
    """Microseconds per act/action round trip: all the bots run at once and
    take turns in blocks of 20 decisions (so that the machine's slow moments
    hit every column alike); the median over the blocks of each bot's mean."""
    wires: dict[str, Wire] = {}
    procs = []
    place.spawning()
    try:
        for name, launcher in launchers:
            proc = launcher.spawn(bot.root, bot.argv, bot.limits)
            procs.append(proc)
            wire = Wire(proc)
            wire.send((json.dumps(START) + "\n").encode())
            wire.line()
            proc.pause()  # as a match has it from the ready reply on
            proc.close_startup()
            if not FREEZE:
                proc.resume()
            wires[name] = wire
        place.measuring()
        for wire in wires.values():
            for _ in range(50):  # warm up
                decide(wire, act)
        blocks: dict[str, list[float]] = {name: [] for name in wires}
        for _ in range(max(1, n // 20)):
            for name, wire in wires.items():
                t0 = time.perf_counter()
                for _ in range(20):
                    decide(wire, act)
                blocks[name].append((time.perf_counter() - t0) * 1e6 / 20)
        return {name: statistics.median(values) for name, values in blocks.items()}
    finally:
        place.restore()
        for proc in procs:
            proc.kill()


def breakdown(launcher: Launcher, bot: BenchBot, runs: int) -> None:
    """Where a sandboxed start goes: medians of the launcher's steps."""
    import subprocess

    import cardroom.sandbox.bwrap as sb
    import cardroom.sandbox.cgroups as sb_cgroups

    samples: dict[str, list[float]] = {}
    originals = []

    joins = [0]  # the cgroup moves of this start so far

    def timed(owner, name: str, label: str) -> None:
        original = getattr(owner, name)
        originals.append((owner, name, original))

        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                shown = label
                if name == "join":  # the first move is the one that may wait for a grace period
                    joins[0] += 1
                    shown = "move the bot into its first cgroup" if joins[0] == 1 else "... into each further cgroup"
                samples.setdefault(shown, []).append((time.perf_counter() - t0) * 1000)

        setattr(owner, name, wrapper)

    timed(sb, "lease_uid", "lease a uid")
    timed(sb, "_copy_bot_files", "copy the bot's files")
    timed(sb_cgroups._Controller, "prepare", "prepare cgroups (each)")
    timed(sb, "mount_bot_tmpfs", "mount /tmp and /dev/shm")
    timed(subprocess, "Popen", "start bot-exec+bwrap (Popen)")
    timed(sb, "_read_child_pid", "wait for the bot's pid (--info-fd)")
    timed(sb_cgroups._Controller, "join", "")
    try:
        spawn, reply = [], []
        for _ in range(runs):
            start_line = (json.dumps(START) + "\n").encode()
            joins[0] = 0
            t0 = time.perf_counter()
            proc = launcher.spawn(bot.root, bot.argv, bot.limits)
            t1 = time.perf_counter()
            wire = Wire(proc)
            wire.send(start_line)
            wire.line()
            t2 = time.perf_counter()
            proc.kill()
            spawn.append((t1 - t0) * 1000)
            reply.append((t2 - t1) * 1000)
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    print(f"sandboxed start of the {bot.runtime} bot, step by step (median ms):")
    for label, values in samples.items():
        print(f"  {label:<40}{statistics.median(values):>8.2f}")
    print(f"  {'spawn() in all':<40}{statistics.median(spawn):>8.2f}")
    print(f"  {'then: bot start-up to its first reply':<40}{statistics.median(reply):>8.2f}")
    cpu = bwrap_cpu(launcher, bot, runs)
    print(f"  {'bwrap alone, CPU (see bwrap_cpu)':<40}{statistics.median(cpu):>8.2f}")


def bwrap_cpu(launcher: Launcher, bot: BenchBot, runs: int) -> list[float]:
    """bwrap's own CPU time (ms) per start: the launcher's command line for
    this bot (its mounts, its filter), run as a pool uid with /usr/bin/true
    in place of the bot's program, started as the launcher starts it
    (through bot-exec, in a network namespace of its pool, where it has
    them); user and system time of bwrap, its child and true, from wait4
    (exact: the kernel's runtime, not ticks)."""
    import subprocess

    from cardroom.sandbox import lease_uid, state_dir
    from cardroom.sandbox.seccomp import filter_fd
    from cardroom.sandbox.tmpfs import mount_bot_tmpfs, unmount_bot_tmpfs

    lease = lease_uid()
    uid = lease.uid
    tmpfs = mount_bot_tmpfs(uid, bot.limits) if launcher.tmpfs_mounts else None  # type: ignore[attr-defined]
    info_r, info_w = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(info_r, False)
    samples = []
    pool = getattr(launcher, "netns", None)
    netns_fd = pool.acquire() if pool is not None else None
    try:
        for _ in range(runs):
            seccomp = launcher.seccomp  # type: ignore[attr-defined]
            seccomp_fd = filter_fd(seccomp.program) if seccomp is not None else None  # read to its end by each bwrap
            try:
                # As a start with a hand-over makes it (decision 177: the
                # binds of /proc for a procfs the worker then remounts).
                subset = {"proc_subset": True} if getattr(launcher, "proc_subset", False) else {}
                argv = launcher.argv(  # type: ignore[attr-defined]
                    bot.argv, bot.limits, state_dir() / "empty", info_w, None, tmpfs, seccomp_fd, netns_joined=netns_fd is not None, **subset
                )
                # (The image holds no true(1): bound in for this, one mount more.)
                argv = argv[: argv.index("--")] + ["--ro-bind", "/usr/bin/true", "/tmp/true", "--", "/tmp/true"]
                fds = [info_w] + ([seccomp_fd] if seccomp_fd is not None else [])
                fds += [] if netns_fd is None else [netns_fd]
                argv, as_uid = launcher.as_bot(argv, uid, [], netns_fd)  # type: ignore[attr-defined]
                popen = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd="/",
                    pass_fds=fds,
                    **as_uid,
                )
                _, status, usage = os.wait4(popen.pid, 0)
                popen.returncode = os.waitstatus_to_exitcode(status)
                if popen.returncode != 0:
                    raise RuntimeError(f"bwrap exited with {popen.returncode}: {' '.join(argv)}")
                samples.append((usage.ru_utime + usage.ru_stime) * 1000)
            finally:
                if seccomp_fd is not None:
                    os.close(seccomp_fd)
            try:
                os.read(info_r, 1 << 16)  # bwrap's child-pid report
            except BlockingIOError:
                pass
    finally:
        if netns_fd is not None:
            pool.release(netns_fd, clean=True)  # every run has exited
        os.close(info_r)
        os.close(info_w)
        if tmpfs is not None:
            unmount_bot_tmpfs(tmpfs[0].parent)
        lease.release()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--breakdown", action="store_true", help="also time the steps of a sandboxed start, and bwrap's own CPU")
    parser.add_argument("--no-freeze", action="store_true", help="round trips without freezing and thawing (comparison)")
    parser.add_argument("--fairness-rounds", type=int, default=5, help="matches per opponent for the fairness figure")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES), help="the runtimes to measure, comma-separated (default: all)")
    parser.add_argument(
        "--seat", type=int, default=-1, help="also a sandboxed column for a bot in this seat (seat 0: the image; others: its copy)"
    )
    args = parser.parse_args(argv)
    global FREEZE
    FREEZE = not args.no_freeze

    from cardroom.sandbox import SandboxUnavailable, get_launcher, probe

    launchers: list[tuple[str, Launcher]] = [("plain", PlainLauncher())]
    try:
        launchers.append(("bwrap", get_launcher("bwrap")))
        if args.seat >= 0:
            launchers.append((f"seat {args.seat}", SeatLauncher(launchers[1][1], args.seat)))
    except SandboxUnavailable as exc:
        print(f"sandboxed column skipped: {exc}", file=sys.stderr)
    report = probe()
    print(report.describe())
    print()
    act = act_message()
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    unknown = sorted(set(runtimes) - set(RUNTIMES))
    if unknown:
        parser.error(f"unknown runtime(s) {', '.join(unknown)}: the runtimes are {', '.join(RUNTIMES)}")
    results: dict[str, dict[str, tuple[float, ...]]] = {}
    with tempfile.TemporaryDirectory(prefix="cardroom-bench-") as tmp:
        os.chmod(tmp, 0o755)
        for runtime in runtimes:
            bot = bench_bot(runtime, Path(tmp) / runtime)
            bench_starts(launchers, bot, 2)  # warm-up (page cache)
            starts = bench_starts(launchers, bot, args.starts)
            round_trips = {where: bench_round_trips(launchers, bot, args.round_trips, act, Placement(where)) for where in PLACEMENTS}
            decisions = {where: bench_player_decisions(launchers, bot, args.round_trips, Placement(where)) for where in PLACEMENTS}
            results[runtime] = {
                name: (
                    *starts[name],
                    *(round_trips[where][name] for where in PLACEMENTS),
                    *(decisions[where][name] for where in PLACEMENTS),
                )
                for name, _ in launchers
            }
            if args.breakdown and len(launchers) > 1:
                breakdown(launchers[1][1], bot, args.starts)
                print()
    fairness = (
        bench_fairness(launchers[1][1], args.fairness_rounds, native="native" in runtimes)
        if len(launchers) > 1 and args.fairness_rounds
        else None
    )

    print(f"act message: {len(act)} bytes; {args.starts} starts, {args.round_trips} round trips"
          f"{' (no freezing)' if args.no_freeze else ', each thawed before and frozen after'}")  # fmt: skip
    rows = [
        ("start to first reply (median, ms)", 0, 1.5),
        ("kill and clean up (median, ms)", 1, None),
        ("resident after ready (median, MiB)", 2, None),
        ("its memory cgroup after ready (MiB)", 3, None),
        ("ready to playing (median, us)", 4, None),
        ("round trip, same core (median, us)", 5, 1.2),
        ("round trip, across cores (median, us)", 6, 1.2),
        ("ProtocolPlayer.act, same core (us)", 7, None),
        ("ProtocolPlayer.act, across cores (us)", 8, None),
    ]
    ok = True
    for runtime, columns in results.items():
        print()
        others = [name for name, _ in launchers[2:]]
        print(f"{runtime:<38}{'plain':>10}{'bwrap':>10}{'ratio':>8}{'goal':>8}" + "".join(f"{o:>10}{'/bwrap':>8}" for o in others))
        for label, index, goal in rows:
            plain = columns["plain"][index]
            if "bwrap" in columns:
                sandboxed = columns["bwrap"][index]
                ratio = sandboxed / plain if plain else float("nan")
                verdict = "" if goal is None else (f"<{goal}x" if ratio <= goal else "MISSED")
                ok = ok and (goal is None or ratio <= goal)
                print(
                    f"{label:<38}{plain:>10.2f}{sandboxed:>10.2f}{ratio:>7.2f}x{verdict:>8}"
                    + "".join(f"{columns[o][index]:>10.2f}{columns[o][index] / sandboxed if sandboxed else 0:>7.2f}x" for o in others)
                )
            else:
                print(f"{label:<38}{plain:>10.2f}{'-':>10}")
    column = "bwrap" if len(launchers) > 1 else "plain"
    if "python" in results:
        python_start = results["python"][column][0]
        print()
        print(f"start to first reply ({column}): " + ", ".join(
            f"{runtime} {columns[column][0]:.1f} ms ({columns[column][0] / python_start:.2f}x python)" for runtime, columns in results.items()
        ))  # fmt: skip
    if fairness is not None:
        normal, one_core, attacked = fairness["random"], fairness["one core"], fairness["hog"]
        ratio = attacked / normal if normal else float("nan")
        ok = ok and ratio <= 1.2
        print()
        print(f"fairness ({args.fairness_rounds} Allegory matches each, honest bot's median ms per move, sandboxed):")
        print(f"  against a random bot {normal:.0f} ms, against a one-core thinker {one_core:.0f} ms, "
              f"against a CPU hog {attacked:.0f} ms")  # fmt: skip
        print(f"  hog / random {ratio:.2f}x {'<1.2x' if ratio <= 1.2 else 'MISSED'}; "
              f"hog / one-core thinker {attacked / one_core if one_core else float('nan'):.2f}x "
              "(what the attack adds to an opponent's fair use of one core)")  # fmt: skip
        if "native hog" in fairness:
            native = fairness["native hog"]
            native_ratio = native / normal if normal else float("nan")
            ok = ok and native_ratio <= 1.2
            native_one_core = fairness["native one core"]
            print(f"  against the CPU hog in C (native) {native:.0f} ms: native hog / random {native_ratio:.2f}x "
                  f"{'<1.2x' if native_ratio <= 1.2 else 'MISSED'}; against a one-core thinker in C {native_one_core:.0f} ms, "
                  f"native hog / it {native / native_one_core if native_one_core else float('nan'):.2f}x")  # fmt: skip
    if len(launchers) > 1:
        print(f"memory per host: {host_memory(launchers[1][1])}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
