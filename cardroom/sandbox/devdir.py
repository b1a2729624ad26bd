"""The bots' ``/dev``: one small tmpfs, prepared once per host and version,
read-only, bound into every sandbox with a single mount.

bwrap's ``--dev`` built a fresh ``/dev`` for every bot: a tmpfs, six bind
mounts of the host's device nodes and a devpts instance (then we hid
``/dev/pts`` and remounted ``/dev`` read-only: three more). bwrap reads
``/proc/self/mountinfo`` again after each mount, which is most of what those
cost (decision 157). Here the same nodes are made once with ``mknod`` on a
tmpfs of our own (mounted without ``nodev``, so they work through a bind),
whose superblock is then remounted read-only: no process, the bots' or ours,
can add, remove or change an entry without remounting it, which needs
``CAP_SYS_ADMIN`` on the host. A bot gets it with ``--dev-bind`` (a bind
that keeps device nodes usable) and a mount of its own ``/dev/shm`` on the
``shm`` folder.

What a bot sees (``DEV_ENTRIES``): ``null``, ``full``, ``random``,
``urandom`` and ``tty`` (the stateless character devices bwrap's ``--dev``
gave it, less ``zero``), the ``fd``/``stdin``/``stdout``/``stderr`` links into
``/proc/self/fd``, and ``shm``. No ``ptmx`` and no ``pts``: a bot gets no
pty (each would draw on the host's one ``kernel.pty.max``, decision 93),
and with neither entry ``openpty`` fails with ENOENT at once. No
``core`` link (``/proc/kcore`` is not the bot's to read). No ``zero``
(decision 267): each shared mapping of it is a new file of the kernel's
internal shmem mount, numbered from a counter the whole host shares, which
one seat moves and another reads in ``/proc/self/maps``; no runtime needs
it (``MAP_ANONYMOUS`` gives the same zeroed memory), and a descriptor of
it cannot be kept from before ``ready`` when there is none to open.

Where this cannot be done (no ``CAP_MKNOD`` or ``CAP_SYS_ADMIN``, a host
whose mounts are all ``nodev``, a device cgroup that refuses the nodes ...)
``prepare_dev`` says why and the launcher builds the same entries for each
bot (a tmpfs, a bind of each of the host's six device nodes, the links, then
read-only: ``BwrapLauncher.argv``), at 0.8 ms more of bwrap's CPU per start
(decision 161), never a weaker ``/dev``: each start first checks that the
host's nodes are still those devices (``host_devices_problem``), since a
regular file bound there would be writable state shared by every seat.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import stat
from pathlib import Path

from .config import _ensure_dir, state_dir

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MNT_DETACH = 0x2
ST_RDONLY = os.ST_RDONLY

# name -> ("char", major, minor) | ("dir",) | ("link", target)
DEV_ENTRIES: dict[str, tuple] = {
    "null": ("char", 1, 3),
    "full": ("char", 1, 7),
    "random": ("char", 1, 8),
    "urandom": ("char", 1, 9),
    "tty": ("char", 5, 0),
    "fd": ("link", "/proc/self/fd"),
    "stdin": ("link", "/proc/self/fd/0"),
    "stdout": ("link", "/proc/self/fd/1"),
    "stderr": ("link", "/proc/self/fd/2"),
    "shm": ("dir",),  # the mount point of the bot's own /dev/shm
}
DEVICE_MODE = 0o666
FOLDER_MODE = 0o755
# A page for the folder's entries; the root, the ten entries and a spare.
MOUNT_OPTIONS = f"size=4k,nr_inodes={len(DEV_ENTRIES) + 2},mode=0755,uid=0,gid=0"
MOUNT_FLAGS = MS_NOSUID | MS_NOEXEC  # and not MS_NODEV: the nodes must open through the bind

_libc = ctypes.CDLL(None, use_errno=True)


def dev_dir() -> Path:
    """Named after the layout, as the shim is after its text: workers of two
    versions on one host each bind their own."""
    digest = hashlib.sha256(repr(sorted(DEV_ENTRIES.items())).encode()).hexdigest()[:12]
    return state_dir() / f"dev-{digest}"


def _mount(source: bytes, target: Path, flags: int, options: str) -> None:
    if _libc.mount(source, os.fsencode(target), b"tmpfs", flags, options.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount tmpfs on {target}: {os.strerror(err)}")


def _populate(folder: Path) -> None:
    for name, entry in DEV_ENTRIES.items():
        path = folder / name
        if entry[0] == "char":
            os.mknod(path, stat.S_IFCHR | DEVICE_MODE, os.makedev(entry[1], entry[2]))
            os.chmod(path, DEVICE_MODE)  # the umask, whatever it is, must not narrow it
        elif entry[0] == "dir":
            os.mkdir(path, FOLDER_MODE)
            os.chmod(path, FOLDER_MODE)
        else:
            os.symlink(entry[1], path)


def dev_problem(folder: Path) -> str | None:
    """None if ``folder`` is a prepared /dev exactly as ``DEV_ENTRIES`` says
    (a read-only mount, root-owned, nothing more or less, the devices
    usable), else what is wrong."""
    try:
        if not os.path.ismount(folder):
            return f"{folder} is not a mount"
        if not os.statvfs(folder).f_flag & ST_RDONLY:
            return f"{folder} is not mounted read-only"
        top = os.lstat(folder)
        if top.st_uid != 0 or top.st_gid != 0 or stat.S_IMODE(top.st_mode) != FOLDER_MODE:
            return f"{folder} is not root's with mode 0755"
        names = set(os.listdir(folder))
        if names != set(DEV_ENTRIES):
            return f"{folder} holds {sorted(names)}, not {sorted(DEV_ENTRIES)}"
        for name, entry in DEV_ENTRIES.items():
            st = os.lstat(folder / name)
            if st.st_uid != 0 or st.st_gid != 0:
                return f"{folder / name} is not root's"
            if entry[0] == "char":
                if (
                    not stat.S_ISCHR(st.st_mode)
                    or st.st_rdev != os.makedev(entry[1], entry[2])
                    or stat.S_IMODE(st.st_mode) != DEVICE_MODE
                ):
                    return f"{folder / name} is not the character device {entry[1]}:{entry[2]} with mode 0666"
            elif entry[0] == "dir":
                if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != FOLDER_MODE:
                    return f"{folder / name} is not a folder with mode 0755"
            elif not stat.S_ISLNK(st.st_mode) or os.readlink(folder / name) != entry[1]:
                return f"{folder / name} is not a link to {entry[1]}"
        # The nodes open here (a mount with nodev, an LSM or a device cgroup
        # would refuse them), as they will for the bots.
        fd = os.open(folder / "null", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
        fd = os.open(folder / "urandom", os.O_RDONLY | os.O_CLOEXEC)
        try:
            if len(os.read(fd, 8)) != 8:
                return f"{folder / 'urandom'} gave short reads"
        finally:
            os.close(fd)
    except OSError as exc:
        return f"{exc.filename or folder}: {exc.strerror or exc}"
    return None


def host_devices_problem(folder: Path = Path("/dev")) -> str | None:
    """None if the host's nodes a built /dev binds are the character devices
    ``DEV_ENTRIES`` names, else which is not (a root process that replaced
    ``/dev/null`` by a file, say)."""
    for name, entry in DEV_ENTRIES.items():
        if entry[0] != "char":
            continue
        try:
            st = os.stat(folder / name)  # followed, as bwrap follows it
        except OSError as exc:
            return f"{folder / name}: {exc.strerror or exc}"
        if not stat.S_ISCHR(st.st_mode) or st.st_rdev != os.makedev(entry[1], entry[2]):
            return f"{folder / name} is not the character device {entry[1]}:{entry[2]}"
    return None


def _detach(folder: Path) -> None:
    # A sandbox running on it keeps its own copy of the mount: detaching
    # the host's takes nothing from it.
    while os.path.ismount(folder):
        if _libc.umount2(os.fsencode(folder), MNT_DETACH) != 0:
            break


def prepare_dev() -> tuple[Path | None, str]:
    """(the prepared /dev, how) or (None, why not); made once, then checked
    and reused by every worker of this version on the host."""
    folder = dev_dir()
    try:
        _ensure_dir(state_dir() / "locks", 0o700)
        lock = os.open(state_dir() / "locks" / "dev.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        return None, f"cannot lock {state_dir() / 'locks'}: {exc.strerror or exc}"
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if dev_problem(folder) is None:
            return folder, f"one read-only bind of {folder}"
        _detach(folder)  # not as it should be (another layout's, tampered with, half made)
        try:
            _ensure_dir(folder, FOLDER_MODE)
            _mount(b"tmpfs", folder, MOUNT_FLAGS, MOUNT_OPTIONS)
            _populate(folder)
            # The superblock read-only: every bind of it is, whatever bwrap
            # asks, and root itself would have to remount it to write.
            _mount(b"tmpfs", folder, MS_REMOUNT | MS_RDONLY | MOUNT_FLAGS, MOUNT_OPTIONS)
        except OSError as exc:
            _detach(folder)
            return None, f"{exc.filename or folder}: {exc.strerror or exc}"
        problem = dev_problem(folder)
        if problem is not None:
            _detach(folder)
            return None, problem
        return folder, f"one read-only bind of {folder}"
    finally:
        os.close(lock)
