"""Hostile bot: on its third move it raises an exception (expected forfeit:
crash)."""
import json
import sys


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            raise RuntimeError("deliberate crash on move 3")
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
