"""The seats' decision makers: built-in bots in-process, bot programs over
protocol v1.

A ``Player`` raises ``BotFault`` when its bot fails (crash, exit, timeout, a
line that is not JSON, a reply that is not an action); the runner turns that
into a forfeit. Everything else that goes wrong is the platform's problem and
propagates as an ordinary exception.
"""

from __future__ import annotations

import abc
import errno
import json
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from itertools import accumulate
from typing import Any

from cardroom.fdwait import fd_ready
from cardroom.launch import BotLimits, BotProcess, Launcher, StartupRefused
from cardroom.sizes import format_size
from engine.core import Action, State


class ForfeitReason(StrEnum):
    """Why a forfeit happened (the replay's ``reason``, Participant.forfeit_reason)."""

    TIMEOUT = "timeout"  # no answer within the time control
    CRASH = "crash"  # the program stopped with an error, or was killed
    EXIT = "exit"  # the program ended before the match did
    INVALID_JSON = "invalid_json"  # a line on stdout that is not one JSON object
    INVALID_MESSAGE = "invalid_message"  # JSON, but not the protocol's answer
    ILLEGAL_ACTION = "illegal_action"  # an action the rules refuse
    OUTPUT_LIMIT = "output_limit"  # a line on stdout over MAX_LINE_BYTES


# (the names this module and its callers use)
TIMEOUT, CRASH, EXIT = ForfeitReason.TIMEOUT, ForfeitReason.CRASH, ForfeitReason.EXIT
INVALID_JSON, INVALID_MESSAGE = ForfeitReason.INVALID_JSON, ForfeitReason.INVALID_MESSAGE
ILLEGAL_ACTION, OUTPUT_LIMIT = ForfeitReason.ILLEGAL_ACTION, ForfeitReason.OUTPUT_LIMIT
# A crashed bot whose memory peaked at this share of its limit or more ran
# out of it (an allocation past RLIMIT_AS fails before the cgroup's limit).
MEMORY_NEAR_LIMIT = 0.75

MAX_LINE_BYTES = 1024 * 1024  # one stdout line of a bot
MAX_LOG_BYTES = 256 * 1024  # what is kept of a bot's stderr
# A reply's bounds (decision 98): an action reply is nested 3 deep and its
# numbers are small, so these leave room and bound the parser's work.
MAX_REPLY_DEPTH = 16
MAX_REPLY_DIGITS = 32
MAX_DETAIL_CHARS = 500  # of a forfeit's detail: it quotes what the bot sent
# CPU used between moves (decision 115): read when the bot is thawed, at most
# this often (a read costs a couple of microseconds; the count is cumulative,
# so nothing is lost between reads) ...
CPU_READ_INTERVAL_S = 0.005
# ... and what a move may use beyond its wall time, per move: a thawed bot's
# first cpu period carries a fifth of a period's quota more than one core's
# worth (the cgroup's burst, decision 75), and its last instructions after
# the answer run until the freeze lands.
CPU_SLACK_MS = 2.0
# The first window's own slack: the CPU a running task used since the last
# scheduler tick is counted only at the next (4 ms at 250 Hz), so the count
# read just after 'ready' may miss the end of the bot's start-up.
CPU_START_SLACK_MS = 4.0


