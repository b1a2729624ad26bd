"""The match runner: plays one match to its end and writes its replay.

The runner owns the chance RNG (seeded per match), asks each seat's Player
for decisions, turns a bot's failure into a forfeit (the seat is then played
by the game's default policy so the others' match finishes), and records
everything as replay format v1. The same code serves ``cardroom play`` and
the ladder's workers; only the Launcher (sandbox or not) differs.
"""

from __future__ import annotations

import random
import secrets
import tempfile
import time as _time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardroom.launch import BotLimits, Launcher
from cardroom.players import (
    ILLEGAL_ACTION,
    TIMEOUT,
    BotFault,
    InProcessPlayer,
    Player,
    ProtocolPlayer,
    StartInfo,
    TimeControl,
)
from engine import new_game
from engine.core import CHANCE, IllegalActionError, Result
from engine.replay import document as replay_document

__all__ = ["BotSpecError", "MatchCeilingExceeded", "MatchRecord", "TimeControl", "check_bot_spec", "make_player", "run_match"]


class BotSpecError(ValueError):
    """A BOT argument that names no usable bot (one-line message)."""


class MatchCeilingExceeded(RuntimeError):
    """The match passed its wall-clock ceiling and no seat was at fault:
    the time went to the platform (cardroom.ceiling)."""


@dataclass
class Forfeit:
    seat: int
    reason: str
    detail: str
    event: int  # first event played by the default policy (or len(events))

    def as_replay(self) -> dict[str, Any]:
        return {"seat": self.seat, "reason": self.reason, "event": self.event}


@dataclass
class MatchRecord:
    replay: dict[str, Any]
    result: Result
    forfeits: list[Forfeit]
    logs: dict[int, str]
    players: list[dict[str, Any]]
    elapsed_ms: int


def make_player(
    spec: str, game_id: str, workdir: Path, launcher_factory: Callable[[], Launcher], limits: BotLimits, seat: int = 0
) -> Player:
    """Build the Player for a BOT argument: ``builtin:NAME`` or a bot file,
    folder, zip or tar.gz (a package, run through the launcher) for
    ``seat``."""
    from bots import UnknownBuiltinError, builtin_chooser

    if spec.startswith("builtin:"):
        name = spec.split(":", 1)[1]
        try:
            chooser = builtin_chooser(name, game_id)
        except UnknownBuiltinError as exc:
            raise BotSpecError(str(exc)) from None
        return InProcessPlayer(name, None if name == "random" else chooser)
    from cardroom.packages import PackageError, load_bot_package, package_argv
    from cardroom.runtimes import explain_native_exit, runtime_limits

    path = Path(spec)
    if not path.exists():
        raise BotSpecError(f"bot {spec!r}: no such file or folder (use a bot file, folder, .zip, .tar.gz or builtin:NAME)")
    try:
        package = load_bot_package(path, workdir)
    except PackageError as exc:
        raise BotSpecError(f"bot {spec!r}: {exc}") from None
    name = package.name or path.stem
    launcher = launcher_factory()
    limits = runtime_limits(package.runtime, limits)
    explain = explain_native_exit(launcher, package.root, package.entry) if package.runtime == "native" else None
    spec_shown = f"{path.name} sha256:{package.sha256[:12]}"
    return ProtocolPlayer(name, spec_shown, package.root, package_argv(package, limits), launcher, limits, explain, seat)


def check_bot_spec(spec: str, game_id: str) -> None:
    """Raise BotSpecError now for a BOT argument that cannot work (before an
    event of many matches starts)."""
    from bots import UnknownBuiltinError, builtin_chooser

    if spec.startswith("builtin:"):
        try:
            builtin_chooser(spec.split(":", 1)[1], game_id)
        except UnknownBuiltinError as exc:
            raise BotSpecError(str(exc)) from None
    elif not Path(spec).exists():
        raise BotSpecError(f"bot {spec!r}: no such file or folder (use a bot file, folder, .zip, .tar.gz or builtin:NAME)")


