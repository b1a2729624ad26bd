"""How fast cardroom_sdk.sample_world is, and how fast random playouts run
from a sampled world (what a search bot such as ISMCTS does in a loop).

    .venv/bin/python benchmarks/sdk_worlds.py [--games 40] [--seed 1] [--players 2 4]

For each game and player count it plays random games, takes each seat's
observation (with its history) at every decision, and times:

* ``sample_world`` over all those positions: mean, 99th percentile and the
  worst case (the construction draws no rejection, so the worst case is
  bounded by the size of the table; this measures it), and the three
  slowest positions timed again (the largest median of 30 runs: "again"),
  which tells a slow position from a preemption on a busy machine;
* random playouts to the end (with a clone of the world each time) from a
  sampled world, against the same playouts
  from the real state (``clone()``) in the same positions, taken in turns: the
  ratio says what a sampled world costs a playout, whatever the machine's
  load (the absolute rates on a shared, busy machine are noise); and a
  sample's mean time in playouts ("sample/playout").
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402
from cardroom_sdk import sample_world  # noqa: E402


def random_playout(state, rng):
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
        else:
            seat = state.to_act()[0]
            state.apply(seat, state.random_action(seat, rng))


def positions(game, n, games, seed):
    rng = random.Random(seed)
    options = {"unique_morals": False} if game == "allegory" else None
    for _ in range(games):
        g = engine.new_game(game, n, options)
        state = g.new_initial_state()
        histories = {s: [] for s in range(n)}
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_chance(state.sample_chance(rng))
                continue
            seat = rng.choice(state.to_act())
            obs = state.observation(seat)
            yield state, seat, obs, histories[seat]
            histories[seat].append(obs)
            state.apply(seat, state.random_action(seat, rng))


def measure(game, n, games, seed):
    rng = random.Random(seed + 1)
    samples = []
    slowest: list = []
    real_time = world_time = 0.0
    playouts = 0
    for i, (state, _seat, obs, history) in enumerate(positions(game, n, games, seed)):
        t0 = time.perf_counter()
        world = sample_world(obs, rng, history)
        took = time.perf_counter() - t0
        samples.append(took)
        slowest.append((took, obs, list(history)))
        slowest = sorted(slowest, key=lambda x: -x[0])[:3]
        if i % 25 == 0:  # playouts from a spread of positions, in turns
            for _ in range(4):
                t0 = time.perf_counter()
                random_playout(world.clone(), rng)
                t1 = time.perf_counter()
                random_playout(state.clone(), rng)
                t2 = time.perf_counter()
                world_time += t1 - t0
                real_time += t2 - t1
                playouts += 1
    samples.sort()
    # the slowest positions again: a worst case that is the machine's (a
    # preemption) does not come back, one that is the position's does
    again = []
    for _took, obs, history in slowest:
        runs = []
        for _ in range(30):
            t0 = time.perf_counter()
            sample_world(obs, rng, history)
            runs.append(time.perf_counter() - t0)
        again.append(statistics.median(runs))
    return {
        "positions": len(samples),
        "mean_us": 1e6 * statistics.fmean(samples),
        "p99_us": 1e6 * samples[int(0.99 * (len(samples) - 1))],
        "worst_us": 1e6 * samples[-1],
        "worst_again_us": 1e6 * max(again),
        "playouts": playouts,
        "world_playouts_per_s": playouts / world_time,
        "real_playouts_per_s": playouts / real_time,
        "ratio": world_time / real_time,
        "sample_per_playout": statistics.fmean(samples) / (world_time / playouts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per table (default 40)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="table sizes (default 2 4)")
    args = parser.parse_args()
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}  (cpus: {os.cpu_count()})")
    print(
        f"{'table':<12} {'positions':>9} {'sample mean':>11} {'p99':>8} {'worst':>8} {'again':>7} "
        f"{'playouts/s world':>16} {'real':>8} {'world/real':>10} {'sample/playout':>14}"
    )
    for game in ("allegory", "allegra"):
        for n in args.players:
            r = measure(game, n, args.games, args.seed)
            print(
                f"{game + ' ' + str(n) + 'p':<12} {r['positions']:>9} {r['mean_us']:>9.0f}us {r['p99_us']:>6.0f}us "
                f"{r['worst_us']:>6.0f}us {r['worst_again_us']:>5.0f}us {r['world_playouts_per_s']:>16.1f} "
                f"{r['real_playouts_per_s']:>8.1f} {r['ratio']:>9.2f}x {r['sample_per_playout']:>13.2f}x"
            )
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
