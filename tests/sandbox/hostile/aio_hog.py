"""Hostile bot: on its second move it asks io_setup for the host's whole
async-I/O quota (fs.aio-max-nr, 65,536 slots by default, one for the whole
host and outside every cgroup): while it holds them, every io_setup on the
host fails. It logs "aio refused: ERRNO" or "took N slots; a second
context: ERRNO" (what anyone else on the host would get), then exits
(expected forfeit: exit)."""
import ctypes
import errno
import json
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
IO_SETUP = 206


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def io_setup(slots):
    ctx = ctypes.c_ulong(0)
    if libc.syscall(IO_SETUP, slots, ctypes.byref(ctx)) != 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    return None


def hog():
    # The largest request granted: halve on EAGAIN (others may hold some).
    slots = 65536
    while slots:
        error = io_setup(slots)
        if error is None:
            break
        if error != "EAGAIN":
            sys.stderr.write(f"aio refused: {error}\n")
            return
        slots //= 2
    sys.stderr.write(f"took {slots} slots; a second context: {io_setup(1) or 'granted'}\n")


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 2:
            hog()
            sys.stderr.flush()
            sys.exit(0)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
