#!/usr/bin/env python3
"""Train a bot for Allegory or Allegra with numpy alone, and export it as a
cardroom bot package.

    python research/train.py allegra --out my-allegra-bot
    cardroom play allegra my-allegra-bot builtin:random
    cardroom submit my-allegra-bot ...

The learner is advantage actor-critic (REINFORCE with a learned value
baseline) on the Gymnasium environment ``cardroom_sdk.envs.gym.SingleSeatEnv``:
one seat (it alternates between episodes) plays against built-in bots, the
reward is the ladder's rank reward at the end of the game, and the policy is
research/policy.py's one-hidden-layer network over the environment's own
observation array (docs/train.md; decision 116,
docs/decisions/116-trainer-advantage-actor-critic-over-the-environment.md).
Needs the ``research`` extra (``pip install "cardroom-….whl[research]"``).

Seeded: the same ``--seed`` and arguments train the same weights.
"""

from __future__ import annotations

import os

# one core: numpy's BLAS would start a thread per core (and the bot's sandbox has one)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # policy.py beside this file

from policy import Policy  # noqa: E402

from cardroom_sdk.envs import codec as codec_of  # noqa: E402
from cardroom_sdk.envs.gym import SingleSeatEnv  # noqa: E402
from engine import game_ids  # noqa: E402

HERE = Path(__file__).resolve().parent
# what the trainer does by default, in either game (about two minutes on one core)
DEFAULT_EPISODES = 3000


class Adam:
    def __init__(self, params: dict[str, np.ndarray], lr: float):
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat = self.m[k] / (1 - 0.9**self.t)
            v_hat = self.v[k] / (1 - 0.999**self.t)
            params[k] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def play_episode(env: SingleSeatEnv, policy: Policy, seed: int, rng: np.random.Generator):
    """One game with the policy sampling its actions: the (observation, mask,
    action) of every decision it had a choice in, and its final reward."""
    obs, _ = env.reset(seed=seed)
    xs, masks, actions = [], [], []
    while True:
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            action = int(legal[0])
        else:
            probs = policy.probabilities(obs["observation"], mask)
            action = int(rng.choice(len(probs), p=probs))
            xs.append(obs["observation"])
            masks.append(mask)
            actions.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return xs, masks, actions, float(reward)


def gradients(policy: Policy, x, mask, actions, returns, entropy_weight: float, value_weight: float):
    """Gradients of the actor-critic loss (to be minimised) over one batch:
    -advantage * log pi(a) - entropy_weight * entropy + value_weight * (V - G)^2 / 2."""
    p = policy.p
    n = len(actions)
    h = policy.hidden(x)
    probs = policy.probabilities(x, mask)
    value = h @ p["wv"] + p["bv"][0]
    advantage = returns - value
    onehot = np.zeros_like(probs)
    onehot[np.arange(n), actions] = 1
    d_logits = (probs - onehot) * advantage[:, None]
    # entropy: dH/dlogit_j = -p_j (log p_j + H); masked actions have p = 0
    logp = np.log(np.where(probs > 0, probs, 1.0))
    entropy = -(probs * logp).sum(axis=1)
    d_logits += entropy_weight * probs * (logp + entropy[:, None])
    d_logits /= n
    d_value = value_weight * (value - returns) / n
    d_h = d_logits @ p["w2"] + d_value[:, None] * p["wv"][None, :]
    d_z = d_h * (1 - h * h)
    grads = {
        "w1": d_z.T @ x,
        "b1": d_z.sum(axis=0),
        "w2": d_logits.T @ h,
        "b2": d_logits.sum(axis=0),
        "wv": d_value @ h,
        "bv": np.array([d_value.sum()]),
    }
    return grads, float(entropy.mean()), float(np.mean(advantage**2))


