"""Hostile bot: on its third move it writes 1 GiB (1 MiB at a time) to the
file named in config.json ("path": /tmp/... or /dev/shm/...). The sandbox's
size-limited tmpfs (and RLIMIT_FSIZE) must stop it: the write fails and the
bot dies of it (expected forfeit: crash). Had the whole GiB fit, it would
have played on and not forfeited at all."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def fill():
    with open(os.path.join(HERE, "config.json")) as f:
        path = json.load(f)["path"]
    block = b"\0" * (1 << 20)
    written = 0
    try:
        with open(path, "wb") as f:
            for _ in range(1024):
                f.write(block)
                f.flush()
                written += 1
    finally:
        sys.stderr.write(f"wrote {written} MiB to {path}\n")
        sys.stderr.flush()


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            fill()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
