"""Do duplicate sets help the ladder? Per game and player count (issue 37,
decision 255): the games needed to tell two close bots apart, single games
against duplicate sets (one deal played in every seat rotation).

    nice -n 10 .venv/bin/python benchmarks/ladder_duplicate_sets.py [--sets 200] [--game G] [--players 2 --players 4] [--seed-base B]

The close pair is the built-in greedy bot against the same bot playing a
uniformly random legal move a tenth of the time (``weak-greedy``, as in
benchmarks/luck_variance.py); at 4 players the table is greedy,
weak-greedy, greedy, weak-greedy and the difference is entry 0 minus
entry 1. Each set is one deal (``derive(SEED_BASE, game, players, i)``,
``KeyedChance``) in all k rotations, the seats shifted as an event's
duplicate table shifts them (cardroom.tournament.schedule). "Single" is
the set's first rotation, cyclically the i-th (independent deals); the
set is the mean over its rotations. Games needed, single over sets:
``var(single) / (k * var(set mean))``, with a paired bootstrap 95%
interval. Plain rank points only (what the ladder's Elo uses); the
luck-adjusted figures are docs/luck.md's. Built-in bots in this process,
no sandbox.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from luck_variance import fmt, make, ratio_interval  # noqa: E402

from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament.seeds import KeyedChance, derive  # noqa: E402
from cardroom.tournament.standings import rank_points  # noqa: E402

SEED_BASE = 38_000  # seeds of their own: no other measurement plays them
FIELD = {2: ["greedy", "weak-greedy"], 4: ["greedy", "weak-greedy", "greedy", "weak-greedy"]}


def difference(game: str, entries: list[str], rotation: int, seed: int) -> float:
    """Entry 0's rank points minus entry 1's in one rotation of the deal."""
    k = len(entries)
    order = list(range(k))
    seats = order[rotation:] + order[:rotation]
    record = run_match(game, [make(entries[e], game) for e in seats], seed=seed, chance=KeyedChance(seed))
    points = rank_points(record.result.ranks)
    return float(points[seats.index(0)] - points[seats.index(1)])


def measure(game: str, players: int, sets: int) -> None:
    entries = FIELD[players]
    single, mean = [], []
    started = time.monotonic()
    for i in range(sets):
        seed = derive(SEED_BASE, game, players, i)
        diffs = [difference(game, entries, r, seed) for r in range(players)]
        single.append(diffs[i % players])
        mean.append(sum(diffs) / players)
    ratio, lo, hi = ratio_interval(single, mean, 1, players)
    print(
        f"{game} {players}p greedy v weak-greedy, {sets} sets: single {fmt(single)}, sets {fmt(mean)}; "
        f"games needed, single / sets: {ratio:.2f} (95% {lo:.2f}-{hi:.2f}); {time.monotonic() - started:.0f} s, "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> int:
    global SEED_BASE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="allegory and/or allegra (default both)")
    parser.add_argument("--players", action="append", type=int, choices=sorted(FIELD), help="default 2 and 4")
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--seed-base", type=int, default=SEED_BASE, help="another seed range, for a second sample")
    args = parser.parse_args()
    SEED_BASE = args.seed_base
    for game in args.game or ["allegory", "allegra"]:
        for players in args.players or sorted(FIELD):
            measure(game, players, args.sets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
