"""The bwrap launcher at process level: what a bot sees inside, its limits,
the clean-up, the uid pool, the modes and the probe's messages."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

import cardroom.sandbox as sandbox
import engine
from cardroom.launch import BotLimits, PlainLauncher
from cardroom.runner import TimeControl, run_match
from cardroom.runtimes import runtime_argv, runtime_limits
from cardroom.sandbox import (
    BOT_ENV,
    NONE_WARNING,
    SandboxError,
    SandboxUnavailable,
    UnsandboxedLauncher,
    get_launcher,
    lease_uid,
    processes_of_uid,
    uid_range,
)
from cardroom.sandbox.config import SDK_DIR
from cardroom.sandbox.reaping import _pidfd_open, _status_fields, _wait_pidfd

from .conftest import REPO, assert_host_clean, leased_by_this_process, uid_is_free, zombie_children
from .native import HERE, compile_c, native_package, node_package

MiB = 1024 * 1024


DEFAULT_LIMITS = BotLimits()


def start(launcher, tmp_path: Path, code: str, limits: BotLimits = DEFAULT_LIMITS, files: dict[str, str] | None = None):
    root = tmp_path / "bot"
    root.mkdir(exist_ok=True)
    (root / "bot.py").write_text(textwrap.dedent(code))
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return launcher.spawn(root, ["/usr/bin/python3", "bot.py"], limits)


def read_all(fd: int, timeout: float = 20.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return out
        out += chunk
    raise AssertionError(f"no end of output within {timeout} s (got {out[-500:]!r})")


def read_line(fd: int, timeout: float = 20.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in out:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line within {timeout} s (got {out!r})"
        chunk = os.read(fd, 1 << 16)
        assert chunk, f"end of output before a line (got {out!r})"
        out += chunk
    return out


def wait_exit(proc, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = proc.poll()
        if status is not None:
            return status
        time.sleep(0.01)
    raise AssertionError("the bot did not exit")


def finish(proc) -> tuple[bytes, str, int]:
    """Let a started bot run to its end, then clean up; (stdout, stderr
    text, status)."""
    try:
        out = read_all(proc.stdout_fd)
        status = wait_exit(proc)
        os.set_blocking(proc.stderr_fd, False)
        try:
            err = os.read(proc.stderr_fd, 1 << 20).decode(errors="replace")
        except BlockingIOError:
            err = ""
    finally:
        proc.kill()
    return out, err, status


def run(launcher, tmp_path, code, limits=DEFAULT_LIMITS, files=None):
    """Run a bot to its end; (parsed JSON stdout, stderr text, status)."""
    proc = start(launcher, tmp_path, code, limits, files)
    out, err, status = finish(proc)
    assert_host_clean([proc])
    return (json.loads(out) if out.strip() else None), err, status


# -- inside the sandbox --------------------------------------------------------------------

INSPECT = """
    import json, os, resource, socket, sys
    out = {}
    out["ids"] = [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]
    out["env"] = dict(os.environ)
    out["cwd"] = os.getcwd()
    out["root"] = sorted(os.listdir("/"))
    out["etc"] = sorted(os.listdir("/etc"))
    out["usr_local"] = [[d[len("/usr/local"):], sorted(names + files)] for d, names, files in os.walk("/usr/local") if d.count("/") <= 5]
    out["usr_bin"] = sorted(os.listdir("/usr/bin"))
    out["dist_packages"] = os.listdir("/usr/lib/python3/dist-packages") if os.path.isdir("/usr/lib/python3/dist-packages") else []
    out["limits"] = {n: list(resource.getrlimit(getattr(resource, "RLIMIT_" + n))) for n in ("AS", "CPU", "NPROC", "FSIZE", "NOFILE", "CORE")}
    def write(path):
        try:
            with open(path, "w") as f:
                f.write("x")
            return "ok"
        except OSError as exc:
            return exc.strerror
    out["write"] = {p: write(p) for p in ("/tmp/x", "/dev/shm/x", "/dev/x", "/bot/x", "/x", "/usr/x", "/etc/x")}
    out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    out["hostname"] = socket.gethostname()
    out["stdio"] = [os.readlink("/proc/self/fd/%d" % fd) for fd in (0, 1)]
    out["python"] = sys.version
    out["sys_path"] = sys.path
    # The interfaces of the bot's network namespace (if_nameindex would ask
    # netlink, which the seccomp filter refuses).
    out["interfaces"] = sorted(line.split(":")[0].strip() for line in open("/proc/self/net/dev").read().splitlines()[2:])
    out["files"] = sorted(os.listdir("/bot"))
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    out["caps"] = [status[k].strip() for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")]
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    out["unshare"] = [libc.unshare(0x10000000), ctypes.get_errno()]  # CLONE_NEWUSER
    json.dump(out, sys.stdout)
"""


@pytest.mark.sandbox
def test_what_a_bot_sees(bwrap_launcher, tmp_path):
    info, err, status = run(bwrap_launcher, tmp_path, INSPECT, files={"data.txt": "mine"})
    assert status == 0, err
    uid = info["ids"][0]
    assert uid in uid_range() and info["ids"] == [uid, uid, uid, []]
    assert set(info["env"]) == set(BOT_ENV) | {"PWD", "PYTHONPATH"}
    assert info["env"]["PYTHONPATH"] == SDK_DIR
    assert info["cwd"] == "/bot"
    assert info["files"] == ["bot.py", "data.txt"]
    assert {"bot", "usr", "tmp", "dev", "proc", "etc"} <= set(info["root"])
    assert not {"root", "home", "work", "run", "var", "sys", "srv", "opt", "mnt"} & set(info["root"])
    numpy = os.path.isdir("/usr/lib/python3/dist-packages/numpy")  # with its BLAS through /etc/alternatives
    etc = [n for n in ("ld.so.cache", "localtime", "python3.11") if os.path.exists(f"/etc/{n}")] + (["alternatives"] if numpy else [])
    assert info["etc"] == sorted(etc)
    # Only the runtime's files (decision 175): the interpreter, no tools;
    # of /usr/local only ONNX Runtime, without its offline tools (decision 220).
    version = os.path.basename(os.path.realpath("/usr/bin/python3"))  # python3.11
    dist = f"/lib/{version}/dist-packages"
    local = dict(info["usr_local"])
    assert {k: v for k, v in local.items() if k != dist} == {"": ["lib"], "/lib": [version], f"/lib/{version}": ["dist-packages"]}
    assert [n for n in local[dist] if not n.startswith("onnxruntime")] == [] and "onnxruntime" in local[dist]
    assert info["usr_bin"] == sorted({"python3", os.path.basename(os.path.realpath("/usr/bin/python3"))})
    # Of the distribution's Python packages only numpy (and its metadata).
    assert [n for n in info["dist_packages"] if not n.startswith("numpy")] == []
    assert ("numpy" in info["dist_packages"]) == numpy
    limits = BotLimits()
    assert info["limits"] == {
        "AS": [limits.memory_bytes] * 2,
        "CPU": [limits.cpu_seconds, limits.cpu_seconds + 1],
        "NPROC": [limits.max_processes] * 2,
        "FSIZE": [limits.file_size_bytes] * 2,
        "NOFILE": [limits.open_files] * 2,
        "CORE": [0, 0],
    }
    writable = {path for path, result in info["write"].items() if result == "ok"}
    assert writable == {"/tmp/x", "/dev/shm/x"}, info["write"]
    assert info["pids"] == [1]  # the bot is pid 1 of its own namespace: nothing of the host
    assert info["hostname"] == "cardroom-bot"
    assert all(p.startswith("pipe:") for p in info["stdio"]), info["stdio"]
    assert info["python"].startswith("3.11.")
    assert info["interfaces"] == ["lo"]
    assert info["caps"] == ["0000000000000000"] * 4 + ["1"]  # no capabilities, no_new_privs
    assert info["unshare"] == [-1, errno.EPERM]  # no user namespace of its own


SDK_BOT = """
    import json, os, sys
    import cardroom_sdk
    out = {"sdk": cardroom_sdk.__file__, "engine": sys.modules["engine"].__file__}
    out["form"] = sys.modules["engine"].ENGINE_FORM
    out["rules"] = sys.modules["engine.allegra.game"].__file__
    def writable(folder):
        try:
            with open(os.path.join(folder or ".", "planted.py"), "w"):
                return True
        except OSError:
            return False
    out["writable_on_path"] = [p for p in sys.path if writable(p)]
    game = cardroom_sdk.new_game("allegra", 2)
    state = game.new_initial_state()
    import random
    rng = random.Random(1)
    while state.is_chance_node():
        state.apply_chance(state.sample_chance(rng))
    world = cardroom_sdk.sample_world(state.observation(0), rng)
    out["agrees"] = world.observation(0) == state.observation(0)
    json.dump(out, sys.stdout)
"""


@pytest.mark.sandbox
def test_a_python_bot_imports_the_sdk_read_only(bwrap_launcher, tmp_path):
    """The platform's engine and cardroom_sdk are on every Python bot's path
    (issue 22), read-only like everything else on sys.path."""
    info, err, status = run(bwrap_launcher, tmp_path, SDK_BOT)
    assert status == 0, err
    assert info["sdk"] == f"{SDK_DIR}/cardroom_sdk/__init__.py"
    assert info["engine"] == f"{SDK_DIR}/engine/__init__.py"
    # the bot's python3 runs the same form of the rules as the platform: the
    # compiled one where make setup built it (docs/decisions/141-where-the-compiled-form-is-built-and.md)
    assert info["form"] == engine.ENGINE_FORM, err
    rules = f"{SDK_DIR}/engine/allegra/game"
    if engine.ENGINE_FORM == "compiled":
        assert info["rules"].startswith(rules + ".cpython-311-"), info["rules"]
    else:
        assert info["rules"] == rules + ".py"
    assert "reference engine" not in err, err
    assert info["agrees"] is True
    assert info["writable_on_path"] == []


@pytest.mark.sandbox
def test_tmp_and_shm_are_small(bwrap_launcher, tmp_path):
    code = """
        import json, sys
        def fill(path):
            n = 0
            try:
                with open(path, "wb") as f:
                    for _ in range(64):
                        f.write(b"\\0" * (1 << 20)); f.flush(); n += 1
            except OSError as exc:
                return [n, exc.strerror]
            return [n, "ok"]
        json.dump({"tmp": fill("/tmp/big"), "shm": fill("/dev/shm/big")}, sys.stdout)
    """
    limits = BotLimits(tmp_bytes=4 * MiB, shm_bytes=MiB, file_size_bytes=64 * MiB)
    info, err, status = run(bwrap_launcher, tmp_path, code, limits)
    assert status == 0, err
    assert info["tmp"][0] <= 4 and info["tmp"][1] == "No space left on device"
    assert info["shm"][0] <= 1 and info["shm"][1] == "No space left on device"


@pytest.mark.sandbox
def test_file_size_limit(bwrap_launcher, tmp_path):
    code = """
        import json, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open("/tmp/big", "wb") as f:
                f.write(b"\\0" * (3 << 20))
            result = "ok"
        except OSError as exc:
            result = exc.strerror
        json.dump(result, sys.stdout)
    """
    info, err, status = run(bwrap_launcher, tmp_path, code, BotLimits(file_size_bytes=2 * MiB))
    assert info == "File too large", err


@pytest.mark.sandbox
def test_processes_are_limited(bwrap_launcher, tmp_path):
    code = """
        import json, os, sys, time
        made = 0
        while True:
            try:
                pid = os.fork()
            except OSError as exc:
                error = exc.strerror
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            made += 1
        json.dump([made, error], sys.stdout)
    """
    info, err, status = run(bwrap_launcher, tmp_path, code, BotLimits(max_processes=8))
    made, error = info
    assert made < 8 and error == "Resource temporarily unavailable", info


@pytest.mark.sandbox
def test_memory_cgroup_bounds_the_bot_as_a_whole(bwrap_launcher, tmp_path):
    """Each of 4 children stays under the per-process address-space limit;
    together they pass the cgroup's limit and the kernel kills some."""
    if not any(c.name == "memory" for c in bwrap_launcher.controllers):
        pytest.skip("no writable memory cgroup here: " + sandbox.probe().memory_cgroup)
    code = """
        import json, os, sys, time
        children = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                block = b"x" * (150 << 20)
                time.sleep(5)
                os._exit(0)
            children.append(pid)
        statuses = [os.waitpid(pid, 0)[1] for pid in children]
        json.dump([os.WTERMSIG(s) if os.WIFSIGNALED(s) else -os.WEXITSTATUS(s) for s in statuses], sys.stdout)
    """
    info, err, status = run(bwrap_launcher, tmp_path, code, BotLimits(memory_bytes=256 * MiB))
    assert signal.SIGKILL in info, f"no child was OOM-killed: {info} {err}"


@pytest.mark.sandbox
def test_each_bot_has_its_own_uid(bwrap_launcher, tmp_path):
    procs = []
    for i in range(3):
        (tmp_path / str(i)).mkdir()
        procs.append(start(bwrap_launcher, tmp_path / str(i), "import sys; sys.stdin.read()"))
    try:
        uids = [p.uid for p in procs]
        assert len(set(uids)) == 3
        for p in procs:
            assert processes_of_uid(p.uid), "the bot runs as its uid"
            assert not uid_is_free(p.uid)
            # The host check tells this process's leases from another's.
            assert leased_by_this_process(p.uid)
    finally:
        for p in procs:
            p.kill()
    assert_host_clean(procs)


# -- exit status and pipes ------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import sys; sys.exit(0)", 0),
        ("import sys; sys.exit(3)", 3),
        ("raise SystemExit('bye')", 1),
        ("import ctypes; ctypes.string_at(0)", -signal.SIGSEGV),  # a real crash
        # The bot is pid 1 of its namespace: a signal it sends itself without
        # a handler is ignored (documented); with one, it works as usual.
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM); print('\"alive\"')", 0),
        # An uncaught KeyboardInterrupt: Python exits with 128 + SIGINT.
        ("import os, signal; os.kill(os.getpid(), signal.SIGINT)", -signal.SIGINT),
    ],
)
def test_exit_status(bwrap_launcher, tmp_path, code, expected):
    _, err, status = run(bwrap_launcher, tmp_path, code)
    assert status == expected, err


