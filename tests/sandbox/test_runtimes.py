"""Every runtime in the REAL sandbox: native (C built by gcc here) and node
bots play full matches whose replays verify, a native bot's first
instructions already run inside its cgroups, node runs with the memory
cgroup (not RLIMIT_AS) as its limit and libuv falls back from io_uring,
numpy is importable read-only with one BLAS thread, and a native bot that
needs a library the runtime lacks forfeits naming it."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from cardroom.launch import BotLimits
from cardroom.runner import TimeControl, run_match
from cardroom.runtimes import runtime_argv, runtime_limits
from engine.replay import verify

from .conftest import RecordingLauncher, assert_host_clean
from .native import HERE, compile_c, native_package, node_package

pytestmark = pytest.mark.sandbox

# A small overage bank: CPU a bot's cgroup is charged between its moves
# counts against it (decision 115), and in a virtual machine a stalled vCPU
# is charged to whatever task it was running; with no bank at all, one such
# stall of a few ms at the wrong moment forfeited an honest seat (about one
# match in 60, in a loop here).
TIME = TimeControl(startup_ms=15_000, per_move_ms=2_000, overage_ms=1_000, total_ms=60_000, end_grace_ms=500)
MiB = 1024 * 1024


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("native")
    return {
        "dynamic": compile_c("first_legal.c", out / "dynamic"),
        "static": compile_c("first_legal.c", out / "static", "-static"),
    }


@pytest.fixture
def clean_host(recording: RecordingLauncher):
    yield recording
    assert_host_clean(recording.procs)


def stderr_until(fd: int, marker: bytes, timeout: float = 15.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no {marker!r} on stderr within {timeout} s (got {out!r})"
        chunk = os.read(fd, 1 << 16)
        assert chunk, f"stderr ended before {marker!r} (got {out!r})"
        out += chunk
    return out


def test_a_native_bots_first_instruction_runs_inside_its_cgroups(clean_host, built, tmp_path):
    """first_legal.c reads /proc/self/cgroup before anything else: every
    controller in force already names the bot's own cgroup (bwrap's
    --block-fd held it until they were set). Three starts, to give a race a
    chance to show."""
    root = native_package(tmp_path / "bot", built["dynamic"])
    for _ in range(3):
        proc = clean_host.spawn(root, runtime_argv("native", "bot", BotLimits()), BotLimits())
        try:
            text = stderr_until(proc.stderr_fd, b"\n--\n").decode()
        finally:
            proc.kill()
        lines = text.split("first cgroups:\n", 1)[1].split("--")[0].splitlines()
        assert proc.cgroups, "no cgroups in force (the weak mode): nothing to hold the bot for"
        for controller, path in proc._cgroups:
            if controller.version == 1:
                mine = [line for line in lines if controller.name in line.split(":")[1].split(",")]
            else:
                mine = [line for line in lines if line.startswith("0::")]
            assert mine and all(line.endswith("/" + path.name) for line in mine), (controller.name, path, lines)


def test_native_and_node_bots_play_a_full_match(clean_host, built, tmp_path):
    bots = [
        native_package(tmp_path / "dynamic", built["dynamic"]),
        native_package(tmp_path / "static", built["static"]),
        node_package(tmp_path / "node", HERE / "runtimes" / "first_legal.js"),
        "builtin:random",
    ]
    record = run_match("allegra", [str(b) for b in bots], seed=5, time=TIME, launcher=clean_host)
    assert record.replay["result"]["forfeits"] == [], record.logs
    verify(record.replay)
    node_log = record.logs[2]
    # libuv's file read works (io_uring refused by the filter: it fell back).
    assert re.search(r"read own file: \d+ bytes", node_log), node_log
    # The memory cgroup is node's limit, not RLIMIT_AS (V8 reserves far more
    # than it uses: a WebAssembly memory alone reserves 10 GiB).
    assert "Max address space unlimited unlimited bytes" in node_log and "wasm ok" in node_log, node_log
    heap = int(re.search(r"heap limit (\d+)", node_log).group(1))
    # --max-old-space-size: 3/5 of the bot's memory (V8's limit adds the young generation's 48 MiB)
    assert 0.6 * 512 * MiB < heap < 0.75 * 512 * MiB, heap
    # One V8 worker and one libuv thread whatever the host's cores (main, the
    # two, node's signal watchdog): every thread counts against the 32
    # processes and is frozen at every move.
    threads = int(re.search(r"threads (\d+)", node_log).group(1))
    assert threads <= 5, node_log
    assert "first cgroups:" in record.logs[0] and "first cgroups:" in record.logs[1]


def test_the_same_memory_cgroup_for_every_runtime(clean_host, built, tmp_path):
    """The documented per-bot memory is the same whatever the runtime."""
    limits = BotLimits()
    native = native_package(tmp_path / "native", built["static"])
    node = node_package(tmp_path / "node", HERE / "runtimes" / "first_legal.js")
    python = tmp_path / "python"
    python.mkdir()
    (python / "main.py").write_text("import sys; sys.stdin.read()\n")
    seen = []
    for root, runtime, entry in ((native, "native", "bot"), (node, "node", "main.js"), (python, "python", "main.py")):
        runtime_limit = runtime_limits(runtime, limits)
        proc = clean_host.spawn(root, runtime_argv(runtime, entry, runtime_limit), runtime_limit)
        try:
            memory = proc.cgroup("memory")
            if memory is None:
                pytest.skip("no memory cgroup here (the weak mode)")
            name = "memory.limit_in_bytes" if (memory / "memory.limit_in_bytes").exists() else "memory.max"
            seen.append(int((memory / name).read_text()))
        finally:
            proc.kill()
    assert len(set(seen)) == 1 and seen[0] >= limits.memory_bytes, seen


NUMPY_BOT = """
    import json, os, sys
    import numpy
    a = numpy.random.default_rng(1).random((300, 300))
    product = a @ a.T
    out = {
        "numpy": numpy.__file__,
        "threads": len(os.listdir("/proc/self/task")),
        "dist_packages": sorted(os.listdir("/usr/lib/python3/dist-packages")),
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")},
        "symmetric": bool(numpy.allclose(product, product.T)),
    }
    try:
        open(os.path.join(os.path.dirname(numpy.__file__), "planted.py"), "w")
        out["writable"] = True
    except OSError:
        out["writable"] = False
    json.dump(out, sys.stdout)
