"""Not hostile: the victim of cpu_hog.py. On every move it does a fixed
amount of work (about 0.08 s of one core here), so its move time shows how
much CPU it was left; then it plays a random legal action."""
import json
import random
import sys

WORK = 500_000


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


rng = random.Random(3)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        total = 0
        for i in range(WORK):
            total += i * i
        reply({"type": "action", "action": pick(message["legal"], rng)})
    else:
        break
