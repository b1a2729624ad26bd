"""Logs what it sees of /proc and /dev before it answers ready and at its
first move ("before|after KEY VALUE"), and keeps a way into its procfs
across ``ready`` (config.json's "how"), to read get_next_ino() through it
once the match plays (decision 267):

- none: nothing kept (it plays on)
- fd: a descriptor of /proc/self/fd
- opath: an O_PATH descriptor of /proc/self
- cwd: its working folder in /proc/self/fd
- thread: a thread whose own working folder is /proc/self (unshare(CLONE_FS))
- child: a child process holding a descriptor of /proc/self/fd, asleep
- inflight: a descriptor of /proc/self/fd sent over a socket pair of its own
  and closed: held by no process, in flight till it receives it again

At its first move it logs "read N" (an inode number read through what it
kept) or "unreadable ERRNO"; the sandbox should kill it before that."""

import ctypes
import errno
import json
import os
import socket
import sys
import threading
import time

HOW = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json")))["how"]
CLONE_FS = 0x200
kept = {}


def keep():
    if HOW == "fd":
        kept["dir"] = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
    elif HOW == "opath":
        kept["dir"] = os.open("/proc/self", os.O_PATH | os.O_DIRECTORY)
    elif HOW == "cwd":
        os.chdir("/proc/self/fd")
    elif HOW == "thread":
        ready = threading.Event()

        def hold():
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_FS) != 0:
                print(f"unshare failed: {errno.errorcode.get(ctypes.get_errno())}", file=sys.stderr, flush=True)
            os.chdir("/proc/self")
            ready.set()
            while True:
                time.sleep(1)

        threading.Thread(target=hold, daemon=True).start()
        ready.wait()
    elif HOW == "child":
        held = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
        if os.fork() == 0:  # only the child keeps it
            while True:
                time.sleep(1)
        os.close(held)
    elif HOW == "inflight":
        kept["pair"] = socket.socketpair()
        held = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
        socket.send_fds(kept["pair"][0], [b"x"], [held])
        os.close(held)
    print(f"kept {HOW}", file=sys.stderr, flush=True)


def look(when):
    seen = {
        "proc": ",".join(sorted(os.listdir("/proc"))),
        "self": int(os.path.exists("/proc/self/fd")),
        "zero": int(os.path.exists("/dev/zero")),
        "cpus": os.cpu_count(),
        "memtotal": open("/proc/meminfo").readline().split()[1],
        # its own pid and resident pages, as /proc/self/stat and statm say
        "ownstat": open("/proc/self/stat").read().split()[0] + "," + open("/proc/self/statm").read().split()[1],
    }
    if os.path.isdir("/proc/self"):
        seen["selflist"] = ",".join(sorted(os.listdir("/proc/self")))
    for key, value in seen.items():
        print(f"{when} {key} {value}", file=sys.stderr, flush=True)


def read_inode():
    fd = os.open("/dev/null", os.O_RDONLY)
    try:
        if HOW == "inflight":
            kept["dir"] = socket.recv_fds(kept["pair"][1], 1, 1)[1][0]
        if HOW in ("fd", "inflight"):
            return os.lstat(str(fd), dir_fd=kept["dir"]).st_ino
        if HOW == "opath":
            return os.lstat(f"fd/{fd}", dir_fd=kept["dir"]).st_ino
        if HOW == "cwd":
            return os.lstat(str(fd)).st_ino
        return os.lstat(f"/proc/self/fd/{fd}").st_ino  # thread, child: the path, now static
    finally:
        os.close(fd)


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


look("before")
keep()
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 1:
            look("after")
            if ctypes.CDLL(None, use_errno=True).umount2(b"/proc", 2) != 0:  # MNT_DETACH: uncover the procfs
                print(f"uncover {errno.errorcode.get(ctypes.get_errno())}", file=sys.stderr, flush=True)
            try:
                print(f"read {read_inode()}", file=sys.stderr, flush=True)
            except OSError as exc:
                print(f"unreadable {errno.errorcode.get(exc.errno, exc.errno)}", file=sys.stderr, flush=True)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
