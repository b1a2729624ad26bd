"""Hostile bot: works on after its answer, while the runner believes it
frozen. A frozen cgroup stops a task only when it returns to user space,
so one long system call keeps running, and using CPU, after the freeze:
here an anonymous mapping made with MAP_POPULATE (the kernel faults in
and zeroes every page, checking only for a fatal signal on the way), then
unmapped. (It read /proc/self/pagemap before decision 267, which now kills
a bot that keeps a /proc descriptor across ready; a file of its own is
held to 16 MiB, too short a read.) From its first answer on, a thread makes such calls one after the
other, so that whenever the runner freezes the bot it is inside one; each
is sized to at least WORK_MS of CPU (config.json's "work_ms", 40 by
default), on the thread's own clock: sized on the first move, then after
every call (a call's cost a MiB varies several-fold on a VM from one call
to the next: sized once, a slow first measure left calls of 10 ms, whose
leak a move's allowance absorbed, and the bot played on unpunished).

It logs "freeze dodge: ... ms of kernel work a call" once and plays the
first legal action (expected, since
every CPU nanosecond of its cgroup counts against its clock: a forfeit on
time once its bank is spent; before: none)."""
import json
import mmap
import sys
import threading
import time

try:
    with open("config.json") as f:
        WORK_MS = float(json.load(f).get("work_ms", 40))
except OSError:
    WORK_MS = 40.0
CHUNK = 1 << 20  # bytes of memory a unit of work populates
MAX_IOVECS = 192  # units: within the bot's 512 MiB with the interpreter
iovecs = 1


def kernel_work(n):
    populated = mmap.mmap(-1, n * CHUNK, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
    populated.close()


def resized(units, took_ms):
    """The units for the next call, after ``units`` took ``took_ms`` of CPU:
    grown when short of WORK_MS, cut when over twice it, so that every call
    stays between the two (as far as the memory cap allows)."""
    if WORK_MS <= took_ms <= 2 * WORK_MS:
        return units
    wanted = round(units * 1.5 * WORK_MS / max(took_ms, 0.01))
    return max(1, min(MAX_IOVECS, wanted))


def timed_work(units):
    started = time.thread_time()  # this thread's CPU only: not its frozen time
    kernel_work(units)
    return (time.thread_time() - started) * 1000


def worker():
    global iovecs
    while True:
        iovecs = resized(iovecs, timed_work(iovecs))


def calibrate():
    """How many iovecs make WORK_MS of CPU in one call, to start with."""
    kernel_work(1)
    return resized(16, timed_work(16))


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def pick(legal):
    action = legal[0]
    if action["type"] == "distribute":
        return {"type": "distribute", "chips": {action["cards"][0]: action["total"]}}
    return action


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 1:
            iovecs = calibrate()
            sys.stderr.write(f"freeze dodge: {iovecs} x {CHUNK >> 20} MiB populated to start, at least {WORK_MS:.0f} ms of kernel work a call\n")
            threading.Thread(target=worker, daemon=True).start()
        reply({"type": "action", "action": pick(message["legal"])})
    else:
        break
