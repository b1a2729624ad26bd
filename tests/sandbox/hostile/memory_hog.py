"""Hostile bot: plays two moves, then tries to fill 2 GiB of memory (touched
pages, 64 MiB at a time). The sandbox must stop it (address-space rlimit,
memory cgroup): it logs how far it got and dies of MemoryError (expected
forfeit: crash)."""
import json
import sys


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hog():
    chunks = []
    try:
        for _ in range(32):  # 32 x 64 MiB = 2 GiB
            chunks.append(b"x" * (64 << 20))
    finally:
        sys.stderr.write(f"memory hog reached {64 * len(chunks)} MiB\n")
        sys.stderr.flush()
    sys.stderr.write("HOGGED 2 GiB\n")  # never reached in the sandbox


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            hog()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
