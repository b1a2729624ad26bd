"""Hostile bot: plays two legal moves, then answers with a reply made to
break a JSON parser, chosen by config.json's "bomb" (see BOMBS): nested
200,000 levels deep, a 5,000-digit number, a number that overflows a float,
NaN, duplicate keys, invalid UTF-8, a lone surrogate escape, a NUL byte, a
huge string, an unhashable "type". Each must be this seat's forfeit
(invalid_json, invalid_message or illegal_action), never an error of the
runner. Logs which bomb it sent."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

BOMBS = {
    "deep_list": b"[" * 200_000 + b"]" * 200_000,
    "deep_object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "deep_action": b'{"type": "action", "action": {"type": "draw", "x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}",
    "huge_int": b'{"type": "action", "action": {"type": "bid", "amount": ' + b"9" * 5000 + b"}}",
    "huge_float": b'{"type": "action", "action": {"type": "bid", "amount": 1e400}}',
    "nan": b'{"type": "action", "action": {"type": "bid", "amount": NaN}}',
    "duplicate_keys": b'{"type": "action", "action": {"type": "draw"}, "action": {"type": "knock"}}',
    "invalid_utf8": b'{"type": "action", "action": {"type": "\xff\xfe"}}',
    "lone_surrogate": b'{"type": "action", "action": {"type": "take", "card": "\\ud800"}}',
    "nul": b'{"type": "action", "action": {"type": "draw\\u0000"}}\x00',
    "huge_string": b'{"type": "action", "action": {"type": "take", "card": "' + b"A" * 900_000 + b'"}}',
    "unhashable_type": b'{"type": "action", "action": {"type": {"type": ["draw"]}}}',
}


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


with open(os.path.join(HERE, "config.json")) as f:
    bomb = BOMBS[json.load(f)["bomb"]]
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            sys.stderr.write(f"json bomb: sending {len(bomb)} bytes\n")
            sys.stderr.flush()
            sys.stdout.buffer.write(bomb + b"\n")
            sys.stdout.flush()
            continue
        action = message["legal"][0]
        if action["type"] == "distribute":
            action = {"type": "distribute", "chips": {action["cards"][0]: action["total"]}}
        reply({"type": "action", "action": action})
    else:
        break
