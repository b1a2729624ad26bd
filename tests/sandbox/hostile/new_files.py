"""Makes each kind of new file the start-up gate holds back (decision 237)
once as it starts, before it answers ready, and again at its first move;
logs "before|after KIND ok|ERRNO" for each, and plays on."""

import errno
import json
import mmap
import os
import socket
import sys


def attempts():
    def pipe():
        for fd in os.pipe():
            os.close(fd)

    def unix_socket():
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()

    def socket_pair():
        for end in socket.socketpair():
            end.close()

    def memfd():
        os.close(os.memfd_create("gate"))

    def shared_memory():
        mmap.mmap(-1, 4096).close()  # MAP_SHARED | MAP_ANONYMOUS

    def pidfd():
        os.close(os.pidfd_open(os.getpid()))

    return {
        "pipe": pipe,
        "socket": unix_socket,
        "socketpair": socket_pair,
        "memfd": memfd,
        "shared": shared_memory,
        "pidfd": pidfd,
    }


def try_all(when):
    for kind, attempt in attempts().items():
        try:
            attempt()
            outcome = "ok"
        except OSError as exc:
            outcome = errno.errorcode.get(exc.errno, str(exc.errno))
        print(f"{when} {kind} {outcome}", file=sys.stderr, flush=True)
    private = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)  # still allowed: every runtime's heap
    private.close()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


try_all("before")
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 1:
            try_all("after")
        elif moves == 2:  # until the refusal changes (the gate stops answering: decision 237)
            refused, last = 0, None
            while refused <= 20_000:
                try:
                    os.pipe()
                except OSError as exc:
                    last = errno.errorcode.get(exc.errno)
                    if exc.errno != errno.EPERM:
                        break
                    refused += 1
            print(f"pipe refused {refused} times, then {last}", file=sys.stderr, flush=True)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
