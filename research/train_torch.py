#!/usr/bin/env python3
"""Train a policy for Allegory or Allegra with PyTorch (sb3-contrib's
MaskablePPO, on CPU), export it to ONNX, and write a bot package that plays
it with ONNX Runtime (the starter kit bots/starters/python-onnx).

    python research/train_torch.py allegra --out my-onnx-bot --minutes 8
    python research/train_torch.py allegory --out my-onnx-bot --minutes 8
    cardroom play allegra my-onnx-bot builtin:greedy
    cardroom submit my-onnx-bot --game allegra --name my-ppo-bot --wait

The environments are the registered Gymnasium ids ``cardroom/Allegory-v1``
and ``cardroom/Allegra-v1`` at two players: one environment per (opponent,
seat), so the learner plays both seats against each opponent (``--opponents
greedy,random``, built-in bots by name). MaskablePPO takes each step's legal
actions from ``env.action_masks()``; the reward is the ladder's rank reward at
the end of the game (1 for a win, 0 for a loss). The exported model is the
policy's logits over the environment's observation array (one input
``observation``, float32 ``[batch, OBS_SIZE]``; one output ``logits``), which
the starter's ``bot.py`` masks and plays greedily (docs/train.md; decision
222). Needs the training extra: ``pip install torch==2.13.0
"cardroom[research,train]"`` (a CPU build of torch).

Seeded (``--seed``), but a run stopped by ``--minutes`` ends at a step count
that depends on the machine's speed; ``training.json`` records it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

import cardroom_sdk.envs.gym  # noqa: E402,F401  (registers the Gymnasium ids)
from cardroom_sdk.envs import allegory_codec, allegra_codec  # noqa: E402
from cardroom_sdk.envs.gym import ENV_IDS  # noqa: E402

CODECS = {"allegory": allegory_codec, "allegra": allegra_codec}
STARTER = Path(__file__).resolve().parents[1] / "bots" / "starters" / "python-onnx"
NEGLIGIBLE = 1e-30  # a weight smaller than this is exported as 0 (export_logits)


class ObservationArray(gymnasium.ObservationWrapper):
    """The environment's observation array alone (its ``action_mask`` reaches
    MaskablePPO through ``action_masks()``, which the wrapper passes on)."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]

    def observation(self, observation):
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def make_env(game: str, seat: int, opponent: str):
    return lambda: ObservationArray(gymnasium.make(ENV_IDS[game], num_players=2, seat=seat, opponents=opponent))


class Deadline(BaseCallback):
    """Stops learning after ``seconds`` of wall time; prints the win rate of
    the last games now and then."""

    def __init__(self, seconds: float):
        super().__init__()
        self.deadline = time.monotonic() + seconds
        self.rewards: list[float] = []
        self.next_report = 0

    def _on_step(self) -> bool:
        for done, reward in zip(self.locals["dones"], self.locals["rewards"]):
            if done:
                self.rewards.append(float(reward))
        if self.num_timesteps >= self.next_report:
            recent = self.rewards[-400:]
            rate = f"{np.mean(recent):.3f} over the last {len(recent)} games" if recent else "-"
            print(f"  {self.num_timesteps} steps, {len(self.rewards)} games, mean reward {rate}", flush=True)
            self.next_report += 20_000
        return time.monotonic() < self.deadline


class Logits(torch.nn.Module):
    """The trained policy's action logits, observation in (what is exported)."""

    def __init__(self, policy):
        super().__init__()
        self.policy = policy

    def forward(self, observation):
        features = self.policy.extract_features(observation, self.policy.pi_features_extractor)
        return self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))