SIGNALS_PY = """
import json
fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({name: int(fields[name], 16) for name in ("SigIgn", "SigBlk")}))
"""


@pytest.fixture(params=["bwrap", "none"])
def any_launcher(request):
    if request.param == "none":
        return PlainLauncher()
    return request.getfixturevalue("bwrap_launcher")


@pytest.mark.sandbox
def test_bot_starts_with_default_signals_whatever_the_worker_ignores(any_launcher, tmp_path):
    """A worker started with SIGINT and SIGTERM ignored (a shell's `&`
    launch ignores SIGINT) and SIGUSR1 blocked: its bot ignores and blocks
    nothing, and a SIGINT it sends itself ends it."""
    saved = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    # And glibc's own signal 32, which Python cannot touch but a parent may
    # have ignored (seen in a fresh-clone run): through the kernel's call.
    libc = ctypes.CDLL(None, use_errno=True)
    ignore, old32 = (ctypes.c_ulong * 4)(1), (ctypes.c_ulong * 4)()  # handler 1: SIG_IGN
    reserved = os.uname().machine == "x86_64"
    if reserved:
        assert libc.syscall(ctypes.c_long(13), ctypes.c_long(32), ctypes.byref(ignore), ctypes.byref(old32), ctypes.c_long(8)) == 0
    try:
        out, err, status = finish(start(any_launcher, tmp_path, SIGNALS_PY))
        _, err_int, status_int = finish(start(any_launcher, tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGINT)"))
    finally:
        if reserved:
            libc.syscall(ctypes.c_long(13), ctypes.c_long(32), ctypes.byref(old32), None, ctypes.c_long(8))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    assert status == 0, err
    # Python itself ignores SIGPIPE and SIGXFSZ at start-up: only those.
    out = json.loads(out)
    assert out == {"SigIgn": 1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1), "SigBlk": 0}, err
    assert status_int == -signal.SIGINT, err_int