"""


def test_numpy_is_importable_read_only_with_one_blas_thread(clean_host, tmp_path):
    if not Path("/usr/lib/python3/dist-packages/numpy").is_dir():
        pytest.skip("python3-numpy is not installed (scripts/install-system-packages.sh installs it)")
    root = tmp_path / "bot"
    root.mkdir()
    (root / "main.py").write_text(textwrap.dedent(NUMPY_BOT))
    proc = clean_host.spawn(root, runtime_argv("python", "main.py", BotLimits()), BotLimits())
    try:
        out = b""
        while True:
            ready, _, _ = select.select([proc.stdout_fd], [], [], 30)
            assert ready, "the numpy bot did not finish"
            chunk = os.read(proc.stdout_fd, 1 << 16)
            if not chunk:
                break
            out += chunk
        os.set_blocking(proc.stderr_fd, False)
        try:
            err = os.read(proc.stderr_fd, 1 << 16).decode(errors="replace")
        except BlockingIOError:
            err = ""
    finally:
        proc.kill()
    assert out, err
    info = json.loads(out)
    assert info["numpy"] == "/usr/lib/python3/dist-packages/numpy/__init__.py"
    assert info["symmetric"] and not info["writable"]
    assert info["threads"] == 1, info  # no BLAS thread pool
    assert info["env"] == {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert [n for n in info["dist_packages"] if not n.startswith("numpy")] == [], info["dist_packages"]


def test_a_missing_library_is_named(clean_host, tmp_path):
    """A program linked against a library the sandbox does not have: its
    seat forfeits at start-up, and the detail names the library (ldd run in
    the sandbox), with the fix."""
    lib_source = tmp_path / "libcardroomtest.c"
    lib_source.write_text("int cardroom_test_answer(void) { return 42; }\n")
    main_source = tmp_path / "needs.c"
    main_source.write_text("int cardroom_test_answer(void);\nint main(void) { return cardroom_test_answer(); }\n")
    gcc = shutil.which("gcc") or pytest.skip("gcc is not installed")
    subprocess.run([gcc, "-shared", "-fPIC", "-o", tmp_path / "libcardroomtest.so.1", lib_source], check=True)
    program = tmp_path / "needs"
    subprocess.run([gcc, "-o", program, main_source, "-L", tmp_path, "-l:libcardroomtest.so.1"], check=True)
    bot = native_package(tmp_path / "bot", program)
    record = run_match("allegra", [str(bot), "builtin:random"], seed=1, time=TIME, launcher=clean_host)
    [forfeit] = record.forfeits
    assert forfeit.seat == 0 and forfeit.reason == "crash", forfeit
    assert (
        "exited with status 127: the program needs libcardroomtest.so.1, which the native runtime lacks (ldd in the sandbox)"
        in forfeit.detail
    ), forfeit


def test_a_runtime_not_installed_is_the_platforms_problem(bwrap_launcher, tmp_path):
    """A worker without node: a SandboxError (the match is retried), never a
    forfeit of the bot."""
    from cardroom.sandbox import SandboxError

    with pytest.raises(SandboxError, match="the bot interpreter /usr/bin/cardroom-no-such-node is not installed"):
        bwrap_launcher.spawn(tmp_path, ["/usr/bin/cardroom-no-such-node", "main.js"], BotLimits())
