"""The pool of host uids for bots: each leased with a ``flock`` lock file,
so no two bots running at the same time, in any worker process, share one."""

from __future__ import annotations

import os
import random

from cardroom.scratch import try_flock

from .config import SandboxError, state_dir, uid_range

# -- uid pool ------------------------------------------------------------------------


class UidLease:
    """One uid of the pool, held (flock) until ``release()``."""

    def __init__(self, uid: int, fd: int):
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the flock
            self._fd = None


def try_lease_uid(uid: int) -> UidLease | None:
    """Lease this one uid, or None if another holder has it."""
    fd = try_flock(state_dir() / "locks" / f"{uid}.lock", os.O_RDWR | os.O_CREAT)
    return None if fd is None else UidLease(uid, fd)


def lease_uid() -> UidLease:
    """Lease a free uid of the pool (any worker process, any thread)."""
    uids = uid_range()
    start = random.randrange(len(uids))
    for i in range(len(uids)):
        lease = try_lease_uid(uids[(start + i) % len(uids)])
        if lease is not None:
            return lease
    raise SandboxError(f"all {len(uids)} sandbox uids ({uids.start}-{uids.stop - 1}) are in use")
