"""How a sandboxed bot is started: bot-exec (the uid, groups and rlimits,
then bwrap; decision 164) and the pool of empty network namespaces
(decision 165), on the real sandbox; and the prlimit(1) path that stands in
where bot-exec cannot be built."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from cardroom.sandbox import lease_uid
from cardroom.sandbox.botexec import EXIT_REFUSED

from .conftest import RecordingLauncher, assert_host_clean, launcher_like
from .test_sandbox import finish, read_line, start

pytestmark = pytest.mark.sandbox


@pytest.fixture
def bot_exec(bwrap_launcher) -> str:
    if bwrap_launcher.bot_exec is None:
        pytest.skip(f"no bot-exec here: {bwrap_launcher.bot_exec_note}")
    return bwrap_launcher.bot_exec


@pytest.mark.parametrize(
    "args, said",
    [
        ([], "--uid and --gid are required"),
        (["--uid=0", "--gid=7"], "not a uid other than 0: --uid=0"),
        (["--uid=7", "--gid=0"], "not a gid other than 0: --gid=0"),
        (["--uid=7"], "--uid and --gid are required"),
        (["--uid=7x", "--gid=7"], "not a uid other than 0: --uid=7x"),
        (["--uid=99999999999999999999999", "--gid=7"], "not a uid other than 0"),
        (["--uid=7", "--gid=7", "--nofile=9:8"], "not SOFT:HARD with SOFT <= HARD: --nofile=9:8"),
        (["--uid=7", "--gid=7", "--nofile=9"], "not SOFT:HARD with SOFT <= HARD: --nofile=9"),
        (["--uid=7", "--gid=7", "--as=unlimitedx:unlimited"], "not SOFT:HARD"),
        (["--uid=7", "--gid=7", "--stack=1:1"], "unknown option: --stack=1:1"),
        (["--uid=7", "--gid=7", "--netns-fd=x"], "not a descriptor: --netns-fd=x"),
        (["--uid=7", "--gid=7", "--netns-fd=999"], "cannot join the network namespace"),
        (["--uid=7", "--gid=7", "--"], "no program after --"),
        (["--stdio-socket=5", "--"], "no program after --"),
        (["--stdio-socket=5", "--uid=7"], "--stdio-socket takes no other option but --listener-only: --uid=7"),
        (["--stdio-socket=5", "--listener-only", "--uid=7"], "--stdio-socket takes no other option but --listener-only: --uid=7"),
        (["--stdio-socket=999", "--listener-only"], "cannot send the start-up filter's listener"),
    ],
)
def test_bot_exec_refuses_and_runs_nothing(bot_exec, tmp_path, args, said):
    """A bad command line, or a step that fails: one line on stderr, exit
    126, and the program after -- never runs."""
    marker = tmp_path / "ran"
    program = [] if args[-1:] == ["--"] else ["--", "/usr/bin/touch", str(marker)]
    result = subprocess.run([bot_exec, *args, *program], capture_output=True, text=True, timeout=10)
    assert result.returncode == EXIT_REFUSED, result
    assert result.stderr.startswith("bot-exec: ") and said in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert not marker.exists()


def test_bot_exec_drops_to_the_uid_with_its_limits(bot_exec):
    """Outside any sandbox: the ids (real, effective, saved), no groups, no
    capabilities, each rlimit as asked and the environment passed on."""
    lease = lease_uid()
    try:
        uid = lease.uid
        show = (
            "import json, os, resource; status = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines());"
            "print(json.dumps([os.getresuid(), os.getresgid(), os.getgroups(), status['CapEff'].strip(), status['CapPrm'].strip(),"
            " [resource.getrlimit(r) for r in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_AS, resource.RLIMIT_CORE)],"
            " os.environ.get('SEEN')]))"
        )
        result = subprocess.run(
            [bot_exec, f"--uid={uid}", f"--gid={uid}", "--nofile=17:18", "--nproc=5:5", "--as=unlimited:unlimited", "--core=0:0",
             "--", "/usr/bin/python3", "-I", "-S", "-c", show],
            capture_output=True, text=True, timeout=20, cwd="/", env={"SEEN": "yes"},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        ids, gids, groups, cap_eff, cap_prm, limits, seen = json.loads(result.stdout)
        assert ids == [uid] * 3 and gids == [uid] * 3 and groups == []
        assert cap_eff == cap_prm == "0000000000000000"
        infinity = -1  # resource.RLIM_INFINITY
        assert limits == [[17, 18], [5, 5], [infinity, infinity], [0, 0]]
        assert seen == "yes"
    finally:
        lease.release()


NAMESPACE_BOT = """
    import errno, fcntl, json, os, socket, struct, sys
    out = {"netns": os.readlink("/proc/self/ns/net")}
    # An abstract name an earlier bot in this namespace might have left.
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect("\\0cardroom-left-behind")
        out["connect"] = "connected"
    except OSError as exc:
        out["connect"] = errno.errorcode[exc.errno]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\\0cardroom-left-behind")
    listener.listen(1)
    # Bring the loopback up (SIOCSIFFLAGS, IFF_UP): the namespace is not the bot's to change.
    request = struct.pack("16sH22x", b"lo", 1)
    try:
        fcntl.ioctl(listener.fileno(), 0x8914, request)
        out["lo_up"] = "done"
    except OSError as exc:
        out["lo_up"] = errno.errorcode[exc.errno]
    out["interfaces"] = [line.split(":")[0].strip() for line in open("/proc/self/net/dev").read().splitlines()[2:]]
    print(json.dumps(out), flush=True)
    sys.stdin.readline()  # held open (the listener with it) until the test ends the bot
