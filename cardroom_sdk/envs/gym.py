"""One seat learns, the others are played by cardroom's built-in bots or by
policies: a Gymnasium environment over the PettingZoo one.

``SingleSeatEnv("allegra", num_players=4, seat=0, opponents="greedy")``:
``opponents`` is a built-in bot's name ("random", "greedy", "ismcts"), one
per other seat in a list, a callable ``policy(observation, legal, rng)``
returning a protocol action (the built-in bots' signature), or an object
with a ``make_choose()`` that returns such a policy (as bot modules with a
per-match state have), or a ``BotProgram`` (a bot file, folder, zip or
tar.gz of any runtime, run through cardroom's runner as ``cardroom play``
runs it: in the sandbox where it works here). Built-in bots, ``make_choose``
opponents and programs are made afresh at every ``reset``: a searching bot
such as ismcts keeps the seat's observations of one game, which must not
reach the next. Observations and actions are the AEC environment's; an
illegal action ends the episode with reward -1 (as PettingZoo's
TerminateIllegalWrapper does).
"""

from __future__ import annotations

import importlib
import random
import shutil
import tempfile
import time
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium

from bots import builtin_chooser
from cardroom.players import BotFault, StartInfo, TimeControl

_ENVS = {"allegory": "cardroom_sdk.envs.allegory_v1", "allegra": "cardroom_sdk.envs.allegra_v1"}


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
    match plays a forfeited seat."""

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
                self._fail(BotFault("illegal_action", exc.reason))
        return state.default_action(self.seat)

    def finish(self, state, faults: dict[int, tuple[BotFault, int]]) -> None:
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


class SingleSeatEnv(gymnasium.Env):
    def __init__(self, game: str = "allegra", num_players: int = 2, seat: int = 0, opponents: Any = "random",
                 options: dict | None = None, reward: str = "rank", render_mode: str | None = None):  # fmt: skip
        if game not in _ENVS:
            raise ValueError(f"game must be one of {', '.join(_ENVS)}, not {game!r}")
        self.aec = importlib.import_module(_ENVS[game]).raw_env(
            num_players=num_players, options=options, reward=reward, render_mode=None
        )
        if not (isinstance(seat, int) and 0 <= seat < num_players):
            raise ValueError(f"seat must be a seat number below {num_players}, not {seat!r}")
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        others = [s for s in range(num_players) if s != seat]
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != len(others):
                raise ValueError(f"opponents must name {len(others)} policies, one per other seat")
            policies = list(opponents)
        else:
            policies = [opponents] * len(others)
        self.game_id = game
        self.opponents = dict(zip(others, policies))
        self._options = dict(options or {})
        self._episode_seed = 0
        self.policies: dict[int, Any] = {}
        self.policies = self._fresh_policies()  # (at once: an unknown bot's name fails here)
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["ansi", "human"]}
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self._opponent_rng = random.Random()

    def _fresh_policies(self) -> dict[int, Any]:
        """The opponents for a new episode. Programs start only at ``reset``
        (before it, their spec is only checked: construction starts nothing)."""
        self._finish_programs()
        n = len(self.aec.possible_agents)
        started = self.aec.state is not None

        def make(seat, spec):
            if isinstance(spec, str):
                return builtin_chooser(spec, self.game_id)
            if isinstance(spec, BotProgram):
                if not started:
                    from cardroom.runner import check_bot_spec

                    check_bot_spec(str(spec.spec), self.game_id)
                    return None
                return _ProgramSeat(spec, self.game_id, seat, n, self._options, self._episode_seed)
            return spec.make_choose() if hasattr(spec, "make_choose") else spec

        return {s: make(s, spec) for s, spec in self.opponents.items()}

    def _program_faults(self) -> dict[int, tuple[BotFault, int]]:
        return {
            s: (p.fault, p.fault_event)
            for s, p in self.policies.items()
            if isinstance(p, _ProgramSeat) and p.fault is not None
        }

    def _finish_programs(self) -> None:
        faults = self._program_faults()
        state = self.aec.state
        for policy in self.policies.values():
            if isinstance(policy, _ProgramSeat):
                policy.finish(state, faults)
        self.policies = {}

    def _play_others(self) -> None:
        aec = self.aec
        while not aec.state.is_terminal() and aec.agent_selection != self.agent:
            seat = aec.agent_name_mapping[aec.agent_selection]
            obs = aec.state.observation(seat)
            policy = self.policies[seat]
            if isinstance(policy, _ProgramSeat):
                move = policy.act(aec.state)
                if policy.fault is not None and policy.fault_event is None:
                    policy.fault_event = len(aec.events)
            else:
                move = policy(obs, aec.state.legal_actions(seat), self._opponent_rng)
            for index in aec.codec.protocol_to_actions(obs, move):
                aec.step(index)

    def _outcome_info(self) -> dict:
        """At the end of an episode: the program opponents that forfeited
        (seat: reason and detail), after their programs were told the result."""
        faults = self._program_faults()
        self._finish_programs()
        return {"opponent_forfeits": {s: f"{f.reason}: {f.detail}" for s, (f, _event) in faults.items()}}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._opponent_rng = random.Random(seed + 1)
            self.action_space.seed(seed)
        self._finish_programs()  # the last episode's programs, ended or not
        self.aec.reset(seed=seed)
        self._episode_seed = seed if seed is not None else random.randrange(2**31)
        self.policies = self._fresh_policies()
        self._play_others()
        return self.aec.observe(self.agent), {}

    def step(self, action):
        aec = self.aec
        if not aec.observe(self.agent)["action_mask"][int(action)]:
            return aec.observe(self.agent), -1.0, True, False, {"illegal": True}
        aec.step(int(action))
        self._play_others()
        terminated = aec.state.is_terminal()
        reward = aec.final_rewards()[self.seat] if terminated else 0.0
        info = self._outcome_info() if terminated else {}
        return aec.observe(self.agent), float(reward), terminated, False, info

    def close(self):
        """Ends every bot program still running (Gymnasium's close)."""
        self._finish_programs()
        super().close()

    def render(self):
        text = self.aec.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text
