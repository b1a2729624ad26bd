"""Hostile bot pair: a covert channel through the page cache, between two
seats of one match or from one match to a later one (a duplicate event's
rotation k to rotation k+1).

config.json: {"role": "send" | "receive", "files_seed": F, "bits": B,
"symbols": N, "between_seats": S, "message_seed": M (the sender's only)}.
Both roles pick the same N*B files from what they can see (visible.py, with
F); symbol j (0..N-1) is files j*B .. (j+1)*B-1. The sender reads the files
of a symbol whose bits are 1 (drawn from M, which the receiver never
sees: half of each symbol's bits, at random places): "sent J VALUE" on stderr. The receiver probes a symbol's files
(each oracle of visible.probe says whether a file was cached: a cached file
reads as bit 1): "received K J ORACLE VALUE" at its move K, for each oracle
it can use, and for the oracle "rank", which uses the code (half the bits
1): the half of the files whose first read was quickest against their
second.

Between seats (S true), symbol j is the game's turn j (the observation's
"turn"): the sender sends it at its first move of that turn; at each move
the receiver probes every turn finished since its last move that was not
its own. Otherwise (from one match to the next) the writer sends symbol 0
at its first move, and the next match's reader probes it at its first.
Both play random legal moves."""
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
    between_seats = config["between_seats"]
    sent = set()
    started = time.monotonic()
    files = visible_files(config["files_seed"], bits * symbols)
    log(f"picked {len(files)} files of {bits * symbols} in {time.monotonic() - started:.2f} s")
    message = random.Random(config.get("message_seed"))

    probed, own_turns = [0], set()

    def send(j):
        block = files[j * bits : (j + 1) * bits]
        if len(block) == bits and j not in sent:
            sent.add(j)
            # half the bits 1: a decoder that says the same of every file is
            # right exactly half the time, however the draw fell
            value = sum(1 << i for i in message.sample(range(bits), bits // 2))
            for i, path in enumerate(block):
                if value >> i & 1:
                    read_all(path)
            log(f"sent {j} {value}")

    def receive(moves, j):
        block = files[j * bits : (j + 1) * bits]
        if len(block) == bits:
            timed = [probe(path) for path in block]
            found = [oracles for oracles, _ratio in timed]
            for oracle in found[0]:
                if found[0][oracle] is not None:
                    value = sum(1 << i for i, seen in enumerate(found) if seen[oracle])
                    log(f"received {moves} {j} {oracle} {value}")
            quickest = sorted(range(bits), key=lambda i: timed[i][1])[: bits // 2]
            log(f"received {moves} {j} rank {sum(1 << i for i in quickest)}")

    def on_move(moves, observation):
        if not between_seats:  # the next match's reader probes what its writer left
            if moves == 1:
                send(0) if role == "send" else receive(moves, 0)
            return
        turn = observation["turn"]
        if role == "send":
            send(turn)
            return
        own_turns.add(turn)
        for j in range(probed[0], turn):  # every finished turn of the other seat's
            if j not in own_turns:
                receive(moves, j)
        probed[0] = max(probed[0], turn)

    play(on_move)


main()