"""


def namespace_of(launcher, tmp_path: Path, name: str):
    folder = tmp_path / name
    folder.mkdir()
    proc = start(launcher, folder, NAMESPACE_BOT)
    return proc, json.loads(read_line(proc.stdout_fd))


def end(proc) -> None:
    proc.stdin.write(b"\n")
    proc.stdin.flush()
    finish(proc)


def test_each_bot_has_an_empty_network_namespace_of_its_own(bwrap_launcher, tmp_path):
    """Two bots at once: two namespaces, neither the host's; the next bot
    reuses one that a bot which is gone used, and finds nothing of it (the
    name the earlier bot held is free); no bot can bring an interface up."""
    if bwrap_launcher.netns is None or bwrap_launcher.netns.problem is not None:
        pytest.skip("no pool of network namespaces here (bwrap makes one per bot)")
    recording = RecordingLauncher(bwrap_launcher)
    first, seen_first = namespace_of(recording, tmp_path, "first")
    second, seen_second = namespace_of(recording, tmp_path, "second")
    host = os.readlink("/proc/self/ns/net")
    assert len({host, seen_first["netns"], seen_second["netns"]}) == 3
    for seen in (seen_first, seen_second):
        assert seen["connect"] == "ECONNREFUSED", seen
        assert seen["lo_up"] == "EPERM", seen
        assert seen["interfaces"] == ["lo"], seen
    for proc in (second, first):  # the first one back is the next one lent
        end(proc)
    third, seen_third = namespace_of(recording, tmp_path, "third")
    try:
        assert seen_third["netns"] == seen_first["netns"], "the namespace was not reused"
        assert seen_third["connect"] == "ECONNREFUSED", seen_third
    finally:
        end(third)
    assert_host_clean(recording.procs)


INSPECT_START = """
    import json, os, resource, sys
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    limits = {n: list(resource.getrlimit(getattr(resource, "RLIMIT_" + n))) for n in ("AS", "CPU", "NPROC", "FSIZE", "NOFILE", "CORE", "MEMLOCK", "MSGQUEUE")}
    json.dump({"ids": [os.getresuid(), os.getresgid(), os.getgroups()], "caps": status["CapEff"].strip(),
               "limits": limits, "netns": os.readlink("/proc/self/ns/net"), "lo": open("/proc/self/net/dev").read().count("lo:")}, sys.stdout)
