"""Hostile bot: on its first move it forks busy children, each calling
setsid() (its own session, so its own scheduler autogroup: without a cgroup
cpu limit each weighs like a whole program), which spin forever; it then
spins itself for a while on every move. It must neither slow the honest
seat's moves (it is frozen while they run) nor get more than one core
(expected: no forfeit; the honest seat's move times stay normal)."""
import json
import os
import random
import sys
import time

CHILDREN = 6
SPIN_S = 0.15


def pick(legal, rng):
    """A random legal action (an Allegory bid's template is filled in)."""
    action = rng.choice(legal)
    if action["type"] == "distribute":
        chips = {}
        for _ in range(action["total"]):
            card = rng.choice(action["cards"])
            chips[card] = chips.get(card, 0) + 1
        return {"type": "distribute", "chips": chips}
    return action


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def spin_forever():
    os.setsid()
    n = 0
    while True:
        n += 1


rng = random.Random(5)
forked = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        while forked < CHILDREN:
            if os.fork() == 0:
                spin_forever()
            forked += 1
        until = time.monotonic() + SPIN_S
        while time.monotonic() < until:
            pass
        reply({"type": "action", "action": pick(message["legal"], rng)})
    else:
        break
