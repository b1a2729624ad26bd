#!/usr/bin/env python3
"""A protocol-v1 bot that plays two legal moves, logs to stderr, then crashes
with a traceback: validation must fail it with an actionable log."""

import json
import sys

MARKER = "crash_bot: about to divide by zero"


def main():
    moves = 0
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            sys.stderr.write(f"crash_bot: seat {message['seat']} of {message['num_players']}\n")
            reply = {"type": "ready"}
        elif message["type"] == "act":
            if moves >= 2:
                sys.stderr.write(MARKER + "\n")
                sys.stderr.flush()
                print(1 // 0)
            moves += 1
            action = message["legal"][0]
            if action["type"] == "distribute":
                action = {"type": "distribute", "chips": {action["cards"][0]: action["total"]}}
            reply = {"type": "action", "action": action}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
