"""Environment steps per second, side by side in one run: cardroom's rules
engine played directly (random legal actions), the same games through the
PettingZoo AEC environments (``allegory_v1.env()``, ``allegra_v1.env()``,
wrappers included, random actions from the mask), and RLCard's environments
for card games of a similar size (Gin Rummy: draw and discard from a
52-card deck, 110 actions; UNO: 61 actions), all at 2 players with random
play.

RLCard is not a dependency of cardroom: it runs in another Python given by
``--rlcard-python`` (a scratch venv: ``python3 -m venv /tmp/rl &&
/tmp/rl/bin/pip install rlcard``). Run with a Python that has the research
extra:

    python benchmarks/env_speed.py [--seconds 5] [--rlcard-python /tmp/rl/bin/python]

A step is one decision an agent is asked for (an Allegory distribute is one
engine decision but one environment step per chip, so the engine's and the
environment's counts of a game differ there; games per second compare them
like for like).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

RLCARD = r"""
import json, sys, time
import numpy as np
import rlcard
name, seconds = sys.argv[1], float(sys.argv[2])
env = rlcard.make(name, config={"seed": 0})
rng = np.random.default_rng(0)
steps = games = 0
started = time.perf_counter()
while time.perf_counter() - started < seconds:
    state, player = env.reset()
    while not env.is_over():
        legal = list(state["legal_actions"].keys())
        state, player = env.step(legal[int(rng.integers(len(legal)))])
        steps += 1
    games += 1
elapsed = time.perf_counter() - started
print(json.dumps({"steps": steps, "games": games, "seconds": elapsed, "actions": env.num_actions,
                  "obs": list(env.state_shape[0]), "version": rlcard.__version__}))
"""


def engine_run(game_id: str, seconds: float) -> dict:
    from cardroom.bench import play_random_game
    from engine import new_game

    game = new_game(game_id, 2)
    rng = random.Random(0)
    steps = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        steps += play_random_game(game, rng)  # the same random playout as `cardroom bench`
        games += 1
    return {"steps": steps, "games": games, "seconds": time.perf_counter() - started}


def pettingzoo_run(game_id: str, seconds: float) -> dict:
    import importlib

    import numpy as np

    module = importlib.import_module(f"cardroom_sdk.envs.{game_id}_v1")
    env = module.env(num_players=2)
    rng = np.random.default_rng(0)
    steps = games = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        env.reset(seed=games)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
    codec = module.raw_env.codec
    return {"steps": steps, "games": games, "seconds": time.perf_counter() - started,
            "actions": codec.NUM_ACTIONS, "obs": [codec.OBS_SIZE]}  # fmt: skip


def rlcard_run(python: str, name: str, seconds: float) -> dict:
    done = subprocess.run([python, "-c", RLCARD, name, str(seconds)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"RLCard {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each row plays")
    parser.add_argument("--rlcard-python", help="a Python with rlcard installed (no RLCard rows without)")
    args = parser.parse_args()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for game_id in ("allegory", "allegra"):
        rows.append((f"{game_id}: cardroom engine", engine_run(game_id, args.seconds)))
        rows.append((f"{game_id}: PettingZoo {game_id}_v1.env()", pettingzoo_run(game_id, args.seconds)))
    if args.rlcard_python:
        for name in ("gin-rummy", "uno"):
            rows.append((f"{name}: RLCard env", rlcard_run(args.rlcard_python, name, args.seconds)))
    print(f"2 players, random play, {args.seconds:g} s a row, load average at the start {load_before}")
    print(f"{'':42} {'steps/s':>9} {'games/s':>8} {'steps/game':>10} {'actions':>8}  observation")
    for label, r in rows:
        shape = "x".join(map(str, r["obs"])) if "obs" in r else "(dicts)"
        actions = r.get("actions", "")
        print(f"{label:42} {r['steps'] / r['seconds']:9,.0f} {r['games'] / r['seconds']:8,.1f} "
              f"{r['steps'] / max(r['games'], 1):10.1f} {actions!s:>8}  {shape}")  # fmt: skip
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
