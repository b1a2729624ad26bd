"""Waiting for one file descriptor, whatever its number.

``select.select`` refuses a descriptor numbered 1024 or more (FD_SETSIZE):
a casual worker holding a hundred matches in one process, each with its
bots' pipes and process descriptors open, passes that (issue 36, decision
202). ``poll`` has no such limit."""

from __future__ import annotations

import select


def fd_ready(fd: int, timeout: float, write: bool = False) -> bool:
    """Wait up to ``timeout`` seconds until ``fd`` is readable (or, with
    ``write``, writable); whether it is. Hang-up and error count as ready:
    the read or write that follows says what happened, as after select."""
    poller = select.poll()
    poller.register(fd, (select.POLLOUT if write else select.POLLIN | select.POLLPRI) | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(max(0.0, timeout) * 1000))
