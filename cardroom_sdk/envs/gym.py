"""One seat learns, the others are played by cardroom's built-in bots or by
policies: a Gymnasium environment over the PettingZoo one.

``SingleSeatEnv("allegra", num_players=4, seat=0, opponents="greedy")``, or
through Gymnasium's registry, ``gymnasium.make("cardroom/Allegra-v1",
num_players=4, opponents="greedy")`` (and ``gymnasium.make_vec``; the ids are
``cardroom/Allegory-v1`` and ``cardroom/Allegra-v1``, registered when this
module is imported, or named ``"cardroom_sdk.envs.gym:cardroom/Allegra-v1"``).

``opponents`` is one spec, or a list of one per other seat. A spec is a
callable ``policy(observation, legal, rng)`` returning a protocol action (the
built-in bots' signature); an object with a ``make_choose()`` that returns
such a policy (as bot modules with a per-match state have); or what the
installed runtime offers through the entry point group
``cardroom_sdk.opponents``: with the ``cardroom`` package, a built-in bot's
name ("random", "greedy", "ismcts": a fixed number of iterations, so a seeded
episode repeats; "ismcts:iterations=N", or "ismcts:time_ms=T", which does
not repeat and warns) or a ``cardroom.env_opponents.BotProgram`` (a bot file,
folder, zip or tar.gz of any runtime, run through cardroom's runner as
``cardroom play`` runs it: in the sandbox where it works here). The SDK
imports nothing of the runtime itself: it is mounted into every bot's
sandbox, and stands on the engine alone.

Opponents are made afresh at every ``reset``: a searching bot such as ismcts
keeps the seat's observations of one game, which must not reach the next.
Observations and actions are the AEC environment's; ``action_masks()`` is
the learning seat's mask (sb3-contrib's MaskablePPO reads it); an illegal
action ends the episode with reward -1 (as PettingZoo's
TerminateIllegalWrapper does). ``replay()`` is the episode in replay format
v1, a program opponent's forfeit marked as a match marks it.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from cardroom_sdk.envs._common import replay_document
from engine import game_ids, get_game_class

# the PettingZoo environment of each game of the engine's registry
_ENVS = {game: f"cardroom_sdk.envs.{game}_v1" for game in game_ids()}
# Gymnasium ids: the games' names as the engine spells them.
ENV_IDS = {game: f"cardroom/{get_game_class(game).name}-v1" for game in _ENVS}
OPPONENTS_GROUP = "cardroom_sdk.opponents"


def _opponent_maker(spec: Any, game_id: str) -> Callable[..., Any]:
    """``make(seat, num_players, options, seed)`` for one opponent spec: a
    policy (called at every decision of the seat), or a seat driver with
    ``act(state)``, ``finish(state, faults)``, ``fault`` and ``fault_event``
    (a program that may forfeit)."""
    if hasattr(spec, "make_choose"):
        return lambda *_episode: spec.make_choose()
    if callable(spec):
        return lambda *_episode: spec
    for entry in sorted(entry_points(group=OPPONENTS_GROUP), key=lambda e: e.name):
        maker = entry.load()(spec, game_id)
        if maker is not None:
            return maker
    offered = ", ".join(sorted(e.name for e in entry_points(group=OPPONENTS_GROUP))) or "none"
    raise ValueError(
        f"unknown opponent {spec!r}: give a policy(observation, legal, rng), an object with make_choose(), "
        f"or what an installed runtime offers (entry points {OPPONENTS_GROUP}: {offered})"
    )


def _is_seat_driver(policy: Any) -> bool:
    return hasattr(policy, "act") and hasattr(policy, "finish")


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
        # each spec checked now (an unknown bot's name or a missing program fails here)
        self._makers = {s: _opponent_maker(spec, game) for s, spec in self.opponents.items()}
        self._options = dict(options or {})
        self._episode_seed = 0
        self.policies: dict[int, Any] = {}
        self._drivers: set[int] = set()
        self._forfeits: list[dict[str, Any]] = []  # the last episode's program forfeits, for replay()
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["ansi", "human"]}
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self._opponent_rng = random.Random()

    def _fresh_policies(self) -> dict[int, Any]:
        """The opponents for a new episode (programs start here, at ``reset``)."""
        self._finish_programs()
        n = len(self.aec.possible_agents)
        return {s: make(s, n, self._options, self._episode_seed) for s, make in self._makers.items()}

    def _program_faults(self) -> dict[int, tuple[Any, int]]:
        return {
            s: (p.fault, p.fault_event)
            for s, p in self.policies.items()
            if _is_seat_driver(p) and p.fault is not None
        }

    def _finish_programs(self) -> None:
        faults = self._program_faults()
        state = self.aec.state
        for policy in self.policies.values():
            if _is_seat_driver(policy):
                policy.finish(state, faults)
        self.policies = {}

    def _play_others(self) -> None:
        aec = self.aec
        drivers = self._drivers
        state = aec._state  # (the game's state object stays the same through an episode)
        while not state.is_terminal() and aec.agent_selection != self.agent:
            seat = aec.agent_name_mapping[aec.agent_selection]
            obs = state.observation(seat)
            policy = self.policies[seat]
            if seat in drivers:
                move = policy.act(state)
                if policy.fault is not None and policy.fault_event is None:
                    policy.fault_event = len(aec.events)
            else:
                move = policy(obs, state.legal_actions(seat), self._opponent_rng)
            aec.step_protocol(seat, obs, move)

    def _outcome_info(self) -> dict:
        """At the end of an episode: the program opponents that forfeited
        (seat: reason and detail), after their programs were told the result."""
        faults = self._program_faults()
        self._forfeits = [{"seat": s, "reason": f.reason, "event": e} for s, (f, e) in sorted(faults.items())]
        self._finish_programs()
        return {"opponent_forfeits": {s: f"{f.reason}: {f.detail}" for s, (f, _event) in faults.items()}}

    # Gymnasium's reset(seed=...) makes the environment's own generator at
    # once (about 10 µs, more than 1% of a short episode), though nothing in
    # an episode reads it: it is made from the same seed when first read,
    # through ``_np_random`` (Gymnasium's check_env reads that name).
    _np_random_made: np.random.Generator | None = None
    _np_random_due: int | None = None

    @property
    def _np_random(self) -> np.random.Generator | None:
        if self._np_random_made is None and self._np_random_due is not None:
            self._np_random_made, _seed = seeding.np_random(self._np_random_due)
            self._np_random_due = None
        return self._np_random_made

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self._np_random_made, self._np_random_due = value, None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if type(seed) is int and seed >= 0:  # what seeding.np_random(seed) accepts: made when first read
            self._np_random_made, self._np_random_due, self._np_random_seed = None, seed, seed
        else:
            super().reset(seed=seed)
        if seed is not None:
            self._opponent_rng = random.Random(seed + 1)
            self.action_space.seed(seed)
        self._finish_programs()  # the last episode's programs, ended or not
        self._forfeits = []
        self.aec.reset(seed=seed)
        self._episode_seed = seed if seed is not None else random.randrange(2**31)
        self.policies = self._fresh_policies()
        self._drivers = {s for s, policy in self.policies.items() if _is_seat_driver(policy)}  # asked once an episode
        self._play_others()
        return self.aec.observe(self.agent), {}

    def step(self, action):
        reward, terminated, info = self._act(int(action))
        return self.aec.seat_observation(self.seat), reward, terminated, False, info

    def _act(self, action: int) -> tuple[float, bool, dict]:
        """``step`` without its observation: ``(reward, terminated, info)``."""
        aec = self.aec
        view = aec._view(self.seat)
        if not view[3][action]:
            return -1.0, True, {"illegal": True}
        # the AEC step of a legal action of the seat to act in a game not over, its checks just made
        aec._cumulative_rewards[self.agent] = 0.0
        if not aec._play(self.seat, action, view):
            # one chip of a distribute placed: the game has not moved, the
            # seat is still to act (what _advance and _play_others would find)
            return 0.0, False, {}
        aec._advance()
        self._play_others()
        terminated = aec._state.is_terminal()
        reward = aec.final_rewards()[self.seat] if terminated else 0.0
        info = self._outcome_info() if terminated else {}
        return float(reward), terminated, info

    def action_masks(self) -> np.ndarray:
        """Which actions the learning seat may take now, as booleans (the
        observation's ``action_mask``; sb3-contrib's MaskablePPO calls this)."""
        return self.aec.action_mask(self.seat).astype(bool)

    def replay(self) -> dict[str, Any]:
        """The episode so far in replay format v1: the learning seat named
        "learner", each opponent by its spec; a program opponent that
        forfeited is in ``result.forfeits`` and its later decisions marked."""
        aec = self.aec
        names = [repr(self.opponents[s]) if s in self.opponents else "learner" for s in range(len(aec.possible_agents))]
        forfeits = self._forfeits or [
            {"seat": s, "reason": f.reason, "event": e} for s, (f, e) in sorted(self._program_faults().items())
        ]
        return replay_document(aec.game, aec.seed_used, names, "gymnasium", aec.events, aec.state, forfeits)

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


class SingleSeatVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` episodes of ``SingleSeatEnv`` stepped in one call, what
    ``gymnasium.make_vec`` on the registered ids gives (the arguments are
    ``SingleSeatEnv``'s). It plays and answers exactly as
    ``make_vec(..., vectorization_mode="sync")``, a ``SyncVectorEnv`` of the
    same environments (next-step autoreset, episode ``i`` of a reset with
    ``seed`` seeded ``seed + i``; tests/sdk/research_conformance.py
    ``gymnasium_vector_equal`` compares them), without its per-environment
    wrappers and copies: each episode's array and mask are written straight
    into the batch's rows. ``envs`` are the episodes' own environments
    (``replay()``, ``action_masks()``)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, **kwargs: Any):
        if not (type(num_envs) is int and num_envs >= 1):
            raise ValueError(f"num_envs must be a whole number of environments, at least 1, not {num_envs!r}")
        self.envs = [SingleSeatEnv(**kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, num_envs)
        self.action_space = batch_space(first.action_space, num_envs)
        codec = first.aec.codec
        self._obs_size = codec.OBS_SIZE
        self._masks = np.zeros((num_envs, codec.NUM_ACTIONS), dtype=np.int8)
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def _show(self, i: int, arrays: np.ndarray) -> None:
        env = self.envs[i]
        arrays[i] = env.aec._array(env.seat)
        self._masks[i] = env.aec._view(env.seat)[3]

    def _observations(self, arrays: np.ndarray) -> dict[str, np.ndarray]:
        # the arrays are new at every call, the masks the batch's own (action_masks() reads them)
        return {"observation": arrays, "action_mask": self._masks.copy()}

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed must be one seed per environment ({self.num_envs}), not {len(seeds)}")
        infos: dict[str, Any] = {}
        arrays = np.empty((self.num_envs, self._obs_size), dtype=np.float32)
        for i, (env, env_seed) in enumerate(zip(self.envs, seeds)):
            _obs, info = env.reset(seed=env_seed, options=options)
            self._show(i, arrays)
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = False
        return self._observations(arrays), infos

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must be one index per episode, shape ({self.num_envs},), not {actions.shape}")
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {}
        arrays = np.empty((self.num_envs, self._obs_size), dtype=np.float32)
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:  # the episode ended at the last step: this one only starts the next
                _obs, info = env.reset()
            else:
                rewards[i], terminations[i], info = env._act(int(actions[i]))
            self._show(i, arrays)
            infos = self._add_info(infos, info, i)
        self._autoreset = terminations.copy()
        return self._observations(arrays), rewards, terminations, np.zeros(self.num_envs, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        """Each episode's mask as booleans, one row each (sb3-contrib's MaskablePPO calls this)."""
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()


def _register() -> None:
    """The ids in Gymnasium's registry (once: a second import registers nothing)."""
    for game, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=f"{__name__}:SingleSeatEnv",
                vector_entry_point=f"{__name__}:SingleSeatVectorEnv",
                kwargs={"game": game},
            )


_register()
