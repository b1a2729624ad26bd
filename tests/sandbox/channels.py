"""A covert channel between two seats of a real match, measured: the sender
and receiver of ``hostile/covert.py`` play a 2-player Allegra match through
a launcher, and each symbol the receiver decoded at one of its moves is
checked against what the sender had sent since the receiver's move before
(from the replay's order of moves). Used by the tests and by
benchmarks/covert_channels.py."""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass, field
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


def hostile_bot(folder: Path, program: str, config: dict) -> Path:
    """A folder package: ``hostile/PROGRAM`` as main.py, beside it the
    helper visible.py and ``config`` as config.json."""
    folder.mkdir(parents=True)
    shutil.copyfile(HOSTILE / program, folder / "main.py")
    shutil.copyfile(HOSTILE / "visible.py", folder / "visible.py")
    (folder / "cardroom.toml").write_text(f'entry = "main.py"\nprotocol = 1\nname = "{folder.name}"\n')
    (folder / "config.json").write_text(json.dumps(config))
    return folder


# The channels with a bot pair of their own (the others are covert.py's).
PROGRAMS = {"vdso": "flush_reload.py", "vdsoflush": "flush_reload.py"}


def covert_bot(
    folder: Path, role: str, channel: str, bits: int, seed: int, scale: int = 1, files_seed: int = 0, across: bool = False
) -> Path:
    config = {"role": role, "channel": channel, "bits": bits, "seed": seed, "scale": scale, "files_seed": files_seed}
    if across:
        config["across"] = True
    return hostile_bot(folder, PROGRAMS.get(channel, "covert.py"), config)


def counter_across_matches(launcher: Launcher, tmp: Path, channel: str, bits: int, time: TimeControl, seed: int) -> tuple[int, int]:
    """The duplicate case through a counter only ever bumped (pipeino): a
    writer keeps the counter at its message mod 2**bits after each of its
    moves; the next match's reader reads it at its first move. (symbol
    sent, symbol read), -1 where a side logged none."""
    writer = covert_bot(tmp / f"{channel}-write", "send", channel, bits, seed, across=True)
    reader = covert_bot(tmp / f"{channel}-read", "receive", channel, bits, seed, across=True)
    first = run_match("allegra", [str(writer), "builtin:random"], seed=7, time=time, launcher=launcher)
    second = run_match("allegra", [str(reader), "builtin:random"], seed=7, time=time, launcher=launcher)
    sent = re.search(r"^sent 1 (\d+)$", first.logs[0], re.M)
    heard = re.search(r"^received 1 (\d+)$", second.logs[0], re.M)
    return (int(sent.group(1)) if sent else -1), (int(heard.group(1)) if heard else -1)


def covert_match(
    launcher: Launcher,
    tmp: Path,
    channel: str,
    bits: int,
    time: TimeControl,
    seed: int = 5,
    match_seed: int = 7,
    scale: int = 1,
    files_seed: int = 0,
) -> Crossing:
    """``files_seed``: which visible files the sender of a channel moved by
    reads (diskstats) picks; a new one each run, or the files an earlier
    run read are cached already."""
    name = f"{channel}-{bits}-{scale}"
    sender = covert_bot(tmp / f"{name}-send", "send", channel, bits, seed, scale, files_seed)
    receiver = covert_bot(tmp / f"{name}-receive", "receive", channel, bits, seed, scale, files_seed)
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


def p_at_least(right: int, trials: int, chance: float) -> float:
    """P(X >= right) for X ~ Binomial(trials, chance): the one-sided p-value
    of ``right`` correct decodes out of ``trials`` when each is right by
    chance alone with probability ``chance`` (exact terms, summed in logs:
    a benchmark's thousands of bits overflow a float's comb)."""
    if right <= 0:
        return 1.0
    ways = math.lgamma(trials + 1)
    logs = [
        ways - math.lgamma(i + 1) - math.lgamma(trials - i + 1) + i * math.log(chance) + (trials - i) * math.log1p(-chance)
        for i in range(right, trials + 1)
    ]
    if not logs:
        return 0.0
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def fewest_beating_chance(trials: int, chance: float, alpha: float) -> int:
    """The fewest correct decodes of ``trials`` that a binomial test at
    ``alpha`` calls better than chance."""
    return next(k for k in range(trials + 2) if k > trials or p_at_least(k, trials, chance) <= alpha)


def capacity(bits: int, decoded: int, correct: int) -> float:
    """Bits per symbol of a symmetric channel of 2**bits symbols with the
    measured error rate (an error-free run: all its bits)."""
    if decoded == 0:
        return 0.0
    p = 1 - correct / decoded
    if p == 0:
        return float(bits)
    entropy = -p * math.log2(p) - ((1 - p) * math.log2(1 - p) if p < 1 else 0.0)
    return max(0.0, bits - entropy - p * math.log2(2**bits - 1))


