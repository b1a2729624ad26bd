"""Fits the tables of the luck value functions that have fitted parameters
(docs/luck.md, decision 184), once, on matches no measurement uses.

    .venv/bin/python benchmarks/luck_fit.py allegra [--matches 300]

Allegra (``allegra-area@2``): plays built-in greedy against itself and
against greedy with a random move a tenth of the time, on seeds
``derive(FIT_BASE, ...)``, a range the benchmarks never play
(benchmarks/luck_variance.py uses SEED_BASE 37000). First pass: at every
decision of every round, for each slot of each area, what the slot holds
(its face-up value, or face down) and how far the round has gone (the
fewest face-down cards any area still holds), against what it holds when
the round is scored (0 if its card went in a triple): ``final`` is the
mean per (progress, holding). Second pass: ``drawn`` and ``top``, how much
the active seat's round score differs from that estimate, per (progress,
the card it drew, or the discard's top at its turn): the slope of the
least-squares line of that difference on the card's value, per progress. Third pass, with those tables: ``spread``, the variance per progress of a seat's round score
around the value function's estimate, and ``round_var``, a whole round's
score variance per seat. Written to cardroom/luck/allegra-area-2.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from luck_variance import make  # noqa: E402

from cardroom.luck.allegra import MIN_COUNT, FittedAllegraValue, holding_key, progress  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament.seeds import derive  # noqa: E402
from engine.replay import iter_states  # noqa: E402

FIT_BASE = 36_000  # never played by a measurement
OUT = Path(__file__).resolve().parents[1] / "cardroom" / "luck" / "allegra-area-2.json"


def rounds_of(replay: dict):
    """Per round: (the states of its decisions, cloned; the state once scored)."""
    pending = []
    for _index, _event, state in iter_states(replay):
        if state.phase >= 2 and not state.is_terminal():
            pending.append(state.clone())
        elif pending:
            yield pending, state
            pending = []


def fit_allegra(matches: int) -> dict:
    replays = []
    for i in range(matches):
        names = ["greedy", "greedy"] if i % 2 == 0 else ["greedy", "weak-greedy"]
        replays.append(
            run_match("allegra", [make(n, "allegra") for n in names], seed=derive(FIT_BASE, "allegra", i)).replay
        )
    finals: dict[tuple[int, int], list[float]] = defaultdict(list)
    rounds: list[float] = []
    for replay in replays:
        for states, scored in rounds_of(replay):
            for state in states:
                prog = progress(state)
                for s in range(state.n):
                    for slot in state.lay.area[s]:
                        key = holding_key(state, slot)
                        if key is not None:
                            finals[(prog, key)].append(scored.val[slot] or 0)
            rounds.extend(scored.round_scores[-1])
    final = {f"{p}:{k}": statistics.mean(xs) for (p, k), xs in finals.items() if len(xs) >= MIN_COUNT}
    value = FittedAllegraValue({"final": final})
    # the active seat's residual by the card it may use (drawn, or the
    # discard's top at its turn)
    by_card: dict[str, dict[tuple[int, int], list[float]]] = {"drawn": defaultdict(list), "top": defaultdict(list)}
    by_prog: dict[str, dict[int, list[float]]] = {"drawn": defaultdict(list), "top": defaultdict(list)}
    for replay in replays:
        for states, scored in rounds_of(replay):
            for state in states:
                prog = progress(state)
                a = state.active
                if state.phase >= 4 and state.drawn is not None:
                    kind, card = "drawn", state.drawn
                elif state.phase == 3 and state.discard:
                    kind, card = "top", state.discard[-1]
                else:
                    continue
                r = scored.round_scores[-1][a] - value.round_estimate(state)[a]
                by_card[kind][(prog, card)].append(r)
                by_prog[kind][prog].append(r)
    # one slope per progress (least squares of the residual on the card's
    # value): a mean per (progress, card) would be mostly noise
    cards = {}
    for kind in ("drawn", "top"):
        slopes = {}
        for p in by_prog[kind]:
            pts = [(c, r) for (q, c), xs in by_card[kind].items() if q == p for r in xs]
            if len(pts) >= MIN_COUNT:
                slopes[str(p)] = statistics.linear_regression([c for c, _ in pts], [r for _, r in pts]).slope
        cards[kind] = slopes
    value = FittedAllegraValue({"final": final, **cards})
    residuals: dict[int, list[float]] = defaultdict(list)
    for replay in replays:
        for states, scored in rounds_of(replay):
            for state in states:
                for s, est in enumerate(value.round_estimate(state)):
                    residuals[progress(state)].append(scored.round_scores[-1][s] - est)
    return {
        **cards,
        "fitted_on": f"{matches} matches, greedy vs greedy and vs weak-greedy, seeds derive({FIT_BASE}, 'allegra', i)",
        "final": final,
        "spread": {str(p): statistics.variance(xs) for p, xs in residuals.items() if len(xs) >= MIN_COUNT},
        "round_var": statistics.variance(rounds),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=["allegra"])
    parser.add_argument("--matches", type=int, default=300)
    args = parser.parse_args()
    table = fit_allegra(args.matches)
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(table['final'])} cells, round variance {table['round_var']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
