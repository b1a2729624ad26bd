"""A well-behaved bot whose package holds a secret (secret.txt) that other
bots must not be able to read. Plays the first legal action."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "secret.txt")) as f:
    SECRET = f.read()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