CLOSE_PIPES_PY = """
import os, sys, time
if sys.argv[1] == "stdin":
    os.close(0)
    print("closed", flush=True)
else:
    print("hi", flush=True)
    os.close(1)
time.sleep(60)
"""


@pytest.fixture(scope="module")
def close_pipes_c(tmp_path_factory) -> Path:
    return compile_c("close_pipes.c", tmp_path_factory.mktemp("close_pipes") / "close_pipes")


def start_pipe_closer(launcher, folder: Path, runtime: str, which: str, close_pipes_c: Path):
    """A bot of ``runtime`` that closes its stdout, or its stdin (``which``),
    and then keeps running."""
    if runtime == "native":
        root, argv = native_package(folder, close_pipes_c), ["./bot", which]
    elif runtime == "node":
        root, argv = node_package(folder, HERE / "runtimes" / "close_pipes.js"), [*runtime_argv("node", "main.js", BotLimits()), which]
    else:
        folder.mkdir()
        (folder / "bot.py").write_text(CLOSE_PIPES_PY)
        root, argv = folder, ["/usr/bin/python3", "bot.py", which]
    return launcher.spawn(root, argv, runtime_limits(runtime, BotLimits()))


@pytest.mark.sandbox
@pytest.mark.parametrize("runtime", ["python", "node", "native"])
def test_closing_stdout_is_seen_at_once(bwrap_launcher, tmp_path, close_pipes_c, runtime):
    """Only the bot holds its stdout (bwrap's helpers do not: the shim or
    bot-exec was handed it, decision 166): closing it is an end of output
    while the bot still runs."""
    if runtime != "python" and bwrap_launcher.bot_exec is None:
        pytest.skip(f"no bot-exec here: {bwrap_launcher.bot_exec_note}")
    proc = start_pipe_closer(bwrap_launcher, tmp_path / "bot", runtime, "stdout", close_pipes_c)
    try:
        assert read_all(proc.stdout_fd, timeout=10) == b"hi\n"
        assert proc.poll() is None
    finally:
        proc.kill()
    assert_host_clean([proc])


