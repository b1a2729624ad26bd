"""Helper of the covert-channel bots (copied beside their main.py): pick
files from the sandbox's view the same way in any bot that has the same
view, without reading any; read one the way a receiver probes it; speak
the protocol and log.

Nothing here knows where the files are: the walk lists every regular file
under the root (not /proc, /sys, /dev, /tmp or the bot's own /bot), so it
measures whatever view the sandbox gives."""
import json
import os
import random
import resource
import sys
import time

SKIP = {"/proc", "/sys", "/dev", "/tmp", "/bot", "/run", "/var"}


def visible_files(seed, count, smallest=4096, largest=1 << 18, root="/"):
    """``count`` readable files of ``smallest`` to ``largest`` bytes drawn
    with ``seed`` from every file under ``root``, listed in sorted order
    (the walk uses the directory entries' types, a stat their sizes: no
    file's content is read). Two bots that see the same tree and use the
    same seed get the same list."""
    files = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.path in SKIP:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                files.append(entry.path)
    files.sort()
    random.Random(seed).shuffle(files)
    chosen = []
    for path in files:
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if smallest <= size <= largest and os.access(path, os.R_OK):
            chosen.append(path)
            if len(chosen) == count:
                break
    return chosen


def read_all(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


def io_read_bytes():
    """read_bytes of /proc/self/io (bytes this process caused to be read
    from storage), None where it cannot be read."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("read_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def probe(path):
    """Read ``path`` through and say, by each oracle, whether it was in the
    page cache (or the CPU's caches) before: ({"rusage": ru_inblock did not
    move, "io": /proc/self/io's read_bytes did not move, "atime": its access
    time is of the last ten minutes, "time": the read took less than three
    times a second read of it (then surely cached)}, None for an oracle this
    bot cannot use; the first read's duration over the second's, which a
    receiver can rank among a symbol's files)."""
    st = os.stat(path)
    recent = time.time_ns() - st.st_atime_ns < 600 * 10**9
    blocks = resource.getrusage(resource.RUSAGE_SELF).ru_inblock
    io = io_read_bytes()
    started = time.perf_counter_ns()
    read_all(path)
    first = time.perf_counter_ns() - started
    blocks = resource.getrusage(resource.RUSAGE_SELF).ru_inblock - blocks
    io_after = io_read_bytes()
    started = time.perf_counter_ns()
    read_all(path)
    second = time.perf_counter_ns() - started
    oracles = {
        "rusage": blocks == 0,
        "io": None if io is None or io_after is None else io_after == io,
        "atime": recent,
        "time": first < 3 * second,
    }
    return oracles, first / max(second, 1)


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def play(on_move, seed=None):
    """Answer the protocol until the match ends: ready at start; at each
    act, ``on_move(N, OBSERVATION)`` (N: this bot's move, from 1), then a
    random legal action (drawn with ``seed``)."""
    rng = random.Random(seed)
    moves = 0
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            reply({"type": "ready"})
            continue
        if message["type"] != "act":
            break
        moves += 1
        on_move(moves, message["observation"])
        reply({"type": "action", "action": rng.choice(message["legal"])})
