"""Hostile bot: on its third move it answers valid JSON that is not an
action reply (expected forfeit: invalid_message)."""
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
            reply({"type": "hello", "action": message["legal"][0]})
            continue
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
