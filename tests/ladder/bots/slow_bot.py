#!/usr/bin/env python3
"""A slow, well-behaved protocol-v1 bot: a random legal action after sleeping
SLEEP seconds per move (so that a match takes a few seconds: the worker-kill
test kills the worker in the middle of one)."""

import json
import random
import sys
import time

SLEEP = 0.2


def main():
    rng = random.Random(7)
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            reply = {"type": "ready"}
        elif message["type"] == "act":
            time.sleep(SLEEP)
            action = rng.choice(message["legal"])
            if action["type"] == "distribute":
                chips = {}
                for _ in range(action["total"]):
                    card = rng.choice(action["cards"])
                    chips[card] = chips.get(card, 0) + 1
                action = {"type": "distribute", "chips": chips}
            reply = {"type": "action", "action": action}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
