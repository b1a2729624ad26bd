"""Not hostile: the CPU hog without its children. On every move it spins
one thread for as long as the hog does (0.15 s), then plays a random legal
action. Against it, the honest bot shows what an opponent's fair use of one
core on its own moves costs the machine (sandbox_bench.py's fairness
figure), apart from anything the hog's attack could add."""
import json
import random
import sys
import time

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


rng = random.Random(5)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        until = time.monotonic() + SPIN_S
        while time.monotonic() < until:
            pass
        reply({"type": "action", "action": pick(message["legal"], rng)})
    else:
        break
