"""Hostile bot: on its third move it prints a line that is not JSON
(expected forfeit: invalid_json)."""
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
            sys.stdout.write("\x00\xff garbage {{{ not json\n")
            sys.stdout.flush()
            continue
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