"""


def test_prlimit_stands_in_for_bot_exec_with_the_same_limits(bwrap_launcher, tmp_path):
    """Where bot-exec cannot be had: prlimit(1) in a fork that changed its
    uid, bwrap's own network namespace; what the bot gets is the same."""
    plain_start = launcher_like(bwrap_launcher, bot_exec="")
    assert plain_start.bot_exec is None and plain_start.netns is None
    seen = {}
    for name, launcher in (("bot-exec", bwrap_launcher), ("prlimit", plain_start)):
        recording = RecordingLauncher(launcher)
        folder = tmp_path / name
        folder.mkdir()
        out, err, status = finish(start(recording, folder, INSPECT_START))
        assert status == 0, err
        seen[name] = json.loads(out)
        assert_host_clean(recording.procs)
    for info in seen.values():
        uid = info["ids"][0][0]
        assert info["ids"] == [[uid] * 3, [uid] * 3, []], info
        assert info["caps"] == "0000000000000000"
        assert info["netns"] != os.readlink("/proc/self/ns/net") and info["lo"] == 1
    assert seen["bot-exec"]["limits"] == seen["prlimit"]["limits"]
    assert seen["prlimit"]["limits"]["MEMLOCK"] == [0, 0] and seen["prlimit"]["limits"]["MSGQUEUE"] == [0, 0]


def test_a_pool_that_cannot_make_namespaces_leaves_it_to_bwrap(bwrap_launcher, tmp_path):
    """Never the host's network: where the worker cannot make a namespace
    (no CAP_SYS_ADMIN), each bot gets bwrap's --unshare-net, as before."""
    if bwrap_launcher.bot_exec is None:
        pytest.skip(f"no bot-exec here: {bwrap_launcher.bot_exec_note}")
    launcher = launcher_like(bwrap_launcher)
    assert launcher.netns is not None
    launcher.netns.problem = "unshare(CLONE_NEWNET) failed: Operation not permitted (as a worker without CAP_SYS_ADMIN)"
    recording = RecordingLauncher(launcher)
    out, err, status = finish(start(recording, tmp_path, INSPECT_START))
    assert status == 0, err
    info = json.loads(out)
    assert info["netns"] != os.readlink("/proc/self/ns/net") and info["lo"] == 1
    assert_host_clean(recording.procs)


@pytest.mark.parametrize(
    "sent, said",
    [(None, "the bot's stdin and stdout never came"), (1, "not the bot's stdin and stdout"), (3, "not the bot's stdin and stdout")],
)
def test_bot_exec_hands_over_only_two_descriptors(bot_exec, tmp_path, sent, said):
    """--stdio-socket: no message (the worker gave up), or other than two
    descriptors: refused, and the program never runs."""
    marker = tmp_path / "ran"
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with parent, child:
        proc = subprocess.Popen(
            [bot_exec, f"--stdio-socket={child.fileno()}", "--", "/usr/bin/touch", str(marker)],
            pass_fds=[child.fileno()],
            stderr=subprocess.PIPE,
            text=True,
        )
        child.close()
        # first, as the worker does, the start-up filter's listener (decision 237)
        _, [listener], _, _ = socket.recv_fds(parent, 1, 1)
        os.close(listener)
        if sent is not None:
            null = os.open(os.devnull, os.O_RDONLY)
            socket.send_fds(parent, [b"\0"], [null] * sent)
            os.close(null)
        parent.close()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == EXIT_REFUSED and said in err, err
    assert not marker.exists()


def test_a_forked_process_never_lends_its_parents_namespaces(bwrap_launcher):
    """A prefork pool's child inherits the launcher: its pool starts empty,
    so no namespace can be lent in two processes at once."""
    pool = bwrap_launcher.netns
    if pool is None or pool.problem is not None:
        pytest.skip("no pool of network namespaces here (bwrap makes one per bot)")
    fd = pool.acquire()
    assert fd is not None
    parents = os.fstat(fd).st_ino
    pool.release(fd, clean=True)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            lent = pool.acquire()
            os.write(write_end, str(os.fstat(lent).st_ino if lent is not None else -1).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    childs = int(os.read(read_end, 64) or b"-1")
    os.close(read_end)
    assert childs not in (-1, parents)
    again = pool.acquire()  # the parent's own pool is as it was
    try:
        assert os.fstat(again).st_ino == parents
    finally:
        pool.release(again, clean=True)
