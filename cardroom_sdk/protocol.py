"""Bot protocol v1 on stdin/stdout (docs/protocol.md), around a ``choose``.

``run(choose)`` answers ``start`` with ``ready``, each ``act`` with the
action ``choose`` returns, and returns at ``end`` or when stdin closes. A
``choose`` written with three parameters also gets a ``Context``: the
``start`` message, the time left, a random generator of the bot's own
(seeded from the operating system, never from anything the match sends), and
the observations received so far (the ``history`` that ``sample_world``
takes).
"""

from __future__ import annotations

import inspect
import json
import os
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

Action = dict[str, Any]


@dataclass
class Context:
    """What a three-parameter ``choose(observation, legal, context)`` gets
    besides the observation.

    ``start``: the ``start`` message (``game``, ``seat``, ``num_players``,
    ``options``, ``match_id``, ``time``); ``time_left_ms``: the match time
    this seat has left, from the ``act`` message (None if not sent);
    ``rng``: a ``random.Random`` seeded from the operating system's entropy
    (``private_rng()``), so no other seat can reproduce it; ``history``: the observations
    of earlier ``act`` messages, oldest first (the current one is not in
    it): pass it to ``sample_world``; ``message``: the whole ``act``
    message.
    """

    start: dict[str, Any]
    rng: random.Random
    time_left_ms: int | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    message: dict[str, Any] = field(default_factory=dict)

    @property
    def seat(self) -> int:
        return self.start["seat"]

    @property
    def per_move_ms(self) -> int | None:
        return (self.start.get("time") or {}).get("per_move_ms")


def _wants_context(choose: Callable[..., Any]) -> bool:
    """True when ``choose`` takes a third positional argument."""
    try:
        params = inspect.signature(choose).parameters.values()
    except (TypeError, ValueError):  # some builtins have no signature
        return False
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 3


def fallback_action(legal: list[Action]) -> Action:
    """The first legal action, with Allegory's ``distribute`` template filled
    (the whole bid on the first Pool card): what ``run`` answers when
    ``choose`` raises, so one bug does not forfeit the match."""
    first = legal[0]
    if first.get("type") == "distribute":
        total = first["total"]
        return {"type": "distribute", "chips": {first["cards"][0]: total} if total else {}}
    return first


# Set by a bot's author, by hand, to replay their own bot's choices while
# debugging it (docs/sdk.md). The platform never sets it (the sandbox gives
# a bot a fixed environment), so on the ladder every match draws afresh.
SEED_ENV = "CARDROOM_BOT_SEED"


def private_rng() -> random.Random:
    """The seat's own random generator: seeded with 256 bits from the
    operating system (``os.urandom``, the ``getrandom`` system call), which
    no other seat sees, so no opponent can reproduce its draws from what the
    match sends (a seed taken from the ``match_id``, which every seat is
    sent, let an opponent predict every move). With ``CARDROOM_BOT_SEED``
    set in the bot's own environment, seeded from that text instead: the
    same value replays the same draws (never set it in an uploaded bot's
    code: a fixed stream is one an opponent can learn)."""
    chosen = os.environ.get(SEED_ENV)
    if chosen is not None:
        return random.Random(chosen)
    return random.Random(int.from_bytes(os.urandom(32), "big"))


def _log(text: str) -> None:
    try:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # the log is gone too: nothing to tell
        pass


def run(
    choose: Callable[..., Action],
    *,
    fallback_on_error: bool = True,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> None:
    """Play one match over protocol v1, calling ``choose`` for each decision.

    ``choose(observation, legal)`` returns one of ``legal`` (Allegory's
    ``distribute`` template filled with ``{"type": "distribute", "chips":
    {...}}``). A ``choose`` with a third parameter is called as
    ``choose(observation, legal, context)`` with a ``Context``.

    If ``choose`` raises, the traceback goes to stderr (the bot's log) and,
    with ``fallback_on_error`` (the default), ``fallback_action(legal)`` is
    answered instead; without it the exception ends ``run``. Every
    diagnostic goes to stderr, never stdout. When the platform closes the
    pipe (the match is over, or the bot was stopped) ``run`` returns
    quietly. ``stdin``/``stdout`` default to the process's own (tests pass
    their own streams).
    """
    inp = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    with_context = _wants_context(choose)
    context: Context | None = None
    try:
        for line in inp:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                _log(f"cardroom_sdk: ignoring a line that is not JSON: {line[:200]!r}")
                continue
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "start":
                context = Context(start=message, rng=private_rng())
                reply: dict[str, Any] = {"type": "ready"}
            elif kind == "act":
                observation, legal = message.get("observation"), message.get("legal")
                if not isinstance(observation, dict) or not isinstance(legal, list) or not legal:
                    _log("cardroom_sdk: ignoring an act message without an observation and legal actions")
                    continue
                if context is None:  # no start seen: still play
                    context = Context(start={"seat": observation.get("seat")}, rng=private_rng())
                context.time_left_ms = message.get("time_left_ms")
                context.message = message
                try:
                    if with_context:
                        action = choose(observation, legal, context)
                    else:
                        action = choose(observation, legal)
                except Exception:
                    _log("cardroom_sdk: choose() raised:\n" + traceback.format_exc())
                    if not fallback_on_error:
                        raise
                    action = fallback_action(legal)
                context.history.append(observation)
                reply = {"type": "action", "action": action}
            elif kind == "end":
                return
            else:
                _log(f"cardroom_sdk: ignoring a message of unknown type {kind!r}")
                continue
            out.write(json.dumps(reply) + "\n")
            out.flush()
    except BrokenPipeError:
        # The platform has gone: point stdout at /dev/null so that the
        # interpreter's own flush at exit does not fail again.
        if stdout is None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return