def clip(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text``, cut to ``limit`` characters (saying how long it was)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


class BotFault(Exception):
    """The bot failed in a way that forfeits its seat. The detail is
    clipped: it may quote a megabyte line of the bot's."""

    def __init__(self, reason: ForfeitReason, detail: str):
        self.reason = reason
        self.detail = clip(detail)
        super().__init__(f"{reason}: {self.detail}")


class _Refused(ValueError):
    """A reply the bounded parse refuses (its message says why)."""


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_REPLY_DIGITS:
        raise _Refused(f"a number of {len(digits)} digits (at most {MAX_REPLY_DIGITS})")
    return int(digits)


def _finite_float(text: str) -> float:
    if len(text) > 2 * MAX_REPLY_DIGITS:
        raise _Refused(f"a number of {len(text)} characters")
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _Refused(f"the key {clip(repr(repeated), 60)} appears twice in one object")
    return obj


# One decoder for every reply: bounded numbers, no NaN/Infinity, no
# duplicate keys (two readers of the line could disagree on which counts).
_REPLY_DECODER = json.JSONDecoder(
    parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant, object_pairs_hook=_unique_keys
)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
# After the strings are cut out: an opening bracket becomes 2, a closing
# one 0, every other byte goes; each minus one is a step of the depth.
_DEPTH_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_A_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _nested_deeper(line: bytes, limit: int) -> bool:
    """Is the JSON text nested more than ``limit`` deep? (Brackets inside
    strings do not count; the quick count over-estimates, so the scan runs
    only for lines with more brackets than the limit. The scan is C code
    throughout, the strings cut out by one regex and the running depth
    summed by itertools: a 64 KiB API body of small objects took 30 ms
    token by token in Python, issue 36.)"""
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    steps = _STRING.sub(b"", line).translate(_DEPTH_STEPS, _NOT_A_BRACKET)
    return max(accumulate(map((-1).__add__, steps)), default=0) > limit


def _shown(line: bytes, limit: int = 80) -> str:
    return repr(line[:limit].decode("utf-8", errors="replace")) + ("…" if len(line) > limit else "")


def decode_reply(line: bytes, what: str = "line") -> Any:
    """A bot's line as JSON: one bounded, total parse. Whatever the bytes,
    the value is made only of dicts, lists, str (valid Unicode), bool,
    None, int of at most MAX_REPLY_DIGITS digits and finite float, nested at
    most MAX_REPLY_DEPTH deep; anything else raises BotFault(INVALID_JSON)
    saying what was wrong, never another exception. ``what`` names the
    bytes in that message (the API parses every JSON body with this too:
    ladder.api.parsers)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BotFault(INVALID_JSON, f"the {what} is not UTF-8 (byte {line[exc.start]:#04x} at offset {exc.start}): {_shown(line)}") from None
    if _nested_deeper(line, MAX_REPLY_DEPTH):
        raise BotFault(INVALID_JSON, f"the {what} is nested deeper than {MAX_REPLY_DEPTH} levels: {_shown(line)}")
    try:
        value = _REPLY_DECODER.decode(text)
    except _Refused as exc:
        raise BotFault(INVALID_JSON, f"{exc}: {_shown(line)}") from None
    except json.JSONDecodeError as exc:
        raise BotFault(INVALID_JSON, f"expected a JSON {what} ({exc.msg} at character {exc.pos}), got {_shown(line)}") from None
    except (ValueError, RecursionError):
        raise BotFault(INVALID_JSON, f"expected a JSON {what}, got {_shown(line)}") from None
    if "\\u" in text:
        # An escape may name half of a surrogate pair alone: not Unicode, and
        # such a string cannot be encoded (in a log, a database) later.
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BotFault(INVALID_JSON, f"a string holds a lone surrogate escape (not Unicode): {_shown(line)}") from None
    return value


def action_of(line: bytes) -> Action:
    """The action of a bot's ``action`` reply: a JSON object with exactly
    the keys ``type`` ("action") and ``action`` (an object). Raises BotFault
    (INVALID_JSON or INVALID_MESSAGE) for anything else; the engine then
    judges whether the action is legal."""
    message = decode_reply(line)
    if type(message) is not dict or message.get("type") != "action":
        raise BotFault(INVALID_MESSAGE, f"expected a message of type 'action', got {_shown(line, 120)}")
    if message.keys() != {"type", "action"} or type(message["action"]) is not dict:
        raise BotFault(INVALID_MESSAGE, f'an action reply is {{"type": "action", "action": {{…}}}}, got {_shown(line, 120)}')
    return message["action"]


@dataclass(frozen=True)
class TimeControl:
    """Time limits of a match, in milliseconds (Kaggle-style: a move may run
    over ``per_move_ms`` by drawing on the seat's ``overage_ms`` bank)."""

    startup_ms: int = 10_000
    per_move_ms: int = 1_000
    overage_ms: int = 10_000
    total_ms: int = 300_000
    end_grace_ms: int = 500

    def as_protocol(self) -> dict[str, int]:
        # Exactly protocol v1's keys; the overage bank is documented (docs/protocol.md).
        return {"per_move_ms": self.per_move_ms, "total_ms": self.total_ms}


@dataclass(frozen=True)
class StartInfo:
    game: str
    seat: int
    num_players: int
    match_id: str
    options: dict[str, Any]
    time: TimeControl
    seed: int


class Player(abc.ABC):
    name: str
    spec: str

    def start(self, info: StartInfo) -> None:  # noqa: B027 - optional hook
        """Called once before the first decision."""

    @abc.abstractmethod
    def act(self, state: State, seat: int) -> Action:
        """Choose an action for ``seat``; may raise BotFault. The legal list is
        built only by players that use it (not by the random bot's fast path)."""

    def end(self, observation: dict[str, Any], result: dict[str, Any]) -> None:  # noqa: B027
        """Called once when the match is over: tell the bot, without waiting."""

    def await_exit(self, deadline: float) -> None:  # noqa: B027
        """After ``end``: give the bot until ``deadline`` (``time.monotonic()``)
        to exit by itself. (The runner ends every seat first, then waits, so
        the bots wind down together.)"""

    def close(self) -> None:  # noqa: B027
        """Release everything (always called)."""

    def log(self) -> str:
        """The bot's stderr; ends the bot first if it still runs."""
        return ""



Chooser = Callable[[dict[str, Any], list[Action], random.Random], Action]


class InProcessPlayer(Player):
    """A trusted built-in bot: a ``choose(observation, legal, rng)`` function
    (the same function its standalone starter-kit file runs)."""

    def __init__(self, name: str, choose: Chooser | None):
        self.name = name
        self.spec = f"builtin:{name}"
        self._choose = choose
        self._rng = random.Random()

    def start(self, info: StartInfo) -> None:
        # Seeded from the match seed, so a match of built-in bots is reproducible
        # (and a duplicate deal's rotations see the same choices). No seat is
        # sent the seed, nor anything it can be derived from, while the match
        # plays (decision 172); a bot run as a program draws from the OS instead.
        self._rng.seed(f"{info.seed}:{info.seat}:{self.name}")

    def act(self, state: State, seat: int) -> Action:
        if self._choose is None:  # the random bot: the engine's fast path
            return state.random_action(seat, self._rng)
        return self._choose(state.observation(seat), state.legal_actions(seat), self._rng)


class _LogDrain(threading.Thread):
    """Reads a bot's stderr until it closes, keeping the first MAX_LOG_BYTES
    (reading on after that, so the bot never blocks on a full pipe)."""

    def __init__(self, fd: int, cap: int = MAX_LOG_BYTES):
        super().__init__(daemon=True)
        self._fd = fd
        self._cap = cap
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            room = self._cap - self._kept
            if room > 0:
                self._chunks.append(chunk[:room])
                self._kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The log; call once the thread has ended (the bot's stderr closed),
        or it says that it may be short."""
        out = b"".join(self._chunks).decode("utf-8", errors="replace")
        if self.dropped:
            out += f"\n[log cut at {self._cap} bytes]\n"
        elif self.is_alive():
            out += "\n[log may be incomplete: a process of the bot still held its stderr open]\n"
        return out


def encode_message(message: dict[str, Any]) -> bytes:
    """One protocol line, exactly as a bot reads it."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()



def act_message(state: State, seat: int, time_left_ms: float) -> dict[str, Any]:
    """The ``act`` message for ``seat`` (every seat that plays over protocol
    v1 is sent this, a bot program's and the human seat's alike)."""
    return {"type": "act", "observation": state.observation(seat), "legal": state.legal_actions(seat), "time_left_ms": int(time_left_ms)}


def end_message(observation: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The ``end`` message: the seat's last observation and the result."""
    return {"type": "end", "observation": observation, "result": result}


class ProtocolPlayer(Player):
    """A bot program speaking protocol v1 over its stdin/stdout."""

    def __init__(
        self,
        name: str,
        spec: str,
        root,
        argv: list[str],
        launcher: Launcher,
        limits: BotLimits,
        explain_exit: Callable[[int], str | None] | None = None,
        seat: int = 0,
    ):
        """``explain_exit``: given the exit status of a bot that died, what
        to add to the forfeit's detail (a native bot's missing libraries);
        ``seat``: its seat in the match, for the launcher (decision 268)."""
        self.name = name
        self.spec = spec
        self._root = root
        self._argv = argv
        self._launcher = launcher
        self._limits = limits
        self._explain_exit = explain_exit
        self._seat = seat
        self._proc: BotProcess | None = None
        self._drain: _LogDrain | None = None
        self._buffer = bytearray()
        self._pending = bytearray()  # written to the bot's stdin once it takes it
        self._stdin_fd = -1
        self._time: TimeControl = TimeControl()
        self._used_ms = 0.0
        self._bank_ms = 0.0
        # CPU accounting (None: not counted here): the cgroup's CPU time at
        # the start of the window, what the window's moves could use, when
        # it was read, and what was charged so far.
        self._cpu_mark: int | None = None
        self._cpu_allowed_ms = 0.0
        self._cpu_read_at = 0.0
        self.cpu_between_moves_ms = 0.0

    # -- wire --------------------------------------------------------------
    def _send(self, message: dict[str, Any], deadline: float, what: str) -> None:
        """Write one message, giving the bot until ``deadline`` to take it in.

        The pipe is non-blocking: a bot that stops reading (or shrinks its
        pipe and peeks at it without consuming) cannot stall the runner; the
        time it takes to accept its input counts against it, like thinking."""
        self._pending += encode_message(message)
        self._send_pending(deadline, what)

    def _send_pending(self, deadline: float, what: str) -> None:
        """Finish writing what is pending by ``deadline``, or forfeit on time."""
        self._flush(deadline)
        if self._pending:
            pending, self._pending = len(self._pending), bytearray()
            raise BotFault(TIMEOUT, f"did not take its {what} message in time ({pending} bytes still unread)")

    def _flush(self, deadline: float) -> None:
        """Write what is pending until it is all written or ``deadline`` passes."""
        assert self._proc is not None
        fd = self._stdin_fd
        while self._pending:
            try:
                written = os.write(fd, self._pending)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ValueError, OSError):
                self._pending = bytearray()
                raise self._died("stopped reading its input") from None
            del self._pending[:written]
            if not self._pending:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            fd_ready(fd, left, write=True)

    def _died(self, what: str) -> BotFault:
        assert self._proc is not None
        status = None
        for _ in range(50):  # the process may need a moment to be reaped
            status = self._proc.poll()
            if status is not None:
                break
            time.sleep(0.002)
        if status is None:
            return BotFault(EXIT, f"the bot {what} (its process is still running)")
        if status == 0:
            return BotFault(EXIT, f"the bot {what}: it exited with status 0")
        memory = self._memory_note()
        if status < 0:
            return BotFault(CRASH, f"the bot {what}: it was killed by signal {-status}{memory}")
        detail = f"the bot {what}: it exited with status {status}{memory}"
        explained = self._explain_exit(status) if self._explain_exit is not None else None
        return BotFault(CRASH, f"{detail}: {explained}" if explained else detail)

    def _memory_note(self) -> str:
        """What a crash's detail says of memory when the bot ran out of it
        (killed by the kernel for the limit, or holding at least
        MEMORY_NEAR_LIMIT of it at its peak: an allocation past the limit
        failed), naming the limit; else nothing."""
        assert self._proc is not None
        limit = self._limits.memory_bytes
        report = self._proc.memory_report()
        if report is None or not limit:
            return ""
        peak, killed = report
        if killed:
            return f" (the kernel stopped it at its memory limit: {format_size(limit)} for the bot's processes)"
        if peak is not None and peak >= MEMORY_NEAR_LIMIT * limit:
            # Likely, not certain: a bot near its limit may have crashed for another reason.
            return f" (near its memory limit: it held {format_size(peak)} at its peak, and an allocation past {format_size(limit)} fails)"
        return ""

    def _read_line(self, timeout_ms: float, what: str, limit: str | None = None) -> bytes:
        """The next line, within ``timeout_ms``; a timeout names ``limit``
        (the whole budget in words, of which writing the request took a part)."""
        assert self._proc is not None
        deadline = time.monotonic() + timeout_ms / 1000
        fd = self._proc.stdout_fd
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if len(line) > MAX_LINE_BYTES:
                    raise BotFault(OUTPUT_LIMIT, f"a line of {len(line)} bytes (the limit is {MAX_LINE_BYTES})")
                return line
            if len(self._buffer) > MAX_LINE_BYTES:
                raise BotFault(OUTPUT_LIMIT, f"a line longer than {MAX_LINE_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotFault(TIMEOUT, f"no {what} within {limit or f'{timeout_ms:.0f} ms'}")
            if not fd_ready(fd, left):
                continue
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    continue
                raise self._died("closed its output") from None
            if not chunk:
                raise self._died("closed its output")
            self._buffer += chunk

    def _parse(self, line: bytes, expected: str) -> dict[str, Any]:
        message = decode_reply(line)
        if not isinstance(message, dict) or message.get("type") != expected:
            raise BotFault(INVALID_MESSAGE, f"expected a message of type {expected!r}, got {_shown(line, 120)}")
        return message

    # -- Player ------------------------------------------------------------
    def start(self, info: StartInfo) -> None:
        self._time = info.time
        self._bank_ms = info.time.overage_ms
        # A failure to start the process (fork, a missing interpreter) is the
        # platform's, not the bot's: it propagates and the match is retried.
        self._proc = self._launcher.spawn(self._root, self._argv, self._limits, self._seat)
        self._drain = _LogDrain(self._proc.stderr_fd)
        self._drain.start()
        self._stdin_fd = self._proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        deadline = time.monotonic() + info.time.startup_ms / 1000
        self._send(
            {
                "type": "start",
                "protocol": 1,
                "game": info.game,
                "seat": info.seat,
                "num_players": info.num_players,
                "match_id": info.match_id,
                "options": info.options,
                "time": info.time.as_protocol(),
            },
            deadline,
            "start",
        )
        left_ms = (deadline - time.monotonic()) * 1000
        self._parse(self._read_line(max(left_ms, 0), "ready reply", f"{info.time.startup_ms} ms (the start-up limit)"), "ready")
        self._proc.pause()  # frozen until its first move: no thinking on the others' time
        try:
            self._proc.close_startup()  # frozen, and before anything of the match reaches it
        except StartupRefused as exc:
            raise BotFault(CRASH, str(exc)) from None
        self._cpu_mark, self._cpu_read_at = self._proc.cpu_ns(), time.monotonic()
        self._cpu_allowed_ms = CPU_START_SLACK_MS

    def _charge_cpu_between_moves(self, total_left: float) -> None:
        """Charge the CPU the bot used while it was not its move to its
        clock (bank and total), and forfeit it on time once that has spent
        them. A freeze stops a process only when it returns to user space:
        one long system call after the answer runs on, and takes CPU from
        the others' moves. Read while the bot is (meant to be) frozen: the
        window since the last read held its moves, each allowed its wall
        time on its cores (plus CPU_SLACK_MS), and frozen time, allowed
        nothing."""
        assert self._proc is not None
        now = time.monotonic()
        if self._cpu_mark is None or now - self._cpu_read_at < CPU_READ_INTERVAL_S:
            return
        usage = self._proc.cpu_ns()
        if usage is None:
            return
        extra_ms = (usage - self._cpu_mark) / 1e6 - self._cpu_allowed_ms
        self._cpu_mark, self._cpu_allowed_ms, self._cpu_read_at = usage, 0.0, now
        if extra_ms <= 0:
            return
        self.cpu_between_moves_ms += extra_ms
        self._used_ms += extra_ms
        self._bank_ms -= extra_ms
        if self._bank_ms < 0 or extra_ms > total_left:
            spent = "its overage bank" if extra_ms <= total_left else "its total thinking time"
            raise BotFault(
                TIMEOUT,
                f"its processes used {self.cpu_between_moves_ms:.0f} ms of CPU between its moves, while frozen (a system "
                f"call runs on after the freeze until it returns), which counts against its clock: that spent {spent} "
                f"({self._time.overage_ms} ms of overage bank, {self._time.total_ms} ms in total)",
            )

    def act(self, state: State, seat: int) -> Action:
        assert self._proc is not None
        self._charge_cpu_between_moves(self._time.total_ms - self._used_ms)
        total_left = self._time.total_ms - self._used_ms
        budget = min(self._time.per_move_ms + self._bank_ms, total_left)
        # The message is built, and put into the pipe as far as it goes, while
        # the bot is still frozen: that work is ours, not the bot's, and the
        # bot then wakes once, with its input already there.
        self._pending += encode_message(act_message(state, seat, total_left))
        self._flush(deadline=0.0)
        self._proc.prepare_resume()  # the platform's work before a thaw, off the bot's clock
        # The clock starts before the thaw: a thawed bot on the runner's core
        # can take the core at once, and its thinking then must not fall
        # before the clock (the thaw itself is a couple of microseconds).
        started = time.monotonic()
        self._proc.resume()
        deadline = started + max(budget, 0) / 1000
        try:
            self._send_pending(deadline, "act")
            line = self._read_line(max(deadline - time.monotonic(), 0) * 1000, "action", self._move_limit(total_left))
        finally:
            used = (time.monotonic() - started) * 1000
            self._used_ms += used
            self._bank_ms -= max(0.0, used - self._time.per_move_ms)
            self._cpu_allowed_ms += used * self._limits.cpu_cores + CPU_SLACK_MS
            self._proc.pause()  # answered (or out of time): frozen until its next move
        return action_of(line)

    def _move_limit(self, total_left: float) -> str:
        """This move's time limit in words: the per-move time and what is
        left of the bank, or what is left of the total when that is less (a
        bare sum, "2981 ms", read as a mistake beside a stated 1000 ms)."""
        per_move, bank = self._time.per_move_ms, max(self._bank_ms, 0.0)
        if total_left < per_move + bank:
            return f"the {max(total_left, 0):.0f} ms left of its {self._time.total_ms} ms of total thinking time"
        if bank < 0.5:
            return f"{per_move} ms per move (its {self._time.overage_ms} ms overage bank is spent)"
        return f"{per_move} ms per move plus {bank:.0f} ms of overage bank"

    def end(self, observation: dict[str, Any], result: dict[str, Any]) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.resume()  # it may read the result and exit by itself
        # Only what the pipe takes now, without waiting: await_exit writes the
        # rest while every seat winds down together.
        self._pending += encode_message(end_message(observation, result))
        try:
            self._flush(deadline=0.0)
        except BotFault:
            return

    def await_exit(self, deadline: float) -> None:
        if self._proc is None:
            return
        try:
            self._flush(deadline)  # the rest of 'end', if the bot reads it in time
        except BotFault:
            pass
        self._proc.wait(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        if self._drain is not None:
            # The bot and all it started are dead: its stderr reaches end of
            # file as soon as the last lines are read.
            self._drain.join(timeout=5)

    def log(self) -> str:
        """Everything the bot wrote to stderr (up to the cap): read only once
        the bot is gone and its stderr is drained to the end (``close``)."""
        if self._drain is None:
            return ""
        self.close()
        return self._drain.text()
