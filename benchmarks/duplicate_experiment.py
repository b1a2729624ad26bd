"""The duplicate experiment (docs/tournaments.md): how many games does it take
to tell the built-in greedy bot from the random bot at 95% confidence, with
duplicate deals versus plain random seating?

    .venv/bin/python benchmarks/duplicate_experiment.py [--runs 20] [--max-games 400] [--game allegory --game allegra]

The field is four entries at one table of 4: greedy and three random bots
(random-1 is the one compared). Points per game come from ranks (the
standings' table: 1, 2/3, 1/3, 0).

* duplicate: one deal at a time, played in all four seat rotations with the
  deal's chance events (``KeyedChance``); after each deal, the paired-by-deal
  95% t-interval of greedy minus random-1;
* plain: four games at a time, each with its own seed and the entries seated
  in a random order; after each four, Welch's 95% interval of greedy minus
  random-1 over the per-game points.

Each design stops at the first check (from 8 games on) whose interval
excludes 0 and records the games played (``max-games`` when it never does).
Both designs are checked after the same numbers of games (multiples of 4).
Run r uses seeds derived from r, so the experiment repeats exactly.

Greedy is so much stronger than random that both designs often tell them
apart at the first check; so the script also plays one long sample of each
design (``sample-games``) and reports, from its variance, how many games each
needs for the expected 95% half-width to fall below the measured difference:
plain ``1.96^2 (var_greedy + var_random) / diff^2``, duplicate
``4 * 1.96^2 var_deal / diff^2`` (a deal is four games).

Matches run in this process, through the engine and the ordinary runner with
the built-in bots in-process: no sandbox, no bot processes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cardroom.players import InProcessPlayer  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament import stats  # noqa: E402
from cardroom.tournament.seeds import KeyedChance, derive  # noqa: E402
from cardroom.tournament.standings import rank_points  # noqa: E402

ENTRIES = ["greedy", "random", "random", "random"]  # entry 0 = greedy, entry 1 = random-1
TABLE = 4
FIRST_CHECK = 8


def players_for(game: str, seats: list[int]):
    from bots import builtin_chooser

    out = []
    for e in seats:
        name = ENTRIES[e]
        out.append(InProcessPlayer(name, None if name == "random" else builtin_chooser(name, game)))
    return out


def play(game: str, seats: list[int], seed: int, duplicate: bool) -> dict[int, float]:
    """Points of each entry in one game."""
    record = run_match(game, players_for(game, seats), seed=seed, chance=KeyedChance(seed) if duplicate else None)
    pts = rank_points(record.result.ranks)
    return {e: float(pts[s]) for s, e in enumerate(seats)}


def duplicate_run(game: str, run: int, max_games: int, stop: bool = True) -> tuple[int, list[float]]:
    diffs: list[float] = []
    games = 0
    deal = 0
    while games < max_games:
        seed = derive(run, "experiment", game, "duplicate", deal)
        totals = {0: 0.0, 1: 0.0}
        for rotation in range(TABLE):
            seats = [(s + rotation) % TABLE for s in range(TABLE)]
            pts = play(game, seats, seed, duplicate=True)
            totals[0] += pts[0]
            totals[1] += pts[1]
        diffs.append((totals[0] - totals[1]) / TABLE)
        games += TABLE
        deal += 1
        if stop and games >= FIRST_CHECK and stats.paired_interval(diffs).excludes_zero():
            return games, diffs
    return max_games, diffs


def plain_run(game: str, run: int, max_games: int, stop: bool = True) -> tuple[int, list[float], list[float]]:
    greedy: list[float] = []
    rand: list[float] = []
    rng = random.Random(derive(run, "experiment", game, "seating"))
    games = 0
    while games < max_games:
        for _ in range(TABLE):
            seats = list(range(TABLE))
            rng.shuffle(seats)
            pts = play(game, seats, derive(run, "experiment", game, "plain", games), duplicate=False)
            greedy.append(pts[0])
            rand.append(pts[1])
            games += 1
        if stop and games >= FIRST_CHECK and stats.welch_interval(greedy, rand).excludes_zero():
            return games, greedy, rand
    return max_games, greedy, rand


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--max-games", type=int, default=400)
    parser.add_argument("--sample-games", type=int, default=400, help="games of each design in the long sample")
    parser.add_argument("--game", action="append", help="allegory and/or allegra (default both)")
    args = parser.parse_args()
    for game in args.game or ["allegory", "allegra"]:
        started = time.monotonic()
        dup, plain = [], []
        for run in range(args.runs):
            dup.append(duplicate_run(game, run, args.max_games)[0])
            plain.append(plain_run(game, run, args.max_games)[0])
            print(f"{game} run {run + 1}: duplicate {dup[-1]} games, plain {plain[-1]} games", flush=True)
        md, mp = statistics.median(dup), statistics.median(plain)
        print(
            f"{game}: games to tell greedy from random at 95% over {args.runs} runs: "
            f"duplicate median {md:g} (mean {statistics.mean(dup):.1f}, range {min(dup)}-{max(dup)}), "
            f"plain median {mp:g} (mean {statistics.mean(plain):.1f}, range {min(plain)}-{max(plain)}); "
            f"ratio plain/duplicate {mp / md:.2f} (of the means {statistics.mean(plain) / statistics.mean(dup):.2f})",
            flush=True,
        )
        # From one long sample of each design: the games after which the
        # expected 95% half-width equals the measured difference.
        _g, diffs = duplicate_run(game, 10_000, args.sample_games, stop=False)
        _g, greedy, rand = plain_run(game, 10_000, args.sample_games, stop=False)
        z2 = 1.96**2
        mu_d, var_d = statistics.mean(diffs), statistics.variance(diffs)
        mu_p = statistics.mean(greedy) - statistics.mean(rand)
        var_p = statistics.variance(greedy) + statistics.variance(rand)
        need_d = TABLE * z2 * var_d / mu_d**2
        need_p = z2 * var_p / mu_p**2
        print(
            f"{game}: from {args.sample_games} games of each: difference {mu_d:.3f} (duplicate) / {mu_p:.3f} (plain) "
            f"points per game; games needed for a 95% half-width below it: duplicate {need_d:.1f}, plain {need_p:.1f}, "
            f"ratio {need_p / need_d:.2f}; {time.monotonic() - started:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