@pytest.mark.sandbox
@pytest.mark.parametrize("runtime", ["python", "node", "native"])
def test_closing_stdin_breaks_the_pipe(bwrap_launcher, tmp_path, close_pipes_c, runtime):
    proc = start_pipe_closer(bwrap_launcher, tmp_path / "bot", runtime, "stdin", close_pipes_c)
    try:
        assert read_line(proc.stdout_fd) == b"closed\n"
        with pytest.raises(BrokenPipeError):
            for _ in range(100):
                proc.stdin.write(b"x" * 65536)
                proc.stdin.flush()
    finally:
        proc.kill()
    assert_host_clean([proc])


@pytest.mark.sandbox
def test_echo_round_trips(bwrap_launcher, tmp_path):
    proc = start(bwrap_launcher, tmp_path, "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line); sys.stdout.flush()\n")
    try:
        for i in range(200):
            proc.stdin.write(b'{"n": %d}\n' % i)
            proc.stdin.flush()
            assert read_line(proc.stdout_fd) == b'{"n": %d}\n' % i
    finally:
        proc.kill()


# -- clean-up --------------------------------------------------------------------------------------

DAEMON = """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 3)
            while True:
                time.sleep(0.05)
        os._exit(0)
    os.wait()
    print("ready", flush=True)
    time.sleep(3600)
"""


@pytest.mark.sandbox
def test_kill_takes_everything(bwrap_launcher, tmp_path):
    proc = start(bwrap_launcher, tmp_path, DAEMON)
    assert read_line(proc.stdout_fd) == b"ready\n"
    uid = proc.uid
    assert len(processes_of_uid(uid)) >= 3  # the outer bwrap, the bot, the daemon
    for cgroup in proc.cgroups:
        assert (cgroup / "cgroup.procs").read_text().split()
    proc.kill()
    proc.kill()  # idempotent
    assert proc.poll() is not None
    assert_host_clean([proc])


@pytest.mark.sandbox
def test_outer_bwrap_killed_first_leaves_no_zombie(bwrap_launcher, tmp_path):
    """If the outer bwrap dies first (as a worker's crash would do), the bot
    is re-parented to us (child subreaper) and kill() still reaps it."""
    proc = start(bwrap_launcher, tmp_path, DAEMON)
    assert read_line(proc.stdout_fd) == b"ready\n"
    os.kill(proc.pid, signal.SIGKILL)
    time.sleep(0.2)
    proc.kill()
    assert_host_clean([proc])
    assert zombie_children({proc.uid}) == []


def stale_limit(controller) -> int:
    """A limit for a hand-made leftover cgroup of ``controller``."""
    return {"memory": 64 * MiB, "pids": 8, "cpu": 100_000}.get(controller.name, 0)


def host_process_of(uid: int, cgroups: list[tuple] | None = None) -> subprocess.Popen:
    """A host process running as ``uid`` (not in a sandbox), put in ``cgroups``
    ((controller, path) pairs) when given: a leftover bot of a dead worker."""
    proc = subprocess.Popen(["/usr/bin/sleep", "60"], user=uid, group=uid, extra_groups=[], start_new_session=True)
    for controller, path in cgroups or []:
        controller.join(path, proc.pid)
    return proc


def end_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def mounts_below(folder: Path) -> list[str]:
    """The mount points under ``folder`` (the prepared /dev a launcher made
    there, decision 159), deepest first."""
    prefix = f"{folder}/"
    with open("/proc/self/mountinfo") as mountinfo:
        points = [line.split()[4] for line in mountinfo]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def remove_state(state: Path) -> None:
    """A test's state folder, with what was mounted in it: the host keeps
    no mount of a test's (each would slow every later bwrap, decision 161)."""
    for point in mounts_below(state):
        subprocess.run(["umount", "--lazy", point], check=True)
    shutil.rmtree(state)
    assert not mounts_below(state)


def private_state(uids: str, monkeypatch, request) -> Path:
    """A sandbox state folder of the test's own (bot uids must traverse it),
    with the pool set to ``uids``: no other test's bot can use them."""
    monkeypatch.setenv("CARDROOM_SANDBOX_UIDS", uids)
    state = Path(tempfile.mkdtemp(prefix="cardroom-sandbox-test-", dir="/tmp"))
    request.addfinalizer(lambda: remove_state(state))
    os.chmod(state, 0o711)
    monkeypatch.setenv("CARDROOM_SANDBOX_DIR", str(state))
    sandbox._prepare_state_dir()
    return state


