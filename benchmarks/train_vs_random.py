"""Does research/train.py learn? For each game: train with the defaults (time
and load average recorded), export, then play the exported bot against
builtin:random and builtin:greedy in `cardroom tournament GAME BOT OPPONENT
--format duplicate --deals 30` and report its lead in points per game with
the tournament's 95% interval (paired by deal). The target (issue 23): the
interval against random is above 0 in both games.

Run with a Python that has the research extra (and, for the sandbox, as
root; the exported bot needs the `python` runtime's numpy):

    python benchmarks/train_vs_random.py [--games allegory,allegra] [--deals 30] [--work DIR]

Exits non-zero when a lead against random is not above 0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARDROOM = [sys.executable, "-m", "cardroom"]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def train(game: str, out: Path, seed: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before, started = load(), time.monotonic()
    done = subprocess.run([sys.executable, ROOT / "research" / "train.py", game, "--out", out, "--seed", str(seed)],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"training {game} failed:\n{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    info = json.loads((out / "training.json").read_text())
    return {
        "episodes": info["episodes"],
        "wall_s": time.monotonic() - started,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "load": f"{load_before} -> {load()}",
    }


def lead(game: str, bot: Path, opponent: str, deals: int, seed: int, out: Path) -> dict:
    argv = [*CARDROOM, "tournament", game, str(bot), opponent, "--format", "duplicate", "--deals", str(deals),
            "--seed", str(seed), "--out", str(out)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"the tournament failed:\n{done.stdout}\n{done.stderr}")
    standings = json.loads((out / "standings.json").read_text())
    (difference,) = standings["differences"]
    ci = difference["ci95"]
    sign = 1 if difference["a"] == 0 else -1  # entry 0 is the trained bot
    low, high = sorted((sign * ci["low"], sign * ci["high"]))
    bot_row = next(row for row in standings["standings"] if row["entry"] == 0)
    return {"lead": sign * ci["estimate"], "low": low, "high": high, "forfeits": bot_row["forfeits"],
            "matches": standings["matches_played"], "per_game": bot_row["points_per_match"]}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="allegory,allegra")
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the training seed")
    parser.add_argument("--work", type=Path, help="keep the bots and tournaments here (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cardroom-train-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} cores, load average {load()}; sandbox: {os.environ.get('CARDROOM_SANDBOX', 'default')}")
    failed = False
    for game in args.games.split(","):
        bot = work / f"{game}-bot"
        shutil.rmtree(bot, ignore_errors=True)
        t = train(game, bot, args.seed)
        print(f"{game}: trained on {t['episodes']} games in {t['wall_s']:.0f} s wall, {t['cpu_s']:.0f} s CPU "
              f"(load average {t['load']})")  # fmt: skip
        for opponent in ("builtin:random", "builtin:greedy"):
            out = work / f"{game}-vs-{opponent.split(':')[1]}"
            shutil.rmtree(out, ignore_errors=True)
            r = lead(game, bot, opponent, args.deals, seed=1, out=out)
            verdict = "above 0" if r["low"] > 0 else "NOT above 0"
            print(f"  vs {opponent}: {r['matches']} matches, {r['per_game']:.3f} points a game, lead {r['lead']:+.3f} "
                  f"[{r['low']:+.3f}, {r['high']:+.3f}] ({verdict}), forfeits {r['forfeits']}")  # fmt: skip
            if opponent == "builtin:random" and (r["low"] <= 0 or r["forfeits"]):
                failed = True
    print(f"load average at the end {load()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
