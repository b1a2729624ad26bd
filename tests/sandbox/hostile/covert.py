"""Hostile bot pair: a covert channel between two seats through a host-wide
counter the sender can move and the receiver can read, each at its own
moves (the other seat frozen meanwhile: the counter keeps its value).

config.json: {"role": "send" | "receive", "channel": NAME, "bits": B,
"seed": S, "scale": UNITS, "files_seed": F} (UNITS: counter units per
symbol step, 1 if absent; F: which files the sender reads, for diskstats
and cached). Both seats draw the same symbols of B bits from S. At its j-th
move the sender adds symbol j to the channel's level (mod 2**B): a level it
holds while frozen (aio slots, ptys, tasks, /tmp pages, anonymous memory)
or a counter it bumps (forks; reads of files it can see nobody read lately,
one read request each, counted in /proc/diskstats, or one page each, in
/proc/meminfo's Cached, a page in /proc/vmstat's pgpgin, a BLOCK softirq
in /proc/softirqs; clock ticks it keeps the CPU busy, in /proc/stat's cpu
row; milliseconds it waits before it moves, which the receiver sees on its
own clock; pipes, memfds, new /proc entries or shared mappings of /dev/zero
it makes, each taking an inode number of a host-wide counter). At each move the receiver reads the counter
and decodes the change since its previous move into a symbol: "received K
VALUE" on stderr (K its move). A channel it cannot use is logged as
"CHANNEL refused: ERRNO" (sender) or "CHANNEL unreadable: ERRNO"
(receiver), and the bot plays on. Both play random legal moves."""
import ctypes
import errno
import json
import mmap
import os
import random
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from visible import log, play, read_all, visible_files  # noqa: E402

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


def read_disk_reads():  # /proc/diskstats: reads completed, summed over whole disks (not their partitions)
    with open("/proc/diskstats") as f:
        rows = [line.split() for line in f]
    names = {row[2] for row in rows}
    return sum(int(row[3]) for row in rows if not any(row[2] != n and row[2].startswith(n) for n in names))


def read_field(path, name):  # "NAME VALUE" rows: /proc/vmstat
    with open(path) as f:
        for line in f:
            if line.startswith(name + " "):
                return int(line.split()[1])
    raise OSError(errno.ENOENT, name)


def read_block_softirqs():  # /proc/softirqs: BLOCK, summed over the CPUs (one a completed request)
    with open("/proc/softirqs") as f:
        for line in f:
            if line.split()[0] == "BLOCK:":
                return sum(int(x) for x in line.split()[1:])
    raise OSError(errno.ENOENT, "BLOCK")


def read_busy_ticks():  # /proc/stat's "cpu" row: the host's busy clock ticks (not idle, not iowait)
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields[:8]) - fields[3] - fields[4]


class Sysinfo(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long),
        ("loads", ctypes.c_ulong * 3),
        ("ram", ctypes.c_ulong * 6),  # total, free, shared, buffer; swap total, free
        ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort),
        ("high", ctypes.c_ulong * 2),
        ("mem_unit", ctypes.c_uint),
        ("_f", ctypes.c_char * 8),
    ]


def read_sysinfo_procs():  # sysinfo(2): the host's task count, as /proc/loadavg shows it
    libc = ctypes.CDLL(None, use_errno=True)
    info = Sysinfo()
    if libc.sysinfo(ctypes.byref(info)) != 0:
        raise OSError(ctypes.get_errno(), "sysinfo")
    return info.procs


def read_pipe_inode():
    """The inode number a new pipe gets: the kernel's get_next_ino(), one
    counter for all pipes, sockets and anonymous inodes of the host, handed
    out to each CPU in batches (so both seats move to CPU 0 first). Less
    this reader's own pipes."""
    r, w = os.pipe()
    inode = os.fstat(r).st_ino
    os.close(r)
    os.close(w)
    read_pipe_inode.mine += 1
    return inode - read_pipe_inode.mine


read_pipe_inode.mine = 0