def train(game: str, episodes: int, seed: int, opponents: list[str], hidden: int = 64, lr: float = 3e-3,
          batch: int = 32, entropy_weight: float = 0.01, log=print) -> Policy:  # fmt: skip
    codec = codec_of(game)
    rng = np.random.default_rng(seed)
    policy = Policy.new(game, codec.OBS_SIZE, codec.NUM_ACTIONS, hidden, rng)
    # one environment per (learning seat, opponent): the learner plays both seats
    envs = [SingleSeatEnv(game, num_players=2, seat=s, opponents=o) for o in opponents for s in (0, 1)]
    adam = Adam(policy.p, lr)
    wins, started = [], time.monotonic()
    xs, masks, actions, returns = [], [], [], []
    for episode in range(episodes):
        env = envs[episode % len(envs)]
        ex, em, ea, reward = play_episode(env, policy, seed=seed * 1_000_003 + episode, rng=rng)
        xs += ex
        masks += em
        actions += ea
        returns += [reward] * len(ea)
        wins.append(reward)
        if (episode + 1) % batch == 0 and actions:
            grads, entropy, _ = gradients(
                policy, np.array(xs), np.array(masks), np.array(actions), np.array(returns), entropy_weight, 0.5
            )
            adam.step(policy.p, grads)
            xs, masks, actions, returns = [], [], [], []
        if (episode + 1) % 500 == 0:
            log(f"{game}: episode {episode + 1}/{episodes}, mean reward of the last 500 {np.mean(wins[-500:]):.3f}, "
                f"{time.monotonic() - started:.0f} s")  # fmt: skip
    return policy


BOT_MAIN = '''\
"""A cardroom bot trained by research/train.py: the network in weights.npz,
played through cardroom_sdk.run. Observations are encoded by cardroom_sdk's
codec, as the training environment encoded them."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from policy import Policy  # noqa: E402

import cardroom_sdk  # noqa: E402
from cardroom_sdk.envs import {codec} as codec  # noqa: E402

POLICY = Policy.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights.npz"))


def choose(observation, legal):
    return codec.policy_action(observation, legal, POLICY.best)


if __name__ == "__main__":
    cardroom_sdk.run(choose)
'''


MANIFEST = """\
# A cardroom bot package (docs/bot-authors.md), written by research/train.py:
# Debian's Python 3 with numpy and cardroom_sdk (docs/runtimes.md).
entry = "main.py"
protocol = 1
runtime = "python"
name = "trained-{game}"
"""


def export(policy: Policy, out: Path, info: dict) -> None:
    """The bot package: cardroom.toml, main.py, policy.py and weights.npz."""
    out.mkdir(parents=True, exist_ok=True)
    policy.save(out / "weights.npz")
    shutil.copyfile(HERE / "policy.py", out / "policy.py")
    (out / "main.py").write_text(BOT_MAIN.format(codec=f"{policy.game}_codec"))
    (out / "cardroom.toml").write_text(MANIFEST.format(game=policy.game))
    (out / "training.json").write_text(json.dumps(info, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=game_ids())
    parser.add_argument("--out", required=True, type=Path, help="the folder to write the bot package into")
    parser.add_argument("--episodes", type=int, help=f"games to train on (default {DEFAULT_EPISODES})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opponents", default="random", help="built-in bots to train against, comma-separated")
    parser.add_argument("--hidden", type=int, default=64, help="units in the hidden layer")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    args = parser.parse_args(argv)
    episodes = args.episodes or DEFAULT_EPISODES
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    started = time.monotonic()
    policy = train(args.game, episodes, args.seed, opponents, hidden=args.hidden, lr=args.lr)
    seconds = time.monotonic() - started
    info = {"game": args.game, "episodes": episodes, "seed": args.seed, "opponents": opponents,
            "hidden": args.hidden, "lr": args.lr, "seconds": round(seconds, 1), "weights_sha256": policy.digest()}  # fmt: skip
    export(policy, args.out, info)
    print(f"trained {args.game} on {episodes} games in {seconds:.0f} s; bot package in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
