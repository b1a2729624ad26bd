"""How well "about N more matches" foretells when a version's place is shown
settled, on fields where the truth is known (docs/ladder.md, "How fast the
ranking settles"; decision 269). No Django, no bots: the model itself.

    nice -n 10 .venv/bin/python benchmarks/ranking_more_matches.py \
        [--runs 40] [--horizon 120] [--every 2] [--out var/ranking_more_matches.json]

Each run draws a field of 8 versions with known Bradley-Terry strengths
(``FIELDS``: the gaps between neighbours, in log-odds, drawn uniformly from
a range), then plays a ladder on it from nothing: two players a match, the
winner drawn from the model (sigma of the difference), paired as the real
scheduler pairs (ladder.services.matchmaking: the version with the fewest
matches first, ties at random, against one of the two nearest to it in an
Elo rating kept as the ladder keeps it, K = 20, seats at random). "sets":
every pairing is a duplicate set of two matches (one outcome, its payoff
the mean of two draws, standing for 2 matches). Every ``every`` matches per
version the real ``ladder.ranking`` is fitted to all the outcomes so far,
and for each version not settled both projections are taken from that one
fit: "before", the projection of bradley-terry-points@1 (n (f - 1), f the
hardest neighbour's (t sd / gap)^2), and "after", ``ranking.rank``'s
today (@2, ``more_matches``: the median wait until every pair not yet
told apart first is, both versions playing on, t falling with the degrees
of freedom).

Reported, for each projection: every time a version was shown "about N
more" (below the cap), the matches it then played until it was first shown
settled, over N. "settled in run" (the measure of docs/ladder.md's tables):
the median and quartiles over those that settled before the run ended,
which leaves the slow ones out and so reads low; "Kaplan-Meier": every
showing, one the run ended before counting as "more than the matches the
run had left, over N" (right-censored), the quartiles of the ratio by the
Kaplan-Meier estimator.
Intervals: the 2.5% and 97.5% points over 1,000 bootstrap resamples of the
runs. And "settled within one place": of the versions shown settled at any
checkpoint, the share within one place of their true place (the rule for
settled is the same before and after; the figure is there to show it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ladder import ranking  # noqa: E402

SEED = 26_900
VERSIONS = 8
# name -> (gap range between neighbours in log-odds, matches per outcome)
FIELDS: dict[str, tuple[tuple[float, float], int]] = {
    "graded": ((0.15, 0.6), 1),  # points a match 0.04-0.15 apart: like docs/ladder.md's fields
    "close": ((0.05, 0.3), 1),
    "graded-sets": ((0.15, 0.6), 2),
}


@dataclass
class Shown:
    """One checkpoint's view of one version."""

    matches: int
    settled: bool
    before: int | None  # the projections (None once settled)
    after: int | None


@dataclass
class Run:
    truth: list[int]  # version ids, best first
    checkpoints: list[dict[int, Shown]] = field(default_factory=list)
    places: list[dict[int, int]] = field(default_factory=list)
    horizon: int = 0


def projection_before(model: ranking.Fit, i: int, apart: list[tuple[int, float, float]]) -> int | None:
    """bradley-terry-points@1's "about N more": the hardest version two or
    more places away, f = (t sd / gap)^2, n (f - 1) more, the interval taken
    to narrow as 1 / sqrt of the version's own matches."""
    worst = 1.0
    for _j, gap, needed in apart:
        worst = max(worst, (needed / gap) ** 2 if gap > 0 else math.inf)
    have = max(model.matches[i], 1)
    more = (
        ranking.MORE_MATCHES_CAP if worst == math.inf else min(math.ceil(have * (worst - 1)), ranking.MORE_MATCHES_CAP)
    )
    return max(more, 1)