def _default_launcher() -> Launcher:
    from cardroom.sandbox import get_launcher

    return get_launcher()


def new_match_id() -> str:
    """A local match's id: 64 random bits, nothing else (decision 171)."""
    return f"local-{secrets.token_hex(8)}"


def run_match(
    game_id: str,
    bots: Sequence[str | Player],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    time: TimeControl | None = None,
    launcher: Launcher | Callable[[], Launcher] | None = None,
    limits: BotLimits | None = None,
    match_id: str | None = None,
    names: Sequence[str] | None = None,
    on_event: Callable[[int, dict[str, Any]], None] | None = None,
    ceiling_ms: int | None = None,
    chance: Callable[[Any], random.Random] | None = None,
    workdir: Path | None = None,
) -> MatchRecord:
    """Play one match; seats follow the order of ``bots``.

    Chance events are drawn from one ``random.Random(seed)``; ``chance``, when
    given, instead picks the generator for each chance event from the state
    (duplicate tournaments keep one stream per ``State.chance_kind()``).

    Raises engine errors for a bad game, player count or option, BotSpecError
    for a bad bot argument; a bot's own failure is a forfeit, never an error.
    ``ceiling_ms``: the match's wall-clock ceiling (cardroom.ceiling); when it
    passes, the seats at fault forfeit, or MatchCeilingExceeded is raised.
    ``workdir``: where the match's temporary folder (the bots' unpacked
    files) goes, the system's temporary folder by default; a worker gives
    a folder it owns (cardroom.scratch), which the next worker to start
    sweeps away should this one die.
    """
    game = new_game(game_id, len(bots), options)
    time = time or TimeControl()
    limits = limits or BotLimits()
    seed = secrets.randbelow(2**62) if seed is None else seed
    # Opaque and drawn afresh: every seat is sent it, so it must tell nothing
    # of the seed (``local-<seed>`` let a bot rebuild the whole deal).
    match_id = match_id or new_match_id()
    if launcher is None:
        launcher_factory: Callable[[], Launcher] = _default_launcher
    elif isinstance(launcher, Launcher):
        launcher_factory = lambda: launcher  # noqa: E731
    else:
        launcher_factory = launcher
    started = _time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cardroom-match-", dir=workdir) as tmp:
        players = [
            bot if isinstance(bot, Player) else make_player(bot, game.id, Path(tmp) / f"seat-{seat}", launcher_factory, limits, seat)
            for seat, bot in enumerate(bots)
        ]
        try:
            ceiling_at = None if ceiling_ms is None else started + ceiling_ms / 1000
            return _play(game, players, seed, match_id, time, names, on_event, started, ceiling_at, chance)
        finally:
            for player in players:
                player.close()


def _late_seats(thought_ms: list[float], faults: dict[int, BotFault], ceiling_s: float) -> dict[int, BotFault]:
    """At the ceiling: the seats that thought for longer than their equal
    share of it forfeit; none at fault means the platform was slow."""
    share_ms = ceiling_s * 1000 / len(thought_ms)
    late = {
        seat: BotFault(
            TIMEOUT,
            f"the match passed its wall-clock ceiling of {ceiling_s:.1f} s; this bot had thought for "
            f"{ms / 1000:.1f} s of it, more than its share ({share_ms / 1000:.1f} s)",
        )
        for seat, ms in enumerate(thought_ms)
        if seat not in faults and ms > share_ms
    }
    if not late:
        raise MatchCeilingExceeded(
            f"the match passed its wall-clock ceiling of {ceiling_s:.1f} s, and no bot had thought for more than "
            f"its share ({share_ms / 1000:.1f} s): the time went to the platform"
        )
    return late


