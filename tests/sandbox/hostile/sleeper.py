"""Hostile bot: plays two moves, then sleeps for an hour (expected forfeit:
timeout)."""
import json
import sys
import time


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
            time.sleep(3600)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
