#!/usr/bin/env python3
"""A cardroom bot that plays a uniformly random legal action (both games).

Starter kit: one file, standard library only, protocol v1. Copy it, replace
``choose`` with something cleverer, and try it with
``cardroom play allegra path/to/your_bot.py builtin:random``.
"""

import json
import os
import random
import sys


def fill_distribute(template, rng):
    """Spread the whole bid (``template["total"]``) chip by chip over the
    Pool's cards at random; zero entries are left out."""
    chips = {}
    for _ in range(template["total"]):
        card = rng.choice(template["cards"])
        chips[card] = chips.get(card, 0) + 1
    return {"type": "distribute", "chips": chips}


def choose(observation, legal, rng):
    action = rng.choice(legal)
    if action["type"] == "distribute":
        return fill_distribute(action, rng)
    return action


# --- protocol v1 loop: the same few lines in every starter bot ---------------
def run(choose):
    """Read the platform's messages from stdin and answer on stdout."""
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            # From the OS's entropy, which no other seat sees (a seed made of
            # the match id, sent to every seat, lets an opponent replay your
            # draws); CARDROOM_BOT_SEED, set by hand, replays them for debugging.
            rng.seed(os.environ.get("CARDROOM_BOT_SEED"))
            reply = {"type": "ready"}
        elif message["type"] == "act":
            reply = {"type": "action", "action": choose(message["observation"], message["legal"], rng)}
        else:  # "end": the match is over
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    run(choose)
