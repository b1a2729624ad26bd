#!/usr/bin/env python3
"""An Allegra bot that never turns a card up when it can avoid it (the
rulings' turn limit exists for two of these): it takes the discard into a
face-up slot, or draws and swaps into a face-up slot, and passes on knocks."""

import json
import sys


def face_up_slot(observation, legal_slots):
    grids = observation["grids"]
    for slot in legal_slots:
        s, r, c = slot
        if isinstance(grids[s][r][c], int):
            return slot
    return None


def choose(observation, legal):
    by_type = {}
    for action in legal:
        by_type.setdefault(action["type"], []).append(action)
    if "take_discard" in by_type:
        slot = face_up_slot(observation, [a["slot"] for a in by_type["take_discard"]])
        if slot is not None:
            return {"type": "take_discard", "slot": slot}
    if "swap" in by_type:
        slot = face_up_slot(observation, [a["slot"] for a in by_type["swap"]])
        if slot is not None:
            return {"type": "swap", "slot": slot}
    for kind in ("draw", "pass"):
        if kind in by_type:
            return by_type[kind][0]
    return legal[0]


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply = {"type": "ready"}
    elif message["type"] == "act":
        reply = {"type": "action", "action": choose(message["observation"], message["legal"])}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