def export_logits(net: torch.nn.Module, game: str, path: Path) -> None:
    """A module from observation arrays to logits, to ONNX in the starter
    kit's format (decision 221), checked against torch on random
    observations with ONNX Runtime (the bot's runtime). Weights below
    ``NEGLIGIBLE`` are written as 0: weight decay leaves them on inputs
    that are always 0 (the seats of a larger table) and on actions that are
    never legal, their products are subnormal floats, which the CPU
    computes many times slower (measured: a decision of a 256-unit Allegra
    model 142 µs of CPU with them, 55 µs without), and they change no logit
    by a visible amount (at most 3e-36 there)."""
    import onnxruntime

    codec = CODECS[game]
    trained = {name: tensor.clone() for name, tensor in net.state_dict().items()}
    try:
        with torch.no_grad():
            for parameter in net.parameters():
                parameter[parameter.abs() < NEGLIGIBLE] = 0
        example = torch.zeros(1, codec.OBS_SIZE)
        torch.onnx.export(
            net, (example,), str(path), input_names=["observation"], output_names=["logits"],
            dynamic_axes={"observation": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17, dynamo=False,
        )  # fmt: skip
        sample = np.random.default_rng(0).random((16, codec.OBS_SIZE), dtype=np.float32)
        with torch.no_grad():
            expected = net(torch.from_numpy(sample)).numpy()
    finally:
        net.load_state_dict(trained)  # the module stays as trained
    got = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"observation": sample}
    )[0]
    if not np.allclose(expected, got, atol=1e-4):
        raise RuntimeError(f"the ONNX export of {game} differs from torch by {np.abs(expected - got).max()}")


def write_package(out: Path, game: str, net: torch.nn.Module, record: dict) -> Path:
    """The bot package in ``out``: the starter kit's ``bot.py`` and manifest,
    ``GAME.onnx`` (``export_logits``), and ``record`` under the game's name in
    ``training.json`` (with torch's version and the model's SHA-256). Returns
    the model's path."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("bot.py", "cardroom.toml"):
        shutil.copy(STARTER / name, out / name)
    model_path = out / f"{game}.onnx"
    export_logits(net, game, model_path)
    record_path = out / "training.json"
    records = json.loads(record_path.read_text()) if record_path.exists() else {}
    sha = hashlib.sha256(model_path.read_bytes()).hexdigest()
    records[game] = {**record, "torch": torch.__version__, "model_sha256": sha}
    record_path.write_text(json.dumps(records, indent=2) + "\n")
    return model_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=sorted(CODECS))
    parser.add_argument(
        "--out", type=Path, required=True, help="the bot package to write (or add this game's model to)"
    )
    parser.add_argument("--timesteps", type=int, default=2_000_000, help="at most this many steps (default 2,000,000)")
    parser.add_argument("--minutes", type=float, default=10.0, help="at most this much wall time (default 10)")
    parser.add_argument("--opponents", default="greedy,random", help="built-in bots to train against")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=128, help="units in each of the two hidden layers")
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # one core, as the bot has on the ladder
    opponents = [o for o in args.opponents.split(",") if o]
    envs = DummyVecEnv([make_env(args.game, seat, o) for o in opponents for seat in (0, 1)])
    model = MaskablePPO(
        "MlpPolicy", envs, learning_rate=args.lr, n_steps=512, batch_size=256, n_epochs=4, gamma=1.0,
        gae_lambda=0.95, ent_coef=0.01, policy_kwargs={"net_arch": [args.hidden, args.hidden]},
        seed=args.seed, device="cpu", verbose=0,
    )  # fmt: skip
    start, cpu = time.monotonic(), time.process_time()
    print(f"training {args.game} against {', '.join(opponents)} for at most {args.minutes:g} minutes", flush=True)
    deadline = Deadline(args.minutes * 60)
    model.learn(total_timesteps=args.timesteps, callback=deadline)
    seconds, cpu_seconds = time.monotonic() - start, time.process_time() - cpu

    record = {
        "algorithm": "sb3-contrib MaskablePPO", "steps": int(model.num_timesteps), "games": len(deadline.rewards),
        "opponents": opponents, "seed": args.seed, "hidden": [args.hidden, args.hidden], "lr": args.lr,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu_seconds, 1),
    }  # fmt: skip
    model_path = write_package(args.out, args.game, Logits(model.policy).eval(), record)
    print(f"{args.game}: {model.num_timesteps} steps, {len(deadline.rewards)} games in {seconds:.0f} s "
          f"({cpu_seconds:.0f} s CPU); model {model_path} ({model_path.stat().st_size} bytes)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