@pytest.mark.sandbox
def test_leftovers_of_a_dead_worker_are_swept(bwrap_launcher, tmp_path, monkeypatch, request):
    """A run folder, cgroups and the processes in them (frozen, as between
    two moves), of a uid whose worker died, are removed when the uid is
    leased again; a host process of the same uid outside those cgroups is
    left alone."""
    uid = 1920099990  # outside the real pool
    state = private_state(f"{uid}-{uid}", monkeypatch, request)
    launcher = sandbox.BwrapLauncher(bwrap_launcher.bwrap, bwrap_launcher.controllers)
    stale_dir = state / "runs" / f"uid-{uid}"
    stale_dir.mkdir()
    (stale_dir / "old.py").write_text("")
    controllers = bwrap_launcher.controllers
    if not controllers:
        pytest.skip("no cgroups here (weak mode): a leftover bot cannot be told from a host process")
    leaves = [(c, c.prepare(uid, stale_limit(c))) for c in controllers]
    leftover = host_process_of(uid, leaves)
    for controller, path in leaves:
        if controller.name == "freezer":
            controller.freeze(path)  # the worker died between two moves
    bystander = host_process_of(uid)
    try:
        started = time.monotonic()
        proc = start(launcher, tmp_path, "print('fresh', flush=True)")
        # Not a wait per controller for a frozen task to die: the freezer's
        # cgroup is swept (thawed) first.
        assert time.monotonic() - started < 1.5, "the sweep waited for a frozen leftover"
        assert read_all(proc.stdout_fd) == b"fresh\n"
        assert leftover.wait(timeout=5) == -signal.SIGKILL
        proc.kill()
        assert bystander.poll() is None, "a host process of the bot's uid, outside its cgroups, was killed"
    finally:
        end_process(leftover)
        end_process(bystander)
    assert_host_clean([proc])


def orphaned_bwrap_child(launcher, uid: int, run_dir: Path, release: bool) -> tuple[int, int | None]:
    """What a worker killed mid-start leaves: bwrap's child (pid 1 of its own
    pid namespace, outside every cgroup) whose outer bwrap died. Blocked on
    its --block-fd; with ``release`` the block is lifted (as the dead
    worker's closed pipe does) and it goes on to start the bot. (Its host
    pid, the block's write end that holds it, if held.)"""
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    # (The python runtime's interpreter: the sandbox shows a runtime's files only, no sleep(1).)
    command = launcher.argv(["/usr/bin/python3", "-c", "import time; time.sleep(60)"], DEFAULT_LIMITS, run_dir, info_w, block_r)
    outer = subprocess.Popen(command, pass_fds=[info_w, block_r], user=uid, group=uid, extra_groups=[], start_new_session=True)
    os.close(info_w)
    os.close(block_r)
    info = b""
    while not info.rstrip().endswith(b"}"):
        chunk = os.read(info_r, 4096)
        assert chunk, "bwrap did not report its child"
        info += chunk
    os.close(info_r)
    child = json.loads(info)["child-pid"]
    # bwrap reports the child before it writes its uid map and releases it:
    # killed before that, the child would wait on its eventfd instead (the
    # case of test_a_start_stopped_before_the_bots_pid_is_known_leaves_nothing).
    deadline = time.monotonic() + 10
    while not Path(f"/proc/{child}/wchan").read_text().endswith("pipe_read"):  # at its --block-fd
        assert time.monotonic() < deadline, "bwrap's child never reached its --block-fd"
        time.sleep(0.001)
    outer.kill()  # its parent-death signal, when the worker died
    outer.wait()
    if not release:
        return child, block_w  # held: it waits for good
    os.close(block_w)
    deadline = time.monotonic() + 10
    while not os.path.basename(os.readlink(f"/proc/{child}/exe")).startswith("python3"):
        assert time.monotonic() < deadline, "the orphaned child did not start its bot"
        time.sleep(0.01)
    return child, None


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    """Has ``pid`` exited (reaping it if it is our child: we are a subreaper)?"""
    pidfd = _pidfd_open(pid)
    if pidfd is None:
        return True
    try:
        gone = _wait_pidfd(pidfd, timeout)
        try:
            os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
        except ChildProcessError:
            pass
        return gone
    finally:
        os.close(pidfd)


@pytest.mark.sandbox
def test_strays_of_a_worker_killed_mid_start_are_swept(bwrap_launcher, tmp_path, monkeypatch, request):
    """A worker killed while bwrap was setting up (before the bot's processes
    were in their cgroups) can leave bwrap's child behind, waiting forever or
    running the bot outside the cgroups: leasing the uid again kills both;
    a host process of the same uid stays."""
    uid = 1920099960  # outside the real pool
    state = private_state(f"{uid}-{uid}", monkeypatch, request)
    launcher = sandbox.BwrapLauncher(bwrap_launcher.bwrap, bwrap_launcher.controllers)
    run_dir = state / "runs" / f"uid-{uid}"  # left behind by the dead worker
    run_dir.mkdir()
    os.chmod(run_dir, 0o755)
    waiting, holding = orphaned_bwrap_child(launcher, uid, run_dir, release=False)
    running, _ = orphaned_bwrap_child(launcher, uid, run_dir, release=True)
    bystander = host_process_of(uid)
    try:
        for pid in (waiting, running):
            fields = _status_fields(pid)
            assert len(fields["NSpid"].split()) == 2, fields  # pid 1 of a namespace of its own
        proc = start(launcher, tmp_path, "print('fresh', flush=True)")
        assert read_all(proc.stdout_fd) == b"fresh\n"
        assert wait_gone(waiting), "the orphaned bwrap child waiting for its dead parent was left running"
        assert wait_gone(running), "the bot started outside its cgroups by an orphaned bwrap child was left running"
        proc.kill()
        assert bystander.poll() is None, "a host process of the bot's uid was killed"
    finally:
        os.close(holding)
        for pid in (waiting, running):
            if not wait_gone(pid, timeout=0):
                os.kill(pid, signal.SIGKILL)
                wait_gone(pid)
        end_process(bystander)
    assert_host_clean([proc])


