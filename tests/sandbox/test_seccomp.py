"""The bots' seccomp filter, in the real sandbox (issue 10, item 3).

Two copies of one bot in one match try to pass a 32-bit secret from seat 0
to seat 1 through the shared read-only /usr (locks and inotify): with the
filter the secret does not cross and every attempt fails with EPERM; the
same match in a sandbox without the filter shows that the channels are real.
The calls and socket families a bot never needs are refused with EPERM
(the io_* calls with ENOSYS), while what CPython needs (threads,
subprocesses, multiprocessing, asyncio, AF_UNIX) still works. The sandbox refuses to run when the
filter cannot be built, unless the operator opted into the weak mode.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from cardroom.runner import TimeControl
from cardroom.sandbox import BwrapLauncher
from cardroom.sandbox.seccomp import DENIED, build_filter

from .conftest import REPO, RecordingLauncher, assert_host_clean
from .test_hostile_bots import folder_bot, play
from .test_sandbox import run

pytestmark = pytest.mark.sandbox

TIME = TimeControl(startup_ms=20_000, per_move_ms=2_000, overage_ms=5_000, total_ms=60_000, end_grace_ms=1_000)
CHANNELS = ("flock", "posix", "ofd", "inotify")


def secret_and_received(record) -> tuple[str, dict[str, str]]:
    sent = re.search(r"sent (0x[0-9a-f]{8})", record.logs[0])
    assert sent, record.logs[0][-2000:]
    received = re.findall(r"received flock=(\S+) posix=(\S+) ofd=(\S+) inotify=(\S+)", record.logs[1])
    assert len(received) >= 2, f"seat 1 moved too rarely to listen; its log:\n{record.logs[1][-2000:]}"
    return sent.group(1), dict(zip(CHANNELS, received[-1], strict=True))


def test_the_secret_does_not_cross_between_seats(recording, tmp_path):
    bot = folder_bot(tmp_path, "signaller.py")
    record = play(recording, [bot, bot], seed=11, time=TIME)
    assert record.replay["result"]["forfeits"] == [], record.logs
    secret, received = secret_and_received(record)
    assert received == dict.fromkeys(CHANNELS, "0x00000000"), f"sent {secret}, received {received}"
    for channel in ("flock", "posix", "ofd"):
        assert f"{channel}: denied (errno 1)" in record.logs[0], record.logs[0][-2000:]
    for channel in ("flock", "posix", "ofd", "inotify"):
        assert f"{channel}: denied (errno 1)" in record.logs[1], record.logs[1][-2000:]
    assert_host_clean(recording.procs)


def test_without_the_filter_the_secret_crosses(bwrap_launcher, tmp_path):
    """The control: the same bots in the same sandbox minus the filter, both
    seats on one copy of the image (each seat's own copy, decision 268,
    would stop the locks too). If this ever fails, the test above no longer
    proves anything."""
    unfiltered = RecordingLauncher(
        BwrapLauncher(bwrap_launcher.bwrap, bwrap_launcher.controllers, seccomp=None), every_seat_as=0
    )
    bot = folder_bot(tmp_path, "signaller.py")
    record = play(unfiltered, [bot, bot], seed=11, time=TIME)
    secret, received = secret_and_received(record)
    locks = {channel: received[channel] for channel in ("flock", "posix", "ofd")}
    assert locks == dict.fromkeys(locks, secret), f"sent {secret}, received {received}"
    # inotify also hears whoever else on this machine opens those files
    assert int(received["inotify"], 16) & int(secret, 16) == int(secret, 16), f"sent {secret}, received {received}"
    assert_host_clean(unfiltered.procs)


SYSCALLS = """
    import asyncio, ctypes, errno, fcntl, json, mmap, multiprocessing, os, socket, struct, subprocess, sys, threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    out = {}
    def attempt(name, call):
        try:
            result = call()
            out[name] = "ok" if result is None or (isinstance(result, int) and result >= 0) else errno.errorcode[ctypes.get_errno()]
        except OSError as exc:
            out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
    def raw(number, *args):
        return lambda: libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    usr = os.open("/usr/bin/python3", os.O_RDONLY)
    attempt("flock", lambda: fcntl.flock(usr, fcntl.LOCK_SH))
    attempt("fcntl F_SETLK", lambda: fcntl.fcntl(usr, fcntl.F_SETLK, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 1, 0)))
    attempt("fcntl F_GETLK", lambda: fcntl.fcntl(usr, fcntl.F_GETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 1, 0)))
    attempt("fcntl F_OFD_SETLK", lambda: fcntl.fcntl(usr, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 1, 0)))
    attempt("fcntl F_NOTIFY", lambda: fcntl.fcntl(os.open("/usr", os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_ACCESS))
    lock = ctypes.create_string_buffer(struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 1, 0))
    # F_SETLK with high bits set: the kernel reads only the low 32 bits
    attempt("fcntl F_SETLK high bits", raw(72, usr, (1 << 32) | fcntl.F_SETLK, ctypes.addressof(lock)))
    attempt("fcntl F_GETFL", lambda: fcntl.fcntl(usr, fcntl.F_GETFL))
    attempt("inotify_init1", raw(294, 0))
    attempt("fanotify_init", raw(300, 0, 0))
    attempt("keyctl", raw(250, 0, 0))
    attempt("add_key", raw(248, 0, 0, 0, 0, 0))
    attempt("bpf", raw(321, 0, 0, 0))
    attempt("perf_event_open", raw(298, 0, 0, -1, -1, 0))
    attempt("userfaultfd", raw(323, 0))
    attempt("io_uring_setup", raw(425, 1, 0))
    attempt("mount", raw(165, 0, 0, 0, 0, 0))
    attempt("unshare", lambda: os.unshare(os.CLONE_NEWNET) if hasattr(os, "unshare") else libc.unshare(0x40000000))
    attempt("setns", raw(308, usr, 0))
    attempt("ptrace", raw(101, 16, 1, 0, 0))
    attempt("process_vm_readv", raw(310, 1, 0, 0, 0, 0, 0))
    attempt("personality", raw(135, 0xFFFFFFFF))
    attempt("clone3", raw(435, 0, 0))
    attempt("cachestat", raw(451, usr, 0, 0, 0))
    attempt("memfd_secret", raw(447, 0))
    attempt("sysinfo", raw(99, ctypes.addressof(ctypes.create_string_buffer(128))))
    buf = bytearray(16)
    attempt("preadv2 RWF_NOWAIT", lambda: os.preadv(usr, [buf], 0, os.RWF_NOWAIT))
    attempt("preadv2", lambda: os.preadv(usr, [buf], 0, 0))
    attempt("posix_fadvise DONTNEED", lambda: os.posix_fadvise(usr, 0, 0, os.POSIX_FADV_DONTNEED))
    attempt("posix_fadvise WILLNEED", lambda: os.posix_fadvise(usr, 0, 0, os.POSIX_FADV_WILLNEED))
    mapped = mmap.mmap(usr, 4096, prot=mmap.PROT_READ)
    attempt("madvise MADV_PAGEOUT", lambda: mapped.madvise(21))
    attempt("madvise MADV_COLD", lambda: mapped.madvise(20))
    attempt("madvise MADV_DONTNEED", lambda: mapped.madvise(mmap.MADV_DONTNEED))
    for family in ("AF_NETLINK", "AF_PACKET", "AF_VSOCK", "AF_ALG", "AF_KEY", "AF_BLUETOOTH", "AF_APPLETALK"):
        attempt("socket " + family, lambda f=family: socket.socket(getattr(socket, f, {"AF_KEY": 15, "AF_APPLETALK": 5}.get(f, 0)), socket.SOCK_RAW if f != "AF_VSOCK" else socket.SOCK_STREAM).close())
    attempt("socket family 1 with high bits", raw(41, (1 << 32) | 1, 1, 0))
    attempt("socketpair AF_NETLINK", raw(53, 16, 3, 0, ctypes.addressof(ctypes.create_string_buffer(8))))
    # Other ABIs: x32 (the same numbers with bit 30) ...
    attempt("x32 getpid", raw(0x40000000 | 39))
    # ... and 32-bit int 0x80 (getpid is 20 there), run in a child: a kernel
    # without 32-bit emulation kills it with SIGSEGV instead.
    code = "import ctypes, mmap; m = mmap.mmap(-1, 4096, prot=7); m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])); f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m))); print(f())"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    out["int 0x80 getpid"] = child.stdout.strip() if child.returncode == 0 else "signal %d" % -child.returncode
    # TCP and UDP: their buffers are the host's, not the bot's cgroup's.
    attempt("socket AF_INET", lambda: socket.socket(socket.AF_INET).close())
    attempt("socket AF_INET6", lambda: socket.socket(socket.AF_INET6).close())
    attempt("socket AF_INET UDP", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close())
    # The native AIO calls: ENOSYS, as from a kernel without AIO.
    ctx = ctypes.c_ulong(0)
    attempt("io_setup", raw(206, 1, ctypes.addressof(ctx)))
    for name, number in (("io_destroy", 207), ("io_getevents", 208), ("io_submit", 209), ("io_cancel", 210), ("io_pgetevents", 333)):
        attempt(name, raw(number, 0, 0, 0, 0, 0))
    # What CPython needs.
    pair = socket.socketpair()
    pair[0].sendall(b"x"); out["socketpair AF_UNIX"] = pair[1].recv(1).decode()
    server = socket.socket(socket.AF_UNIX); server.bind("/tmp/unix-socket"); server.listen()
    client = socket.socket(socket.AF_UNIX); client.connect("/tmp/unix-socket"); conn, _ = server.accept(); client.sendall(b"y")
    out["AF_UNIX stream"] = conn.recv(1).decode()
    t = threading.Thread(target=lambda: out.__setitem__("thread", "ran")); t.start(); t.join()
    out["subprocess"] = subprocess.run([sys.executable, "-c", "pass"]).returncode
    async def echo():
        srv = await asyncio.start_unix_server(lambda r, w: (w.write(b"z"), w.close()), "/tmp/asyncio-socket")
        reader, writer = await asyncio.open_unix_connection("/tmp/asyncio-socket")
        data = await reader.read(1); writer.close(); srv.close()
        return data.decode()
    out["asyncio"] = asyncio.run(echo())  # its own wake-up socketpair is AF_UNIX
    with multiprocessing.get_context("fork").Pool(2) as pool:
        out["multiprocessing fork"] = sum(pool.map(abs, [-1, -2, -3]))
    queue = multiprocessing.get_context("spawn").Queue()
    proc = multiprocessing.get_context("spawn").Process(target=queue.put, args=("spawned",)); proc.start()
    out["multiprocessing spawn"] = queue.get(timeout=30); proc.join()
    lock_ = multiprocessing.Lock(); lock_.acquire(); lock_.release(); out["multiprocessing lock"] = "ok"
    out["pid"] = os.getpid()
    json.dump(out, sys.stdout)
