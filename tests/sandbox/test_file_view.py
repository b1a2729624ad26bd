"""What a bot sees of files and of /proc (cardroom/sandbox/image.py and
procview.py, decisions 175-178), on the real sandbox: the mechanism only
(the covert-channel attacks between seats and between matches, written as
writer and reader bots, are tested apart, with benchmarks/covert_channels.py).

* Its root is its runtime's tree of the image: a tmpfs mounted noatime
  and read-only, holding that runtime's files only; the run folders and the
  file cache are on a noatime tmpfs too.
* A file read by one bot leaves no trace for the next: no blocks read
  (``ru_inblock``, ``/proc/self/io``'s ``read_bytes``) and no access time,
  whether it was read before or never: the library's files and the bot's
  own package's alike.
* ``/proc`` holds nothing of the host's: with subset=pid only the bot's
  processes and five static files (``meminfo`` the bot's own limit), else
  every host file empty or static; ``mountinfo`` no host path.
* Images no living worker uses are removed; the files limit fails closed.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from cardroom.launch import BotLimits
from cardroom.runtimes import runtime_argv, runtime_limits
from cardroom.sandbox import image, procview, runs_dir, state_dir

from .conftest import REPO, RecordingLauncher, assert_host_clean, launcher_like
from .native import node_package
from .test_sandbox import finish, read_line, start

pytestmark = pytest.mark.sandbox

# Reads the files named on its first line and says, for each, what reading
# it cost: blocks read by rusage and by /proc/self/io, and its access time
# before and after.
READER = """
import json, os, resource, sys
def io_read_bytes():
    return int(dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())["read_bytes"])
paths = json.loads(sys.stdin.readline())
out = {}
for path in paths:
    before = os.stat(path).st_atime_ns
    blocks, io = resource.getrusage(resource.RUSAGE_SELF).ru_inblock, io_read_bytes()
    with open(path, "rb") as f:
        size = len(f.read())
    out[path] = {
        "size": size,
        "inblock": resource.getrusage(resource.RUSAGE_SELF).ru_inblock - blocks,
        "read_bytes": io_read_bytes() - io,
        "atime": [before, os.stat(path).st_atime_ns],
    }
