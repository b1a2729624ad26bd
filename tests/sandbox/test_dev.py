"""A bot's /dev (decision 159) and what each runtime sees beside it
(decision 160), on the real sandbox: exactly the prepared entries for a
bot of every runtime, none of them writable or removable, no pty, the
devices working, its own limited /dev/shm; the prepared folder read-only
even for root on the host, rebuilt when it is not as it should be; and,
where it cannot be made (no CAP_MKNOD), the same entries built per bot,
read-only and without ptys."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cardroom.launch import BotLimits
from cardroom.runtimes import runtime_argv, runtime_limits
from cardroom.sandbox import devdir

from .conftest import REPO, RecordingLauncher, assert_host_clean, launcher_like
from .native import HERE, compile_c, native_package, node_package
from .test_sandbox import finish, remove_state

pytestmark = pytest.mark.sandbox

# The Python form of runtimes/dev_view.c and dev_view.js: the same keys.
DEV_VIEW_PY = """
import json, os, stat, sys
if os.getpid() != 1 or os.getuid() == 0:  # never on a host: it tries to change /dev
    sys.exit("dev_view: not in a sandbox: refusing to touch /dev")
def listing(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return __import__("errno").errorcode[exc.errno]
out = {"dev": {}}
for name in listing("/dev"):
    st = os.lstat("/dev/" + name)
    mine = int(st.st_uid == os.getuid())
    if stat.S_ISCHR(st.st_mode):
        out["dev"][name] = ["chr", stat.S_IMODE(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev), mine]
    elif stat.S_ISLNK(st.st_mode):
        out["dev"][name] = ["lnk", os.readlink("/dev/" + name), mine]
    elif stat.S_ISDIR(st.st_mode):
        out["dev"][name] = ["dir", mine]
    else:
        out["dev"][name] = ["other", mine]
out["etc"] = listing("/etc")
out["root"] = listing("/")
out["dist_packages"] = listing("/usr/lib/python3/dist-packages")
out["pts"] = listing("/dev/pts")
out["create"] = attempt(lambda: os.close(os.open("/dev/x", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)))
out["mkdir"] = attempt(lambda: os.mkdir("/dev/d"))
out["mkfifo"] = attempt(lambda: os.mkfifo("/dev/f"))
out["symlink"] = attempt(lambda: os.symlink("/tmp", "/dev/l"))
out["unlink"] = attempt(lambda: os.unlink("/dev/null"))
out["chmod"] = attempt(lambda: os.chmod("/dev", 0o777))
out["null"] = attempt(lambda: open("/dev/null", "wb").write(b"x"))
out["urandom"] = len(open("/dev/urandom", "rb").read(16))
out["ptmx"] = attempt(lambda: os.openpty())
out["shm_write"] = attempt(lambda: open("/dev/shm/x", "wb").write(b"x"))
v = os.statvfs("/dev/shm")
out["shm"] = [v.f_blocks * v.f_frsize, v.f_files]
out["dev_readonly"] = int(bool(os.statvfs("/dev").f_flag & os.ST_RDONLY))
json.dump(out, sys.stdout)
"""

REFUSED = {"EROFS", "EACCES", "EPERM"}
# Built per bot where no prepared /dev can be made: the same entries, the
# folder and links the bot's own (made by bwrap in its user namespace).
BUILT_DEV = {
    "null": ["chr", 0o666, 1, 3, 0],
    "full": ["chr", 0o666, 1, 7, 0],
    "random": ["chr", 0o666, 1, 8, 0],
    "urandom": ["chr", 0o666, 1, 9, 0],
    "tty": ["chr", 0o666, 5, 0, 0],
    "fd": ["lnk", "/proc/self/fd", 1],
    "stdin": ["lnk", "/proc/self/fd/0", 1],
    "stdout": ["lnk", "/proc/self/fd/1", 1],
    "stderr": ["lnk", "/proc/self/fd/2", 1],
    "shm": ["dir", 1],
}


def prepared_dev_view() -> dict[str, list]:
    """What DEV_ENTRIES should look like from inside: root's (not the bot's)
    but /dev/shm, the bot's own mount."""
    view: dict[str, list] = {}
    for name, entry in devdir.DEV_ENTRIES.items():
        if entry[0] == "char":
            view[name] = ["chr", devdir.DEVICE_MODE, entry[1], entry[2], 0]
        elif entry[0] == "link":
            view[name] = ["lnk", entry[1], 0]
        else:
            view[name] = ["dir", 1]
    return view


def run_view(launcher, root: Path, runtime: str, entry: str) -> dict:
    limits = runtime_limits(runtime, BotLimits())
    out, err, status = finish(launcher.spawn(root, runtime_argv(runtime, entry, limits), limits))
    assert status == 0, err
    return json.loads(out)


