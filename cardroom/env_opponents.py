"""The Gymnasium environment's opponents that live above the SDK: the
built-in bots (``bots``) and bot programs run through the runner, as
``cardroom play`` runs them (in the sandbox where it works here).

``cardroom_sdk`` stands on the engine alone, because it is mounted into every
bot's sandbox; so its environment does not import these. The runtime offers
them through the entry point group ``cardroom_sdk.opponents`` (pyproject.toml),
which ``cardroom_sdk.envs.gym`` reads when it meets an opponent it cannot
play itself: ``resolve(spec, game_id)`` gives a maker for a name or a
``BotProgram``, and None for anything else.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots import UnknownBuiltinError, builtin_chooser
from cardroom.players import BotFault, ForfeitReason, StartInfo, TimeControl

# builtin:ismcts thinks for 150 ms of CPU a decision on the ladder, so what it
# plays depends on the machine's speed. In an environment it searches a fixed
# number of iterations instead (a median 150 ms decision ran 84-740 of them,
# decision 123), so that a seeded episode is the same on every run;
# "ismcts:time_ms=T" asks for the time budget, and warns that it is not.
ENV_ISMCTS_ITERATIONS = 300


@dataclass(frozen=True)
class BotProgram:
    """An opponent that is a bot program, as a user uploads it: ``spec`` is a
    bot file, folder, .zip or .tar.gz (any runtime its manifest names).
    ``time`` is the match's time control, as the ladder's by default."""

    spec: str | Path
    time: TimeControl = TimeControl()


class _ProgramSeat:
    """One episode of a BotProgram in one seat: started through the runner's
    own player (so the program hears exactly the protocol a match sends it),
    and played by the engine's default policy from its first fault on, as a
    match plays a forfeited seat. The seat driver the environment expects:
    ``act(state)``, ``finish(state, faults)``, ``fault`` and ``fault_event``."""

    def __init__(self, program: BotProgram, game_id: str, seat: int, num_players: int, options: dict, seed: int):
        from cardroom.launch import BotLimits
        from cardroom.runner import make_player
        from cardroom.sandbox import local_launcher

        self.seat = seat
        self.fault: BotFault | None = None
        self.fault_event: int | None = None  # the first event the default policy played
        self._workdir = Path(tempfile.mkdtemp(prefix="cardroom-env-"))
        self._time = program.time
        self._player = make_player(str(program.spec), game_id, self._workdir, local_launcher, BotLimits())
        # An environment dropped without close() (or the interpreter exiting)
        # must not leave a frozen program behind.
        self._release = weakref.finalize(self, _release, self._player, self._workdir)
        info = StartInfo(game_id, seat, num_players, f"env-{uuid.uuid4().hex[:12]}", dict(options), program.time, seed)
        try:
            self._player.start(info)
        except BotFault as fault:
            self._fail(fault)

    def _fail(self, fault: BotFault) -> None:
        self.fault = fault
        self._player.close()  # its processes go now, not at the episode's end

    def act(self, state) -> dict:
        from engine.core import IllegalActionError

        if self.fault is None:
            try:
                move = self._player.act(state, self.seat)
                state.clone().apply(self.seat, move)  # refused here, as the runner refuses it
                return move
            except BotFault as fault:
                self._fail(fault)
            except IllegalActionError as exc:
                self._fail(BotFault(ForfeitReason.ILLEGAL_ACTION, exc.reason))
        return state.default_action(self.seat)

    def finish(self, state, faults: dict[int, tuple[Any, int]]) -> None:
        """Tell the program the result (when the game ended and it is still
        playing), give it the end grace to exit, and free everything."""
        try:
            if self.fault is None and state is not None and state.is_terminal():
                result = state.result(frozenset(faults)).as_dict()
                forfeits = [{"seat": s, "reason": f.reason, "event": e} for s, (f, e) in sorted(faults.items())]
                self._player.end(state.observation(self.seat), {**result, "forfeits": forfeits})
                self._player.await_exit(time.monotonic() + self._time.end_grace_ms / 1000)
        finally:
            self._release()


def _release(player, workdir: Path) -> None:
    player.close()
    shutil.rmtree(workdir, ignore_errors=True)


def _builtin_maker(spec: str, game_id: str) -> Callable[..., Any]:
    """``"random"``, ``"greedy"``, ``"ismcts"`` (fixed iterations),
    ``"ismcts:iterations=N"`` or ``"ismcts:time_ms=T"`` (not reproducible)."""
    name, _, budget = spec.partition(":")
    if name != "ismcts":
        if budget:
            raise ValueError(f"opponent {spec!r}: only ismcts takes a budget (ismcts:iterations=N or ismcts:time_ms=T)")
        builtin_chooser(name, game_id)  # an unknown name fails here, at construction
        return lambda *_episode: builtin_chooser(name, game_id)
    from bots import ismcts_bot

    key, _, value = budget.partition("=")
    if not budget:
        key, value = "iterations", str(ENV_ISMCTS_ITERATIONS)
    if key not in ("iterations", "time_ms") or not value.isdigit() or int(value) < 1:
        raise ValueError(f"opponent {spec!r}: the budget is ismcts:iterations=N or ismcts:time_ms=T, N and T whole numbers above 0")
    if key == "time_ms":
        warnings.warn(
            f"opponent {spec!r} thinks for a time, so its moves depend on the machine's speed and load: "
            "seeded episodes will not repeat (use ismcts or ismcts:iterations=N for reproducible ones)",
            stacklevel=4,
        )
        return lambda *_episode: ismcts_bot.make_choose(time_ms=int(value), iterations=None)
    return lambda *_episode: ismcts_bot.make_choose(time_ms=None, iterations=int(value))


def resolve(spec: Any, game_id: str) -> Callable[..., Any] | None:
    """The maker of one opponent for each episode, ``make(seat, num_players,
    options, seed)``, or None when ``spec`` is not ours. A name or a program
    is checked here (an unknown name or a missing bot fails at once); a
    program starts only at each episode."""
    if isinstance(spec, str):
        try:
            return _builtin_maker(spec, game_id)
        except UnknownBuiltinError as exc:
            raise ValueError(str(exc)) from None
    if isinstance(spec, BotProgram):
        from cardroom.runner import check_bot_spec

        check_bot_spec(str(spec.spec), game_id)
        return lambda seat, num_players, options, seed: _ProgramSeat(spec, game_id, seat, num_players, options, seed)
    return None