def _stop_bwrap_before_it_releases_its_child(popen) -> tuple[int, str]:
    """Wait for bwrap to fork its child and stop bwrap at once (before it
    writes the child's uid map and releases it); (child pid, where the
    child waits)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            children = Path(f"/proc/{popen.pid}/task/{popen.pid}/children").read_text().split()
        except OSError:
            children = []
        if children:
            os.kill(popen.pid, signal.SIGSTOP)
            break
        assert time.monotonic() < deadline, "bwrap did not fork its child"
    child = int(children[0])
    time.sleep(0.05)
    return child, Path(f"/proc/{child}/wchan").read_text()


@pytest.mark.sandbox
def test_a_start_stopped_before_the_bots_pid_is_known_leaves_nothing(bwrap_launcher, tmp_path, monkeypatch):
    """A start interrupted after bwrap forked its child but before it
    released it (a timeout, the worker shutting down mid-start) leaves no
    process behind: the child, outside the cgroups and without its
    parent-death signal yet, would wait for its killed parent forever."""
    import cardroom.sandbox.bwrap as launcher_module

    for _attempt in range(10):
        seen: dict = {}

        def stop_mid_start(info_r, popen, seen=seen):
            seen["child"], seen["waits_in"] = _stop_bwrap_before_it_releases_its_child(popen)
            raise KeyboardInterrupt("stopped mid-start")

        monkeypatch.setattr(launcher_module, "_read_child_pid", stop_mid_start)
        with pytest.raises(KeyboardInterrupt):
            start(bwrap_launcher, tmp_path, "print('never')")
        if seen["waits_in"] == "do_wait_intr_irq":  # on its eventfd, as after a real worker's death
            break
        wait_gone(seen["child"])  # bwrap had released it already: try again
    else:
        pytest.skip("could not stop bwrap before it released its child")
    assert wait_gone(seen["child"]), "bwrap's child outlived the interrupted start"


@pytest.mark.sandbox
def test_a_start_stopped_inside_popen_leaves_nothing(bwrap_launcher, tmp_path, monkeypatch):
    """Stopped inside Popen itself, after the fork (a signal's exception
    while Popen waits for the exec), the launcher's process is ours but
    unknown to us: it is found by its command line and nothing of the uid
    is left."""
    import cardroom.sandbox.bwrap as launcher_module

    leases = []
    real_lease = launcher_module.lease_uid

    def recording_lease():
        lease = real_lease()
        leases.append(lease.uid)
        return lease

    real_popen = subprocess.Popen

    def popen_then_stop(*args, **kwargs):
        real_popen(*args, **kwargs)  # started, and lost
        raise KeyboardInterrupt("stopped inside Popen")

    monkeypatch.setattr(launcher_module, "lease_uid", recording_lease)
    monkeypatch.setattr(subprocess, "Popen", popen_then_stop)
    with pytest.raises(KeyboardInterrupt):
        start(bwrap_launcher, tmp_path, "print('never')")
    monkeypatch.undo()
    deadline = time.monotonic() + 5
    while processes_of_uid(leases[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = {pid: _status_fields(pid).get("State") for pid in processes_of_uid(leases[0])}
    assert left == {}, f"processes of the bot's uid left behind: {left}"


@pytest.mark.sandbox
def test_stale_leftovers_are_swept_at_probe(bwrap_launcher, monkeypatch, request):
    """What a worker killed without cleaning up leaves (a run folder, cgroups
    and the processes in them) goes, unless its uid is leased by someone; a
    host process of that uid outside the cgroups stays."""
    uid = 1920099980  # outside the real pool
    state = private_state(f"{uid}-{uid + 1}", monkeypatch, request)
    controllers = bwrap_launcher.controllers
    if not controllers:
        pytest.skip("no cgroups here (weak mode)")
    dead, held = uid, uid + 1
    for u in (dead, held):
        (state / "runs" / f"uid-{u}").mkdir()
    leaves = [(c, c.prepare(dead, stale_limit(c))) for c in controllers]
    stale = host_process_of(dead, leaves)
    bystander = host_process_of(dead)
    lease = lease_uid()
    while lease.uid != held:  # take the other uid of the two
        other = lease_uid()
        lease.release()
        lease = other
    try:
        removed = sandbox.sweep_stale(controllers)
        assert stale.wait(timeout=5) == -signal.SIGKILL
        assert bystander.poll() is None, "a host process of the uid, outside the cgroups, was killed"
        assert not (state / "runs" / f"uid-{dead}").exists()
        assert all(not leaf.exists() for _, leaf in leaves)
        assert (state / "runs" / f"uid-{held}").exists(), "a leased uid's folder is left alone"
        assert str(state / "runs" / f"uid-{dead}") in removed
    finally:
        lease.release()
        end_process(stale)
        end_process(bystander)
        for c in controllers:
            c.remove(c.leaf(dead))


# -- the uid pool ------------------------------------------------------------------------------------


@pytest.fixture
def private_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("CARDROOM_SANDBOX_DIR", str(tmp_path / "pool"))
    monkeypatch.setenv("CARDROOM_SANDBOX_UIDS", "61980-61981")
    (tmp_path / "pool" / "locks").mkdir(parents=True)
    return tmp_path / "pool"


def test_uid_pool_never_shares(private_pool):
    a, b = lease_uid(), lease_uid()
    assert {a.uid, b.uid} == {61980, 61981}
    with pytest.raises(SandboxError, match=r"all 2 sandbox uids \(61980-61981\) are in use"):
        lease_uid()
    a.release()
    c = lease_uid()
    assert c.uid == a.uid
    b.release()
    c.release()


def test_uid_pool_across_processes(private_pool):
    """A uid leased by another worker process is skipped."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "from cardroom.sandbox import lease_uid; l = lease_uid(); print(l.uid, flush=True); input()"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        held = int(holder.stdout.readline())
        mine = lease_uid()
        assert mine.uid != held
        with pytest.raises(SandboxError):
            lease_uid()
        mine.release()
    finally:
        holder.kill()
        holder.wait()
    both = [lease_uid(), lease_uid()]  # the dead worker's lease is free again
    assert {lease.uid for lease in both} == {61980, 61981}
    for lease in both:
        lease.release()


