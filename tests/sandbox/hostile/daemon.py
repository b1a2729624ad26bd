"""Hostile bot: on its second move it leaves a daemon behind (double fork +
setsid, stdio closed, ignoring SIGTERM/SIGHUP) that is meant to outlive the
match; on its third move it exits with status 0 (expected forfeit: exit).
The sandbox's clean-up must kill the daemon all the same."""
import json
import os
import signal
import sys
import time


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def daemonize():
    if os.fork() > 0:
        os.wait()
        return
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:  # a daemon's work: keep a file fresh, forever
        try:
            with open("/tmp/daemon-alive", "w") as f:
                f.write(str(time.time()))
        except OSError:
            pass
        time.sleep(0.05)


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 2:
            daemonize()
            sys.stderr.write("daemon started\n")
            sys.stderr.flush()
        if moves == 3:
            sys.exit(0)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
