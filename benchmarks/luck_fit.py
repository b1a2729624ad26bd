"""Fits the tables of the luck value functions that have fitted parameters
(docs/luck.md, decision 184), once, on matches no measurement uses.

    .venv/bin/python benchmarks/luck_fit.py allegra [--matches 300]
    .venv/bin/python benchmarks/luck_fit.py allegra-outcome [--matches 600]
    .venv/bin/python benchmarks/luck_fit.py allegra-net-play --first I --matches K [--search] --data FILE
    PYTHON-WITH-NUMPY benchmarks/luck_fit.py allegra-net --data FILE... [--hidden 32 --epochs 5 --td-epochs 3]

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

Allegra (``allegra-area@3``): ``allegra-area@2``'s tables, unchanged, and
per round and progress (``outcome_bucket``) the two weights of a logistic
model of who finishes above whom, on the differences of score so far and
of the round's expected score, fitted by maximum likelihood (Newton's
method: two parameters a bucket; no array library is installed here) on
every state of matches of greedy against greedy and against weak greedy,
seeds ``derive(FIT_BASE, 'allegra-outcome', i)``. Written to
cardroom/luck/allegra-area-3.json.

Allegra (``allegra-net@1``, decision 276): ``allegra-net-play`` plays
matches of greedy-family play (``NET_PLAY``: greedy, greedy with a random
move 5%, 10% or 20% of the time, at 2 to 4 players; ``--search``:
``NET_SEARCH_PLAY``, the search bots at 20 and 40 iterations) on seeds
``derive(FIT_BASE, 'allegra-net', i)`` and writes, for every state after an
event, the network's inputs (cardroom.luck.kernel.seat_inputs) and the
result; ``allegra-net`` fits the network on those files (numpy, which the
product does not need: run it with any Python that has numpy, e.g. a venv
of its own) and writes cardroom/luck/allegra-net-1.json. The weights of
record: matches 0-8899 of the first and 100000-100199 of the second
(``--first``, ``--matches``), fitted with the defaults of ``allegra-net``.
Allegory (``allegory-net@1``; needs numpy and scikit-learn, which the
product does not: run it with a Python that has them and this project's
dependencies, e.g. a venv of your own): plays matches of greedy-family play
(greedy, greedy with a uniformly random legal move a fraction X of the time
for several X, and a few of the built-in search with small budgets) at 2, 3
and 4 players, seeds ``derive(FIT_BASE, 'allegory-net', i)``; every state
after every event (the states the estimator and the action term evaluate
``V`` on are states of such play) gives, for each ordered pair of seats, the
features ``cardroom.luck.kernel`` computes and whether the first finished
above the second (a tie counts once each way). A one-hidden-layer network
(``--hidden`` units) is fitted to those by scikit-learn's MLPClassifier on
standardised inputs, a tenth of the matches held out to report its log
loss beside a constant ½'s; the
standardisation is folded into the weights, written to
cardroom/luck/allegory-net-1.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from luck_variance import make  # noqa: E402

from cardroom.luck.allegra import (  # noqa: E402
    MIN_COUNT,
    EnderAllegraValue,
    FittedAllegraValue,
    OutcomeAllegraValue,
    holding_key,
    outcome_bucket,
    outcome_features,
    progress,
    raw_estimates,
)
from cardroom.luck.estimator import rank_points  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament.seeds import derive  # noqa: E402
from engine.replay import iter_states  # noqa: E402

FIT_BASE = 36_000  # never played by a measurement
OUT = Path(__file__).resolve().parents[1] / "cardroom" / "luck" / "allegra-area-2.json"
OUT_OUTCOME = OUT.with_name("allegra-area-3.json")
OUT_ENDER = OUT.with_name("allegra-ender-1.json")
ENDER_SLOPES = [0.1 * k for k in range(0, 41)]  # the grid the ender model is chosen on
RIDGE = 1e-3  # keeps Newton's steps finite where a bucket's rows barely vary


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


def logistic_fit(rows: list[tuple[float, float, float]], iterations: int = 30) -> tuple[float, float]:
    """Maximum-likelihood ``(a, b)`` of ``P(y) = σ(a·x1 + b·x2)`` (no
    intercept: the model is symmetric between the seats) over rows
    ``(x1, x2, y)``, y in [0, 1] (a tie is 0.5), by Newton's method."""
    import math

    a = b = 0.0
    for _ in range(iterations):
        g1 = g2 = 0.0
        h11, h12, h22 = RIDGE, 0.0, RIDGE
        for x1, x2, y in rows:
            z = a * x1 + b * x2
            p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            r = y - p
            w = p * (1.0 - p)
            g1 += r * x1
            g2 += r * x2
            h11 += w * x1 * x1
            h12 += w * x1 * x2
            h22 += w * x2 * x2
        g1 -= RIDGE * a
        g2 -= RIDGE * b
        det = h11 * h22 - h12 * h12
        da = (h22 * g1 - h12 * g2) / det
        db = (h11 * g2 - h12 * g1) / det
        a += da
        b += db
        if abs(da) + abs(db) < 1e-9:
            break
    return a, b