"""


def test_denied_calls_fail_with_eperm_and_python_still_works(bwrap_launcher, tmp_path):
    # (multiprocessing's spawn imports the main module again: guard it)
    guarded = "if __name__ == '__main__':\n" + textwrap.indent(textwrap.dedent(SYSCALLS), "    ")
    info, err, status = run(bwrap_launcher, tmp_path, guarded)
    assert status == 0, err
    denied = [
        "flock", "fcntl F_SETLK", "fcntl F_GETLK", "fcntl F_OFD_SETLK", "fcntl F_NOTIFY", "fcntl F_SETLK high bits",
        "inotify_init1", "fanotify_init", "keyctl", "add_key", "bpf", "perf_event_open", "userfaultfd",
        "io_uring_setup", "mount", "unshare", "setns", "ptrace", "process_vm_readv", "personality", "cachestat", "memfd_secret", "sysinfo",
        "preadv2 RWF_NOWAIT", "posix_fadvise DONTNEED", "madvise MADV_PAGEOUT", "madvise MADV_COLD", "socket AF_NETLINK", "socket AF_PACKET", "socket AF_VSOCK", "socket AF_ALG",
        "socket AF_KEY", "socket AF_BLUETOOTH", "socket AF_APPLETALK", "socket family 1 with high bits",
        "socketpair AF_NETLINK", "x32 getpid", "socket AF_INET", "socket AF_INET6", "socket AF_INET UDP",
    ]
    assert {name: info[name] for name in denied} == dict.fromkeys(denied, "EPERM"), info
    assert info["clone3"] == "ENOSYS"  # so that glibc falls back to clone, whose flags the filter sees
    aio = ["io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel", "io_pgetevents"]
    assert {name: info[name] for name in aio} == dict.fromkeys(aio, "ENOSYS"), info
    assert info["int 0x80 getpid"] in ("-1", "signal 11"), info["int 0x80 getpid"]  # never the pid
    assert info["fcntl F_GETFL"] == "ok" and info["preadv2"] == "ok"
    assert info["posix_fadvise WILLNEED"] == "ok" and info["madvise MADV_DONTNEED"] == "ok"  # malloc trims with it
    assert info["socketpair AF_UNIX"] == "x" and info["AF_UNIX stream"] == "y"
    assert info["thread"] == "ran" and info["subprocess"] == 0 and info["asyncio"] == "z"
    assert info["multiprocessing fork"] == 6 and info["multiprocessing spawn"] == "spawned"
    assert info["multiprocessing lock"] == "ok"


def test_the_filter_covers_every_denied_call_of_this_architecture():
    built = build_filter()
    assert built.arch == "x86_64" or not sys.platform.startswith("linux")
    assert built.skipped == [], f"calls left out of the filter: {built.skipped}"
    assert len(built.program) % 8 == 0 and len(built.program) // 8 > len(DENIED)
    assert "EPERM" in built.describe()


PROBE_WITHOUT_BINDING = """
import sys
sys.modules["pyseccomp"] = None  # as if the package were not installed
from cardroom.sandbox import SandboxUnavailable, get_launcher, probe
try:
    get_launcher("bwrap")
    print("RAN")
