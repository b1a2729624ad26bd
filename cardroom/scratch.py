"""Scratch folders a worker process owns while it plays a match, and the
sweep that removes those whose owner died.

A folder is tied to the process that made it by an ``flock`` on the folder
itself, held until the folder is removed: the mechanism of the sandbox's
uid leases (``cardroom.sandbox.uids``), a lock the kernel drops when its
holder dies, however it dies (SIGKILL, OOM). ``sweep`` takes each folder's
lock without waiting: held means its owner lives and the folder is left
alone; taken means nobody owns it any more, and it is removed under the lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# A new folder lost to a sweeper that took its lock first is made again
# (under another name); more than this many losses in a row is a bug.
MAKE_ATTEMPTS = 20


def try_flock(path: Path | str, flags: int, mode: int = 0o600) -> int | None:
    """Open ``path`` with ``flags`` and take its exclusive flock without
    waiting: the open descriptor (the lock lasts until it is closed), or
    None if another holder has it."""
    fd = os.open(path, flags | os.O_CLOEXEC, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def _lock_folder(path: Path) -> int | None:
    """The folder's lock, if nobody holds it and ``path`` still names the
    folder that was locked (not a later one of the same name)."""
    try:
        fd = try_flock(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # gone, a symlink or not a folder: nothing of ours
        return None
    if fd is None:
        return None
    try:
        locked = os.fstat(fd)
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        os.close(fd)
        return None
    if (locked.st_dev, locked.st_ino) != (now.st_dev, now.st_ino):
        os.close(fd)
        return None
    return fd


@contextmanager
def owned_folder(root: Path, prefix: str) -> Iterator[Path]:
    """A new folder under ``root`` (created, 0700, if missing), owned by this
    process until the block ends, then removed. A worker that dies inside
    the block leaves it to the next ``sweep(root)``."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    for _ in range(MAKE_ATTEMPTS):
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        fd = _lock_folder(path)  # None: a sweeper took it between mkdtemp and here, and removes it
        if fd is not None:
            break
    else:  # pragma: no cover - needs MAKE_ATTEMPTS lost races in a row
        raise RuntimeError(f"cannot make a scratch folder in {root}: a sweep took {MAKE_ATTEMPTS} in a row")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)  # still under the lock
        os.close(fd)


def sweep(root: Path) -> list[str]:
    """Remove the folders under ``root`` whose owner died (nobody holds their
    lock); a live owner's are left alone. Returns what was removed."""
    try:
        entries = sorted(root.iterdir())
    except OSError:  # no scratch folder yet: nothing to sweep
        return []
    removed = []
    for path in entries:
        fd = _lock_folder(path)
        if fd is None:
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
        if not os.path.lexists(path):
            removed.append(str(path))
    return removed
