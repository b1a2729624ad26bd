"""Hostile bot: writes 100 MB to stderr (10 MB on each of its moves 3 to 12)
and otherwise plays correctly. The platform keeps a capped log and the bot
does NOT forfeit."""
import json
import sys


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


block = "log spam " * 116508 + "\n"  # ~1 MB
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if 3 <= moves <= 12:
            for _ in range(10):
                sys.stderr.write(block)
            sys.stderr.flush()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
