"""Hostile bot: on its third move it answers an action that is not legal
(expected forfeit: illegal_action)."""
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
            reply({"type": "action", "action": {"type": "swap", "slot": [99, 99, 99]}})
            continue
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
