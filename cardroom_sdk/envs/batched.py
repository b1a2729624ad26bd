"""Many games stepped in one call, observations as one array: self-play for
training, where every seat is the learner's.

``BatchedGames("allegra", num_envs=64, num_players=4)`` holds ``num_envs``
PettingZoo AEC games (``allegra_v1.raw_env``) and hands out, for each game,
the array and action mask of the seat to act, as rows of two arrays::

    games = BatchedGames("allegory", num_envs=64)
    obs, masks, seats = games.reset(seed=0)
    while training:
        actions = policy(obs, masks)  # one index per game, legal in its mask
        obs, masks, seats, rewards, ended = games.step(actions)

Each row is exactly what ``observe`` of that game's acting agent gives (the
same code makes it; the differential test in
tests/sdk/research_conformance.py plays the same seeds and actions through
``allegory_v1.env()`` and compares arrays, masks, rewards and replays), so
no hidden card can reach a row that the AEC environment would not show.
What the batch saves is the per-step machinery around a game: PettingZoo's
wrappers and ``agent_iter``/``last()``, a dict per observation, and a call
per game from the learner's loop.

A game that ends on a step is started again at once (Gymnasium's
"same-step" autoreset): its row then shows the first decision of the next
game, ``rewards[i]`` holds the ended game's final rewards for every seat
(the AEC environment's ``reward`` kind, 0 for games that did not end) and
``ended[i]`` is True. Game slot ``i`` plays its k-th game with the seed
``seed + i + k * num_envs``, so a seeded batch repeats.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

_MODULES = {"allegory": "cardroom_sdk.envs.allegory_v1", "allegra": "cardroom_sdk.envs.allegra_v1"}


class BatchedGames:
    """``num_envs`` games of ``game`` at ``num_players`` (``options`` and
    ``reward`` as the AEC environment takes them). ``keep_replays``: keep
    each ended game's replay (format v1) in ``replays``, oldest first."""

    def __init__(self, game: str = "allegra", num_envs: int = 16, num_players: int = 2,
                 options: dict | None = None, reward: str = "rank", keep_replays: bool = False):  # fmt: skip
        if game not in _MODULES:
            raise ValueError(f"game must be one of {', '.join(_MODULES)}, not {game!r}")
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise ValueError(f"num_envs must be a whole number of games, at least 1, not {num_envs!r}")
        raw_env = importlib.import_module(_MODULES[game]).raw_env
        self.games = [raw_env(num_players=num_players, options=options, reward=reward) for _ in range(num_envs)]
        self.codec = raw_env.codec
        self.num_envs = num_envs
        self.num_players = num_players
        self.single_observation_space = self.games[0].observation_space("player_0")["observation"]
        self.single_action_space = self.games[0].action_space("player_0")
        self.observations = np.zeros((num_envs, self.codec.OBS_SIZE), dtype=np.float32)
        self.action_masks = np.zeros((num_envs, self.codec.NUM_ACTIONS), dtype=np.int8)
        self.seats = np.zeros(num_envs, dtype=np.int64)
        self.keep_replays = keep_replays
        self.replays: list[dict[str, Any]] = []
        self._seed: int | None = None
        self._episodes = [0] * num_envs

    def _start(self, i: int) -> None:
        seed = None if self._seed is None else self._seed + i + self._episodes[i] * self.num_envs
        self._episodes[i] += 1
        self.games[i].reset(seed=seed)

    def _show(self, i: int) -> None:
        """Row ``i``: the seat to act in game ``i``, what ``observe`` shows it."""
        game = self.games[i]
        seat = game.state.to_act()[0]
        self.observations[i] = game._array(seat)
        self.action_masks[i] = game._view(seat)[3]
        self.seats[i] = seat

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Starts every game afresh: ``(observations, action_masks, seats)``,
        one row per game (the arrays are the batch's own, overwritten by the
        next call: copy what must be kept)."""
        self._seed = seed
        self._episodes = [0] * self.num_envs
        for i in range(self.num_envs):
            self._start(i)
            self._show(i)
        return self.observations, self.action_masks, self.seats

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Plays ``actions[i]`` (an index) for the seat to act in game ``i``:
        ``(observations, action_masks, seats, rewards, ended)``. An index
        its mask does not allow raises ValueError naming the game."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must be one index per game, shape ({self.num_envs},), not {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be integer indices, not {actions.dtype}")
        # every action checked before any game moves: a bad one leaves the batch as it was
        inside = (actions >= 0) & (actions < self.codec.NUM_ACTIONS)
        legal = inside & (self.action_masks[np.arange(self.num_envs), np.where(inside, actions, 0)] == 1)
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"game {i}: action {int(actions[i])} is not legal now")
        rewards = np.zeros((self.num_envs, self.num_players), dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=bool)
        seats = self.seats
        for i, game in enumerate(self.games):
            game.play(int(seats[i]), int(actions[i]))
            if game.state.is_terminal():
                rewards[i] = game.final_rewards()
                ended[i] = True
                if self.keep_replays:
                    self.replays.append(game.replay())
                self._start(i)
            self._show(i)
        return self.observations, self.action_masks, self.seats, rewards, ended
