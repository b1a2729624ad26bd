"""The PettingZoo AEC environment shared by both games (made as PettingZoo's
classic environments are: a ``raw_env`` class and an ``env()`` with the
standard wrappers).

One engine State is played; its chance events are drawn from one
``random.Random`` seeded by ``reset(seed=...)`` and resolved as soon as
they are due, so an agent only ever sees decisions. Simultaneous decisions
(Allegra's knock answers) are asked one seat at a time, in ``to_act()``
order; a seat's observation never shows the answers of the others, as on the
wire. Each observation is built from ``state.observation(seat)`` alone.

A seat's view (its observation, legal actions, mask and array) is made once
per position and kept until the position changes (a step, a reset, or a
new ``state`` assigned): PettingZoo's ``last()``, the wrappers' checks and
``step`` all ask for it. Masks are made by the codecs' ``action_mask_fast``,
the same as their readable ``action_mask`` (tests/sdk/research_conformance.py
``fast_codecs`` compares them).
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from cardroom_sdk.envs._common import decision_step, rank_rewards, replay_document
from engine import CHANCE, IllegalActionError, new_game

REWARDS = ("rank", "centred", "score")
__all__ = ["CardroomAEC", "rank_rewards", "wrap"]


class LazySeedDiscrete(gymnasium.spaces.Discrete):
    """A Discrete space whose ``seed(n)`` makes its generator when it is
    first used, from the same seed: the same samples. (Making a generator
    costs tens of microseconds, and a seeded reset seeds every seat's space,
    which random play alone ever samples.)"""

    _seed_due: int | None = None

    def seed(self, seed: int | None = None) -> int:
        if type(seed) is int and seed >= 0:
            self._np_random, self._seed_due = None, seed
            return seed
        self._seed_due = None
        return super().seed(seed)

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None and self._seed_due is not None:
            super().seed(self._seed_due)
            self._seed_due = None
        return super().np_random


class CardroomAEC(AECEnv):
    """``num_players`` seats named ``player_0``... (seat numbers), one game
    with ``options``. ``reward`` is ``"rank"`` ((n - rank)/(n - 1)),
    ``"centred"`` (that minus the table's mean, summing to 0) or ``"score"``
    (the seat's game score minus the mean of the others', with the sign
    turned so that higher is better in both games). Rewards come only at
    the end."""

    game_id: str
    codec: Any
    higher_score_wins: bool

    def __init__(
        self, num_players: int = 2, options: dict | None = None, reward: str = "rank", render_mode: str | None = None
    ):
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        self.game = new_game(self.game_id, num_players, options)
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(num_players)]
        self.agent_name_mapping = {a: s for s, a in enumerate(self.possible_agents)}
        mask = gymnasium.spaces.Box(0, 1, (self.codec.NUM_ACTIONS,), dtype=np.int8)
        obs = gymnasium.spaces.Box(-1e4, 1e4, (self.codec.OBS_SIZE,), dtype=np.float32)
        space = gymnasium.spaces.Dict({"observation": obs, "action_mask": mask})
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: LazySeedDiscrete(self.codec.NUM_ACTIONS) for a in self.possible_agents}
        self._rng = random.Random()
        self.state = None

    @property
    def state(self) -> Any:
        return self._state

    @state.setter
    def state(self, state: Any) -> None:
        # a state assigned from outside (a test, a search) is a new position
        self._state = state
        self._views: dict[int, list[Any]] = {}
        self._final_rewards: list[float] | None = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- the game ----------------------------------------------------------
    def _resolve_chance(self) -> None:
        state = self._state
        while state.is_chance_node():
            event = state.sample_chance(self._rng)
            state.apply_chance(event)
            self.events.append({"by": CHANCE, "action": event})

    def _seat_obs(self, seat: int) -> dict[str, Any]:
        return self._view(seat)[0]

    def _view(self, seat: int) -> list[Any]:
        """``[observation, legal actions, pending, mask, array]`` of ``seat``
        now (made once per position; the array when first asked for)."""
        view = self._views.get(seat)
        if view is None:
            state = self._state
            obs = state.observation(seat)
            acting = state.to_act()
            legal = state.legal_actions(seat) if acting and acting[0] == seat else []
            pending = self.pending if legal else None
            view = self._views[seat] = [obs, legal, pending, self.codec.action_mask_fast(obs, legal, pending), None]
        return view

    def _changed(self) -> None:
        self._views = {}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
            for i, agent in enumerate(self.possible_agents):
                self.action_spaces[agent].seed(seed + i)
        self.seed_used = seed
        self.state = self.game.new_initial_state()
        self.events: list[dict[str, Any]] = []
        self.pending: list[int] | None = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._resolve_chance()
        self._changed()
        self.agent_selection = self.possible_agents[self.state.to_act()[0]]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.seat_observation(self.agent_name_mapping[agent])

    def seat_observation(self, seat: int) -> dict[str, np.ndarray]:
        """``observe`` of the agent of ``seat``."""
        view = self._view(seat)
        array = view[4] if view[4] is not None else self._encode(view)
        # copies: what a caller does to its arrays must not reach the next observe
        return {"observation": array.copy(), "action_mask": view[3].copy()}

    def action_mask(self, seat: int) -> np.ndarray:
        """The action mask of ``seat`` now, without its array (a new array)."""
        return self._view(seat)[3].copy()

    def array(self, seat: int) -> np.ndarray:
        """The observation array of ``seat`` now (a new array)."""
        return self._array(seat).copy()

    def _array(self, seat: int) -> np.ndarray:
        """The observation array of ``seat`` now, the view's own (not to be
        changed): the codec's ``encode_fast``, equal to its ``encode``."""
        view = self._view(seat)
        return view[4] if view[4] is not None else self._encode(view)

    def _encode(self, view: list[Any]) -> np.ndarray:
        """The array of ``view`` (which has none yet), kept in it."""
        obs, pending = view[0], view[2]
        view[4] = self.codec.encode_fast(obs, pending) if pending is not None else self.codec.encode_fast(obs)
        return view[4]

    def protocol_action(self, agent: str, index: int) -> dict[str, Any] | None:
        """The protocol action ``index`` sends for ``agent`` now, or None when
        it is one chip of an Allegory distribute that is not yet complete."""
        seat = self.agent_name_mapping[agent]
        move = self._decide(seat, index, self._view(seat))
        if move is not None:
            self._changed()
        return move

    def _decide(self, seat: int, index: int, view: list[Any]) -> dict[str, Any] | None:
        """``protocol_action`` of the agent of ``seat`` (``view``: its view now)."""
        codec = self.codec
        if self.pending is not None and codec.CHIP <= index < codec.BID:
            # the next chip of a distribute in progress (decision_step's
            # add_chip, with the legal distribute the view already holds)
            self.pending, move = codec.add_chip(view[0], self.pending, index, view[1][0]["total"])
        else:
            move, self.pending = decision_step(codec, self._state, seat, view[0], index, self.pending)
        if move is None:
            # One chip placed, the game unchanged: every seat's observation
            # and legal actions stand, and so does the placing seat's mask
            # (a distribute's chips stay legal until the last one is placed);
            # only its array shows the chips so far.
            view[2] = self.pending
            if view[4] is not None:  # the view's own array (only copies of it leave), rewritten in place
                codec.encode_chips_into(view[4], view[0], self.pending)
        return move

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.agent_name_mapping[agent]
        self._cumulative_rewards[agent] = 0.0
        view = self._view(seat)
        if not view[3][int(action)]:
            raise ValueError(f"{agent}: action {action} is not legal now")
        self._play(seat, int(action), view)
        self._advance()
        if self.render_mode == "human":
            self.render()

    def _advance(self) -> None:
        """PettingZoo's bookkeeping after a step: the next agent, or the
        rewards and terminations of the end."""
        if self._state.is_terminal():
            for agent_name, value in zip(self.agents, self.final_rewards()):
                self.rewards[agent_name] = value
                self.terminations[agent_name] = True
            self._accumulate_rewards()
        else:  # every reward is 0 until the end: accumulating them would change nothing
            self.agent_selection = self.possible_agents[self._state.to_act()[0]]

    def play(self, seat: int, index: int) -> bool:
        """Action ``index`` of ``seat``, the seat to act, checked legal by the
        caller: the game's part of ``step``, without PettingZoo's bookkeeping
        (``BatchedGames`` steps its games with it). False when it was one
        chip of a distribute not yet complete (the game did not move)."""
        return self._play(seat, index, self._view(seat))

    def _play(self, seat: int, index: int, view: list[Any]) -> bool:
        """``play``, given the seat's view now."""
        move = self._decide(seat, index, view)
        if move is None:
            return False
        self._state.apply(seat, move)
        self._moved(seat, move)
        return True

    def _moved(self, seat: int, move: dict[str, Any]) -> None:
        """After ``move`` of ``seat`` was applied: its event, the chance
        events then due, and every view dropped (the position changed)."""
        self.events.append({"by": seat, "action": move, "ms": 0})
        if self._state.is_chance_node():
            self._resolve_chance()
        self._views = {}

    def step_protocol(self, seat: int, obs: dict[str, Any], move: dict[str, Any]) -> None:
        """``step`` of every index that plays the protocol action ``move`` of
        ``seat``, the agent to act (``obs``: its observation now), at once:
        the same game, events, rewards and bookkeeping, without making the
        seat's mask and array (Gymnasium's opponents play through this).
        What the engine refuses (it does not move then) is stepped index by
        index, so that ``step`` raises what it raises."""
        codec = self.codec
        indices = codec.protocol_to_actions_fast(obs, move)
        whole = None
        if self.pending is None and indices:
            try:
                if move.get("type") == "distribute":
                    whole = self._whole_distribute(seat, obs, indices)
                else:
                    whole = codec.action_to_protocol_fast(obs, indices[0])  # the very dict ``step`` sends and records
            except ValueError:
                whole = None
        if whole is not None:
            try:
                self._state.apply(seat, whole)
            except IllegalActionError:  # refused, and the game did not move
                whole = None
        if whole is None:  # a distribute in progress, chips that do not make one, or a refusal
            for index in indices:
                self.step(index)
            return
        self._cumulative_rewards[self.possible_agents[seat]] = 0.0
        self._moved(seat, whole)
        self._advance()
        if self.render_mode == "human":
            self.render()

    def _whole_distribute(self, seat: int, obs: dict[str, Any], indices: list[int]) -> dict[str, Any] | None:
        """The ``distribute`` that stepping ``indices`` (one chip each) would
        send (the codec's ``chips_action``, what its ``add_chip`` steps
        make); None unless they are exactly the chips due."""
        if len(indices) != self._state.legal_actions(seat)[0]["total"]:
            return None
        return self.codec.chips_action(obs, indices)

    def final_rewards(self) -> list[float]:
        """Each seat's reward for the game, which is over (worked out once a
        game: an Allegory result costs the engine some 15 µs, and the step
        that ends a Gymnasium episode asks for it twice)."""
        if self._final_rewards is None:
            self._final_rewards = self._rewards_of(self._state.result())
        return list(self._final_rewards)

    def _rewards_of(self, result: Any) -> list[float]:
        n = self.num_agents
        if self.reward_kind == "score":
            sign = 1 if self.higher_score_wins else -1
            total = sum(result.scores)
            return [sign * (s - (total - s) / (n - 1)) for s in result.scores]
        by_rank = rank_rewards(result.ranks)
        if self.reward_kind == "centred":
            mean = sum(by_rank) / n
            return [r - mean for r in by_rank]
        return by_rank

    def replay(self) -> dict[str, Any]:
        """The game so far in replay format v1 (``engine.replay.verify``
        checks a finished one)."""
        return replay_document(self.game, self.seed_used, self.possible_agents, "pettingzoo", self.events, self.state)

    def render(self) -> str | None:
        text = self.codec.render(self.state.observation(None))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