def view(outcomes: list[ranking.Outcome]) -> tuple[dict[int, Shown], dict[int, int]]:
    """Both projections from one fit; the second projection and settled
    exactly as ``ranking.rank`` gives them (the fast test checks it)."""
    model = ranking.fit(outcomes)
    order = sorted(range(len(model.versions)), key=lambda i: (-model.theta[i], model.versions[i]))
    shown, places = {}, {}
    for place0, i in enumerate(order):
        apart = ranking.unseparated(model, order, place0)
        settled = model.matches[i] > 0 and not apart
        before = after = None
        if not settled:
            before = projection_before(model, i, apart)
            after = ranking.more_matches(model, i, apart)
        shown[model.versions[i]] = Shown(model.matches[i], settled, before, after)
        places[model.versions[i]] = place0 + 1
    return shown, places


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def simulate(field_name: str, rng: random.Random, horizon: int, every: int) -> Run:
    """One ladder on a fresh field, ``horizon`` matches per version."""
    (low, high), per_outcome = FIELDS[field_name]
    strengths = [0.0]
    for _ in range(VERSIONS - 1):
        strengths.append(strengths[-1] - rng.uniform(low, high))
    mean = sum(strengths) / VERSIONS
    theta = {v + 1: s - mean for v, s in enumerate(strengths)}
    versions = list(theta)
    run = Run(truth=sorted(versions, key=lambda v: -theta[v]), horizon=horizon)
    elo = dict.fromkeys(versions, 1500.0)
    played = dict.fromkeys(versions, 0)
    outcomes: list[ranking.Outcome] = []
    next_checkpoint = every
    while min(played.values()) < horizon:
        first = min(versions, key=lambda v: (played[v], rng.random()))
        nearest = sorted((v for v in versions if v != first), key=lambda v: (abs(elo[v] - elo[first]), rng.random()))
        lineup = [first, rng.choice(nearest[:2])]
        rng.shuffle(lineup)
        a, b = lineup
        points = 0.0
        for _ in range(per_outcome):
            won = 1.0 if rng.random() < _sigmoid(theta[a] - theta[b]) else 0.0
            points += won
            expected = 1 / (1 + 10 ** ((elo[b] - elo[a]) / 400))
            elo[a] += 20 * (won - expected)
            elo[b] -= 20 * (won - expected)
        outcomes.append(ranking.Outcome((a, b), (points / per_outcome, 1 - points / per_outcome), matches=per_outcome))
        played[a] += per_outcome
        played[b] += per_outcome
        if sum(played.values()) >= next_checkpoint * VERSIONS:
            shown, places = view(outcomes)
            run.checkpoints.append(shown)
            run.places.append(places)
            next_checkpoint += every
    return run


def waits(run: Run, which: str) -> list[tuple[int, int | None, int]]:
    """(N shown, matches until first shown settled or None, matches of the
    run left after the showing) for every showing below the cap."""
    out = []
    last = {v: shown.matches for v, shown in run.checkpoints[-1].items()}
    for t, checkpoint in enumerate(run.checkpoints):
        for v, shown in checkpoint.items():
            more = getattr(shown, which)
            if more is None or more >= ranking.MORE_MATCHES_CAP:
                continue
            later = next((c[v].matches for c in run.checkpoints[t + 1 :] if c[v].settled), None)
            out.append((more, None if later is None else later - shown.matches, last[v] - shown.matches))
    return out


def _quartiles(values: list[float]) -> list[float]:
    if len(values) < 2:
        return values * 3 if values else []
    q = statistics.quantiles(values, n=4, method="inclusive")
    return [q[0], q[1], q[2]]


def ratios_in_run(rows: list[tuple[int, int | None, int]]) -> list[float]:
    return sorted(actual / more for more, actual, _left in rows if actual is not None)


def ratios_censored(rows: list[tuple[int, int | None, int]]) -> list[tuple[float, bool]]:
    """(actual / N, True) for a showing followed by settled; (the run's
    matches left / N, False) for one the run ended before: censored there."""
    return [(actual / more, True) if actual is not None else (left / more, False) for more, actual, left in rows]