def read_memfd_inode():
    """The inode number a new memfd gets: the kernel's internal shmem mount
    numbers every memfd (and SysV shared memory segment) of the host from
    one counter, in per-CPU batches. Less this reader's own."""
    fd = os.memfd_create("probe")
    inode = os.fstat(fd).st_ino
    os.close(fd)
    read_memfd_inode.mine += 1
    return inode - read_memfd_inode.mine


read_memfd_inode.mine = 0


def fresh_proc_inode():
    """A new procfs inode: /proc/self/fd/N of a descriptor just opened (the
    entry of the one closed before is gone: its lookup failed), numbered by
    get_next_ino() like a pipe's, with no pipe."""
    fd = os.open("/dev/null", os.O_RDONLY)
    inode = os.lstat(f"/proc/self/fd/{fd}").st_ino
    os.close(fd)
    try:
        os.lstat(f"/proc/self/fd/{fd}")  # a lookup that fails drops the stale entry
    except FileNotFoundError:
        pass
    return inode


def read_proc_inode():
    """get_next_ino() read through procfs (open, lstat, close: nothing the
    start-up gate refuses). Less this reader's own."""
    inode = fresh_proc_inode()
    read_proc_inode.mine += 1
    return inode - read_proc_inode.mine


read_proc_inode.mine = 0


def zero_mapping_inode():
    """A shared mapping of /dev/zero is a new file of the kernel's internal
    shmem mount, the memfds' counter; /proc/self/maps shows its number."""
    with open("/dev/zero", "r+b") as zero:
        mapping = mmap.mmap(zero.fileno(), PAGE, flags=mmap.MAP_SHARED)
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if fields[1].endswith("s") and line.rstrip().endswith(("/dev/zero", "/dev/zero (deleted)")):
                    return int(fields[4])  # the only shared mapping of /dev/zero: this one
    finally:
        mapping.close()
    raise OSError(errno.ENOENT, "the mapping is not in /proc/self/maps")


def read_zero_inode():
    inode = zero_mapping_inode()
    read_zero_inode.mine += 1
    return inode - read_zero_inode.mine


read_zero_inode.mine = 0


def read_clock_ms():  # the receiver's own clock: how long the other seat took to move
    return time.monotonic_ns() // 1_000_000