# -- the standard wrappers, without their lookup chains ---------------------
# A wrapper finds every attribute it does not have (``agent_selection``,
# ``terminations``...) through ``__getattr__``, one Python call per layer, and
# PettingZoo's loop reads them many times a step (``agent_iter``, ``last``,
# each wrapper's checks): with three layers that was about half of a step.
# These subclasses of the standard wrappers read the game's own attributes
# at once through properties (OrderEnforcingWrapper still refuses them
# before reset: a property that raises AttributeError falls back to its
# ``__getattr__``), and AssertOutOfBoundsWrapper checks a plain int against
# the Discrete space's bounds before asking ``contains`` (which says the
# same of an int).
#
# Even so, the three layers' own calls (each ``observe`` and ``step``
# passed down one layer at a time, every read a property) were a fifth of
# an Allegra step through ``env()``. So the loop's calls take a short way
# when the position is the ordinary one — the wrappers reset, an agent
# alive to act, a legal int action, its mask the one just observed — and
# make there the same checks as the wrappers, in the same order, with the
# same outcome; anything else (before reset, after the end, an illegal or
# out-of-range action, an action without an observation first) goes through
# PettingZoo's own code unchanged. ``pettingzoo_api`` (api_test, seed_test)
# and ``wrapper_paths`` in tests/sdk/research_conformance.py hold both ways
# to the same behaviour.

