"""Hostile bot pair: a covert channel through the page cache, between two
seats of one match or from one match to a later one (a duplicate event's
rotation k to rotation k+1).

config.json: {"role": "send" | "receive", "files_seed": F, "bits": B,
"symbols": N, "lag": L, "message_seed": M (the sender's only)}. Both roles
pick the same N*B files from what they can see (visible.py, with F);
symbol j (1..N) is files (j-1)*B .. j*B-1. At its j-th move the sender
reads the files of symbol j whose bit is 1 (the bits drawn from M, which
the receiver never sees): "sent J VALUE" on stderr. At its k-th move the
receiver probes the files of symbol k-L (each oracle of visible.probe says
whether a file was cached: a cached file reads as bit 1): "received K J
ORACLE VALUE" for each oracle it can use. L=1 between seats (the receiver
reads what the sender sent before its last move), L=0 from one match to the
next (the receiver reads at its first move, with N=1 and B bits). Both play
random legal moves."""
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from visible import log, play, probe, read_all, visible_files  # noqa: E402


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    role, bits, symbols = config["role"], int(config["bits"]), int(config["symbols"])
    lag = int(config.get("lag", 1))
    started = time.monotonic()
    files = visible_files(config["files_seed"], bits * symbols)
    log(f"picked {len(files)} files of {bits * symbols} in {time.monotonic() - started:.2f} s")
    message = random.Random(config.get("message_seed"))

    def on_move(moves):
        j = moves if role == "send" else moves - lag
        block = files[(j - 1) * bits : j * bits] if 1 <= j <= symbols else []
        if len(block) < bits:
            return
        if role == "send":
            value = message.getrandbits(bits)
            for i, path in enumerate(block):
                if value >> i & 1:
                    read_all(path)
            log(f"sent {j} {value}")
            return
        found = [probe(path) for path in block]
        for oracle in found[0]:
            if found[0][oracle] is not None:
                value = sum(1 << i for i, seen in enumerate(found) if seen[oracle])
                log(f"received {moves} {j} {oracle} {value}")

    play(on_move)


main()
