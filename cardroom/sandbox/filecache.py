"""A bot's files, copied once and hard-linked into each run folder
(decision 168).

Every start copied the bot's package into a run folder of root-owned files
(``launcher._copy_bot_files``). For a static binary of a few megabytes that
copy was the largest part of what the sandbox adds to a native start (1.2-1.7
ms for the C++ starter's 2.2 MB), and each small file cost about 0.1 ms.
Each file is instead copied once into this cache, beside the run folders (a
hard link needs the same file system), and each run folder gets a hard link
to it:

* the cached copy is root's, mode 0644 or 0755 like the copy it replaces,
  in a folder only root can enter; the bot reaches it through its run folder
  alone, bound read-only, and cannot write it;
* its name is the source file's identity (device, inode, size, modification
  and change times, mode): a package changed in any way is a new entry, and
  two packages never share one. A source that changes while it is copied
  is not cached (the run gets a copy of its own);
* an entry that no run folder links (one link: the cache's own) and that no
  run has linked for ``IDLE_S`` goes at the next sweep; one that a run
  still links is never removed, so a running bot never loses a file. The
  cache holds at most ``CARDROOM_SANDBOX_FILE_CACHE_MIB`` (512 MiB unless
  set; 0 turns it off), the least recently linked going first once idle;
  where it is full of entries in use, a run gets a copy.

A link changes the inode's change time: that is the cache's record of
when an entry was last linked. What a bot can learn from its file's link
count and change time is that other runs of the same package start and
stop on this machine: nothing of any other package, and nothing it can
set."""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from pathlib import Path

from .config import _ensure_dir, file_cache_bytes, runs_dir

IDLE_S = 15 * 60
SWEEP_EVERY_S = 60.0
_TEMP_PREFIX = "tmp-"

_lock = threading.Lock()
# This process's view: the folder once made sure of, the bytes the cache
# held at the last sweep plus what this process added since, and when that
# sweep was (other processes' entries are counted at the next one).
_view: dict = {"folder": None, "used": 0, "swept": 0.0}


def cache_dir() -> Path:
    # Beside the run folders, on their tmpfs (a hard link needs the same
    # file system; decision 176: in memory, so no read leaves a trace).
    folder = runs_dir() / "files"
    if _view["folder"] != folder:
        _ensure_dir(folder, 0o700)
        _view.update(folder=folder, swept=0.0)
    return folder


def _key(st: os.stat_result, mode: int) -> str:
    return f"{st.st_dev:x}-{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}-{st.st_ctime_ns:x}-{mode:o}"


def copy_file(source: str, st: os.stat_result, target: Path, mode: int) -> None:
    """Put the regular file ``source`` (whose lstat is ``st``) at ``target``,
    root-owned with ``mode``: a hard link to the cached copy, else (the
    cache off, full of files in use, or failing) a copy of its own."""
    limit = file_cache_bytes()
    if limit and _link_cached(source, st, target, mode, limit):
        return
    shutil.copyfile(source, target, follow_symlinks=False)
    os.chmod(target, mode)


def _link_cached(source: str, st: os.stat_result, target: Path, mode: int, limit: int) -> bool:
    try:
        entry = cache_dir() / _key(st, mode)
        try:
            os.link(entry, target)  # the usual case: one system call
            return True
        except FileNotFoundError:
            pass
        if _cache(source, st, mode, entry, limit):
            os.link(entry, target)
            return True
    except OSError:
        # Swept between the two calls, another file system (EXDEV), a link
        # limit, the folder removed: no reason to fail a start.
        _view["folder"] = None  # made sure of again next time
    return False


def _cache(source: str, st: os.stat_result, mode: int, entry: Path, limit: int) -> bool:
    """Copy ``source`` to ``entry`` unless it is there (True), there is no
    room under ``limit`` bytes, or it changed under the copy (False)."""
    with _lock:  # one copy per process at a time; across processes the rename decides
        if os.path.lexists(entry):
            return True
        if not _make_room(entry.parent, st.st_size, limit):
            return False
        temp = entry.parent / f"{_TEMP_PREFIX}{os.getpid()}-{threading.get_ident()}"
        try:
            shutil.copyfile(source, temp, follow_symlinks=False)
            os.chmod(temp, mode)
            if _key(os.lstat(source), mode) != entry.name:
                return False  # changed under the copy: not what the key names
            os.rename(temp, entry)
            _view["used"] += st.st_size
        finally:
            if os.path.lexists(temp):
                os.unlink(temp)
    return True


def _make_room(folder: Path, size: int, limit: int) -> bool:
    """Sweep (at most once a minute, unless room is short) and say whether
    ``size`` more bytes fit under ``limit``."""
    now = time.time()
    if now - _view["swept"] >= SWEEP_EVERY_S or _view["used"] + size > limit:
        _view.update(used=_sweep(_entries(folder), now, size, limit), swept=now)
    return _view["used"] + size <= limit


def _sweep(entries: list[tuple[Path, os.stat_result]], now: float, wanted: int, limit: int) -> int:
    """Remove what no run links and is idle (or a crashed copy's temporary
    file), and, while ``wanted`` more bytes do not fit under ``limit``, what
    no run links, least recently linked first; the bytes left."""
    used = sum(st.st_size for _, st in entries)
    for path, st in sorted(entries, key=lambda item: item[1].st_ctime):
        unused = st.st_nlink == 1
        if path.name.startswith(_TEMP_PREFIX):
            stale = now - st.st_ctime >= SWEEP_EVERY_S
        else:
            stale = unused and (now - st.st_ctime >= IDLE_S or used + wanted > limit)
        if stale:
            try:
                os.unlink(path)
                used -= st.st_size
            except FileNotFoundError:
                pass
    return used


def _entries(folder: Path) -> list[tuple[Path, os.stat_result]]:
    found = []
    for name in os.listdir(folder):
        path = folder / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((path, st))
    return found


def sweep() -> int:
    """Remove the idle entries now (the probe's start-up sweep); the bytes
    the cache still holds."""
    entries = _entries(cache_dir())
    now = time.time()
    with _lock:
        _view.update(used=_sweep(entries, now, 0, file_cache_bytes()), swept=now)
    return _view["used"]


def _reset_after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # a lock held by another thread at the fork would never be released here


os.register_at_fork(after_in_child=_reset_after_fork)
