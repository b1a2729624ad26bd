"""Hostile bot: on its third move it writes 100 MB to stdout as a million
short lines that are not JSON (expected forfeit: invalid_json; the platform
must stop reading at the first line)."""
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
            block = ("spam " * 19 + "spam\n") * 10000  # 1 MB of 100-byte lines
            for _ in range(100):
                sys.stdout.write(block)
                sys.stdout.flush()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