print(json.dumps(out), flush=True)
"""

# Rarely read files of the python runtime's tree, and the bot's own file.
RARE = [
    "/usr/lib/python3.11/pydoc_data/topics.py",
    "/usr/lib/python3.11/turtle.py",
    "/usr/lib/python3.11/lib2to3/Grammar.txt",
    "/usr/lib/python3/dist-packages/numpy/__config__.py",
    "/bot/own.bin",
]


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    (root / "bot.py").write_text(READER)
    (root / "own.bin").write_bytes(os.urandom(200_000))
    return root


def _read(launcher, root: Path, paths: list[str]) -> dict:
    """One run of the package ``root`` (as each rotation of a duplicate
    deal runs the same package): what reading ``paths`` cost it."""
    return _ask(launcher.spawn(root, ["/usr/bin/python3", "bot.py"], BotLimits()), json.dumps(paths))


def _ask(proc, line: str):
    """Send the started bot ``line``; its one line of JSON back, and it ends."""
    try:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        return json.loads(read_line(proc.stdout_fd))
    finally:
        finish(proc)


def test_the_image_and_the_run_folders_are_in_memory_noatime_and_the_image_read_only(bwrap_launcher):
    view = bwrap_launcher.image
    assert view.in_memory, view.how
    for folder in (view.root, runs_dir()):
        flags = os.statvfs(folder).f_flag
        assert image.in_memory(folder) and flags & os.ST_NOATIME, folder
    assert os.statvfs(view.root).f_flag & os.ST_RDONLY
    with pytest.raises(OSError):
        (view.tree("python") / "usr" / "planted").write_text("x")  # not even root writes it
    # Each runtime's tree: its own program and libraries, not the others'.
    python, node, native = (view.tree(name) for name in ("python", "node", "native"))
    assert (python / "usr/lib/python3/dist-packages/numpy/__init__.py").is_file()
    assert (python / "cardroom-sdk/cardroom_sdk/__init__.py").is_file()
    assert not (node / "usr/lib/python3.11").exists() and not (native / "usr/bin/python3").exists()
    assert (native / "usr/lib/x86_64-linux-gnu/libstdc++.so.6").exists() and (native / "cardroom/bot-exec").is_file()
    assert not (python / "usr/share/locale").exists()
    # Of /usr/local, ONNX Runtime alone, for Python bots alone, without its offline tools (decision 220).
    (local,) = (python / "usr/local/lib").glob("python3.*/dist-packages")
    assert {p.name.split("-")[0] for p in local.iterdir()} == {"onnxruntime"}
    assert (local / "onnxruntime/capi").is_dir() and not (local / "onnxruntime/quantization").exists()
    assert not (node / "usr/local").exists() and not (native / "usr/local").exists()
    # One copy of what the trees share (libc): hard links, not three copies.
    libc = [tree / "usr/lib/x86_64-linux-gnu/libc.so.6" for tree in (python, node, native)]
    assert len({os.stat(path).st_ino for path in libc}) == 1
    # Nothing in it is anyone's but root's to write.
    for dirpath, dirnames, filenames in os.walk(view.root):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            assert st.st_uid == 0 and (stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o022), os.path.join(dirpath, name)


def test_a_file_read_by_one_bot_shows_no_trace_to_the_next(bwrap_launcher, tmp_path):
    """The first bot reads the rare files; the second reads them again and
    some that no bot has read since the image was made: every read costs
    no block by either count, and no access time moves."""
    recording = RecordingLauncher(bwrap_launcher)
    root = _package(tmp_path)
    first = _read(recording, root, RARE)
    never = ["/usr/lib/python3.11/this.py", "/usr/lib/python3.11/antigravity.py"]
    second = _read(recording, root, RARE + never)
    for reading in (first, second):
        for path, seen in reading.items():
            assert seen["size"] > 0, path
            assert (seen["inblock"], seen["read_bytes"]) == (0, 0), (path, seen)
            assert seen["atime"][0] == seen["atime"][1], (path, seen)
    for path in RARE:
        # What the first saw before reading is what the second sees after it.
        assert second[path]["atime"] == first[path]["atime"], path
    assert_host_clean(recording.procs)


# Lists its /proc, reads each name it is given there (None: no such file,
# "EACCES": only root may read it), and its mountinfo.
PROC_READER = """
import json, os, sys
names = json.loads(sys.stdin.readline())
out = {"listed": sorted(n for n in os.listdir("/proc") if not n.isdigit()), "files": {}, "folders": {}}
for name in names:
    path = "/proc/" + name
    if os.path.isdir(path):
        out["folders"][name] = sorted(os.listdir(path))
        continue
    try:
        out["files"][name] = open(path, "rb").read().decode("latin-1")
    except FileNotFoundError:
        out["files"][name] = None
    except PermissionError:
        out["files"][name] = "EACCES"