except SandboxUnavailable as exc:
    print("REFUSED", exc)
print(probe().describe())
"""


@pytest.mark.parametrize("waived", [False, True])
def test_the_sandbox_refuses_to_run_without_the_filter_unless_waived(bwrap_launcher, waived):
    env = {k: v for k, v in os.environ.items() if k != "CARDROOM_SANDBOX_WEAK_LIMITS"}
    if waived:
        env["CARDROOM_SANDBOX_WEAK_LIMITS"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", PROBE_WITHOUT_BINDING], cwd=REPO, capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    if waived:
        assert out.stdout.startswith("RAN"), out.stdout
        assert re.search(r"seccomp \(.*\): NOT IN FORCE: the pyseccomp package is not installed", out.stdout), out.stdout
        assert "WITHOUT these limits: seccomp" in out.stdout, out.stdout
    else:
        first = out.stdout.splitlines()[0]
        assert first.startswith("REFUSED") and "cannot be applied here: seccomp" in first, out.stdout
        assert "pip install pyseccomp" in first and "CARDROOM_SANDBOX_WEAK_LIMITS=1" in first, first


# Its mounts, then it stays (its namespaces and mounts alive) until told to
# go: a finished sandbox's anonymous device numbers are reused by the next
# one's mounts, and two mounts compared must exist at once.
MOUNTS = """
    import json, sys
    print(json.dumps(open("/proc/self/mountinfo").read().splitlines()), flush=True)
    sys.stdin.readline()