_FORWARDED = ("agent_selection", "agents", "terminations", "truncations", "infos", "rewards",
              "_cumulative_rewards", "possible_agents")  # fmt: skip


def _forwarded(name: str, order_enforcing: bool) -> property:
    if order_enforcing and name not in ("_cumulative_rewards", "possible_agents"):

        def read(self):
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._game, name)

    else:

        def read(self):
            return getattr(self._game, name)

    def write(self, value):
        setattr(self._game, name, value)

    return property(read, write)


def _direct(wrapper: type, order_enforcing: bool = False) -> type:
    """``wrapper`` (a standard wrapper class) reading ``_FORWARDED`` from the
    game directly."""

    def __init__(self, env, *args, **kwargs):  # noqa: N807
        self._game = env.unwrapped
        wrapper.__init__(self, env, *args, **kwargs)

    namespace = {name: _forwarded(name, order_enforcing) for name in _FORWARDED}
    namespace["__init__"] = __init__
    namespace["__doc__"] = f"PettingZoo's {wrapper.__name__}, reading the game's attributes directly."
    return type(wrapper.__name__, (wrapper,), namespace)


class _TerminateIllegal(_direct(wrappers.TerminateIllegalWrapper)):
    # wraps the game itself (``wrap``): ``self.env`` is ``self._game``

    def observe(self, agent):
        game = self._game
        obs = game.observe(agent)
        if agent == game.agent_selection:  # what the wrapper's step checks the action against
            self._prev_obs = obs
            self._prev_info = game.infos.get(agent, {})
        return obs

    def step(self, action) -> None:
        game = self._game
        agent = game.agent_selection
        seen = self._prev_obs
        if (
            type(seen) is dict
            and not game.terminations[agent]
            and not game.truncations[agent]
            and seen["action_mask"][action]
        ):  # alive, and legal by the mask it was shown: the wrapper's own step would step the game
            self._prev_obs = self._prev_info = None
            game.step(action)
        else:
            super().step(action)


