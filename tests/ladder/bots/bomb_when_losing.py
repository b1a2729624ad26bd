#!/usr/bin/env python3
"""An Allegra bot that plays its first legal action every move, and once it
is behind on the scores (lower is better) answers with a reply nested
200,000 levels deep instead: a parser that raises on it (RecursionError)
made the match a platform failure, re-queued and never rated, so a losing
bot could void its loss. It must be this bot's forfeit, and rated."""

import json
import sys

BOMB = b"[" * 200_000 + b"]" * 200_000


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            seat = message["seat"]
            reply = {"type": "ready"}
        elif message["type"] == "act":
            scores = message["observation"]["scores"]
            if scores[seat] > min(s for i, s in enumerate(scores) if i != seat):
                sys.stderr.write(f"bomb_when_losing: behind at {scores}, sending the bomb\n")
                sys.stderr.flush()
                sys.stdout.buffer.write(BOMB + b"\n")
                sys.stdout.flush()
                continue
            reply = {"type": "action", "action": message["legal"][0]}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