def view_package(runtime: str, folder: Path) -> tuple[Path, str]:
    if runtime == "native":
        program = compile_c("dev_view.c", folder.parent / "dev_view")
        return native_package(folder, program), "bot"
    if runtime == "node":
        return node_package(folder, HERE / "runtimes" / "dev_view.js"), "main.js"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text(DEV_VIEW_PY)
    return folder, "main.py"


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "built"])
@pytest.mark.parametrize("runtime", ["python", "node", "native"])
def test_what_a_bot_of_each_runtime_sees_of_dev(bwrap_launcher, tmp_path, runtime, prepared):
    """With the prepared /dev, and with the one built per bot where it
    cannot be made: the same entries, as read-only."""
    if prepared:
        launcher = bwrap_launcher
        if launcher.dev is None:
            pytest.skip(f"no prepared /dev here: {launcher.dev_note}")
    else:
        launcher = launcher_like(bwrap_launcher, prepared_dev=False)
        assert launcher.dev is None
    recording = RecordingLauncher(launcher)
    root, entry = view_package(runtime, tmp_path / runtime)
    info = run_view(recording, root, runtime, entry)
    assert info["dev"] == (prepared_dev_view() if prepared else BUILT_DEV), info["dev"]
    # Nothing can be added, removed or changed; no pty (nor devpts).
    tried = {k: info[k] for k in ("create", "mkdir", "mkfifo", "symlink", "unlink", "chmod") if k in info}
    assert tried and set(tried.values()) <= REFUSED, tried
    assert info["dev_readonly"] == 1
    assert info["pts"] == [] and info["ptmx"] == "ENOENT", info
    assert info["null"] == "ok" and info["urandom"] == 16, info
    # /dev/shm: its own, writable, with its size and inode limits.
    assert info["shm_write"] == "ok", info
    limits = BotLimits()
    if launcher.tmpfs_mounts:
        assert info["shm"] == [limits.shm_bytes, limits.shm_inodes], info["shm"]
    # Beside /dev, a node or native bot sees less than a Python one: none of
    # Python's folders and /etc files, an empty dist-packages (decision 160).
    etc = [n for n in ("ld.so.cache", "localtime") if os.path.exists(f"/etc/{n}")]
    if runtime == "python":
        assert {"cardroom", "cardroom-sdk"} <= set(info["root"]), info["root"]
        assert set(etc) < set(info["etc"]), info["etc"]
    else:
        assert sorted(info["etc"]) == etc, info["etc"]
        # /cardroom holds bot-exec, which hands the bot its stdin and stdout (decision 166).
        handed_over = ["cardroom"] if launcher.bot_exec is not None else []
        assert sorted(info["root"]) == sorted(
            ["bin", "bot", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr", *handed_over]
        ), info["root"]
        assert info["dist_packages"] == [], info["dist_packages"]
    assert_host_clean(recording.procs)


def test_bwraps_own_size_limited_shm_mounts_over_the_prepared_dev(bwrap_launcher, tmp_path):
    """Where we cannot mount the bots' tmpfs ourselves (the weak mode of
    decision "tmpfs"), bwrap's --tmpfs /dev/shm goes on the read-only
    folder's mount point the same way."""
    if bwrap_launcher.dev is None:
        pytest.skip(f"no prepared /dev here: {bwrap_launcher.dev_note}")
    weak = launcher_like(bwrap_launcher, tmpfs_mounts=False)
    assert weak.dev == bwrap_launcher.dev
    recording = RecordingLauncher(weak)
    root, entry = view_package("python", tmp_path / "python")
    info = run_view(recording, root, "python", entry)
    assert info["dev"] == prepared_dev_view() and info["dev_readonly"] == 1, info
    assert info["shm_write"] == "ok" and info["shm"][0] == BotLimits().shm_bytes, info
    assert_host_clean(recording.procs)


def test_a_native_bot_named_python_is_not_given_pythons_binds(bwrap_launcher, tmp_path):
    """Whether a bot is Python's is its interpreter under /usr, never the
    name of a native bot's own program."""
    program = compile_c("dev_view.c", tmp_path / "dev_view")
    root = tmp_path / "bot"
    root.mkdir()
    shutil.copy2(program, root / "python3")
    recording = RecordingLauncher(bwrap_launcher)
    info = run_view(recording, root, "native", "python3")
    assert "cardroom-sdk" not in info["root"] and info["dist_packages"] == [], info
    assert_host_clean(recording.procs)


@pytest.fixture
def fresh_state(monkeypatch):
    """A state folder of its own (under /run: searchable by the bots' uids)."""
    folder = Path(f"/run/cardroom-sandbox-devtest-{os.getpid()}")
    folder.mkdir(mode=0o711)
    monkeypatch.setenv("CARDROOM_SANDBOX_DIR", str(folder))
    yield folder
    remove_state(folder)


def test_the_prepared_dev_is_read_only_even_for_root_and_rebuilt_when_wrong(bwrap_launcher, fresh_state):
    folder, how = devdir.prepare_dev()
    assert folder is not None, how
    assert folder.parent == fresh_state and devdir.dev_problem(folder) is None
    # Root on the host cannot change it without remounting it.
    with pytest.raises(OSError) as raised:
        (folder / "planted").write_text("x")
    assert raised.value.strerror == "Read-only file system"
    with pytest.raises(OSError):
        os.chmod(folder / "null", 0o600)
    # Checked and reused by the next worker, not mounted again.
    device = os.stat(folder).st_dev
    again, _ = devdir.prepare_dev()
    assert again == folder and os.stat(folder).st_dev == device
    # A folder of that name that is not the mount (tampered with, half made):
    # replaced by a proper one.
    devdir._detach(folder)
    (folder / "null").write_text("a regular file")
    assert devdir.dev_problem(folder) == f"{folder} is not a mount"
    rebuilt, how = devdir.prepare_dev()
    assert rebuilt == folder and devdir.dev_problem(folder) is None, how
    assert os.path.ismount(folder) and os.stat(folder / "null").st_rdev == os.makedev(1, 3)


def test_a_built_dev_binds_only_the_hosts_true_devices(tmp_path):
    """Each start without a prepared /dev first checks the host's nodes: a
    regular file (or a link to one) where /dev/null should be is refused,
    the real devices pass."""
    assert devdir.host_devices_problem() is None
    fake = tmp_path / "dev"
    fake.mkdir()
    for name, entry in devdir.DEV_ENTRIES.items():
        if entry[0] == "char":
            os.mknod(fake / name, stat.S_IFCHR | 0o666, os.makedev(entry[1], entry[2]))
    assert devdir.host_devices_problem(fake) is None
    (fake / "null").unlink()
    (fake / "null").write_text("")
    assert devdir.host_devices_problem(fake) == f"{fake / 'null'} is not the character device 1:3"
    (fake / "null").unlink()
    (fake / "null").symlink_to(fake / "full")  # another device
    assert devdir.host_devices_problem(fake) == f"{fake / 'null'} is not the character device 1:3"
    (fake / "tty").unlink()
    assert devdir.host_devices_problem(fake) == f"{fake / 'null'} is not the character device 1:3"
    (fake / "null").unlink()
    os.mknod(fake / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert devdir.host_devices_problem(fake) == f"{fake / 'tty'}: No such file or directory"


FALLBACK_RUN = """
import json, sys, os
from pathlib import Path
from cardroom.launch import BotLimits
from cardroom.sandbox import get_launcher, probe
launcher = get_launcher("bwrap")
root = Path(sys.argv[1])
proc = launcher.spawn(root, ["/usr/bin/python3", "main.py"], BotLimits())
out = b""
while True:
    chunk = os.read(proc.stdout_fd, 65536)
    if not chunk:
        break
    out += chunk
proc.kill()
print(json.dumps({"notes": probe().notes, "dev": str(launcher.dev), "view": json.loads(out)}))
"""


def test_without_mknod_the_sandbox_keeps_bwraps_dev(bwrap_launcher, tmp_path):
    """A worker that may not make device nodes (CAP_MKNOD dropped from its
    bounding set, as some container runtimes do): the probe says why and the
    bots get the same entries built per start, read-only, without ptys, the
    devices working."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    root = tmp_path / "bot"
    root.mkdir()
    (root / "main.py").write_text(textwrap.dedent(DEV_VIEW_PY))
    os.chmod(tmp_path, 0o755)
    state = Path(f"/run/cardroom-sandbox-nomknod-{os.getpid()}")
    # Its own state folder and uids: its locks do not know this process's.
    env = dict(os.environ, CARDROOM_SANDBOX_DIR=str(state), CARDROOM_SANDBOX_UIDS="1920001000-1920001009")
    try:
        out = subprocess.run(
            [setpriv, "--bounding-set", "-mknod", "--", sys.executable, "-c", FALLBACK_RUN, str(root)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=120,
        )
    finally:
        shutil.rmtree(state, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["dev"] == "None"
    note = next(n for n in result["notes"] if n.startswith("/dev: "))
    assert note.startswith("/dev: built for each bot (no prepared /dev here: ") and "Operation not permitted" in note, (
        note
    )
    info = result["view"]
    assert info["dev"] == BUILT_DEV, info["dev"]
    tried = {k: info[k] for k in ("create", "mkdir", "mkfifo", "symlink", "unlink", "chmod")}
    assert set(tried.values()) <= REFUSED, tried
    assert info["dev_readonly"] == 1 and info["pts"] == [] and info["ptmx"] == "ENOENT", info
    assert info["null"] == "ok" and info["urandom"] == 16 and info["shm_write"] == "ok", info