READERS = {
    "aio": (read_aio, 1),
    "pty": (read_pty, 1),
    "threads": (read_threads, 1),
    "forks": (read_forks, 1),
    "lastpid": (read_last_pid, 1),
    "shmem": (lambda: meminfo_kib("Shmem"), PAGE // 1024),
    "anon": (lambda: meminfo_kib("MemFree"), -(MiB // 1024)),
    "cached": (lambda: meminfo_kib("Cached"), 4),
    "diskstats": (read_disk_reads, 1),
    "vmstat": (lambda: read_field("/proc/vmstat", "pgpgin"), 4),
    "softirqs": (read_block_softirqs, 1),
    "cpubusy": (read_busy_ticks, 1),
    "sysinfo": (read_sysinfo_procs, 1),
    "pipeino": (read_pipe_inode, 1),
    "memfdino": (read_memfd_inode, 1),
    "procino": (read_proc_inode, 1),
    "zeroino": (read_zero_inode, 1),
    "thinktime": (read_clock_ms, 1),
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


class DiskReads:
    """Reads SYMBOL files it can see of at most 32 KiB (one read request
    each, from the disk where they are not cached), each file once: the
    receiver sees the host's reads completed (diskstats) or the page cache
    grow by a page a file (meminfo's Cached)."""

    def __init__(self, files_seed, small=32768):
        self.files = visible_files(files_seed, 2000, 1, small)

    def add(self, symbol):
        for _ in range(symbol):
            read_all(self.files.pop())


class Pipes:
    """Makes SYMBOL pipes and closes them (each takes an inode number)."""

    def add(self, symbol):
        for _ in range(symbol):
            r, w = os.pipe()
            os.close(r)
            os.close(w)


class Memfds:
    """Makes SYMBOL memfds and closes them (each takes an inode number)."""

    def add(self, symbol):
        for _ in range(symbol):
            os.close(os.memfd_create("bump"))


class ProcInodes:
    """Makes SYMBOL new procfs inodes (each takes an inode number)."""

    def add(self, symbol):
        for _ in range(symbol):
            fresh_proc_inode()


class ZeroMappings:
    """Maps /dev/zero shared SYMBOL times (each takes a shmem inode number)."""

    def add(self, symbol):
        for _ in range(symbol):
            zero_mapping_inode()


class Spin:
    """Keeps the CPU busy for SYMBOL clock ticks (10 ms each) before it moves."""

    def add(self, symbol):
        end = time.process_time() + symbol / os.sysconf("SC_CLK_TCK")
        while time.process_time() < end:
            pass


class Think:
    """Takes SYMBOL milliseconds longer to move (it sleeps)."""

    def add(self, symbol):
        time.sleep(symbol / 1000)


SENDERS = {
    "aio": Aio,
    "pty": Pty,
    "threads": Threads,
    "sysinfo": Threads,
    "forks": Forks,
    "lastpid": Forks,
    "shmem": Shmem,
    "anon": Anon,
    "cached": lambda seed: DiskReads(seed, 4096),
    "diskstats": DiskReads,
    "vmstat": lambda seed: DiskReads(seed, 4096),
    "softirqs": DiskReads,
    "cpubusy": Spin,
    "pipeino": Pipes,
    "memfdino": Memfds,
    "procino": ProcInodes,
    "zeroino": ZeroMappings,
    "thinktime": Think,
}
COUNTERS = (Forks, Think, Spin, DiskReads, Pipes, Memfds, ProcInodes, ZeroMappings)  # bumped by each symbol; the others hold a level


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    role, channel, bits = config["role"], config["channel"], int(config["bits"])
    scale = int(config.get("scale", 1))  # counter units per symbol step
    modulus = 1 << bits
    symbols = random.Random(config["seed"])
    kind = SENDERS[channel]
    if role != "send":
        sender = None
    elif channel in ("cached", "diskstats", "vmstat", "softirqs"):  # files nobody read lately: a new seed each run
        sender = kind(config.get("files_seed", 0))
    else:
        sender = kind()
    read, unit = READERS[channel]
    if channel in ("pipeino", "memfdino", "procino", "zeroino"):  # one CPU's batch of the counter: both seats on CPU 0
        os.sched_setaffinity(0, {0})
    state = {"level": 0, "previous": None, "working": True}

    def send(moves, _observation):
        symbol = symbols.randrange(modulus)
        if not state["working"]:
            return
        try:
            if isinstance(sender, COUNTERS):
                sender.add(symbol * scale)
            else:
                sender.hold((state["level"] + symbol) % modulus * scale)
            state["level"] = (state["level"] + symbol) % modulus
            log(f"sent {moves} {symbol}")
        except OSError as exc:
            log(f"{channel} refused: {errno.errorcode.get(exc.errno, exc.errno)}")
            state["working"] = False

    def receive(moves, _observation):
        if not state["working"]:
            return
        try:
            value = read()
        except OSError as exc:
            log(f"{channel} unreadable: {errno.errorcode.get(exc.errno, exc.errno)}")
            state["working"] = False
            return
        if state["previous"] is not None:
            log(f"received {moves} {round((value - state['previous']) / (unit * scale)) % modulus}")
        state["previous"] = value

    def write(moves, _observation):
        """To the next match: after each move, the counter's value is the
        message (mod 2**B), bumped up to it; the last move's stays."""
        message = symbols.randrange(modulus) if moves == 1 else state["level"]
        state["level"] = message
        bumps = (message - read()) % modulus
        sender.add(bumps)
        if moves == 1:
            log(f"sent 1 {message}")

    def read_once(moves, _observation):
        if moves == 1:
            log(f"received 1 {read() % modulus}")

    if config.get("across"):  # the pipe-inode counter from one match to the next
        play(write if role == "send" else read_once, config["seed"])
    else:
        play(send if role == "send" else receive, config["seed"] + (1 if role == "send" else 2))


main()
