"""The policy research/train.py learns, and the exported bot plays: a small
neural network (one tanh hidden layer) from the environment's observation
array to one logit per Discrete action, with illegal actions masked out.

Numpy only. This one file is both the trainer's forward pass and the bot's
(``export`` copies it into the bot package), so the two cannot differ; the
observation arrays and masks are cardroom_sdk's codecs (``cardroom_sdk.envs``),
the very functions the PettingZoo and Gymnasium environments call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

PARAMS = ("w1", "b1", "w2", "b2", "wv", "bv")


class Policy:
    """``w1`` (hidden x obs), ``b1``, ``w2`` (actions x hidden), ``b2``: the
    policy; ``wv``, ``bv``: the value head the trainer uses as its baseline
    (the bot ignores it)."""

    def __init__(self, params: dict[str, np.ndarray], game: str):
        self.p = {k: np.asarray(params[k], dtype=np.float64) for k in PARAMS}
        self.game = game

    @classmethod
    def new(cls, game: str, obs_size: int, num_actions: int, hidden: int, rng: np.random.Generator) -> Policy:
        params = {
            "w1": rng.normal(0, 1 / np.sqrt(obs_size), (hidden, obs_size)),
            "b1": np.zeros(hidden),
            "w2": np.zeros((num_actions, hidden)),  # uniform over the legal actions at first
            "b2": np.zeros(num_actions),
            "wv": np.zeros(hidden),
            "bv": np.zeros(1),
        }
        return cls(params, game)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        with np.load(path, allow_pickle=False) as data:
            return cls({k: data[k] for k in PARAMS}, str(data["game"]))

    def save(self, path: str | Path) -> None:
        # float32 on disk: the weights file of a 64-unit network is a few hundred KB
        np.savez_compressed(path, game=np.array(self.game), **{k: v.astype(np.float32) for k, v in self.p.items()})

    def digest(self) -> str:
        """SHA-256 of the weights as saved (float32): equal for equal networks."""
        h = hashlib.sha256()
        for k in PARAMS:
            h.update(np.ascontiguousarray(self.p[k], dtype=np.float32).tobytes())
        return h.hexdigest()

    def hidden(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x @ self.p["w1"].T + self.p["b1"])

    def probabilities(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action probabilities (rows of ``x`` and ``mask`` at once, or one)."""
        logits = self.hidden(x) @ self.p["w2"].T + self.p["b2"]
        logits = np.where(mask.astype(bool), logits, -np.inf)
        logits = logits - logits.max(axis=-1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=-1, keepdims=True)

    def best(self, x: np.ndarray, mask: np.ndarray) -> int:
        """The most probable legal action: what the bot plays (deterministic,
        so a replay of it is the same every time)."""
        return int(np.argmax(self.probabilities(x, mask)))
