"""Hostile bot: on its second move it opens ptys in 16 processes until it
can open no more (each process within its 64 open files). The ptys of
every container and sandbox on the host come out of one kernel.pty.max
(4,096, of which 1,024 are kept for the host's own): two such seats would
take them all. It logs "pty refused: ERRNO" if it gets none, else "opened N
ptys", then exits (expected forfeit: exit)."""
import errno
import json
import os
import signal
import sys

PROCESSES = 16


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hold_ptys(report):
    """In a child: open ptys until refused, report how many, wait for EOF."""
    masters = []
    error = None
    while True:
        try:
            masters.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
        except OSError as exc:
            error = errno.errorcode.get(exc.errno, str(exc.errno))
            break
    os.write(report, f"{len(masters)} {error}\n".encode())


# Its report pipes made as it starts: once it has answered ready the sandbox
# refuses new pipes (decision 237).
PIPES = [os.pipe() for _ in range(PROCESSES)]


def hog():
    reads = []
    for r, w in PIPES:
        pid = os.fork()
        if pid == 0:
            os.close(r)
            hold_ptys(w)
            # Stay alive, holding the ptys, until the sandbox ends.
            os.close(w)
            while True:
                signal.pause()
        os.close(w)
        reads.append(r)
    opened, errors = 0, set()
    for r in reads:
        count, error = os.read(r, 100).decode().split()
        opened += int(count)
        errors.add(error)
    if opened == 0:
        sys.stderr.write(f"pty refused: {', '.join(sorted(errors))}\n")
    else:
        sys.stderr.write(f"opened {opened} ptys ({', '.join(sorted(errors))})\n")


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
