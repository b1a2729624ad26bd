"""Hostile bot: on its third move it tries to read every path in
config.json ("targets"; a folder is listed, a file read; a pattern with *
is globbed). It logs each as READ or BLOCKED. If anything could be read it
answers an illegal action (forfeit: illegal_action); if all were blocked it
exits with status 0 (expected forfeit: exit)."""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def try_read(path):
    if os.path.isdir(path):
        return f"{len(os.listdir(path))} entries"
    with open(path, "rb") as f:
        return f"{len(f.read())} bytes"


def probe():
    with open(os.path.join(HERE, "config.json")) as f:
        targets = json.load(f)["targets"]
    leaked = False
    for target in targets:
        paths = glob.glob(target) if "*" in target else [target]
        if not paths:
            sys.stderr.write(f"BLOCKED {target}: nothing matches\n")
        for path in paths:
            try:
                what = try_read(path)
                sys.stderr.write(f"READ {path}: {what}\n")
                leaked = True
            except OSError as exc:
                sys.stderr.write(f"BLOCKED {path}: {exc}\n")
    sys.stderr.flush()
    return leaked


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            if probe():
                reply({"type": "action", "action": {"type": "leaked"}})
                continue
            sys.exit(0)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
