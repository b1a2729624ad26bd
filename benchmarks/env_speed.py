"""Environment steps per second, side by side in one run, with observations
(the array and the action mask of every decision): cardroom's PettingZoo
AEC environments (``allegory_v1.env()``, ``allegra_v1.env()``, wrappers
included), its Gymnasium single-seat environment (``SingleSeatEnv``, the
other seats played by a random policy), episodes of it many at a
call through ``gymnasium.make_vec`` (``SingleSeatVectorEnv``, 16 episodes), and its batched self-play
environment (``BatchedGames``, 64 games a call), both games at 2 and 4
players, beside PettingZoo's own classic card environments
``leduc_holdem_v4`` and ``texas_holdem_v4`` (RLCard under PettingZoo's
wrappers). Every row plays random legal actions.

``--before REV`` also plays the PettingZoo and Gymnasium rows with
``cardroom_sdk`` as it was at the git revision REV (the engine is this
checkout's), interleaved with the current rows, so that before and after
share the machine's load. Every cardroom row runs in a fresh process. On a
shared machine, ``--rounds N`` plays every row N times, interleaved, and
keeps each row's best (as ``timeit`` does: the least disturbed run).
Rows are timed in the process's CPU time (``time.process_time``), not the
wall clock: steps per CPU second, which the other processes of a shared
machine disturb far less than they disturb the wall clock.

RLCard's own environments for card games of a similar size (Gin Rummy: draw
and discard from a 52-card deck, 110 actions; UNO: 61 actions) are played in
another Python given by ``--rlcard-python``. Run with a Python that has the
research extra and PettingZoo's classic extra (``rlcard``, ``pygame``):

    python benchmarks/env_speed.py [--seconds 3] [--before REV] [--rlcard-python /tmp/rl/bin/python]

A step is one decision an agent is asked for (an Allegory distribute is one
engine decision but one environment step per chip); a Gymnasium step is one
decision of the learning seat (the opponents' decisions are played inside
it); a batched call of 64 games is 64 steps, a ``make_vec`` call of 16
episodes 16 steps less the episodes it only resets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH = 64
VECTOR = 16  # make_vec's episodes a call (64 stepped slower a step here: more than the caches hold)

RLCARD = r"""
import json, sys, time
import numpy as np
import rlcard
name, seconds = sys.argv[1], float(sys.argv[2])
env = rlcard.make(name, config={"seed": 0})
rng = np.random.default_rng(0)
steps = games = 0
started = time.process_time()
while time.process_time() - started < seconds:
    state, player = env.reset()
    while not env.is_over():
        legal = list(state["legal_actions"].keys())
        state, player = env.step(legal[int(rng.integers(len(legal)))])
        steps += 1
    games += 1
elapsed = time.process_time() - started
print(json.dumps({"steps": steps, "games": games, "seconds": elapsed, "actions": env.num_actions,
                  "obs": list(env.state_shape[0]), "version": rlcard.__version__}))
