"""Settings, errors and the sandbox's state folder."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from cardroom.launch import ONE_THREAD_ENV

MODES = ("bwrap", "none")
NONE_WARNING = "cardroom: WARNING: CARDROOM_SANDBOX=none runs bots without any isolation"
BOT_DIR = "/bot"  # where the bot's files appear inside the sandbox
SDK_DIR = "/cardroom-sdk"  # engine and cardroom_sdk, read-only, on a Python bot's PYTHONPATH
# Outside every range systemd or Debian allocates (system 0-999, users
# 1000-59999, Debian 60000-64999, homed 60001-60513, DynamicUser 61184-65519,
# nobody 65534, subordinate uids from 100000, containers 524288-1879048191):
# in systemd's unused 0x70000000-0x7FFDFFFF (docs/decisions/018-the-bot-uid-pool-defaults-to-1920000000.md).
DEFAULT_UIDS = "1920000000-1920000999"
WEAK_LIMITS_ENV = "CARDROOM_SANDBOX_WEAK_LIMITS"
DEFAULT_STATE_DIR = "/run/cardroom-sandbox"
BOT_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "PYTHONNOUSERSITE": "1",  # no ~/.local (HOME is the bot's writable /tmp) on sys.path
    **ONE_THREAD_ENV,  # numpy's BLAS: one thread, not one per core of the host
}
START_TIMEOUT_S = 10.0
MIN_BWRAP = (0, 6)  # --size (tmpfs size limits) appeared in bubblewrap 0.6
CGROUP_SLACK_BYTES = 32 * 1024 * 1024  # bwrap's two helper processes, page cache


class SandboxUnavailable(RuntimeError):
    """The requested sandbox cannot work here; the message says why and how
    to fix it."""


class SandboxError(RuntimeError):
    """The sandbox failed to start a bot (a platform problem, not the bot's)."""


# -- configuration -------------------------------------------------------------


def uid_range() -> range:
    """The pool of host uids for bots (``CARDROOM_SANDBOX_UIDS``, "first-last")."""
    text = os.environ.get("CARDROOM_SANDBOX_UIDS", DEFAULT_UIDS)
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not m or int(m.group(1)) > int(m.group(2)) or int(m.group(1)) < 1000 or int(m.group(2)) >= 2**32 - 1:
        raise SandboxUnavailable(
            f"CARDROOM_SANDBOX_UIDS={text!r}: expected a range like {DEFAULT_UIDS} (uids from 1000 to 4294967294)"
        )
    return range(int(m.group(1)), int(m.group(2)) + 1)


FILE_CACHE_ENV = "CARDROOM_SANDBOX_FILE_CACHE_MIB"
DEFAULT_FILE_CACHE_MIB = 512


def file_cache_bytes() -> int:
    """The most the file cache may hold (``CARDROOM_SANDBOX_FILE_CACHE_MIB``,
    a whole number of MiB; 0 turns it off: every run gets copies)."""
    text = os.environ.get(FILE_CACHE_ENV, str(DEFAULT_FILE_CACHE_MIB))
    if not re.fullmatch(r"\s*\d{1,7}\s*", text):
        raise SandboxUnavailable(f"{FILE_CACHE_ENV}={text!r}: expected a whole number of MiB, such as {DEFAULT_FILE_CACHE_MIB} (0: no cache)")
    return int(text) * 1024 * 1024


def weak_limits_allowed() -> bool:
    """Has the operator opted into running bots without the limits this
    machine cannot apply (``CARDROOM_SANDBOX_WEAK_LIMITS=1``)?"""
    return os.environ.get(WEAK_LIMITS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def uid_collisions(uids: range) -> list[str]:
    """Accounts, groups and subordinate-id ranges of this machine that use
    a uid of the pool (a bot would share its rights; clean-up could hit it)."""
    import grp
    import pwd

    found = [f"user {u.pw_name!r} (uid {u.pw_uid})" for u in pwd.getpwall() if u.pw_uid in uids]
    found += [f"group {g.gr_name!r} (gid {g.gr_gid})" for g in grp.getgrall() if g.gr_gid in uids]
    for path in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(":")
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                continue
            first, count = int(parts[1]), int(parts[2])
            if first < uids.stop and uids.start < first + count:
                found.append(f"{path} range {first}-{first + count - 1} of {parts[0]!r}")
    return found


def state_dir() -> Path:
    """Where the sandbox keeps its uid locks and run folders
    (``CARDROOM_SANDBOX_DIR``)."""
    return Path(os.environ.get("CARDROOM_SANDBOX_DIR", DEFAULT_STATE_DIR))


def runs_dir() -> Path:
    return state_dir() / "runs"


def _ensure_dir(path: Path, mode: int, uid: int = 0, gid: int = 0) -> None:
    try:
        path.mkdir(mode=mode, parents=False)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise SandboxError(f"{path} is not a directory")
    if stat.S_IMODE(st.st_mode) != mode or st.st_uid != uid or st.st_gid != gid:
        os.chown(path, uid, gid)
        os.chmod(path, mode)


def _prepare_state_dir() -> None:
    state = state_dir()
    if not state.is_absolute():
        raise SandboxUnavailable(f"CARDROOM_SANDBOX_DIR={str(state)!r} must be an absolute path")
    state.mkdir(mode=0o711, parents=True, exist_ok=True)
    for parent in state.resolve().parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise SandboxUnavailable(
                f"the bots' uids cannot reach the sandbox folder {state}: {parent} is not searchable by other users; "
                "set CARDROOM_SANDBOX_DIR to a folder whose parents are (the default is /run/cardroom-sandbox)"
            )
    _ensure_dir(state, 0o711)
    _ensure_dir(state / "locks", 0o700)
    _ensure_dir(state / "runs", 0o711)
    _ensure_dir(state / "empty", 0o555)