def fit_allegra_outcome(matches: int) -> dict:
    table = json.loads(OUT.read_text(encoding="utf-8"))
    value = OutcomeAllegraValue({**table, "outcome": {}})  # its features; the weights are what is fitted
    rows: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for i in range(matches):
        names = ["greedy", "greedy"] if i % 2 == 0 else ["greedy", "weak-greedy"]
        replay = run_match(
            "allegra", [make(n, "allegra") for n in names], seed=derive(FIT_BASE, "allegra-outcome", i)
        ).replay
        points = rank_points(replay["result"]["ranks"])
        for _index, _event, state in iter_states(replay):
            if state.is_terminal():
                continue
            banked, est = outcome_features(value, state)
            key = outcome_bucket(state)
            for s in range(state.n):
                for o in range(s + 1, state.n):
                    y = 1.0 if points[s] > points[o] else 0.0 if points[s] < points[o] else 0.5
                    rows[key].append((banked[o] - banked[s], est[o] - est[s], y))
    outcome = {key: logistic_fit(xs) for key, xs in sorted(rows.items()) if len(xs) >= MIN_COUNT}
    return {
        **table,
        "fitted_on": table["fitted_on"]
        + f"; outcome: {matches} matches, greedy vs greedy and vs weak-greedy, seeds derive({FIT_BASE}, 'allegra-outcome', i)",
        "outcome": {key: [round(a, 6), round(b, 6)] for key, (a, b) in outcome.items()},
        "outcome_rows": {key: len(xs) for key, xs in sorted(rows.items())},
    }


def fit_allegra_ender(matches: int) -> dict:
    """``allegra-ender@1``'s constants: per progress, the variance of the
    round's raw-score difference between two seats around
    ``raw_estimates``' difference; the variance of a whole round's scored
    difference; and the ender model's slope, the most likely on a grid."""
    diffs: dict[int, list[tuple[float, float]]] = defaultdict(list)
    levels: dict[int, list[tuple[float, float]]] = defaultdict(list)
    scored: list[float] = []
    ender_rows: list[tuple[list[int], int]] = []
    for i in range(matches):
        names = ["greedy", "greedy"] if i % 2 == 0 else ["greedy", "weak-greedy"]
        replay = run_match(
            "allegra", [make(n, "allegra") for n in names], seed=derive(FIT_BASE, "allegra-ender", i)
        ).replay
        for states, final in rounds_of(replay):
            raw = final.raw_scores[-1]
            ender = final.enders[-1]
            n = final.n
            for s in range(n):
                for o in range(s + 1, n):
                    scored.append(final.round_scores[-1][s] - final.round_scores[-1][o])
            for state in states:
                est, fds = raw_estimates(state)
                prog = min(fds)
                for s in range(n):
                    levels[prog].append((est[s], raw[s]))
                    for o in range(s + 1, n):
                        diffs[prog].append((est[s] - est[o], raw[s] - raw[o]))
                if state.ender is None and ender is not None:
                    ender_rows.append((fds, ender))

    def loglik(slope: float) -> float:
        value = EnderAllegraValue({"raw": {"0": [1, 1, 0, 1]}, "round_var": 1.0, "ender_slope": slope})
        total = 0.0
        for fds, ender in ender_rows:
            total += math.log(max(value.ender_weights(_NoEnder(len(fds)), fds)[ender], 1e-12))
        return total

    slope = max(ENDER_SLOPES, key=loglik)
    return {
        "fitted_on": f"{matches} matches, greedy vs greedy and vs weak-greedy, seeds derive({FIT_BASE}, 'allegra-ender', i)",
        "raw": {str(p): _raw_row(diffs[p], levels[p]) for p in sorted(diffs) if len(diffs[p]) >= MIN_COUNT},
        "round_var": round(statistics.variance(scored), 4),
        "ender_slope": slope,
        "rows": {"raw": {str(p): len(xs) for p, xs in sorted(diffs.items())}, "ender": len(ender_rows)},
    }


