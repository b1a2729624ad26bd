"""Hostile bot: plays two moves, then forks without end (children fork too).

The sandbox must bound it (RLIMIT_NPROC per bot uid, pids cgroup): it logs
how many forks succeeded before the first refusal, then never answers
(expected forfeit: timeout)."""
import json
import os
import sys
import time


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def bomb():
    made, errors = 0, 0
    while errors < 200:
        try:
            pid = os.fork()
        except OSError as exc:
            errors += 1
            if errors == 1:
                sys.stderr.write(f"fork refused after {made} forks: {exc}\n")
                sys.stderr.flush()
            continue
        if pid == 0:  # a child: fork on too, then linger
            for _ in range(1000):
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
            time.sleep(3600)
            os._exit(0)
        made += 1
    sys.stderr.write(f"forks made: {made}\n")
    sys.stderr.flush()
    time.sleep(3600)


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            bomb()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
