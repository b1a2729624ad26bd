"""The start-up gate (decision 237): the calls only a runtime's start needs,
let through until the bot answers ``ready`` and refused with EPERM after.

Each new pipe, socket (``socket``, ``socketpair``, ``accept``), memfd,
shared anonymous mapping, System V shared memory segment and pidfd gets an
inode number from a counter the whole host shares (the kernel's
``get_next_ino``, the internal shmem mount's, pidfs's). A seat that makes N
of them at its move is read by another that makes one at its own and reads
its number (``fstat``, ``/proc/self/maps``): about 7 bits a move. A bot needs
none of them once the match plays, but runtimes make some as they start
(Node's libuv makes its signal and wake-up pipes), and before ``ready`` a bot
holds no hidden information, so what it does then carries none.

bot-exec, the first program in every bot's sandbox, installs a second
seccomp filter that hands these calls to a listener
(``SECCOMP_RET_USER_NOTIF``) and sends the listener to the worker over the
hand-over socket, before the bot's own program runs. ``StartupGate`` holds
it: a thread answers each call "go on" (``SECCOMP_USER_NOTIF_FLAG_CONTINUE``)
until ``close_startup`` (the bot answered ``ready``), and EPERM from then
on. It fails closed: once the gate is stopped and its listener closed, the
kernel fails these calls with ENOSYS. The bot never holds the listener.

Each refusal costs the worker a few microseconds of CPU outside the bot's
cgroup (3.3 us here; a bot calling ``pipe`` in a loop is refused 46,000
times a second). After ``REFUSALS_ANSWERED`` the gate closes the listener,
so a bot that keeps trying costs the worker nothing more and gets ENOSYS
from the kernel instead of EPERM.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import struct
import threading

__all__ = ["StartupGate"]

# struct seccomp_notif: id, pid, flags, then seccomp_data (nr, arch, ip, args[6])
NOTIF = struct.Struct("=QIIiIQ6Q")
# struct seccomp_notif_resp: id, val, error, flags
NOTIF_RESP = struct.Struct("=QqiI")
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1


def _iowr(number: int, size: int) -> int:
    return (3 << 30) | (size << 16) | (ord("!") << 8) | number  # _IOWR(SECCOMP_IOC_MAGIC, number, size)


SECCOMP_IOCTL_NOTIF_RECV = _iowr(0, NOTIF.size)
SECCOMP_IOCTL_NOTIF_SEND = _iowr(1, NOTIF_RESP.size)
STOP_CHECK_S = 1.0  # how often a waiting thread looks whether it was stopped
REFUSALS_ANSWERED = 10_000  # then the kernel answers (ENOSYS): see the module


class StartupGate:
    """Answers the start-up filter's calls of one bot (see the module)."""

    def __init__(self, listener_fd: int):
        self._fd = listener_fd
        self._started_playing = False
        self._stopped = False
        self.allowed = 0  # calls let through during the start
        self.refused = 0  # calls refused after ``ready``
        self._thread = threading.Thread(target=self._serve, name=f"startup-gate-{listener_fd}", daemon=True)
        self._thread.start()

    def close_startup(self) -> None:
        """The bot answered ``ready``: refuse every gated call from now on."""
        self._started_playing = True

    def stop(self) -> None:
        """The bot is gone (or going): end the thread; it closes the
        listener, after which the kernel fails the gated calls itself."""
        self._stopped = True
        self._started_playing = True

    def _serve(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while not self._stopped and self.refused < REFUSALS_ANSWERED:
                events = poller.poll(STOP_CHECK_S * 1000)
                if not events:
                    continue
                _, mask = events[0]
                if mask & select.POLLIN:
                    self._answer_one()
                elif mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    return  # every process of the bot has ended
        finally:
            os.close(self._fd)

    def _answer_one(self) -> None:
        request = bytearray(NOTIF.size)  # the kernel wants it zeroed
        try:
            fcntl.ioctl(self._fd, SECCOMP_IOCTL_NOTIF_RECV, request, True)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.EINTR):  # the caller died meanwhile
                return
            raise
        call_id = NOTIF.unpack(request)[0]
        if self._started_playing:
            response = NOTIF_RESP.pack(call_id, 0, -errno.EPERM, 0)
            self.refused += 1
        else:
            response = NOTIF_RESP.pack(call_id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE)
            self.allowed += 1
        try:
            fcntl.ioctl(self._fd, SECCOMP_IOCTL_NOTIF_SEND, bytearray(response), True)
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # ENOENT: the caller died meanwhile
                raise
