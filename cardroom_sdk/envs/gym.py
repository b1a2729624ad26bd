"""One seat learns, the others are played by cardroom's built-in bots or by
policies: a Gymnasium environment over the PettingZoo one.

``SingleSeatEnv("allegra", num_players=4, seat=0, opponents="greedy")``:
``opponents`` is a built-in bot's name ("random", "greedy", "ismcts"), one
per other seat in a list, a callable ``policy(observation, legal, rng)``
returning a protocol action (the built-in bots' signature), or an object
with a ``make_choose()`` that returns such a policy (as bot modules with a
per-match state have). Built-in bots and ``make_choose`` opponents are made
afresh at every ``reset``: a searching bot such as ismcts keeps the seat's
observations of one game, which must not reach the next. Observations and
actions are the AEC environment's; an illegal action ends the episode with
reward -1 (as PettingZoo's TerminateIllegalWrapper does).
"""

from __future__ import annotations

import importlib
import random
from typing import Any

import gymnasium

from bots import builtin_chooser

_ENVS = {"allegory": "cardroom_sdk.envs.allegory_v1", "allegra": "cardroom_sdk.envs.allegra_v1"}


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
        self.policies = self._fresh_policies()  # (at once: an unknown bot's name fails here)
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["ansi", "human"]}
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self._opponent_rng = random.Random()

    def _fresh_policies(self) -> dict[int, Any]:
        def make(spec):
            if isinstance(spec, str):
                return builtin_chooser(spec, self.game_id)
            return spec.make_choose() if hasattr(spec, "make_choose") else spec

        return {s: make(spec) for s, spec in self.opponents.items()}

    def _play_others(self) -> None:
        aec = self.aec
        while not aec.state.is_terminal() and aec.agent_selection != self.agent:
            seat = aec.agent_name_mapping[aec.agent_selection]
            obs = aec.state.observation(seat)
            move = self.policies[seat](obs, aec.state.legal_actions(seat), self._opponent_rng)
            for index in aec.codec.protocol_to_actions(obs, move):
                aec.step(index)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._opponent_rng = random.Random(seed + 1)
            self.action_space.seed(seed)
        self.aec.reset(seed=seed)
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
        return aec.observe(self.agent), float(reward), terminated, False, {}

    def render(self):
        text = self.aec.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text
