"""A bot's ``/tmp`` and ``/dev/shm``: tmpfs mounts with a size and an inode
limit, mounted by us on the host and bound into the sandbox.

bubblewrap (0.8) can limit the size of a ``--tmpfs`` (``--size``) but not its
number of inodes; an empty file costs no page but about 900 bytes of kernel
memory, so a size limit alone lets a bot create millions of files. So we
mount each tmpfs ourselves with ``size=`` and ``nr_inodes=``, owned by the
bot's uid (mode 0700: no other bot can enter it on the host), and hand it to
bwrap as a ``--bind``. The mounts are removed with the bot (and by the sweep
after a worker died).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from cardroom.launch import BotLimits

from .config import _ensure_dir, state_dir

MS_NOSUID = 0x2
MS_NODEV = 0x4
MNT_DETACH = 0x2
MOUNTS = ("tmp", "shm")  # the folders of uid-N: /tmp and /dev/shm of the bot

_libc = ctypes.CDLL(None, use_errno=True)


def tmpfs_dir() -> Path:
    return state_dir() / "tmpfs"


def _mount_tmpfs(target: Path, size: int, inodes: int, uid: int) -> None:
    options = f"size={size},nr_inodes={inodes},mode=0700,uid={uid},gid={uid}".encode()
    if _libc.mount(b"tmpfs", os.fsencode(target), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount tmpfs on {target}: {os.strerror(err)}")


def unmount_tmpfs(target: Path) -> None:
    """Unmount (if mounted) and remove the mount point ``target``."""
    if os.path.ismount(target):
        # Detached at once: the bot is dead, and the sandbox's own copy of
        # the mount (in its dying mount namespace) must not make this fail.
        _libc.umount2(os.fsencode(target), MNT_DETACH)
    try:
        target.rmdir()
    except OSError:
        pass


def unmount_bot_tmpfs(top: Path) -> None:
    """Remove ``uid-N`` of the tmpfs folder: both mounts and the folder."""
    for name in MOUNTS:
        unmount_tmpfs(top / name)
    try:
        top.rmdir()
    except OSError:
        pass


def mount_bot_tmpfs(uid: int, limits: BotLimits) -> tuple[Path, Path]:
    """Mount the bot's /tmp and /dev/shm on the host; (tmp, shm)."""
    top = tmpfs_dir() / f"uid-{uid}"
    if os.path.lexists(top):  # left by a worker that died while this uid was leased
        unmount_bot_tmpfs(top)
    _ensure_dir(top, 0o711)
    tmp, shm = top / "tmp", top / "shm"
    mounted: list[Path] = []
    try:
        for path, size, inodes in ((tmp, limits.tmp_bytes, limits.tmp_inodes), (shm, limits.shm_bytes, limits.shm_inodes)):
            path.mkdir(mode=0o700)
            mounted.append(path)
            _mount_tmpfs(path, size, inodes, uid)
    except OSError:
        unmount_bot_tmpfs(top)
        raise
    return tmp, shm


def check_tmpfs_mounts() -> str | None:
    """None if we can mount an inode-limited tmpfs here, else why not."""
    top = tmpfs_dir()
    probe = top / f"probe-{os.getpid()}"
    try:
        _ensure_dir(top, 0o711)
        probe.mkdir(mode=0o700, exist_ok=True)
        _mount_tmpfs(probe, 1024 * 1024, 16, 0)
    except OSError as exc:
        try:
            probe.rmdir()
        except OSError:
            pass
        return str(exc.strerror or exc)
    unmount_tmpfs(probe)
    return None
