#!/usr/bin/env python3
"""Sample Allegory bot "miser": never bids more than a third of its chips,
claims chip-laden cards when it rests, and keeps its weakest Tale fed."""

import json
import random
import sys

TALES = ("nature", "energy", "spirit")
THEMES = ("butterfly", "mask", "coin", "owl", "key", "crown", "feather", "flame", "shell")
VALUES = (-2, -1, 1, 2, 3, 4, 5)


def tale_of(card):
    theme, value = card.split(":")
    return TALES[(VALUES.index(int(value)) + THEMES.index(theme)) % 3]


def card_worth(card, me):
    totals = {t: sum(int(c.split(":")[1]) for c in me["tales"][t]) for t in TALES}
    weakest = min(totals, key=totals.get)
    value = int(card.split(":")[1])
    return value + (3 if tale_of(card) == weakest else 0)


def choose(observation, legal, rng):
    me = observation["players"][observation["seat"]]
    kinds = {a["type"] for a in legal}
    if "distribute" in kinds:
        template = legal[0]
        worst = min(template["cards"], key=lambda c: card_worth(c, me))
        return {"type": "distribute", "chips": {worst: template["total"]}}
    if "take" in kinds:
        return max(legal, key=lambda a: card_worth(a["card"], me))
    claims = [a for a in legal if a["type"] == "rest" and "claim" in a]
    good_claims = [a for a in claims if card_worth(a["claim"], me) >= 3]
    if good_claims:
        return max(good_claims, key=lambda a: card_worth(a["claim"], me))
    bids = [a for a in legal if a["type"] == "bid" and a["amount"] <= max(1, me["chips"] // 3)]
    best_pool = max((card_worth(p["card"], me) for p in observation["pool"]), default=0)
    if bids and best_pool >= 5:
        return bids[0]
    return {"type": "rest"}


def run(choose):
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            reply = {"type": "ready"}
        elif message["type"] == "act":
            reply = {"type": "action", "action": choose(message["observation"], message["legal"], rng)}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    run(choose)