def kaplan_meier_quantiles(rows: list[tuple[float, bool]], probabilities=(0.25, 0.5, 0.75)) -> list[float]:
    """The quantiles of the ratio from right-censored observations
    (Kaplan-Meier: a showing the run ended before counts as "more than its
    censoring point"); inf where the estimate never falls that far."""
    rows = sorted(rows, key=lambda r: (r[0], not r[1]))  # events before censorings at a tie
    at_risk, survival, out, wanted = len(rows), 1.0, [], list(probabilities)
    i = 0
    while i < len(rows) and wanted:
        value = rows[i][0]
        events = 0
        j = i
        while j < len(rows) and rows[j][0] == value:
            events += rows[j][1]
            j += 1
        if events:
            survival *= 1 - events / at_risk
            while wanted and 1 - survival >= wanted[0]:
                out.append(value)
                wanted.pop(0)
        at_risk -= j - i
        i = j
    return out + [math.inf] * len(wanted)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def summarise(runs: list[Run], which: str, boot: random.Random, resamples: int = 1000) -> dict[str, Any]:
    per_run = [waits(r, which) for r in runs]
    out: dict[str, Any] = {}
    done = sorted(x for rows in per_run for x in ratios_in_run(rows))
    medians = sorted(
        _median(sorted(x for rows in (boot.choice(per_run) for _ in per_run) for x in ratios_in_run(rows)))
        for _ in range(resamples)
    )
    out["settled_in_run"] = {
        "n": sum(len(rows) for rows in per_run),
        "settled": len(done),
        "quartiles": _quartiles(done),
        "median_95": [medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]],
    }
    censored = [ratios_censored(rows) for rows in per_run]
    medians = sorted(
        kaplan_meier_quantiles([x for rows in (boot.choice(censored) for _ in censored) for x in rows], (0.5,))[0]
        for _ in range(resamples)
    )
    out["kaplan_meier"] = {
        "quartiles": kaplan_meier_quantiles([x for rows in censored for x in rows]),
        "median_95": [medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]],
    }
    return out


def settled_within_one(runs: list[Run]) -> dict[str, Any]:
    right = shown = 0
    for run in runs:
        true_place = {v: p + 1 for p, v in enumerate(run.truth)}
        for checkpoint, places in zip(run.checkpoints, run.places):
            for v, s in checkpoint.items():
                if s.settled:
                    shown += 1
                    right += abs(places[v] - true_place[v]) <= 1
    return {"shown": shown, "within_one": right, "share": right / shown if shown else math.nan}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--horizon", type=int, default=120, help="matches per version in a run")
    parser.add_argument("--every", type=int, default=2, help="matches per version between fits")
    parser.add_argument("--fields", default=",".join(FIELDS))
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the runs")
    parser.add_argument("--out", default=str(ROOT / "var" / "ranking_more_matches.json"))
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"model": ranking.MODEL, "runs": args.runs, "horizon": args.horizon, "every": args.every}
    report["load_before"] = os.getloadavg()
    started = time.monotonic()
    results = {}
    for name in args.fields.split(","):
        rng = random.Random(f"{SEED}:{name}")
        runs = [simulate(name, rng, args.horizon, args.every) for _ in range(args.runs)]
        boot = random.Random(f"{SEED}:{name}:boot")
        results[name] = {
            "before": summarise(runs, "before", boot, args.resamples),
            "after": summarise(runs, "after", boot, args.resamples),
            "settled_within_one": settled_within_one(runs),
            "settled_at_end": statistics.mean(
                sum(s.settled for s in run.checkpoints[-1].values()) / VERSIONS for run in runs
            ),
        }
        print(name, json.dumps(results[name]), flush=True)
    report["results"] = results
    report["seconds"] = round(time.monotonic() - started)
    report["load_after"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "results"}))
    return report


if __name__ == "__main__":
    main()