def _wind_down(players: list[Player], deadline: float) -> None:
    """Let every seat read the rest of its 'end' and exit, all at once: a bot
    that neither reads nor exits then costs the others nothing."""
    if len(players) <= 1:
        for player in players:
            player.await_exit(deadline)
        return
    with ThreadPoolExecutor(max_workers=len(players), thread_name_prefix="cardroom-end") as pool:
        for waited in [pool.submit(player.await_exit, deadline) for player in players]:
            waited.result()


def _play(
    game, players: list[Player], seed: int, match_id: str, time: TimeControl, names, on_event, started, ceiling_at=None, chance=None
) -> MatchRecord:
    state = game.new_initial_state()
    chance_rng = random.Random(seed)
    if chance is None:
        chance = lambda _state: chance_rng  # noqa: E731
    events: list[dict[str, Any]] = []
    faults: dict[int, BotFault] = {}
    first_default: dict[int, int] = {}
    thought_ms = [0.0] * len(players)  # each seat's start-up and moves, for the ceiling

    def record(event: dict[str, Any]) -> None:
        events.append(event)
        if on_event is not None:
            on_event(len(events) - 1, event)

    for seat, player in enumerate(players):
        info = StartInfo(game.id, seat, game.num_players, match_id, dict(game.options), time, seed)
        t0 = _time.monotonic()
        try:
            player.start(info)
        except BotFault as fault:
            faults[seat] = fault
            player.close()
        thought_ms[seat] += (_time.monotonic() - t0) * 1000

    while not state.is_terminal():
        if state.is_chance_node():
            action = state.sample_chance(chance(state))
            state.apply_chance(action)
            record({"by": CHANCE, "action": action})
            continue
        seat = state.to_act()[0]
        if ceiling_at is not None and _time.monotonic() > ceiling_at:
            late = _late_seats(thought_ms, faults, ceiling_at - started)
            for late_seat, fault in late.items():
                faults[late_seat] = fault
                players[late_seat].close()
            ceiling_at = None  # the seats at fault are played by the default policy from here on
        if seat not in faults:
            t0 = _time.monotonic()
            try:
                action = players[seat].act(state, seat)
                ms = int((_time.monotonic() - t0) * 1000)
                thought_ms[seat] += ms
                try:
                    state.apply(seat, action)
                except IllegalActionError as exc:
                    raise BotFault(ILLEGAL_ACTION, exc.reason) from None
                record({"by": seat, "action": action, "ms": ms})
                continue
            except BotFault as fault:
                faults[seat] = fault
                players[seat].close()  # free its CPU and memory now, not at the end
        action = state.default_action(seat)
        state.apply(seat, action)
        first_default.setdefault(seat, len(events))
        record({"by": seat, "action": action, "ms": 0, "forfeit": True})

    forfeits = [
        Forfeit(seat, fault.reason, fault.detail, first_default.get(seat, len(events)))
        for seat, fault in sorted(faults.items())
    ]
    result = state.result(frozenset(faults))
    result_doc = {**result.as_dict(), "forfeits": [f.as_replay() for f in forfeits]}
    ended = [seat for seat in range(len(players)) if seat not in faults]
    for seat in ended:
        players[seat].end(state.observation(seat), result_doc)
    grace_over = _time.monotonic() + time.end_grace_ms / 1000  # one grace period for all
    _wind_down([players[seat] for seat in ended], grace_over)
    player_docs = [
        {"seat": seat, "name": names[seat] if names else player.name, "bot": player.spec}
        for seat, player in enumerate(players)
    ]
    replay = replay_document(game, seed, player_docs, events, result, result_doc["forfeits"])
    logs = {seat: player.log() for seat, player in enumerate(players)}
    for forfeit in forfeits:
        logs[forfeit.seat] += f"\n[cardroom: seat {forfeit.seat} forfeited at event {forfeit.event}: {forfeit.reason}: {forfeit.detail}]\n"
    return MatchRecord(
        replay=replay,
        result=result,
        forfeits=forfeits,
        logs=logs,
        players=player_docs,
        elapsed_ms=int((_time.monotonic() - started) * 1000),
    )
