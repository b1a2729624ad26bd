"""Hostile bot: on its third move it writes 100 MB to stdout as one line
(expected forfeit: output_limit; the platform must not buffer it all)."""
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
            chunk = "x" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
                sys.stdout.flush()
            sys.stdout.write("\n")
            sys.stdout.flush()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