"""


def aec_run(env, seconds: float) -> dict:
    """Random legal play through a PettingZoo AEC environment, as PettingZoo's
    documentation loops: ``agent_iter``, ``last``, ``step``."""
    import numpy as np

    rng = np.random.default_rng(0)
    steps = games = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        # seeded once: RLCard's PettingZoo environments make a new RLCard game at every seeded reset
        env.reset(seed=0 if games == 0 else None)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
    return {"steps": steps, "games": games, "seconds": time.process_time() - started,
            "actions": int(env.action_space(env.possible_agents[0]).n),
            "obs": list(env.observation_space(env.possible_agents[0])["observation"].shape)}  # fmt: skip


def pettingzoo_run(game_id: str, n: int, seconds: float) -> dict:
    import importlib

    return aec_run(importlib.import_module(f"cardroom_sdk.envs.{game_id}_v1").env(num_players=n), seconds)


def random_opponent(_obs, legal, rng):
    """A uniformly random legal action (an Allegory distribute: each chip on
    a random Pool card)."""
    action = rng.choice(legal)
    if action["type"] != "distribute":
        return action
    chips: dict[str, int] = {}
    for name in rng.choices(action["cards"], k=action["total"]):
        chips[name] = chips.get(name, 0) + 1
    return {"type": "distribute", "chips": chips}


def gymnasium_run(game_id: str, n: int, seconds: float) -> dict:
    import numpy as np

    from cardroom_sdk.envs.gym import SingleSeatEnv

    env = SingleSeatEnv(game_id, num_players=n, opponents=random_opponent)
    rng = np.random.default_rng(0)
    steps = games = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        obs, _info = env.reset(seed=games)
        terminated = truncated = False
        while not (terminated or truncated):
            legal = np.flatnonzero(obs["action_mask"])
            obs, _reward, terminated, truncated, _info = env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
    return {"steps": steps, "games": games, "seconds": time.process_time() - started,
            "actions": int(env.action_space.n), "obs": list(env.observation_space["observation"].shape)}  # fmt: skip


def gymnasium_vector_run(game_id: str, n: int, seconds: float) -> dict:
    """``gymnasium.make_vec`` on the registered id (``SingleSeatVectorEnv``),
    ``VECTOR`` episodes a call, the opponents as in ``gymnasium_run``."""
    import gymnasium
    import numpy as np

    from cardroom_sdk.envs.gym import ENV_IDS

    envs = gymnasium.make_vec(ENV_IDS[game_id], num_envs=VECTOR, num_players=n, opponents=random_opponent)
    rng = np.random.default_rng(0)
    obs, _infos = envs.reset(seed=0)
    steps = ended_games = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        masks = obs["action_mask"]
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)  # uniform over each row's legal actions
        obs, _rewards, terminated, _truncated, _infos = envs.step(actions)
        steps += int(masks.any(axis=1).sum())  # a row that ended shows no mask: its next call only resets it
        ended_games += int(terminated.sum())
    return {"steps": steps, "games": ended_games, "seconds": time.process_time() - started,
            "actions": int(envs.single_action_space.n), "obs": [VECTOR, *envs.single_observation_space["observation"].shape]}  # fmt: skip


def batched_run(game_id: str, n: int, seconds: float) -> dict:
    import numpy as np

    from cardroom_sdk.envs.batched import BatchedGames

    games = BatchedGames(game_id, num_envs=BATCH, num_players=n)
    rng = np.random.default_rng(0)
    _obs, masks, _seats = games.reset(seed=0)
    steps = ended_games = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)  # uniform over each row's legal actions
        _obs, masks, _seats, _rewards, ended = games.step(actions)
        steps += BATCH
        ended_games += int(ended.sum())
    return {"steps": steps, "games": ended_games, "seconds": time.process_time() - started,
            "actions": games.codec.NUM_ACTIONS, "obs": [BATCH, games.codec.OBS_SIZE]}  # fmt: skip


def classic_run(name: str, seconds: float) -> dict:
    import importlib

    return aec_run(importlib.import_module(f"pettingzoo.classic.{name}").env(), seconds)


ROWS = {"pettingzoo": pettingzoo_run, "gymnasium": gymnasium_run, "gymnasium_vector": gymnasium_vector_run,
        "batched": batched_run}  # fmt: skip


def cardroom_row(kind: str, game_id: str, n: int, seconds: float, sdk_root: Path) -> dict:
    """One row in a fresh process, importing ``cardroom_sdk`` from
    ``sdk_root`` (this checkout, or an older revision's copy) and the engine
    from this checkout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(sdk_root), str(ROOT)])}
    command = [sys.executable, __file__, "--row", kind, game_id, str(n), "--seconds", str(seconds)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        sys.exit(f"{kind} {game_id} {n} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rlcard_run(python: str, name: str, seconds: float) -> dict:
    done = subprocess.run([python, "-c", RLCARD, name, str(seconds)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"RLCard {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sdk_at(revision: str, into: Path) -> Path:
    """``cardroom_sdk`` as it was at ``revision``, copied under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "cardroom_sdk"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"git archive {revision} failed: {archive.stderr.decode()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each row plays")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="the table sizes")
    parser.add_argument("--rounds", type=int, default=1, help="plays of every row (interleaved); the best is kept")
    parser.add_argument("--before", metavar="REV", help="also play cardroom_sdk at this git revision")
    parser.add_argument("--rlcard-python", help="a Python with rlcard installed (no RLCard rows without)")
    parser.add_argument("--row", nargs=3, metavar=("KIND", "GAME", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.row:  # one cardroom row, in this process (cardroom_row starts it)
        kind, game_id, n = args.row
        print(json.dumps(ROWS[kind](game_id, int(n), args.seconds)))
        return 0
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        old = sdk_at(args.before, Path(scratch)) if args.before else None
        plan = []  # (label, how to play the row once)
        for game_id in ("allegory", "allegra"):
            for n in args.players:
                for kind in ("pettingzoo", "gymnasium"):
                    if old:
                        plan.append((f"{game_id} {n}p {kind}, {args.before}", (kind, game_id, n, old)))
                    plan.append((f"{game_id} {n}p {kind}", (kind, game_id, n, ROOT)))
                plan.append((f"{game_id} {n}p gymnasium make_vec x{VECTOR}", ("gymnasium_vector", game_id, n, ROOT)))
                plan.append((f"{game_id} {n}p batched x{BATCH}", ("batched", game_id, n, ROOT)))
        for name in ("leduc_holdem_v4", "texas_holdem_v4"):
            plan.append((f"PettingZoo {name}", name))
        if args.rlcard_python:
            for name in ("gin-rummy", "uno"):
                plan.append((f"{name}: RLCard env", ("rlcard", name)))
        for _round in range(args.rounds):
            for label, how in plan:
                if isinstance(how, str):
                    r = classic_run(how, args.seconds)
                elif how[0] == "rlcard":
                    r = rlcard_run(args.rlcard_python, how[1], args.seconds)
                else:
                    r = cardroom_row(*how[:3], args.seconds, how[3])
                if label not in best or r["steps"] / r["seconds"] > best[label]["steps"] / best[label]["seconds"]:
                    best[label] = r
    rows = list(best.items())
    print(f"random play, {args.seconds:g} CPU s a row, best of {args.rounds}, load average at the start {load_before}")
    print(f"{'':44} {'steps/s':>9} {'games/s':>8} {'steps/game':>10} {'actions':>8}  observation")
    for label, r in rows:
        shape = "x".join(map(str, r["obs"])) if "obs" in r else "(dicts)"
        actions = r.get("actions", "")
        print(f"{label:44} {r['steps'] / r['seconds']:9,.0f} {r['games'] / r['seconds']:8,.1f} "
              f"{r['steps'] / max(r['games'], 1):10.1f} {actions!s:>8}  {shape}")  # fmt: skip
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