"""
# Writable mounts a sandbox may have, each of its own or without state.
PRIVATE_RW = {"/proc": "proc", "/tmp": "tmpfs", "/dev/shm": "tmpfs"}
STATELESS_DEVICES = {"/dev/null", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}


def mounts_of(lines: list[str]) -> dict[str, tuple[str, str, bool]]:
    """mount point -> (device, fs type, writable)"""
    out = {}
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        out[fields[4]] = (fields[2], right.split()[0], "rw" in fields[5].split(","))
    return out


def test_no_path_shared_between_seats_carries_writable_state(bwrap_launcher, tmp_path):
    """Two bots at once: every mount they share is read-only; what is
    writable is each bot's own (its /tmp, /dev/shm, /proc) or a
    device without state."""
    from .test_sandbox import read_line, start, wait_exit

    for seat in range(2):
        (tmp_path / f"seat-{seat}").mkdir()
    procs = [start(bwrap_launcher, tmp_path / f"seat-{seat}", MOUNTS) for seat in range(2)]
    try:
        seen = [mounts_of(json.loads(read_line(proc.stdout_fd))) for proc in procs]
        for proc in procs:
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        for proc in procs:
            assert wait_exit(proc) == 0
    finally:
        for proc in procs:
            proc.kill()
    for mounts in seen:
        for point, (_device, fstype, writable) in mounts.items():
            if writable:
                assert PRIVATE_RW.get(point) == fstype or point in STATELESS_DEVICES, f"{point} ({fstype}) is writable"
    shared = {point for point in seen[0] if point in seen[1] and seen[0][point][0] == seen[1][point][0]}
    assert shared, "the two sandboxes share /usr at least"
    for point in shared:
        assert not seen[0][point][2] or point in STATELESS_DEVICES, f"{point} is shared and writable"
    for point in PRIVATE_RW:
        assert seen[0][point][0] != seen[1][point][0], f"{point} is the same mount in both sandboxes"
    assert_host_clean(procs)


def test_the_probe_and_the_status_line_name_the_filter(bwrap_launcher):
    """/ops/status/ and the worker's start-up log show probe().limits_summary()."""
    from cardroom.sandbox import probe

    report = probe()
    seccomp = [limit for limit in report.limits if limit.name == "seccomp"]
    assert len(seccomp) == 1 and seccomp[0].in_force, report.describe()
    assert "seccomp filter of" in report.describe()
    held = report.limits_summary().split(";")[0]
    assert held.startswith("limits in force: ") and "seccomp" in held, report.limits_summary()