def ranked_p_at_least(right_bits: int, symbols: int, bits: int) -> float:
    """The one-sided p-value of ``right_bits`` right of ``symbols`` symbols
    decoded by rank (the receiver names the half of a symbol's ``bits``
    files it thinks were read): a guess's right bits are twice its overlap
    with the true half, hypergeometric, so the errors come in pairs and the
    per-bit binomial would be a little too ready to call it better than
    chance. Exact, by convolving the overlap's distribution."""
    half = bits // 2
    overlap = [math.comb(half, k) * math.comb(bits - half, half - k) / math.comb(bits, half) for k in range(half + 1)]
    total = [1.0]
    for _ in range(symbols):
        total = [
            sum(total[i - k] * overlap[k] for k in range(half + 1) if 0 <= i - k < len(total)) for i in range(len(total) + half)
        ]
    wanted = math.ceil(right_bits / 2)
    return sum(total[wanted:])


def symbol_capacity(symbols: int, decoded: int, correct: int) -> float:
    """Bits per symbol of a symmetric channel of ``symbols`` symbols with the
    measured error rate (``capacity`` for any alphabet)."""
    if decoded == 0:
        return 0.0
    p = 1 - correct / decoded
    entropy = -p * math.log2(p) - (1 - p) * math.log2(1 - p) if 0 < p < 1 else 0.0
    return max(0.0, math.log2(symbols) - entropy - p * math.log2(symbols - 1))


RANK = "rank"  # the oracle that names half of a symbol's files: scored by symbol