def test_bad_uid_range(monkeypatch):
    monkeypatch.setenv("CARDROOM_SANDBOX_UIDS", "0-10")
    with pytest.raises(SandboxUnavailable, match="expected a range like 1920000000-1920000999"):
        uid_range()


# -- modes and the probe ---------------------------------------------------------------------------------


def test_mode_none_warns_on_every_spawn(tmp_path, capfd):
    launcher = get_launcher("none")
    assert isinstance(launcher, UnsandboxedLauncher) and isinstance(launcher, PlainLauncher)
    assert launcher.name == "none" and not launcher.isolated
    for _ in range(2):
        proc = start(launcher, tmp_path, "print('plain')")
        assert read_all(proc.stdout_fd) == b"plain\n"
        proc.kill()
    assert capfd.readouterr().err.count(NONE_WARNING) == 2
    assert NONE_WARNING == "cardroom: WARNING: CARDROOM_SANDBOX=none runs bots without any isolation"


def test_mode_from_environment(monkeypatch):
    monkeypatch.setenv("CARDROOM_SANDBOX", "none")
    assert get_launcher().name == "none"
    monkeypatch.setenv("CARDROOM_SANDBOX", "docker")
    with pytest.raises(SandboxUnavailable) as info:
        get_launcher()
    assert str(info.value) == (
        "CARDROOM_SANDBOX='docker' is not a sandbox mode: use 'bwrap' (the default, bubblewrap isolation) "
        "or 'none' (no isolation, local development only)"
    )


@pytest.mark.sandbox
def test_default_mode_is_bwrap(monkeypatch, bwrap_launcher):
    monkeypatch.delenv("CARDROOM_SANDBOX", raising=False)
    assert get_launcher().name == "bwrap" and get_launcher() is get_launcher()
    monkeypatch.setenv("CARDROOM_SANDBOX", "")
    assert get_launcher().name == "bwrap"
    assert sandbox.probe() is sandbox.probe()  # probed once per process


def test_missing_bwrap_is_explained(monkeypatch, reprobe):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if p == "/usr/bin/bwrap" else real_access(p, m))
    report = reprobe()
    assert not report.ok
    assert report.error == (
        "bubblewrap is not installed (no 'bwrap' on PATH): install it (Debian/Ubuntu: apt-get install bubblewrap, "
        "or run scripts/install-system-packages.sh), or set CARDROOM_SANDBOX=none for local development only (no isolation)"
    )
    with pytest.raises(SandboxUnavailable) as info:
        get_launcher("bwrap")
    assert str(info.value) == "CARDROOM_SANDBOX=bwrap: " + report.error
    assert "sandbox: UNAVAILABLE" in report.describe()


def _without_prlimit(monkeypatch) -> None:
    real_which, real_access = shutil.which, os.access
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "prlimit" else real_which(name, *a, **k))
    monkeypatch.setattr(os, "access", lambda p, m: False if p == "/usr/bin/prlimit" else real_access(p, m))


def test_without_prlimit_bot_exec_sets_the_rlimits(monkeypatch, reprobe):
    """bot-exec sets each bot's rlimits where it can be had: prlimit(1),
    which stands in for it elsewhere, is then not needed."""
    _without_prlimit(monkeypatch)
    report = reprobe()
    if report.bwrap is None:
        pytest.skip("bubblewrap is not installed")
    if "set by bot-exec" not in (report.rlimits or ""):
        pytest.skip(f"no bot-exec here: {report.rlimits}")
    assert report.ok, report.error
    launcher = get_launcher("bwrap")
    assert launcher.prlimit is None and launcher.bot_exec is not None


def test_without_prlimit_or_bot_exec_the_sandbox_refuses(monkeypatch, reprobe):
    """Neither bot-exec (no compiler, no prebuilt one) nor prlimit(1): the
    sandbox refuses, as without bwrap, rather than start bots with no
    rlimits, and says what to install."""
    import importlib

    _without_prlimit(monkeypatch)
    missing = (None, "no C compiler to build bot-exec from bot_exec.c, and no prebuilt one")
    # By module name: cardroom.sandbox's function ``probe`` shadows its module.
    for module in ("cardroom.sandbox.probe", "cardroom.sandbox.bwrap"):
        monkeypatch.setattr(importlib.import_module(module), "bot_exec_program", lambda: missing)
    report = reprobe()
    if report.bwrap is None:
        pytest.skip("bubblewrap is not installed")
    assert not report.ok
    assert report.error.startswith(
        "neither bot-exec (no C compiler to build bot-exec from bot_exec.c, and no prebuilt one) nor prlimit (util-linux) "
        "is here to set each bot's rlimits; install a C compiler or prlimit (Debian/Ubuntu: apt-get install gcc util-linux"
    )
    with pytest.raises(SandboxUnavailable, match="neither bot-exec"):
        get_launcher("bwrap")