out["mountinfo"] = open("/proc/self/mountinfo").read()
out["cpu_count"] = os.cpu_count()
print(json.dumps(out), flush=True)
"""

# The files issue 35 names (and pressure/), besides every entry of the host's /proc.
LISTED = ["meminfo", "loadavg", "stat", "diskstats", "cmdline", "key-users", "interrupts", "softirqs", "zoneinfo", "buddyinfo", "vmstat", "pressure"]


def _proc_seen(launcher, tmp_path: Path, limits: BotLimits) -> dict:
    names = sorted({n for n in os.listdir("/proc") if not n.isdigit() and n not in ("self", "thread-self")} | set(LISTED))
    return _ask(start(launcher, tmp_path, PROC_READER, limits=limits), json.dumps(names))


def _assert_nothing_of_the_host(seen: dict, limits: BotLimits, subset: bool) -> None:
    static = {"stat": procview.STAT, "loadavg": procview.LOADAVG, "uptime": procview.UPTIME}
    for name, text in seen["files"].items():
        if name == "meminfo":
            assert text == procview.meminfo(limits.memory_bytes).decode()
        elif name in static:
            assert text == static[name], name
        elif name == "cpuinfo":
            assert text.startswith("processor\t: 0") and "cpu MHz" not in text and "processor\t: 1" not in text
        elif subset:
            assert text is None, (name, text[:200])  # not there at all
        elif name == "version" or name in ("mounts", "net"):
            pass  # as uname(2) says; links into the bot's own /proc/self
        else:
            # Empty, or a file only root may read (the bot cannot open it).
            assert text in ("", "EACCES") or text is None, (name, text[:200])
            assert text != "EACCES" or not os.stat(f"/proc/{name}").st_mode & 0o044, name
    assert "MemTotal:         307200 kB" in seen["files"]["meminfo"]  # the bot's own limit
    # pressure/*, irq/*, fs/* ...: empty or not there; net and sysvipc are the bot's own namespaces'.
    assert {name: entries for name, entries in seen["folders"].items() if entries and name not in ("net", "sysvipc")} == {}
    if subset:
        assert seen["listed"] == ["self", "thread-self"] and seen["folders"] == {}  # no sys, net, sysvipc either
    assert seen["cpu_count"] == 1  # glibc counts the processors of /proc/stat: the bot's one core
    # No mount shows a host path: every source is a tmpfs of ours (its
    # path inside it) or the bot's procfs.
    roots = [line.split()[3] for line in seen["mountinfo"].splitlines()]
    host = (str(state_dir()), str(REPO), "/usr", "/etc", "/work", "/run", "/home")
    assert [root for root in roots if root.startswith(host)] == [], seen["mountinfo"]
    assert roots[0] == "/python"


def test_proc_shows_the_bot_only_its_own_processes(bwrap_launcher, tmp_path):
    """Its procfs remounted with subset=pid: its processes, self, and the
    static files a runtime reads; nothing else, not even by name."""
    if not bwrap_launcher.proc_subset:
        pytest.skip("this kernel's procfs has no subset=pid (Linux 5.8)")
    limits = BotLimits(memory_bytes=300 * 1024 * 1024)
    _assert_nothing_of_the_host(_proc_seen(bwrap_launcher, tmp_path, limits), limits, subset=True)
    assert sorted(n for n in os.listdir("/proc") if not n.isdigit())[:3] != ["self", "thread-self"]  # the host's is whole


def test_without_the_remount_every_host_file_of_proc_is_covered(bwrap_launcher, tmp_path):
    """Where the bot's start has no hand-over to wait for (or the kernel no
    subset=pid), each host file is covered by an empty or static one."""
    launcher = launcher_like(bwrap_launcher)
    launcher.proc_subset = False
    limits = BotLimits(memory_bytes=300 * 1024 * 1024)
    seen = _proc_seen(launcher, tmp_path, limits)
    for name in LISTED:
        if os.path.exists(f"/proc/{name}"):
            assert name in seen["listed"], name  # there, but empty
    _assert_nothing_of_the_host(seen, limits, subset=False)


NODE_LOOKS = """
const os = require("os");
process.stdin.once("data", () => {
  process.stdout.write(JSON.stringify({ total: os.totalmem(), free: os.freemem(), load: os.loadavg(), cpus: os.cpus().length, uptime: os.uptime() }) + "\\n");
  process.exit(0);
});
"""


def test_node_reads_the_bots_own_memory_and_one_core(bwrap_launcher, tmp_path):
    source = tmp_path / "looks.js"
    source.write_text(NODE_LOOKS)
    folder = node_package(tmp_path / "bot", source)
    limits = runtime_limits("node", BotLimits())
    seen = _ask(bwrap_launcher.spawn(folder, runtime_argv("node", "main.js", limits), limits), "go")
    assert seen == {"total": limits.memory_bytes, "free": limits.memory_bytes, "load": [0, 0, 0], "cpus": 1, "uptime": 0}


def test_the_measure_sees_a_read_that_reaches_the_disk(tmp_path):
    """The control: on a disk's file system, a file out of the page cache
    costs blocks by both counts, so the zeros above mean something. (Here,
    in the test's own process: a host file, written, synced, evicted.)"""
    import resource

    path = tmp_path / "on-disk.bin"
    path.write_bytes(os.urandom(1 << 20))
    if image.in_memory(tmp_path):
        pytest.skip(f"{tmp_path} is not on a disk")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        io = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
        blocks = resource.getrusage(resource.RUSAGE_SELF).ru_inblock
        while os.read(fd, 1 << 16):
            pass
        after = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
        assert resource.getrusage(resource.RUSAGE_SELF).ru_inblock - blocks > 0
        assert int(after["read_bytes"]) - int(io["read_bytes"]) > 0
    finally:
        os.close(fd)


def test_files_not_in_memory_refuse_the_sandbox_unless_weak_mode_is_asked_for(monkeypatch, reprobe):
    """Fail closed: run folders on a disk (a worker that cannot mount a
    tmpfs, a state folder not on one) are a missing limit."""
    probe_module = importlib.import_module("cardroom.sandbox.probe")  # (the package's ``probe`` is the function)
    monkeypatch.setattr(probe_module, "prepare_runs", lambda: (False, "cannot mount a tmpfs on /x: Operation not permitted"))
    monkeypatch.delenv("CARDROOM_SANDBOX_WEAK_LIMITS", raising=False)
    report = reprobe()
    assert not report.ok
    assert "limits that cannot be applied here: files" in report.error and "noatime" in report.error, report.error
    monkeypatch.setenv("CARDROOM_SANDBOX_WEAK_LIMITS", "1")
    report = reprobe()
    assert report.ok and "NOT in force: files" in report.limits_summary()


def test_a_seat_s_copy_of_the_image_is_the_same_files_in_other_pages(bwrap_launcher):
    """Seats 1 and up read their own copy of their runtime's tree (decision
    268): the same names, modes, sizes, owners and links as seat 0's, in
    memory and read-only like it, but another file system (other pages:
    nothing one seat reads is in the CPU's caches for another)."""
    view = bwrap_launcher.image
    first, copy = view.tree("native"), view.tree("native", 1)
    assert view.tree("native", 1) == copy and view.tree("native", 2) != copy
    assert image.in_memory(copy) and os.statvfs(copy).f_flag & os.ST_RDONLY
    with pytest.raises(OSError):
        (copy / "usr" / "planted").write_text("x")

    def listing(tree: Path) -> dict[str, tuple]:
        seen = {}
        for dirpath, dirnames, filenames in os.walk(tree):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
                seen[os.path.relpath(path, tree)] = (st.st_mode, st.st_size, st.st_uid, st.st_gid, link)
        return seen

    assert listing(copy) == listing(first)
    assert os.stat(copy).st_dev != os.stat(first).st_dev


def test_an_image_no_worker_uses_is_removed_and_one_in_use_is_kept(bwrap_launcher):
    """A new version's worker frees the memory of the old images, but never
    one a living worker (holding its lock) still starts bots from."""
    locks = state_dir() / "locks"
    unused, in_use = state_dir() / "image-0000000000000000", state_dir() / "image-1111111111111111"
    for folder in (unused, in_use):
        (folder / "python" / "usr").mkdir(parents=True)
    holder = os.open(locks / f"{in_use.name}.use", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_SH)  # as a worker of that version does
        launcher = launcher_like(bwrap_launcher)
        assert not unused.exists() and not (locks / f"{unused.name}.use").exists()
        assert in_use.exists() and launcher.image.root.exists()
    finally:
        os.close(holder)
        shutil.rmtree(in_use, ignore_errors=True)
        (locks / f"{in_use.name}.use").unlink(missing_ok=True)


def test_where_the_procfs_cannot_be_remounted_the_probe_covers_every_host_file(monkeypatch, reprobe, tmp_path):
    """A worker in a container without ptrace rights over the bots' uids
    cannot look into /proc/PID to remount the bot's procfs (EACCES on
    /proc/PID/exe, seen in the compose stack): the probe falls back to
    covering every host file with a bind, and a bot still sees no host
    counter, instead of every match failing."""
    bwrap_module = importlib.import_module("cardroom.sandbox.bwrap")

    def denied(inner_pid, bwrap, deadline):
        raise PermissionError(13, "Permission denied", f"/proc/{inner_pid}/exe")

    monkeypatch.setattr(bwrap_module, "show_only_processes", denied)
    report = reprobe()
    assert report.ok, report.error
    assert any(note.startswith("/proc: every host file covered by a bind (the remount failed") for note in report.notes), report.notes
    launcher = importlib.import_module("cardroom.sandbox.probe")._LAUNCHER
    assert launcher is not None and launcher.proc_subset is False
    limits = BotLimits(memory_bytes=300 * 1024 * 1024)
    _assert_nothing_of_the_host(_proc_seen(launcher, tmp_path, limits), limits, subset=False)