def _raw_row(diffs: list[tuple[float, float]], levels: list[tuple[float, float]]) -> list[float]:
    """One progress's row: the least-squares slope of the final raw
    difference on the estimated one through 0 (the seats are exchangeable),
    the variance around it, and the line of the final raw score on the
    estimate (intercept, slope)."""
    spread = sum(x * x for x, _ in diffs)
    beta = sum(x * y for x, y in diffs) / spread if spread > 1e-9 else 0.0  # before any card is seen
    var = statistics.mean([(y - beta * x) ** 2 for x, y in diffs])
    xs = [x for x, _ in levels]
    if max(xs) - min(xs) < 1e-9:
        return [round(beta, 6), round(var, 4), round(statistics.mean([y for _, y in levels]), 4), 0.0]
    line = statistics.linear_regression(xs, [y for _, y in levels])
    return [round(beta, 6), round(var, 4), round(line.intercept, 4), round(line.slope, 6)]


class _NoEnder:
    """What ``ender_weights`` reads of a state whose ender is not known yet."""

    ender = None

    def __init__(self, n: int) -> None:
        self.n = n


# allegra-net@1's training play: (share of the matches, seats). "weak-greedy-X":
# greedy playing a uniformly random legal move a fraction X of the time.
NET_PLAY = (
    (6, ("greedy", "greedy")),
    (3, ("greedy", "weak-greedy-0.05")),
    (6, ("greedy", "weak-greedy-0.1")),
    (3, ("greedy", "weak-greedy-0.2")),
    (2, ("weak-greedy-0.1", "weak-greedy-0.1")),
    (1, ("greedy", "greedy", "greedy")),
    (1, ("greedy", "weak-greedy-0.1", "greedy", "weak-greedy-0.1")),
)
NET_SEARCH_PLAY = ((1, ("ismcts-40", "ismcts-20")), (1, ("greedy", "ismcts-20")))
NET_OUT = OUT.with_name("allegra-net-1.json")


def net_player(name: str):
    if name.startswith("weak-greedy-"):
        from luck_variance import WeakGreedy

        return WeakGreedy("allegra", float(name.rsplit("-", 1)[1]))
    return make(name, "allegra")


