"""Hostile bot: on its third move it tries TCP connections to every address
in config.json (the host's Redis and PostgreSQL, listeners the test opened
on 127.0.0.1 and ::1, an Internet address). It logs each attempt as
CONNECTED or BLOCKED. If any connection worked it answers an illegal action
(forfeit: illegal_action); if all were blocked it exits with status 0
(expected forfeit: exit)."""
import json
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def probe():
    with open(os.path.join(HERE, "config.json")) as f:
        targets = json.load(f)["targets"]
    leaked = False
    for host, port in targets:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            # (the seccomp filter refuses the socket itself: EPERM)
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect((host, port))
                sys.stderr.write(f"CONNECTED {host} {port}\n")
                sock.sendall(b"hello from a sandboxed bot\n")
                leaked = True
        except OSError as exc:
            sys.stderr.write(f"BLOCKED {host} {port}: {exc}\n")
    sys.stderr.flush()
    return leaked


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            if probe():
                reply({"type": "action", "action": {"type": "leaked"}})
                continue
            sys.exit(0)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
