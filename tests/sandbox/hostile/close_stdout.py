"""Hostile bot: on its third move it closes its stdout and keeps running
(expected forfeit: exit)."""
import json
import os
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
            os.close(1)
            time.sleep(3600)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
