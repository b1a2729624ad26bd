#!/usr/bin/env python3
"""Sample Allegra bot "lowball": keeps low cards, throws high ones away,
never knocks."""

import json
import random
import sys


def cell(observation, slot):
    owner, row, col = slot
    return observation["grids"][owner][row][col]


def badness(observation, slot):
    """How much we want to replace what is in a slot (face-down counts as 6)."""
    value = cell(observation, slot)
    return 6 if value == "?" else value


def choose(observation, legal, rng):
    kinds = {a["type"] for a in legal}
    if "knock" in kinds:
        return {"type": "pass"}
    if "reveal" in kinds or "place" in kinds:
        return legal[0]
    if "exchange" in kinds:
        return min(legal, key=lambda a: (badness(observation, a["put"]) * -1, badness(observation, a["take"])))
    if "take_discard" in kinds:
        top = observation["discard"][-1]
        slots = [a for a in legal if a["type"] == "take_discard"]
        worst = max(slots, key=lambda a: badness(observation, a["slot"]))
        if top <= 3 and badness(observation, worst["slot"]) > top:
            return worst
        if "draw" in kinds:
            return {"type": "draw"}
        return worst
    drawn = observation["drawn"]
    swaps = [a for a in legal if a["type"] == "swap"]
    if swaps:
        worst = max(swaps, key=lambda a: badness(observation, a["slot"]))
        if badness(observation, worst["slot"]) > drawn:
            return worst
    discards = [a for a in legal if a["type"] == "discard"]
    return discards[0] if discards else legal[0]


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