@pytest.mark.sandbox
def test_a_worker_on_a_freshly_booted_host_has_bot_exec_and_the_gate():
    """The first worker after a boot finds no sandbox folder (/run is
    empty): it makes the folder, builds bot-exec there and has the start-up
    gate, as every later worker (it used to fall back to prlimit and run
    bots with no gate, so pipe inode numbers crossed between seats)."""
    state = Path(f"/run/cardroom-sandbox-boottest-{os.getpid()}")
    assert not state.exists()
    # Its own uids: its locks do not know this process's.
    env = dict(os.environ, CARDROOM_SANDBOX_DIR=str(state), CARDROOM_SANDBOX_UIDS="1920001010-1920001019")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "cardroom.sandbox"], capture_output=True, text=True, cwd=REPO, env=env, timeout=180
        )
    finally:
        if state.exists():
            remove_state(state)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"rlimits: set by bot-exec before bwrap starts: {state}/libexec/bot-exec-" in out.stdout, out.stdout
    gate = next(line.strip() for line in out.stdout.splitlines() if line.strip().startswith("gate ("))
    assert "): in force: bot-exec: " in gate, gate
    assert "start-up gate: new pipes, sockets, memfds, shared memory and pidfds refused" in out.stdout


def test_without_bot_exec_the_sandbox_refuses_unless_weak(monkeypatch, reprobe):
    """No bot-exec (no compiler, no prebuilt one) but prlimit(1): the bots
    would run without the start-up gate, so the probe says the gate is not
    in force and refuses, unless the operator chose the weak mode."""
    import importlib

    missing = (None, "no C compiler to build bot-exec from bot_exec.c, and no prebuilt one")
    for module in ("cardroom.sandbox.probe", "cardroom.sandbox.bwrap"):
        monkeypatch.setattr(importlib.import_module(module), "bot_exec_program", lambda: missing)
    monkeypatch.delenv("CARDROOM_SANDBOX_WEAK_LIMITS", raising=False)
    report = reprobe()
    if report.bwrap is None:
        pytest.skip("bubblewrap is not installed")
    assert not report.ok
    assert report.error.startswith("limits that cannot be applied here: gate (no bot-exec (no C compiler"), report.error
    assert "install a C compiler (Debian/Ubuntu: apt-get install gcc)" in report.error
    with pytest.raises(SandboxUnavailable, match="gate"):
        get_launcher("bwrap")
    monkeypatch.setenv("CARDROOM_SANDBOX_WEAK_LIMITS", "1")
    report = reprobe()
    assert report.ok, report.error
    assert report.rlimits.startswith("set by ") and "no bot-exec" in report.rlimits
    assert "NOT in force: gate" in report.limits_summary()


def test_not_root_is_explained(monkeypatch, reprobe):
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    report = reprobe()
    assert not report.ok
    assert report.error.startswith("the bwrap sandbox must run as root: it starts each bot as its own unprivileged uid (1920000000-1920000999)")


@pytest.mark.parametrize(
    ("bwrap_says", "hint"),
    [
        ("bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.", "unprivileged user namespaces are blocked"),
        ("bwrap: Creating new namespace failed: Operation not permitted", "--security-opt seccomp=unconfined"),
        ("bwrap: Can't mount proc on /newroot/proc: Operation not permitted", "systempaths=unconfined"),
        ("bwrap: Failed to make / slave: Permission denied (mount)", "apparmor=unconfined"),
    ],
)
def test_bwrap_failures_are_explained(bwrap_says, hint):
    message = sandbox._explain(bwrap_says)
    assert message.startswith(f"bubblewrap cannot create the sandbox ({bwrap_says}): ")
    assert hint in message
    assert message.endswith("or set CARDROOM_SANDBOX=none for local development only (no isolation)")


@pytest.mark.sandbox
def test_probe_report(bwrap_launcher):
    report = sandbox.probe()
    assert report.ok and report.error is None
    text = report.describe()
    assert "sandbox: bwrap works" in text
    for name in ("memory", "pids", "cpu", "cpuacct", "freezer", "tmpfs"):
        limit = next(limit for limit in report.limits if limit.name == name)
        assert f"    {name} (" in text
        if not report.weak_limits:
            assert limit.in_force, limit.describe()  # fail closed: no silent weaker sandbox
    assert report.subreaper
    if not report.weak_limits:  # the trial bot's /proc was switched (decision 267)
        assert "/proc once a bot is ready: meminfo, stat, cpuinfo, loadavg, uptime only" in text, text


@pytest.mark.sandbox
def test_probe_command(bwrap_launcher):
    result = subprocess.run([sys.executable, "-m", "cardroom.sandbox"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sandbox: bwrap works" in result.stdout


# -- whole matches with archives ------------------------------------------------------------------------


@pytest.mark.sandbox
def test_zip_and_tar_gz_bots_play_a_match(bwrap_launcher, tmp_path):
    import tarfile

    from .conftest import RecordingLauncher

    source = (REPO / "bots" / "random_bot.py").read_bytes()
    manifest = 'entry = "bot/main.py"\nprotocol = 1\nname = "zipped"\n'
    zipped = tmp_path / "zipped.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cardroom.toml", manifest)
        zf.writestr("bot/main.py", source)
    tarred = tmp_path / "tarred.tar.gz"
    folder = tmp_path / "tarred"
    folder.mkdir()
    (folder / "bot.json").write_text(json.dumps({"entry": "main.py", "protocol": 1}))
    (folder / "main.py").write_bytes(source)
    with tarfile.open(tarred, "w:gz") as tf:
        tf.add(folder, arcname=".")
    recording = RecordingLauncher(bwrap_launcher)
    record = run_match(
        "allegory",
        [str(zipped), str(tarred), "builtin:random"],
        seed=3,
        time=TimeControl(startup_ms=15_000, per_move_ms=1000, total_ms=60_000),
        launcher=recording,
    )
    assert record.replay["result"]["forfeits"] == [], record.logs
    assert record.players[0]["name"] == "zipped"
    assert len(recording.procs) == 2
    assert_host_clean(recording.procs)