def net_seats(play, i: int) -> list[str]:
    """The seats of the i-th training match: the mix by its shares, seats rotated."""
    total = sum(w for w, _ in play)
    k = i % total
    chosen = play[0][1]
    for w, seats in play:
        chosen = seats
        if k < w:
            break
        k -= w
    r = (i // total) % len(chosen)
    return list(chosen[r:] + chosen[:r])


def collect_allegra_net(first: int, matches: int, search: bool, out: Path) -> None:
    """Every state of ``matches`` training matches (seeds ``derive(FIT_BASE,
    'allegra-net', i)`` from ``first``): per pair of seats, the network's
    inputs and whether the first finished above the second (½ a tie).
    One JSON line a match."""
    from cardroom.luck.kernel import seat_inputs

    play = NET_SEARCH_PLAY if search else NET_PLAY
    with out.open("w") as f:
        for i in range(first, first + matches):
            names = net_seats(play, i)
            replay = run_match(
                "allegra", [net_player(n) for n in names], seed=derive(FIT_BASE, "allegra-net", i)
            ).replay
            points = rank_points(replay["result"]["ranks"])
            rows = []
            for _index, _event, state in iter_states(replay):
                if state.is_terminal():
                    continue
                seats, context = seat_inputs(state)
                totals = [float(t) for t in state.totals]
                rows.append([seats, context, totals])
            f.write(json.dumps({"i": i, "names": names, "points": points, "states": rows}) + "\n")
            f.flush()


def load_net_rows(paths: list[Path]):
    """The training rows of the collected matches, as numpy arrays: per pair
    of seats (both orders are the same row: the model is antisymmetric),
    the first seat's inputs, the second's, the state's, the score gap
    (second minus first, over 40), whether the first finished above the
    second (½ a tie), the match's index, and the rounds still to deal at
    the end of the state's round with the gap then (-1 in the last
    round)."""
    import numpy as np

    cache = paths[0].with_name("allegra-net-rows-" + "-".join(p.stem for p in paths) + ".npz")
    if cache.exists():
        got = np.load(cache)
        return tuple(got[k] for k in ("own", "other", "ctx", "gap", "y", "match", "later", "end_gap", "pairs"))
    own, other, ctx, gap, y, match, later, end_gap, pairs = [], [], [], [], [], [], [], [], []
    for path in paths:
        with path.open() as f:
            for line in f:
                m = json.loads(line)
                pts = m["points"]
                states = m["states"]
                # the end of each state's round: the next state between rounds
                ends: list[tuple[float, list[float]] | None] = [None] * len(states)
                upcoming = None
                for k in range(len(states) - 1, -1, -1):
                    _seats, context, totals = states[k]
                    ends[k] = upcoming
                    if context[2] == 1.0:  # between rounds: the round before it ended here
                        upcoming = (context[0] * 2.0, totals)
                for (seats, context, totals), end in zip(states, ends):
                    n = len(seats)
                    for s in range(n):
                        for o in range(s + 1, n):
                            own.append(seats[s])
                            other.append(seats[o])
                            ctx.append(context)
                            gap.append((totals[o] - totals[s]) / 40.0)
                            y.append(1.0 if pts[s] > pts[o] else 0.0 if pts[s] < pts[o] else 0.5)
                            match.append(m["i"])
                            pairs.append(n * (n - 1) // 2)
                            if end is None or context[2] == 1.0:
                                later.append(-1)
                                end_gap.append(0.0)
                            else:
                                later.append(int(round(end[0])))
                                end_gap.append((end[1][o] - end[1][s]) / 40.0)
    f64 = np.float64
    arrays = {
        "own": np.array(own, f64), "other": np.array(other, f64), "ctx": np.array(ctx, f64), "gap": np.array(gap, f64),
        "y": np.array(y, f64), "match": np.array(match), "later": np.array(later), "end_gap": np.array(end_gap, f64),
        "pairs": np.array(pairs),
    }  # fmt: skip
    np.savez(cache, **arrays)
    return tuple(arrays.values())


def between_rounds_slopes(later, end_gap, gap, y, ctx) -> dict[int, float]:
    """Per number of rounds still to deal, the slope ``a`` of ``P(first
    above second) = σ(a · gap)`` over the states between rounds, by
    maximum likelihood (on a fine grid: one parameter)."""
    import numpy as np

    out = {}
    for k in sorted({int(x) for x in later if x >= 0}):
        sel = (ctx[:, 2] == 1.0) & (np.round(ctx[:, 0] * 2.0) == k)
        g, t = gap[sel], y[sel]
        grid = np.linspace(0.0, 20.0, 801)
        ll = [float(np.sum(t * -np.logaddexp(0, -a * g) + (1 - t) * -np.logaddexp(0, a * g))) for a in grid]
        out[k] = float(grid[int(np.argmax(ll))])
    return out


def fit_allegra_net(paths: list[Path], hidden: int, epochs: int, td_lambda: float, td_epochs: int) -> dict:
    """``allegra-net@1``'s weights: ``σ(g(s, o) − g(o, s))`` (cardroom.luck.kernel.NetModel)
    fitted by Adam on the log loss, on every state of the collected
    matches, a tenth of the matches held out to say how well it predicts.
    First to the outcome (in a round before the last, to the chance of
    finishing above given the scores once the round is over: the same
    expectation, without the later rounds' chance), stopping at the epoch
    best on the held-out matches; then, ``td_epochs`` more, to the λ-return
    of the network's own values along each match (TD(λ)): what the luck
    estimator needs is a ``V`` that does not move where the play's outcome
    does not, and the next state's value says that with far less noise
    than the outcome."""
    import numpy as np

    a_s, a_o, ctx, d, outcome, match, later, end_gap, pairs = load_net_rows(paths)
    slopes = between_rounds_slopes(later, end_gap, d, outcome, ctx)
    y = outcome.copy()
    for k, a in slopes.items():
        sel = later == k
        y[sel] = 1.0 / (1.0 + np.exp(-a * end_gap[sel]))
    print(f"{len(y)} rows; between rounds, slope by rounds to deal: {slopes}", flush=True)
    rng = np.random.default_rng(FIT_BASE)
    held = (match * 2654435761 % 10) == 0  # a tenth of the matches, by index
    tr, va = np.where(~held)[0], np.where(held)[0]
    fs, fc = a_s.shape[1], ctx.shape[1]
    p = {
        "gap": rng.normal(0, 0.5, hidden), "own": rng.normal(0, 0.3, (hidden, fs)),
        "other": rng.normal(0, 0.3, (hidden, fs)), "context": rng.normal(0, 0.3, (hidden, fc)),
        "bias": np.zeros(hidden), "out": rng.normal(0, 0.3, hidden),
    }  # fmt: skip

    def forward(p, idx):
        base = ctx[idx] @ p["context"].T + p["bias"]
        u1 = np.tanh(np.outer(d[idx], p["gap"]) + a_s[idx] @ p["own"].T + a_o[idx] @ p["other"].T + base)
        u2 = np.tanh(np.outer(-d[idx], p["gap"]) + a_o[idx] @ p["own"].T + a_s[idx] @ p["other"].T + base)
        z = (u1 - u2) @ p["out"]
        return u1, u2, 1.0 / (1.0 + np.exp(-z))

    def held_out(p):
        q = np.clip(forward(p, va)[2], 1e-9, 1 - 1e-9)
        t = outcome[va]
        return float(-np.mean(t * np.log(q) + (1 - t) * np.log(1 - q))), float(np.mean((q - t) ** 2))

    def train(p, target, epochs, lr, keep_best):
        m1 = {k: np.zeros_like(v) for k, v in p.items()}
        m2 = {k: np.zeros_like(v) for k, v in p.items()}
        best = (math.inf, p, -1, math.inf)
        step, batch = 0, 4096
        for epoch in range(epochs):
            order = rng.permutation(tr)
            for k in range(0, len(order), batch):
                idx = order[k : k + batch]
                u1, u2, q = forward(p, idx)
                dz = (q - target[idx]) / len(idx)
                dpre1 = np.outer(dz, p["out"]) * (1 - u1 * u1)
                dpre2 = -np.outer(dz, p["out"]) * (1 - u2 * u2)
                grads = {
                    "out": (u1 - u2).T @ dz,
                    "gap": dpre1.T @ d[idx] - dpre2.T @ d[idx],
                    "own": dpre1.T @ a_s[idx] + dpre2.T @ a_o[idx],
                    "other": dpre1.T @ a_o[idx] + dpre2.T @ a_s[idx],
                    "context": (dpre1 + dpre2).T @ ctx[idx],
                    "bias": (dpre1 + dpre2).sum(axis=0),
                }
                step += 1
                p = dict(p)
                for key, g in grads.items():
                    m1[key] = 0.9 * m1[key] + 0.1 * g
                    m2[key] = 0.999 * m2[key] + 0.001 * g * g
                    p[key] = p[key] - lr * (m1[key] / (1 - 0.9**step)) / (np.sqrt(m2[key] / (1 - 0.999**step)) + 1e-8)
            lr *= 0.85
            loss, brier = held_out(p)
            print(f"epoch {epoch}: held-out log loss {loss:.4f}, Brier {brier:.4f}", flush=True)
            if loss < best[0] or not keep_best:
                best = (loss, p, epoch, brier)
        return best

    loss, p, epoch, brier = train(p, y, epochs, 3e-3, True)
    td = {}
    if td_epochs:
        # the λ-return along each pair's sequence of states (rows of one
        # match are in order, a pair's next row ``pairs`` rows on); the
        # outcome after the last
        nxt = np.arange(len(y)) + pairs
        last = (nxt >= len(y)) | (match[np.minimum(nxt, len(y) - 1)] != match)
        for _stage in range(td_epochs):
            v = np.concatenate(
                [forward(p, np.arange(k, min(k + 200_000, len(y))))[2] for k in range(0, len(y), 200_000)]
            )
            g = outcome.copy()
            for r in range(len(y) - 1, -1, -1):
                if not last[r]:
                    g[r] = (1 - td_lambda) * v[nxt[r]] + td_lambda * g[nxt[r]]
            loss, p, _e, brier = train(p, g, 1, 1e-3, False)
        td = {"td_lambda": td_lambda, "td_epochs": td_epochs}
    constant = float(np.mean((outcome[va] - 0.5) ** 2))
    return {
        "fitted_on": f"{len(set(match.tolist()))} matches of greedy-family play (benchmarks/luck_fit.py NET_PLAY, "
        f"NET_SEARCH_PLAY), seeds derive({FIT_BASE}, 'allegra-net', i); every state after an event",
        "hidden": hidden,
        "rows": int(len(y)),
        "between_rounds_slopes": slopes,
        **td,
        "held_out": {"log_loss": round(loss, 5), "brier": round(brier, 5), "brier_constant_half": round(constant, 5),
                     "epoch": epoch},
        **{k: np.round(v, 8).tolist() for k, v in p.items()},
    }  # fmt: skip


# -- Allegory: allegory-net@1 ---------------------------------------------------

OUT_ALLEGORY_NET = OUT.with_name("allegory-net-1.json")
# (players, the bots at the table, share of the matches): greedy-family play
# and a little search; the seats are rotated match by match
ALLEGORY_NET_MIX = (
    (2, ("greedy", "greedy"), 0.18),
    (2, ("greedy", "greedy-0.05"), 0.12),
    (2, ("greedy", "greedy-0.1"), 0.16),
    (2, ("greedy", "greedy-0.2"), 0.10),
    (2, ("greedy", "greedy-0.3"), 0.06),
    (2, ("greedy-0.1", "greedy-0.1"), 0.08),
    (2, ("greedy", "ismcts-20"), 0.04),
    (2, ("ismcts-40", "ismcts-20"), 0.02),
    (3, ("greedy", "greedy", "greedy-0.1"), 0.10),
    (4, ("greedy", "greedy", "greedy-0.1", "greedy-0.2"), 0.14),
)


def allegory_net_table(i: int) -> list[str]:
    """Match ``i``'s bots, seat by seat: the mix's rows in proportion, seats rotated."""
    x = (i * 0.6180339887498949) % 1.0  # spreads the rows evenly over any number of matches
    row = ALLEGORY_NET_MIX[-1]
    for candidate in ALLEGORY_NET_MIX:
        if x < candidate[2]:
            row = candidate
            break
        x -= candidate[2]
    n, bots, _share = row
    k = i % n
    return list(bots[k:] + bots[:k])


def allegory_net_player(name: str):
    if name.startswith("greedy-"):
        from luck_variance import WeakGreedy

        return WeakGreedy("allegory", float(name.split("-", 1)[1]))
    return make(name, "allegory")


def allegory_net_rows(i: int) -> tuple[int, list[list[float]], list[float]]:
    """Match ``i`` played: its players' count, and per ordered pair of seats
    at every state, the pair's features and whether the first finished above."""
    from cardroom.luck.kernel import net_claimable, net_seat_features, net_shared_features, unseen_by_tale

    names = allegory_net_table(i)
    replay = run_match(
        "allegory", [allegory_net_player(n) for n in names], seed=derive(FIT_BASE, "allegory-net", i)
    ).replay
    points = rank_points(replay["result"]["ranks"])
    n = len(names)
    xs: list[list[float]] = []
    ys: list[float] = []
    for _index, _event, state in iter_states(replay):
        if state.is_terminal() or state.is_chance_node():
            continue
        count, total = unseen_by_tale(state)
        claimable = net_claimable(state)
        seats = [net_seat_features(state, s, count, total, claimable) for s in range(n)]
        shared = net_shared_features(state)
        for s in range(n):
            for o in range(n):
                if o != s:
                    xs.append(seats[s] + seats[o] + shared)
                    ys.append(1.0 if points[s] > points[o] else 0.0 if points[s] < points[o] else 0.5)
    return n, xs, ys


def fit_allegory_net(matches: int, hidden: int, workers: int) -> dict:
    import multiprocessing

    import numpy as np
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    from cardroom.luck.kernel import NET_SEAT_FEATURES, NET_SHARED_FEATURES

    with multiprocessing.Pool(workers) as pool:
        played = pool.map(allegory_net_rows, range(matches), chunksize=20)
    x_rows, y_rows, groups = [], [], []
    for i, (_n, xs, ys) in enumerate(played):
        for x, y in zip(xs, ys):
            # a tie: once each way
            for label in (1.0, 0.0) if y == 0.5 else (y,):
                x_rows.append(x)
                y_rows.append(label)
                groups.append(i)
    x = np.array(x_rows)
    y = np.array(y_rows).astype(int)
    held = np.array(groups) % 10 == 9
    scaler = StandardScaler().fit(x[~held])
    z = scaler.transform(x)

    def log_loss(p):
        p = np.clip(p, 1e-9, 1 - 1e-9)
        return float(-np.mean(y[held] * np.log(p) + (1 - y[held]) * np.log(1 - p)))

    net = MLPClassifier(
        hidden_layer_sizes=(hidden,), activation="relu", alpha=1e-4, batch_size=1024, learning_rate_init=1e-3,
        max_iter=60, early_stopping=True, validation_fraction=0.1, n_iter_no_change=6, random_state=0,
    ).fit(z[~held], y[~held])  # fmt: skip
    losses = {
        "constant": log_loss(np.full(int(held.sum()), y[~held].mean())),
        "network": log_loss(net.predict_proba(z[held])[:, 1]),
    }
    # the standardisation folded into the first layer: w·(x - m)/s + b = (w/s)·x + (b - Σ w·m/s)
    w1, b1 = net.coefs_[0], net.intercepts_[0]
    scaled = w1 / scaler.scale_[:, None]
    bias = b1 - scaler.mean_ @ scaled
    k = NET_SEAT_FEATURES
    assert scaled.shape[0] == 2 * k + NET_SHARED_FEATURES
    return {
        "fitted_on": f"{matches} matches of greedy-family and search play at 2-4 players (ALLEGORY_NET_MIX), "
        f"seeds derive({FIT_BASE}, 'allegory-net', i)",
        "rows": len(y_rows),
        "held_out_log_loss": {key: round(v, 5) for key, v in losses.items()},
        "epochs": int(net.n_iter_),
        "own": scaled[:k].T.tolist(),
        "other": scaled[k : 2 * k].T.tolist(),
        "shared": scaled[2 * k :].T.tolist(),
        "bias": bias.tolist(),
        "out": net.coefs_[1][:, 0].tolist(),
        "out_bias": float(net.intercepts_[1][0]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "game",
        choices=["allegra", "allegra-outcome", "allegra-ender", "allegory-net", "allegra-net-play", "allegra-net"],
    )
    parser.add_argument("--matches", type=int)
    parser.add_argument("--hidden", type=int, help="allegory-net, allegra-net: hidden units (16, 32)")
    parser.add_argument("--workers", type=int, default=2, help="allegory-net: processes playing the matches")
    parser.add_argument("--first", type=int, default=0, help="allegra-net-play: the first match's index")
    parser.add_argument("--search", action="store_true", help="allegra-net-play: the search bots' matches")
    parser.add_argument(
        "--data", type=Path, action="append", help="allegra-net-play: where to write; allegra-net: read"
    )
    parser.add_argument("--epochs", type=int, default=5, help="allegra-net: passes over the data")
    parser.add_argument("--td-lambda", type=float, default=0.7, help="allegra-net: the λ of the TD(λ) passes")
    parser.add_argument("--td-epochs", type=int, default=3, help="allegra-net: TD(λ) passes after the outcome's")
    args = parser.parse_args()
    if args.game == "allegra-net-play":
        collect_allegra_net(args.first, args.matches or 100, args.search, args.data[0])
        return 0
    if args.game == "allegra-net":
        table = fit_allegra_net(args.data, args.hidden or 32, args.epochs, args.td_lambda, args.td_epochs)
        NET_OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {NET_OUT}: {table['rows']} rows, held out {table['held_out']}")
        return 0
    if args.game == "allegory-net":
        table = fit_allegory_net(args.matches or 3000, args.hidden or 16, args.workers)
        OUT_ALLEGORY_NET.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {OUT_ALLEGORY_NET}: {table['rows']} rows, held-out log loss {table['held_out_log_loss']}")
        return 0
    if args.game == "allegra-ender":
        table = fit_allegra_ender(args.matches or 300)
        OUT_ENDER.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {OUT_ENDER}: {json.dumps(table)}")
        return 0
    if args.game == "allegra-outcome":
        table = fit_allegra_outcome(args.matches or 600)
        OUT_OUTCOME.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {OUT_OUTCOME}: {len(table['outcome'])} buckets")
        for key, (a, b) in sorted(table["outcome"].items()):
            print(f"  {key}: a {a:.4f} b {b:.4f} ({table['outcome_rows'][key]} rows)")
        return 0
    table = fit_allegra(args.matches or 300)
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(table['final'])} cells, round variance {table['round_var']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
