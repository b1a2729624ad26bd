"""The control of the prediction attack: a random bot seeded as the SDK and
the starters were before issue 35 (``f"{match_id}:{seat}"``). Its moves are
the ones rng_predictor's stream predicts, every one."""
import json
import random
import sys

rng = random.Random()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        rng.seed(f"{message.get('match_id')}:{message['seat']}")
        reply = {"type": "ready"}
    elif message["type"] == "act":
        action = rng.choice(message["legal"])
        if action["type"] == "distribute":
            chips = {}
            for _ in range(action["total"]):
                card = rng.choice(action["cards"])
                chips[card] = chips.get(card, 0) + 1
            action = {"type": "distribute", "chips": chips}
        reply = {"type": "action", "action": action}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
