"""Hostile bot: two copies of it in one match try to pass a 32-bit secret
from seat 0 to seat 1 through what their sandboxes share, the read-only
/usr: flock locks (one file a bit), POSIX and open-file-description byte
locks (one byte of one file a bit) and inotify watches (one file a bit,
seat 1 watching, seat 0 opening). Each attempt that fails is logged with its
errno ("flock: denied (errno 1)"); seat 0 logs "sent 0x..." and seat 1, after
each of its moves, "received flock=0x... posix=0x... ofd=0x... inotify=0x...".
"""
import ctypes
import errno
import fcntl
import glob
import json
import os
import struct
import sys

BITS = 32
libc = ctypes.CDLL(None, use_errno=True)


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def shared_files():
    """Files of /usr nobody else opens, the same list in every sandbox, each
    its own inode (zoneinfo has hard links: one inode is one lock, one watch)."""
    candidates = sorted(p for p in glob.glob("/usr/share/zoneinfo/right/*/*") if os.path.isfile(p))
    if len(candidates) < 4 * BITS:
        candidates = sorted(p for p in glob.glob("/usr/lib/python3*/**/*.py", recursive=True) if os.path.isfile(p))
    files, inodes = [], set()
    for path in candidates:
        st = os.stat(path)
        if (st.st_dev, st.st_ino) not in inodes:
            inodes.add((st.st_dev, st.st_ino))
            files.append(path)
    return files[:BITS], files[BITS : 2 * BITS], files[2 * BITS], files[2 * BITS + 1]


FLOCK_FILES, INOTIFY_FILES, POSIX_FILE, OFD_FILE = shared_files()


def denied(channel, exc):
    log(f"{channel}: denied (errno {exc.errno})")


def lock_struct(kind, start):
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


class Sender:
    def __init__(self):
        self.secret = int.from_bytes(os.urandom(4), "big") | 1
        self.held = []
        log(f"sent 0x{self.secret:08x}")

    def signal(self):
        bits = [i for i in range(BITS) if self.secret >> i & 1]
        if not self.held:
            try:
                for i in bits:
                    fd = os.open(FLOCK_FILES[i], os.O_RDONLY)
                    self.held.append(fd)
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError as exc:
                denied("flock", exc)
            for channel, path, command in (("posix", POSIX_FILE, fcntl.F_SETLK), ("ofd", OFD_FILE, fcntl.F_OFD_SETLK)):
                fd = os.open(path, os.O_RDONLY)
                self.held.append(fd)
                try:
                    for i in bits:
                        fcntl.fcntl(fd, command, lock_struct(fcntl.F_RDLCK, i))
                except OSError as exc:
                    denied(channel, exc)
        for i in bits:  # each open is an event for a watcher
            os.close(os.open(INOTIFY_FILES[i], os.O_RDONLY))


class Receiver:
    def __init__(self):
        self.inotify = libc.inotify_init1(os.O_NONBLOCK)
        self.watches = {}
        self.got_inotify = 0
        if self.inotify < 0:
            denied("inotify", OSError(ctypes.get_errno(), "inotify_init1"))
            return
        for i, path in enumerate(INOTIFY_FILES):
            wd = libc.inotify_add_watch(self.inotify, path.encode(), 0x20)  # IN_OPEN
            if wd < 0:
                denied("inotify", OSError(ctypes.get_errno(), "inotify_add_watch"))
                return
            self.watches[wd] = i

    def receive(self):
        flock = 0
        for i, path in enumerate(FLOCK_FILES):
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno == errno.EWOULDBLOCK:
                    flock |= 1 << i
                else:
                    denied("flock", exc)
                    break
            finally:
                os.close(fd)
        found = {}
        for channel, path, command in (("posix", POSIX_FILE, fcntl.F_GETLK), ("ofd", OFD_FILE, fcntl.F_OFD_GETLK)):
            value = 0
            fd = os.open(path, os.O_RDONLY)
            try:
                for i in range(BITS):
                    answer = fcntl.fcntl(fd, command, lock_struct(fcntl.F_WRLCK, i))
                    if struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK:
                        value |= 1 << i
            except OSError as exc:
                denied(channel, exc)
            finally:
                os.close(fd)
            found[channel] = value
        if self.watches:
            while True:
                try:
                    data = os.read(self.inotify, 65536)
                except BlockingIOError:
                    break
                offset = 0
                while offset < len(data):
                    wd, _mask, _cookie, length = struct.unpack_from("iIII", data, offset)
                    if wd in self.watches:
                        self.got_inotify |= 1 << self.watches[wd]
                    offset += 16 + length
        log(f"received flock=0x{flock:08x} posix=0x{found['posix']:08x} ofd=0x{found['ofd']:08x} inotify=0x{self.got_inotify:08x}")


def main():
    role = None
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            role = Sender() if message["seat"] == 0 else Receiver()
            reply({"type": "ready"})
        elif message["type"] == "act":
            if isinstance(role, Sender):
                role.signal()
            else:
                role.receive()
            reply({"type": "action", "action": message["legal"][0]})
        else:
            return


if __name__ == "__main__":
    main()