@dataclass
class CacheCrossing:
    """Bits through the page cache, decoded by each oracle of
    hostile/visible.py (rusage, io, atime, time; rank): how many bits it
    decoded, and how many of them were right; how many symbols, and how
    many of them were right whole."""

    sent: int  # bits the sender sent
    decoded: dict[str, int] = field(default_factory=dict)
    right: dict[str, int] = field(default_factory=dict)
    symbols: dict[str, int] = field(default_factory=dict)
    symbols_right: dict[str, int] = field(default_factory=dict)
    bits: int = 8
    sender_log: str = ""
    receiver_log: str = ""

    def p_value(self, oracle: str) -> float:
        if oracle == RANK:
            return ranked_p_at_least(self.right.get(oracle, 0), self.symbols.get(oracle, 0), self.bits)
        return p_at_least(self.right.get(oracle, 0), self.decoded.get(oracle, 0), 0.5)

    def bits_per_bit(self, oracle: str) -> float:
        """What a decoded bit is worth: a binary symmetric channel's
        capacity at the measured error rate; by rank, the symbol channel's
        (C(bits, bits/2) symbols), shared among its bits."""
        if oracle == RANK:
            choices = math.comb(self.bits, self.bits // 2)
            return symbol_capacity(choices, self.symbols.get(oracle, 0), self.symbols_right.get(oracle, 0)) / self.bits
        return capacity(1, self.decoded.get(oracle, 0), self.right.get(oracle, 0))

    def summary(self) -> str:
        return ", ".join(f"{o} {self.right[o]}/{self.decoded[o]} (p={self.p_value(o):.2g})" for o in self.decoded)


def _score(crossing: CacheCrossing, sent: dict[int, int], received: list[tuple[int, int, str, int]], bits: int) -> None:
    """Each symbol the receiver probed that the sender sent, bit by bit."""
    crossing.bits = bits
    for _k, j, oracle, value in received:
        if j in sent:
            wrong = bin((value ^ sent[j]) & ((1 << bits) - 1)).count("1")
            crossing.decoded[oracle] = crossing.decoded.get(oracle, 0) + bits
            crossing.right[oracle] = crossing.right.get(oracle, 0) + bits - wrong
            crossing.symbols[oracle] = crossing.symbols.get(oracle, 0) + 1
            crossing.symbols_right[oracle] = crossing.symbols_right.get(oracle, 0) + (wrong == 0)


def _sent_and_received(sender_log: str, receiver_log: str):
    sent = {int(j): int(v) for j, v in re.findall(r"^sent (\d+) (\d+)$", sender_log, re.M)}
    received = [(int(k), int(j), o, int(v)) for k, j, o, v in re.findall(r"^received (\d+) (\d+) (\w+) (\d+)$", receiver_log, re.M)]
    return sent, received


def cache_bot(
    folder: Path, role: str, files_seed: int, bits: int, symbols: int, between_seats: bool, message_seed: int | None = None
) -> Path:
    config = {"role": role, "files_seed": files_seed, "bits": bits, "symbols": symbols, "between_seats": between_seats}
    if message_seed is not None:  # the sender's alone: the receiver must not know the message
        config["message_seed"] = message_seed
    return hostile_bot(folder, "pagecache.py", config)


def cache_between_seats(
    launcher: Launcher, tmp: Path, time: TimeControl, files_seed: int, bits: int = 8, symbols: int = 40, match_seed: int = 7
) -> CacheCrossing:
    """A sender and a receiver seat of one 2-player Allegra match: at its
    first move of game turn j (of the first ``symbols``) the sender reads the
    files of symbol j whose bits are 1; at its next move the receiver probes
    them (every turn finished since, not its own: the turns are the game's
    order, so what is probed was sent before)."""
    sender = cache_bot(tmp / "cache-send", "send", files_seed, bits, symbols, True, message_seed=files_seed + 1)
    receiver = cache_bot(tmp / "cache-receive", "receive", files_seed, bits, symbols, True)
    record = run_match("allegra", [str(sender), str(receiver)], seed=match_seed, time=time, launcher=launcher)
    sent, received = _sent_and_received(record.logs[SENDER], record.logs[RECEIVER])
    crossing = CacheCrossing(len(sent) * bits, sender_log=record.logs[SENDER], receiver_log=record.logs[RECEIVER])
    _score(crossing, sent, received, bits)
    return crossing


def cache_across_matches(
    launcher: Launcher, tmp: Path, time: TimeControl, files_seed: int, bits: int = 64, match_seed: int = 7
) -> CacheCrossing:
    """The duplicate case: a writer in one match (rotation k) reads the
    files whose bits are 1 at its first move; a reader in the next match
    (rotation k+1, the same deal) probes them all at its first move. The
    other seat of each match is a built-in random bot."""
    writer = cache_bot(tmp / "cache-write", "send", files_seed, bits, 1, False, message_seed=files_seed + 1)
    reader = cache_bot(tmp / "cache-read", "receive", files_seed, bits, 1, False)
    first = run_match("allegra", [str(writer), "builtin:random"], seed=match_seed, time=time, launcher=launcher)
    second = run_match("allegra", [str(reader), "builtin:random"], seed=match_seed, time=time, launcher=launcher)
    sent, received = _sent_and_received(first.logs[0], second.logs[0])
    crossing = CacheCrossing(len(sent) * bits, sender_log=first.logs[0], receiver_log=second.logs[0])
    _score(crossing, sent, received, bits)
    return crossing


@dataclass
class CpuCrossing:
    """Bits through the shared CPU between bots of two matches played at
    once: slots both bots worked in, how many the receiver decoded right
    (a slot's loop count below the median of its counts: the sender was
    spinning), and how long the slots took in all."""

    slots: int
    right: int
    seconds: float
    sender_log: str
    receiver_log: str

    @property
    def bits_per_second(self) -> float:
        return capacity(1, self.slots, self.right) * self.slots / self.seconds if self.seconds else 0.0


def cpu_share(
    launcher: Launcher,
    tmp: Path,
    time: TimeControl,
    message_seed: int,
    slot_ms: int = 20,
    window_ms: int = 500,
    moves: int = 8,
    pin: bool = True,
) -> CpuCrossing:
    """The sender's match and the receiver's match (each against a built-in
    random bot) played at the same time, as two worker processes would."""
    from concurrent.futures import ThreadPoolExecutor

    base = {"slot_ms": slot_ms, "window_ms": window_ms, "moves": moves, "pin": pin}
    sender = hostile_bot(tmp / "cpu-send", "cpushare.py", {**base, "role": "send", "message_seed": message_seed})
    receiver = hostile_bot(tmp / "cpu-receive", "cpushare.py", {**base, "role": "receive"})
    with ThreadPoolExecutor(2) as pool:
        matches = [
            pool.submit(run_match, "allegra", [str(bot), "builtin:random"], seed=7, time=time, launcher=launcher)
            for bot in (sender, receiver)
        ]
        sender_log, receiver_log = (m.result().logs[0] for m in matches)
    sent = {int(s): int(b) for s, b in re.findall(r"^sent (\d+) (\d+)$", sender_log, re.M)}
    counts = {int(s): int(c) for s, c in re.findall(r"^slot (\d+) (\d+)$", receiver_log, re.M)}
    both = sorted(set(sent) & set(counts))
    if not both:
        return CpuCrossing(0, 0, 0.0, sender_log, receiver_log)
    median = sorted(counts[s] for s in both)[len(both) // 2]
    right = sum(1 for s in both if (counts[s] < median) == bool(sent[s]))
    return CpuCrossing(len(both), right, len(both) * slot_ms / 1000, sender_log, receiver_log)
