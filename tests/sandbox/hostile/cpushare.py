"""Hostile bot pair: a covert channel through the CPU itself, between two
bots of different matches that run at the same time on one worker (two
rotations of a duplicate deal played at once, say).

config.json: {"role": "send" | "receive", "slot_ms": S, "window_ms": W,
"moves": N, "pin": P, "message_seed": M (the sender's only)}. With P (the
default) both move onto the first CPU (sched_setaffinity: the sandbox
leaves it), so they take turns on one core; without, they meet only where
the scheduler puts them together. For its first N moves each works W ms before
it answers, in slots of S ms aligned to the wall clock (both see the same
one). In slot s the sender spins (bit 1) or sleeps (bit 0), the bit drawn
from M and s: "sent s BIT"; the receiver counts how often its loop turns in
each whole slot: "slot s COUNT" (fewer: the sender was spinning). Both play
random legal moves."""
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from visible import log, play  # noqa: E402


def bit(seed, slot):
    return hashlib.blake2b(f"{seed}:{slot}".encode(), digest_size=1).digest()[0] & 1


def work(role, seed, slot_s, window_s):
    end = time.time() + window_s
    now = time.time()
    slot = int(now // slot_s) + 1
    time.sleep(max(0.0, slot * slot_s - now))  # from the next slot's start
    while (slot + 1) * slot_s <= end:
        slot_end = (slot + 1) * slot_s
        if role == "send":
            value = bit(seed, slot)
            if value:
                while time.time() < slot_end:
                    pass
            else:
                time.sleep(max(0.0, slot_end - time.time()))
            log(f"sent {slot} {value}")
        else:
            count = 0
            while time.time() < slot_end:
                count += 1
            log(f"slot {slot} {count}")
        slot += 1


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    role = config["role"]
    slot_s, window_s = config["slot_ms"] / 1000, config["window_ms"] / 1000
    if config.get("pin", True):
        try:
            os.sched_setaffinity(0, {0})
        except OSError as exc:
            log(f"affinity refused: {exc}")
    play(lambda moves, _observation: work(role, config.get("message_seed"), slot_s, window_s) if moves <= config["moves"] else None)


main()