class _AssertOutOfBounds(_direct(wrappers.AssertOutOfBoundsWrapper)):
    def step(self, action) -> None:
        if type(action) is int and 0 <= action < self._game.codec.NUM_ACTIONS:  # Discrete(n).contains says yes
            self.env.step(action)
        else:
            super().step(action)


class _OrderedAgents(AECOrderEnforcingIterator):
    """OrderEnforcingWrapper's ``agent_iter`` iterator, reading the game's
    agents directly (the wrapper has been reset: ``agent_iter`` checked)."""

    def __next__(self) -> str:
        game = self.env._game
        if not game.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert self.env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        self.env._has_updated = False
        return game.agent_selection


class _OrderedIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _OrderedAgents:
        return _OrderedAgents(self.env, self.max_iter)


class _OrderEnforcing(_direct(wrappers.OrderEnforcingWrapper, order_enforcing=True)):
    # wraps _AssertOutOfBounds(_TerminateIllegal(game)) (``wrap``)

    def __init__(self, env) -> None:
        super().__init__(env)
        self._bounds = env
        self._illegal = env.env

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            return super().agent_iter(max_iter)  # which says why not
        return _OrderedIterable(self, max_iter)

    def last(self, observe: bool = True):
        if not self._has_reset:
            return super().last(observe)  # which raises what reading before reset raises
        game = self._game
        agent = game.agent_selection
        assert agent is not None
        observation = self._illegal.observe(agent) if observe else None
        return (
            observation,
            game._cumulative_rewards[agent],
            game.terminations[agent],
            game.truncations[agent],
            game.infos[agent],
        )

    def observe(self, agent):
        if not self._has_reset:
            return super().observe(agent)  # which says why not
        return self._illegal.observe(agent)  # (AssertOutOfBoundsWrapper passes observe down unchanged)

    def step(self, action) -> None:
        if self._has_reset and self._game.agents:
            self._has_updated = True
            self._bounds.step(action)
        else:
            super().step(action)  # which says why not


def wrap(raw: CardroomAEC) -> AECEnv:
    """The standard wrappers of PettingZoo's classic environments (their
    subclasses above: the same checks, without the lookup chains)."""
    env = _TerminateIllegal(raw, illegal_reward=-1)
    env = _AssertOutOfBounds(env)
    return _OrderEnforcing(env)
