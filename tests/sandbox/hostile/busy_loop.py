"""Hostile bot: plays two moves, then spins the CPU forever (expected
forfeit: timeout)."""
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
            n = 0
            while True:
                n += 1
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
