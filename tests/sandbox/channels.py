"""A covert channel between two seats of a real match, measured: the sender
and receiver of ``hostile/covert.py`` play a 2-player Allegra match through
a launcher, and each symbol the receiver decoded at one of its moves is
checked against what the sender had sent since the receiver's move before
(from the replay's order of moves). Used by the tests and by
benchmarks/covert_channels.py."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from cardroom.launch import Launcher
from cardroom.runner import TimeControl, run_match

from .conftest import HOSTILE

SENDER, RECEIVER = 0, 1


@dataclass
class Crossing:
    channel: str
    bits: int
    sent: int  # symbols the sender sent
    decoded: int  # symbols the receiver decoded at a move after one of the sender's
    correct: int  # decoded symbols equal to what was sent meanwhile
    sender_log: str
    receiver_log: str
    moves: int  # the receiver's moves

    @property
    def bits_crossed(self) -> int:
        return self.correct * self.bits


def covert_bot(folder: Path, role: str, channel: str, bits: int, seed: int, scale: int = 1) -> Path:
    folder.mkdir(parents=True)
    shutil.copyfile(HOSTILE / "covert.py", folder / "main.py")
    (folder / "cardroom.toml").write_text(f'entry = "main.py"\nprotocol = 1\nname = "covert-{role}"\n')
    (folder / "config.json").write_text(json.dumps({"role": role, "channel": channel, "bits": bits, "seed": seed, "scale": scale}))
    return folder


def covert_match(
    launcher: Launcher,
    tmp: Path,
    channel: str,
    bits: int,
    time: TimeControl,
    seed: int = 5,
    match_seed: int = 7,
    scale: int = 1,
) -> Crossing:
    name = f"{channel}-{bits}-{scale}"
    sender = covert_bot(tmp / f"{name}-send", "send", channel, bits, seed, scale)
    receiver = covert_bot(tmp / f"{name}-receive", "receive", channel, bits, seed, scale)
    record = run_match("allegra", [str(sender), str(receiver)], seed=match_seed, time=time, launcher=launcher)
    sender_log, receiver_log = record.logs[SENDER], record.logs[RECEIVER]
    sent = {int(j): int(s) for j, s in re.findall(r"^sent (\d+) (\d+)$", sender_log, re.M)}
    decoded = {int(k): int(v) for k, v in re.findall(r"^received (\d+) (\d+)$", receiver_log, re.M)}
    # What the sender sent between the receiver's moves k-1 and k (where it
    # sent anything: not after it gave up or forfeited).
    expected: dict[int, int] = {}
    pending, sending, sender_moves, receiver_moves = 0, False, 0, 0
    for event in record.replay["events"]:
        if event["by"] == SENDER and not event.get("forfeit"):
            sender_moves += 1
            if sender_moves in sent:
                pending, sending = pending + sent[sender_moves], True
        elif event["by"] == RECEIVER and not event.get("forfeit"):
            receiver_moves += 1
            if sending:
                expected[receiver_moves] = pending % (1 << bits)
            pending, sending = 0, False
    heard = [k for k in expected if k in decoded]
    correct = sum(1 for k in heard if decoded[k] == expected[k])
    return Crossing(channel, bits, len(sent), len(heard), correct, sender_log, receiver_log, receiver_moves)
