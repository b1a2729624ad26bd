"""Bot protocol v1 on stdin/stdout (docs/protocol.md), around a ``choose``.

``run(choose)`` answers ``start`` with ``ready``, each ``act`` with the
action ``choose`` returns, and returns at ``end`` or when stdin closes. A
``choose`` written with three parameters also gets a ``Context``: the
``start`` message, the time left, a random generator seeded per match and
seat, and the observations received so far (the ``history`` that
``sample_world`` takes).
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
    ``rng``: a ``random.Random`` seeded from the match id and the seat, so a
    bot replays the same in the same match; ``history``: the observations
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
                seed = f"{message.get('match_id')}:{message.get('seat')}"
                context = Context(start=message, rng=random.Random(seed))
                reply: dict[str, Any] = {"type": "ready"}
            elif kind == "act":
                observation, legal = message.get("observation"), message.get("legal")
                if not isinstance(observation, dict) or not isinstance(legal, list) or not legal:
                    _log("cardroom_sdk: ignoring an act message without an observation and legal actions")
                    continue
                if context is None:  # no start seen: still play
                    context = Context(start={"seat": observation.get("seat")}, rng=random.Random())
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
