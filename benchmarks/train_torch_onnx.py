"""The PyTorch recipe end to end (docs/train.md, issue 38): for each game,
train with research/train_torch.py (MaskablePPO, CPU, ``--minutes`` of wall
time, the two games one after the other or side by side with ``--parallel``;
or, with ``--recipe imitate``, research/imitate_torch.py: Allegra, imitating
builtin:ismcts with DAgger), export to ONNX into one bot package (the python-onnx starter's bot.py), then
play it against builtin:random and builtin:greedy in `cardroom tournament
GAME BOT OPPONENT --format duplicate --deals N` and report its lead in points
per game with the tournament's 95% interval (paired by deal). The target:
above 0 against greedy in at least one game at two players.

Run with a Python that has the training extra (torch, sb3-contrib, onnx,
onnxruntime; see docs/train.md) and, for the sandbox, as root (the bot runs
in the `python` runtime, which has ONNX Runtime):

    python benchmarks/train_torch_onnx.py --minutes 18 --parallel [--deals 30] [--work DIR]
    python benchmarks/train_torch_onnx.py --recipe imitate --games allegra [-- --rounds 3 --games 300]
    python benchmarks/train_torch_onnx.py --bot DIR      # only the tournaments, of a package trained before
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_vs_random import lead, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("allegory", "allegra")


def train(
    games: list[str], out: Path, minutes: float, seed: int, parallel: bool, recipe: str = "ppo", extra: tuple = ()
) -> dict[str, dict]:
    """Each game's model into ``out`` (through a folder of its own, so that
    side-by-side runs never write one training.json at once)."""
    started, load_before = time.monotonic(), load()
    runs = {}
    for game in games:
        if recipe == "imitate":
            argv = [sys.executable, str(ROOT / "research" / "imitate_torch.py"), game, "--out", str(out / f".{game}"),
                    "--seed", str(seed), *extra]  # fmt: skip
        else:
            argv = [sys.executable, str(ROOT / "research" / "train_torch.py"), game, "--out", str(out / f".{game}"),
                    "--minutes", str(minutes), "--seed", str(seed)]  # fmt: skip
        runs[game] = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not parallel:
            runs[game].wait()
    for game, run in runs.items():
        output, _ = run.communicate()
        if run.returncode != 0:
            sys.exit(f"training {game} failed:\n{output}")
    out.mkdir(parents=True, exist_ok=True)
    records = {}
    for game in games:
        part = out / f".{game}"
        for name in ("bot.py", "cardroom.toml", f"{game}.onnx"):
            shutil.copy(part / name, out / name)
        records |= json.loads((part / "training.json").read_text())
        shutil.rmtree(part)
    (out / "training.json").write_text(json.dumps(records, indent=2) + "\n")
    print(f"trained in {time.monotonic() - started:.0f} s of wall time, load average {load_before} -> {load()}")
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--minutes", type=float, default=10.0, help="training wall time per game")
    parser.add_argument("--parallel", action="store_true", help="train the games side by side (one core each)")
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the training seed")
    parser.add_argument(
        "--recipe", choices=("ppo", "imitate"), default="ppo",
        help="ppo: research/train_torch.py; imitate: research/imitate_torch.py (Allegra only; its options follow --)",
    )  # fmt: skip
    parser.add_argument("imitate_options", nargs="*", help="after --: options for research/imitate_torch.py")
    parser.add_argument("--bot", type=Path, help="play this package (trained before) instead of training")
    parser.add_argument("--work", type=Path, help="keep the bot and tournaments here (default: a temporary folder)")
    args = parser.parse_args()
    games = [g for g in args.games.split(",") if g]
    work = args.work or Path(tempfile.mkdtemp(prefix="cardroom-torch-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} cores, load average {load()}; sandbox: {os.environ.get('CARDROOM_SANDBOX', 'default')}")
    bot = args.bot or work / "bot"
    if args.bot is None:
        train(games, bot, args.minutes, args.seed, args.parallel, args.recipe, tuple(args.imitate_options))
    records = json.loads((bot / "training.json").read_text())
    reached = False
    for game in games:
        info = records[game]
        if "rounds" in info:  # the imitation recipe
            done = f"{len(info['rounds'])} rounds, {info['rounds'][-1]['positions']} positions"
        else:
            done = f"{info['steps']} steps, {info['games']} games"
        cpu = f" ({info['cpu_seconds']:.0f} s CPU)" if "cpu_seconds" in info else ""
        print(f"{game}: {done}, {info['seconds']:.0f} s{cpu}")
        for opponent in ("builtin:random", "builtin:greedy"):
            result = lead(game, bot, opponent, args.deals, 1, work / f"{game}-{opponent.split(':')[1]}")
            print(f"  vs {opponent}: {result['per_game']:.3f} points a game, lead {result['lead']:+.3f} "
                  f"[{result['low']:+.3f}, {result['high']:+.3f}] over {result['matches']} matches, "
                  f"{result['forfeits']} forfeits")  # fmt: skip
            reached |= opponent == "builtin:greedy" and result["low"] > 0
    print(
        f"load average {load()}; target (above 0 against greedy in a game): {'reached' if reached else 'not reached'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
