#!/usr/bin/env python3
"""A protocol-v1 bot that plays MOVES legal moves, then misbehaves as BEHAVIOUR
says. Tests copy this file with the two constants replaced."""

import json
import os
import sys
import time

BEHAVIOUR = "none"
MOVES = 2


def misbehave():
    if BEHAVIOUR == "crash":
        raise RuntimeError("deliberate crash")
    if BEHAVIOUR == "exit":
        sys.exit(0)
    if BEHAVIOUR == "timeout":
        time.sleep(60)
    if BEHAVIOUR == "garbage":
        return "this is not json"
    if BEHAVIOUR == "wrong_message":
        return json.dumps({"type": "ready"})
    if BEHAVIOUR == "illegal":
        return json.dumps({"type": "action", "action": {"type": "teleport"}})
    if BEHAVIOUR == "close_stdout":
        os.close(1)  # sys.stdout.close() would leave fd 1 open
        time.sleep(60)
    raise AssertionError(BEHAVIOUR)


def main():
    moves = 0
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            if BEHAVIOUR == "no_ready":
                time.sleep(60)
            print(json.dumps({"type": "ready"}), flush=True)
        elif message["type"] == "act":
            if moves >= MOVES:
                print(misbehave(), flush=True)
                continue
            moves += 1
            sys.stderr.write(f"move {moves}\n")
            action = message["legal"][0]
            if action["type"] == "distribute":
                action = {"type": "distribute", "chips": {action["cards"][0]: action["total"]}}
            print(json.dumps({"type": "action", "action": action}), flush=True)
        else:
            if BEHAVIOUR == "linger":  # ignores "end": stays until killed
                time.sleep(60)
            return


if __name__ == "__main__":
    main()
