"""Hostile bot pair: a covert channel between two seats through a host-wide
counter the sender can move and the receiver can read, each at its own
moves (the other seat frozen meanwhile: the counter keeps its value).

config.json: {"role": "send" | "receive", "channel": NAME, "bits": B,
"seed": S, "scale": UNITS} (UNITS: counter units per symbol step, 1 if
absent). Both seats draw the same symbols of B bits from S. At its j-th
move the sender adds symbol j to the channel's level (mod 2**B): a level it
holds while frozen (aio slots, ptys, tasks, /tmp pages, anonymous memory)
or a counter it bumps (forks). At each move the receiver reads the counter
and decodes the change since its previous move into a symbol: "received K
VALUE" on stderr (K its move). A channel it cannot use is logged as
"CHANNEL refused: ERRNO" (sender) or "CHANNEL unreadable: ERRNO"
(receiver), and the bot plays on. Both play random legal moves."""
import ctypes
import errno
import json
import os
import random
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = 4096
MiB = 1 << 20


def meminfo_kib(field):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(errno.ENOENT, field)


# -- the channels: (read the counter, units per symbol step) and the sender's side


def read_aio():
    with open("/proc/sys/fs/aio-nr") as f:
        return int(f.read())


def read_pty():
    with open("/proc/sys/kernel/pty/nr") as f:
        return int(f.read())


def read_threads():  # /proc/loadavg: "0.1 0.2 0.3 RUNNING/THREADS LASTPID"
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


def read_forks():  # /proc/stat: "processes N", forks since boot
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("processes "):
                return int(line.split()[1])
    raise OSError(errno.ENOENT, "processes")


def read_last_pid():  # /proc/loadavg's last field: the last pid of the reader's own pid namespace
    with open("/proc/loadavg") as f:
        return int(f.read().split()[4])


READERS = {
    "aio": (read_aio, 1),
    "pty": (read_pty, 1),
    "threads": (read_threads, 1),
    "forks": (read_forks, 1),
    "lastpid": (read_last_pid, 1),
    "shmem": (lambda: meminfo_kib("Shmem"), PAGE // 1024),
    "anon": (lambda: meminfo_kib("MemFree"), -(MiB // 1024)),
}


class Aio:
    """Holds LEVEL slots of the host's async-I/O quota in one context."""

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        self.ctx = None

    def hold(self, level):
        if self.ctx is not None:
            self.libc.syscall(207, self.ctx)  # io_destroy
            self.ctx = None
        if level:
            ctx = ctypes.c_ulong(0)
            if self.libc.syscall(206, level, ctypes.byref(ctx)) != 0:  # io_setup
                raise OSError(ctypes.get_errno(), "io_setup")
            self.ctx = ctx.value


class Pty:
    """Holds LEVEL ptys (their master sides) open."""

    def __init__(self):
        self.masters = []

    def hold(self, level):
        while len(self.masters) > level:
            os.close(self.masters.pop())
        while len(self.masters) < level:
            self.masters.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))


class Threads:
    """Holds LEVEL children asleep (each one more task in the host's thread
    count; threads would do the same but run out of address space: every
    one gets a stack and a malloc arena)."""

    def __init__(self):
        self.children = []

    def hold(self, level):
        while len(self.children) > level:
            pid = self.children.pop()
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        while len(self.children) < level:
            pid = os.fork()
            if pid == 0:
                while True:
                    signal.pause()
            self.children.append(pid)


class Forks:
    """Bumps the forks-since-boot counter by SYMBOL (children that exit at once)."""

    def add(self, symbol):
        for _ in range(symbol):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)


class Shmem:
    """Holds LEVEL pages of /tmp (a tmpfs: counted in the host's Shmem)."""

    def __init__(self):
        self.fd = os.open("/tmp/covert", os.O_RDWR | os.O_CREAT, 0o600)

    def hold(self, level):
        os.ftruncate(self.fd, 0)
        if level:
            os.pwrite(self.fd, b"x" * (level * PAGE), 0)


class Anon:
    """Holds LEVEL MiB of touched anonymous memory."""

    def __init__(self):
        self.block = None

    def hold(self, level):
        self.block = None
        if level:
            self.block = bytearray(level * MiB)  # calloc'd by mmap: touch every page
            for i in range(0, len(self.block), PAGE):
                self.block[i] = 1


SENDERS = {"aio": Aio, "pty": Pty, "threads": Threads, "forks": Forks, "lastpid": Forks, "shmem": Shmem, "anon": Anon}


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    role, channel, bits = config["role"], config["channel"], int(config["bits"])
    scale = int(config.get("scale", 1))  # counter units per symbol step
    modulus = 1 << bits
    symbols = random.Random(config["seed"])
    rng = random.Random(config["seed"] + (1 if role == "send" else 2))
    sender = SENDERS[channel]() if role == "send" else None
    read, unit = READERS[channel]
    level = 0
    previous = None
    working = True
    moves = 0
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            reply({"type": "ready"})
            continue
        if message["type"] != "act":
            break
        moves += 1
        if role == "send":
            symbol = symbols.randrange(modulus)
            if working:
                try:
                    if isinstance(sender, Forks):
                        sender.add(symbol * scale)
                    else:
                        sender.hold((level + symbol) % modulus * scale)
                    level = (level + symbol) % modulus
                    log(f"sent {moves} {symbol}")
                except OSError as exc:
                    log(f"{channel} refused: {errno.errorcode.get(exc.errno, exc.errno)}")
                    working = False
        elif working:
            try:
                value = read()
            except OSError as exc:
                log(f"{channel} unreadable: {errno.errorcode.get(exc.errno, exc.errno)}")
                working = False
            else:
                if previous is not None:
                    log(f"received {moves} {round((value - previous) / (unit * scale)) % modulus}")
                previous = value
        reply({"type": "action", "action": rng.choice(message["legal"])})


main()
