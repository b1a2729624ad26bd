"""How fast the ladder's ranking settles, today's and the new (issue 37;
docs/ladder.md, "How fast the ranking settles"; decision 246).

    nice -n 10 .venv/bin/python benchmarks/ladder_convergence.py \
        [--games allegory,allegra] [--players 2,4] [--truth-deals 2:20,4:16,allegory:2:80,allegra:2:40] \
        [--repeats 8] [--horizon 2:120,4:80,allegory:2:240] [--quick] [--out var/ladder_convergence/report.json] \
        [--allegory-value allegory-tales@1] [--allegra-value allegra-net@1] [--jobs 2]

    # to choose a field: its round robin alone, on seeds the measurement never plays
    nice -n 10 .venv/bin/python benchmarks/ladder_convergence.py --truth-only --choose \
        --games allegra --players 4 --truth-deals 4:1 --field allegra:4=BOT,BOT,...

For each game and player count:

1. **The truth**: a field of bots of graded strength (``FIELDS``, by game
   and player count: the built-in search, ``ismcts-N``, at fixed iteration
   budgets; greedy; greedy playing a uniformly random legal move a share
   ``e`` of the time, ``greedy-eX``; random) plays a duplicate round robin with cardroom's
   tournament code (``cardroom.tournament``: every table of the field,
   every deal in every seat rotation). Its standings (points per match,
   with the tournament's paired 95% intervals) fix the true order.
2. **Today's ladder**, from nothing: the real matchmaking
   (``ladder.services.matchmaking.top_up_ladder``) on a PostgreSQL database
   of its own, and the real Elo (``ladder.services.ratings``); the
   leaderboard's order (Elo, then OpenSkill's ordinal). Each match the
   scheduler creates is played in this process by the built-in bots (the
   result is written to the database and rated as a worker would; the
   replay and logs are not stored).
3. **The new ladder**, from nothing, the same scheduler: each result
   luck-adjusted by ``cardroom.luck`` (main's value functions) and ranked by
   ``ladder.ranking``; once with single matches (CARDROOM_DUPLICATE_SETS
   empty), once with the scheduler making duplicate sets itself (the
   game and player count listed: k matches, the rotations of one deal, each
   rated by Elo on its own, a complete set one outcome for the model).
4. With ``--allegory-value`` / ``--allegra-value``, a second adjusted
   ranking beside the first, ``adjusted-alt``: the same results adjusted
   by that value function (``luck_variance``'s names), on the same runs,
   with the ratio ``adjusted/adjusted-alt`` paired over runs.

Every match is played once and kept in ``var/ladder_convergence/matches.jsonl``
(a rerun, or another repetition, takes it from there): the ``j``-th match of
a line-up in a run is deal ``j`` of that line-up, so the repetitions share
their deals and differ in the scheduler's choices (its random draws) and the
order results come in (a set takes one deal index for all its rotations).
``--jobs N`` plays the round robins' matches N at a time, each process its
own matches (a match's result depends on its seats and seed alone), and then
shares the runs among N processes, each on a PostgreSQL database of its own
(``NAME_job0``, ...; dropped at the end): within a run each match follows
from the ones before, but a run depends only on its number and mode, so the
report is the one a single process gives.
A single match is played in the seats the scheduler gave it, as on the
ladder; a set's match in the rotation ``set_rotation`` of the line-up in
name order. (Until decision 292 a single match was the deal's rotation ``j
mod k``, on the reasoning that the scheduler's shuffle gives each bot each
seat as often. It does, but not in turn: the rotation made every pair that
met twice take each seat once, which the ladder's shuffle does not, and in
Allegory the seat decides a great deal. ``--rotate-seats`` measures that way
still.) ``--balanced`` adds runs with ``CARDROOM_SEATING=balanced``, and
``--informative-balanced`` runs both informative and balanced.

Reported per ranking (Elo; the model on plain results; on adjusted results;
with sets): matches per bot until Kendall's tau with the true order is at
least 0.9, and until the top three are exact, both "reached" (first time)
and "held" (from then to the end of the run), the mean over repetitions
with a 95% t-interval; the ratio of today's to the new one with a
bootstrap interval over repetitions; the share of the versions shown
settled (at every checkpoint of every run) within one place of their true
place, with a bootstrap interval over runs.

``--oracle [S,S,...]`` (decision 302): beside the model's rankings,
``oracle-S``, the same runs ranked on results keeping a share ``S`` of
each match's squared deviation from its line-up's mean in the truth
(``m + √S (p − m)``: what a luck estimator that took out the rest would
give, a yardstick that reads the truth), and the share of that deviation
the record's luck keeps on the runs' single matches (``variance_kept``;
with ``--allegory-value``/``--allegra-value``, that one's too,
``variance_kept_alt``).

``--quick``: a field of four cheap bots, a small round robin, two short
runs: the shape of the report in a minute (tests/ranking runs it).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from cardroom.luck import luck_of  # noqa: E402
from cardroom.luck.estimator import ValueFunction, luck_with, rank_points  # noqa: E402
from cardroom.luck.games import ADAPTERS  # noqa: E402
from cardroom.players import InProcessPlayer, Player  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament import event  # noqa: E402
from cardroom.tournament.schedule import EventSpec  # noqa: E402
from cardroom.tournament.seeds import KeyedChance, derive  # noqa: E402
from ladder.ranking import MODEL, Outcome, rank  # noqa: E402

SEED_BASE = 38_000
TAU_TARGET = 0.9
FIELD_SIZE = 8  # bots in a field (issue 37: at least 8)
TOP = 3
# The fields, by game and player count (a bot's strength depends on how
# many it plays against). 2 players: chosen by a round robin of their own
# (seeds derive(38000, "truth", ...), 12 deals): in Allegory the search
# passes greedy-e0.5 at 10 iterations and nears greedy at 20-40; in Allegra
# every budget from 2 to 10 iterations finished level (0.80-0.81 points a
# match, decision 246), so one stands for search there, and the rates of
# random moves grade the rest. 4 players: chosen by --truth-only --choose
# (seeds derive(38000, "field-choice", ...), 1 deal a table, never played
# by the measurement; decision 275), neighbours 0.05 points a match apart or
# more: in Allegory the search grades with its budget; in Allegra search at
# 1, 2 and 5 iterations and greedy finished within 0.05 points, so search
# stands for them, and the rates of random moves grade the rest.
# Allegory at 2 players since decision 295: chosen by that rule (the
# choice round robin of 13 candidates, 10 deals; separated_field), its truth
# separating every neighbour at 80 deals (the default's allegory:2:80). Until then:
# greedy, greedy-e0.1, greedy-e0.25, ismcts-10, greedy-e0.55, greedy-e0.6,
# ismcts-5, random, whose truth left four neighbours unseparated.
# Allegra at 2 players since decision 296, by the same rule (candidates
# ismcts-2/5/10, greedy, greedy-e0.1 ... e0.8, random), its truth separating
# every neighbour at 40 deals (allegra:2:40). Until then: ismcts-2, greedy,
# greedy-e0.1, greedy-e0.2, greedy-e0.5, greedy-e0.65, greedy-e0.8, random.
FIELDS = {
    ("allegory", 2): [
        "greedy",
        "greedy-e0.2",
        "greedy-e0.4",
        "greedy-e0.5",
        "greedy-e0.6",
        "ismcts-5",
        "greedy-e0.8",
        "random",
    ],
    ("allegra", 2): [
        "ismcts-5",
        "greedy",
        "greedy-e0.1",
        "greedy-e0.2",
        "greedy-e0.3",
        "greedy-e0.6",
        "greedy-e0.8",
        "random",
    ],
    ("allegory", 4): [
        "greedy",
        "ismcts-20",
        "greedy-e0.2",
        "ismcts-10",
        "ismcts-5",
        "greedy-e0.6",
        "greedy-e0.8",
        "random",
    ],
    ("allegra", 4): [
        "ismcts-5",
        "greedy-e0.2",
        "greedy-e0.27",
        "greedy-e0.35",
        "greedy-e0.5",
        "greedy-e0.57",
        "greedy-e0.65",
        "random",
    ],
}
QUICK_FIELD = ["greedy", "greedy-e0.3", "greedy-e0.7", "random"]
CACHE = ROOT / "var" / "ladder_convergence" / "matches.jsonl"


# -- the bots ------------------------------------------------------------------


def make_player(name: str, game: str) -> Player:
    from bots import builtin_chooser

    if name == "random":
        return InProcessPlayer("random", None)
    if name == "greedy":
        return InProcessPlayer("greedy", builtin_chooser("greedy", game))
    if name.startswith("greedy-e"):  # the luck benchmark's weak greedy at another rate
        from luck_variance import make

        return make(name, game)
    if name.startswith("ismcts-"):
        from bots.ismcts_bot import make_choose

        return InProcessPlayer(name, make_choose(time_ms=None, iterations=int(name.split("-", 1)[1])))
    raise ValueError(f"unknown bot {name!r}")


# -- matches, played once and kept -----------------------------------------------


class MatchStore:
    """Every match played, by key, in a JSON-lines file (appended as played);
    ``alt``, by game, a value function to adjust by beside the record's."""

    def __init__(self, path: Path | None, alt: dict[str, ValueFunction] | None = None):
        self.path = path
        self.alt = alt or {}
        self.known: dict[str, dict[str, Any]] = {}
        # by key without the value function: the result, and the adjusted
        # points by value function, from every row of that match (a row kept
        # with the record and X adjusts by X and the record when they swap)
        self.adjustments: dict[str, dict[str, Any]] = {}
        self.played = 0
        self.cpu = 0.0
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    self._keep(json.loads(line))

    def _keep(self, row: dict[str, Any]) -> None:
        self.known[row["key"]] = row
        if "adjusted" not in row:
            return
        base = "|".join(row["key"].split("|")[:5])
        pool = self.adjustments.setdefault(base, {"row": row, "by": {}})
        pool["by"][row["value_function"]] = row["adjusted"]
        if "adjusted_alt" in row:
            pool["by"][row["alt_value_function"]] = row["adjusted_alt"]

    def _composed(self, game: str, base: str, key: str, alt: ValueFunction | None) -> dict[str, Any] | None:
        """The row of ``key`` from rows of the same match kept under other
        value functions (None unless every adjustment it needs is there)."""
        pool = self.adjustments.get(base)
        record = ADAPTERS[game]().value.label
        if pool is None or record not in pool["by"] or (alt is not None and alt.label not in pool["by"]):
            return None
        first = pool["row"]
        row = {"key": key, "result": first["result"], "payoffs": first["payoffs"]}
        row |= {"adjusted": pool["by"][record], "value_function": record}
        if alt is not None:
            row |= {"adjusted_alt": pool["by"][alt.label], "alt_value_function": alt.label}
        self.known[key] = row
        return row

    def play(self, game: str, seats: list[str], seed: int, keyed: bool, luck: bool) -> dict[str, Any]:
        """The result of ``seats`` (bot names by seat) on ``seed``: the
        replay's result, and each seat's rank points and adjusted points."""
        alt = self.alt.get(game) if luck else None
        base = key = _key(game, seats, seed, keyed, luck)
        if alt is not None:  # its rows apart from the record's alone (a key of its own)
            key += f"|{alt.label}"
        row = self.known.get(key) or (self._composed(game, base, key, alt) if luck else None)
        if row is not None:
            return row
        t0 = time.process_time()
        record = _played(game, seats, seed, keyed)
        row = {"key": key, "result": _result_of(record)}
        if luck:
            report = luck_of(record.replay)
            row["payoffs"] = [s.payoff for s in report.seats]
            row["adjusted"] = [s.adjusted for s in report.seats]
            row["value_function"] = report.value_function
        if alt is not None:
            other = luck_with(record.replay, lambda g: ADAPTERS[g](alt))
            row["adjusted_alt"] = [s.adjusted for s in other.seats]
            row["alt_value_function"] = other.value_function
        self._add(row, time.process_time() - t0)
        return row

    def _add(self, row: dict[str, Any], cpu: float) -> None:
        """A match just played: counted, kept, and appended to the file."""
        self.cpu += cpu
        self.played += 1
        self._keep(row)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")

    def play_unadjusted(self, game: str, matches: list[tuple[list[str], int, bool]], jobs: int = 1) -> None:
        """Plays those of ``matches`` (seats, seed, keyed) not kept yet, as
        ``play`` would without luck, in ``jobs`` processes at once (each
        match is independent of the others, so its row does not depend on
        which process played it); kept in the order given."""
        todo = [m for m in matches if _key(game, *m, luck=False) not in self.known]
        if jobs <= 1 or len(todo) < 2:
            for seats, seed, keyed in todo:
                self.play(game, seats, seed, keyed, luck=False)
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork: the children start with this process's imports (and no work of
        # their own on the database, which they never touch)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            rows = pool.map(_unadjusted_row, [(game, *m) for m in todo], chunksize=4)
            for row, cpu in rows:
                self._add(row, cpu)

    def ladder_deal(
        self,
        game: str,
        lineup: tuple[str, ...],
        deal: int,
        rotation: int = 0,
        seats: list[str] | None = None,
        run: int | None = None,
    ) -> dict[str, Any]:
        """Deal ``deal`` of a line-up (its names in sorted order), played
        with the bots in ``seats`` (by seat), or else in rotation
        ``rotation`` of the line-up; by bot name: rank, points, adjusted
        points, and the points adjusted by the store's other value function
        (if any). With ``run``, the deal is that run's own (--fresh-deals)."""
        k = len(lineup)
        if seats is None:
            seats = [lineup[(s + rotation) % k] for s in range(k)]
        elif sorted(seats) != list(lineup):
            raise ValueError(f"seats {seats} are not the line-up {lineup}")
        seed = derive(SEED_BASE, "ladder", game, ",".join(lineup), deal)
        if run is not None:
            seed = derive(SEED_BASE, "ladder", game, ",".join(lineup), deal, "run", run)
        row = self.play(game, seats, seed, keyed=True, luck=True)
        alt = row.get("adjusted_alt")
        return {
            name: (
                row["result"]["ranks"][s], row["result"]["scores"][s], row["payoffs"][s], row["adjusted"][s],
                None if alt is None else alt[s],
            )
            for s, name in enumerate(seats)
        }  # fmt: skip


def lineup_key(lineup: tuple[str, ...], name: str) -> str:
    """``lineup_means``'s key: the line-up's names in sorted order, and one of them."""
    return "|".join(sorted(lineup)) + "|" + name


def lineup_means(store: MatchStore, game: str, k: int, names: list[str], deals: int) -> dict[str, float]:
    """Each bot's mean rank points in each line-up of the truth's round robin
    (played already by ``truth``), by ``lineup_key``: decision 302's ``m``."""
    spec = truth_spec(game, k, names, deals)
    points: dict[str, list[float]] = {}
    for plan in event.batch_plans(spec, 0, []):
        seats = [names[e] for e in plan.seats]
        row = store.play(game, seats, plan.seed, plan.keyed_chance, luck=False)
        for name, p in zip(seats, rank_points(row["result"]["ranks"])):
            points.setdefault(lineup_key(tuple(seats), name), []).append(p)
    return {key: statistics.fmean(ps) for key, ps in points.items()}


def with_oracle(
    result: dict[str, tuple], lineup: tuple[str, ...], centres: dict[str, float], shares: tuple[float, ...]
) -> dict[str, tuple]:
    """``ladder_deal``'s result with a column per share ``s``: the payoff
    keeping that share of its squared deviation from the line-up's mean,
    ``m + √s (p − m)`` (decision 302: a yardstick that reads the truth)."""
    out = {}
    for name, row in result.items():
        m = centres[lineup_key(lineup, name)]
        out[name] = (*row, *(m + share**0.5 * (row[2] - m) for share in shares))
    return out


def _key(game: str, seats: list[str], seed: int, keyed: bool, luck: bool) -> str:
    return f"{game}|{','.join(seats)}|{seed}|{int(keyed)}|{int(luck)}"


def _played(game: str, seats: list[str], seed: int, keyed: bool):
    """The match's record, the field's bots by name in their seats."""
    return run_match(
        game, [make_player(n, game) for n in seats], seed=seed, chance=KeyedChance(seed) if keyed else None
    )


def _result_of(record) -> dict[str, Any]:
    result = record.replay["result"]
    return {"ranks": result["ranks"], "scores": result["scores"]}


def _unadjusted_row(match: tuple[str, list[str], int, bool]) -> tuple[dict[str, Any], float]:
    """A match played in a worker process (MatchStore.play_unadjusted): its
    row, as MatchStore.play keeps it without luck, and its CPU seconds."""
    game, seats, seed, keyed = match
    t0 = time.process_time()
    record = _played(game, seats, seed, keyed)
    row = {"key": _key(game, seats, seed, keyed, luck=False), "result": _result_of(record)}
    return row, time.process_time() - t0


# -- the truth -------------------------------------------------------------------


def truth_spec(game: str, k: int, names: list[str], deals: int, seeds: str = "truth") -> EventSpec:
    """The truth's round robin: every table of the field, every deal in every seat rotation."""
    return EventSpec(game, "duplicate", len(names), k, deals=deals, seed=derive(SEED_BASE, seeds, game, k))


def truth(
    store: MatchStore, game: str, k: int, names: list[str], deals: int, seeds: str = "truth", jobs: int = 1
) -> dict[str, Any]:
    """The duplicate round robin's standings (the tournament's own code), on
    the seeds derive(SEED_BASE, ``seeds``, game, k): "truth" for the
    measurement's, "field-choice" for the round robins that choose a field
    (never played by the measurement); its matches played ``jobs`` at once."""
    spec = truth_spec(game, k, names, deals, seeds)
    plans = list(event.batch_plans(spec, 0, []))
    matches = [([names[e] for e in p.seats], p.seed, p.keyed_chance) for p in plans]
    store.play_unadjusted(game, matches, jobs)
    outcomes = []
    for plan, (seats, seed, keyed) in zip(plans, matches):
        row = store.play(game, seats, seed, keyed, luck=False)  # kept by play_unadjusted
        outcomes.append(event.outcome_of(plan, row["result"]))
    doc = event.standings_of(spec, names, outcomes)
    order = [names[r["entry"]] for r in doc["standings"]]
    position = {name: i for i, name in enumerate(order)}
    neighbours = []
    for d in doc.get("differences", []):
        a, b = names[d["a"]], names[d["b"]]
        if abs(position[a] - position[b]) == 1:
            neighbours.append({"a": a, "b": b, "ci95": d["ci95"], "significant": d["significant"]})
    neighbours.sort(key=lambda d: position[d["a"]])
    return {
        "matches": len(outcomes),
        "deals": deals,
        "order": order,
        "standings": [
            {"place": i + 1, "bot": names[r["entry"]], "points_per_match": r["points_per_match"], "ci95": r["ci95"]}
            for i, r in enumerate(doc["standings"])
        ],
        "neighbours": neighbours,
    }


def separated_field(standings: list[dict[str, Any]], size: int = FIELD_SIZE) -> dict[str, Any]:
    """Decision 295's field from a choice round robin's standings (best
    first): of the ``size``-bot subsets holding the first and the last, the
    one whose gaps between neighbours (points a match), smallest first, are
    largest in lexicographic order (the first such, in the standings' order).
    Returns the field and its gaps."""
    points = [(row["bot"], row["points_per_match"]) for row in standings]
    if len(points) < size:
        raise ValueError(f"{len(points)} candidates for a field of {size}")
    first, *middle, last = points

    def gaps(chosen: list[tuple[str, float]]) -> list[float]:
        return [a[1] - b[1] for a, b in zip(chosen, chosen[1:])]

    # combinations keep the standings' order, so each field is best first
    fields = ([first, *inner, last] for inner in itertools.combinations(middle, size - 2))
    best = max(fields, key=lambda chosen: sorted(gaps(chosen)))
    return {"field": [name for name, _ in best], "gaps": [round(g, 4) for g in gaps(best)]}


# -- measures --------------------------------------------------------------------


def kendall_tau(shown: list[str], true: list[str]) -> float:
    """Kendall's tau-a between two orders of the same items."""
    where = {name: i for i, name in enumerate(true)}
    ranks = [where[name] for name in shown]
    n = len(ranks)
    if n < 2:
        return 1.0
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if ranks[i] < ranks[j]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (n * (n - 1) / 2)


def top_exact(shown: list[str], true: list[str], top: int = TOP) -> bool:
    return shown[:top] == true[:top]


def reached(series: list[tuple[float, bool]]) -> float | None:
    """The first x at which the condition holds."""
    return next((x for x, ok in series if ok), None)


def held(series: list[tuple[float, bool]]) -> float | None:
    """The first x from which the condition holds to the end of the series
    (None when it does not hold at the end)."""
    if not series or not series[-1][1]:
        return None
    x = series[-1][0]
    for at, ok in reversed(series):
        if not ok:
            break
        x = at
    return x


# "Held" by a run that does not hold at its end is unknown, only later than
# the horizon: leaving such runs out (as tau_held does) favours a ranking
# that seldom holds, such as today's Elo at 2 players. The *_or_horizon
# measures count each of them at the horizon (its last checkpoint) instead,
# a lower bound on its true value: for a ranking that holds in every run
# over one that does not, their ratio is a lower bound too.
CENSORED = {"tau_held_or_horizon": "tau_held", "top_held_or_horizon": "top_held"}
MEASURES = ("tau_reached", "tau_held", "top_reached", "top_held", *CENSORED)


def mean_interval(xs: list[float]) -> dict[str, Any]:
    from cardroom.tournament import stats

    if not xs:
        return {"estimate": None, "low": None, "high": None, "n": 0}
    i = stats.mean_interval(xs, method="t")
    return {"estimate": i.estimate, "low": i.low, "high": i.high, "n": i.n}


def ratio_interval(num: list[float], den: list[float], rounds: int = 2000, seed: int = 1) -> dict[str, Any]:
    """mean(num) / mean(den), with a bootstrap 95% interval (each resampled
    over its own repetitions)."""
    if not num or not den:
        return {"estimate": None, "low": None, "high": None}
    rng = random.Random(seed)
    estimate = statistics.mean(num) / statistics.mean(den)
    draws = sorted(
        statistics.mean(rng.choices(num, k=len(num))) / statistics.mean(rng.choices(den, k=len(den)))
        for _ in range(rounds)
    )
    return {"estimate": estimate, "low": draws[int(0.025 * rounds)], "high": draws[int(0.975 * rounds) - 1]}


def paired_ratio_interval(
    num: list[float | None], den: list[float | None], rounds: int = 2000, seed: int = 3
) -> dict[str, Any]:
    """mean(num) / mean(den) over the runs where both are measured (two
    rankings of the same runs), with a bootstrap 95% interval resampling
    those runs together."""
    pairs = [(a, b) for a, b in zip(num, den, strict=True) if a is not None and b is not None]
    if not pairs:
        return {"estimate": None, "low": None, "high": None, "runs": 0}
    rng = random.Random(seed)

    def ratio(sample: list[tuple[float, float]]) -> float:
        return statistics.mean(a for a, _b in sample) / statistics.mean(b for _a, b in sample)

    draws = sorted(ratio(rng.choices(pairs, k=len(pairs))) for _ in range(rounds))
    return {
        "estimate": ratio(pairs),
        "low": draws[int(0.025 * rounds)],
        "high": draws[int(0.975 * rounds) - 1],
        "runs": len(pairs),
    }


def share_interval(hits: list[int], shown: list[int], rounds: int = 2000, seed: int = 2) -> dict[str, Any]:
    """Share of hits over shown, pooled over runs, bootstrap over runs."""
    total = sum(shown)
    if total == 0:
        return {"estimate": None, "low": None, "high": None, "shown": 0}
    rng = random.Random(seed)
    runs = list(zip(hits, shown))
    draws = []
    for _ in range(rounds):
        sample = rng.choices(runs, k=len(runs))
        s = sum(b for _a, b in sample)
        if s:
            draws.append(sum(a for a, _b in sample) / s)
    draws.sort()
    return {
        "estimate": sum(hits) / total,
        "low": draws[int(0.025 * len(draws))],
        "high": draws[int(0.975 * len(draws)) - 1],
        "shown": total,
    }


# -- one ladder run against the database -----------------------------------------


@dataclass
class Run:
    """One run's checkpoints: matches per bot, and for each ranking its
    order, and (the model's) how many were shown settled, how many of them
    within one place of the truth."""

    # "single", "sets", "informative" (single matches, informative pairing),
    # "balanced" (single, balanced seating) or "informative-balanced" (both)
    mode: str
    checkpoints: list[float] = field(default_factory=list)
    orders: dict[str, list[list[str]]] = field(default_factory=dict)
    settled: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # per checkpoint, each version's (matches, more_matches shown; None once settled)
    waiting: dict[str, list[dict[str, tuple[int, int | None]]]] = field(default_factory=dict)
    # with --oracle: over the run's single matches, each seat's payoff less
    # its line-up's mean in the truth, squared and summed, by kind
    deviations: dict[str, float] = field(default_factory=dict)


def field_bots(game: str, names: list[str]):
    """The field as ladder bots (made once per database: cardroom's own, a
    version each, active), keyed by name."""
    from ladder.models import Bot
    from ladder.services import bots as bot_services

    owner = bot_services.system_user()  # its bots share tables (one owner's would not: matchmaking)
    program = (ROOT / "bots" / "random_bot.py").read_bytes()
    out = {}
    for name in names:
        label = f"cv-{name}"
        bot = Bot.objects.filter(game=game, name=label).first()
        if bot is None:
            bot = bot_services.create_bot(owner=owner, game=game, name=label)
            version = bot_services.upload_version(
                bot=bot, filename="bot.py", data=program + f"\n# {game} {name}\n".encode()
            )
            bot_services.activate_version(version)
            bot.refresh_from_db()
        elif bot.owner_id != owner.pk:  # made by an earlier run under an owner of its own
            Bot.objects.filter(pk=bot.pk).update(owner=owner)
            bot.refresh_from_db()
        out[name] = bot
    return out


def ladder_run(
    store: MatchStore,
    game: str,
    k: int,
    names: list[str],
    true_order: list[str],
    mode: str,
    horizon: float,
    seed: int,
    step: float = 1.0,
    rotate_seats: bool = False,
    fresh_deals: bool = False,
    centres: dict[str, float] | None = None,
    oracle: tuple[float, ...] = (),
) -> Run:
    """Today's scheduler and Elo from nothing, inside a transaction rolled
    back at the end (every run starts from the same empty ladder); each
    match the scheduler makes played, rated by Elo, and ranked by the
    model: ``single`` with sets off, ``sets`` with them on for this ladder.
    ``informative``: single matches, the scheduler pairing by the stored
    adjusted ranking (CARDROOM_PAIRING=informative), refreshed by the real
    service before each top-up as the periodic task would (here its
    snapshot has no luck rows: the plain model). A single match is played
    with the seats the scheduler shuffled (``rotate_seats``: as until
    decision 292, deal j of a line-up in its rotation j mod k). Beside the
    model's rankings, ``…-seatfit``: the same outcomes ranked with each
    seat's advantage fitted (``ladder.ranking.fit(seats=True)``, decision
    292). With ``centres`` (``lineup_means``) and ``oracle`` shares
    ``s``, rankings ``oracle-s`` of the results ``m + √s (p − m)`` beside
    them (decision 302), and the run's ``deviations``."""
    from django.db import transaction
    from django.test import override_settings
    from django.utils import timezone

    from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating
    from ladder.services.adjusted import refresh as refresh_adjusted
    from ladder.services.matchmaking import top_up_ladder
    from ladder.services.ratings import apply_match_ratings

    bots = field_bots(game, names)
    name_of = {b.pk: n for n, b in bots.items()}
    version_of = {n: BotVersion.objects.get(pk=b.current_version_id) for n, b in bots.items()}
    rng = random.Random(derive(SEED_BASE, "scheduler", game, k, mode, seed))
    own_deals = seed if fresh_deals else None  # the run's own deals, or those every run shares
    run = Run(mode)
    # the model's rankings, and the column of ladder_deal's results each ranks
    played_kinds = {"plain": 2, "adjusted": 3} | ({"adjusted-alt": 4} if game in store.alt else {})
    # the oracle's results: columns after ladder_deal's five
    kinds = played_kinds | {f"oracle-{share:g}": 5 + i for i, share in enumerate(oracle)}
    suffix = {
        "single": "", "sets": "-sets", "informative": "-informative", "balanced": "-balanced",
        "informative-balanced": "-informative-balanced",
    }[mode]  # fmt: skip
    rankings = [f"{r}{suffix}" for r in ("elo", *kinds)]
    # (label, outcomes' kind, seat advantages fitted): the model's rankings
    rankers = [(label, kind, False) for kind, label in zip(kinds, rankings[1:])]
    rankers += [(f"{kind}-seatfit{suffix}", kind, True) for kind in ("plain", "adjusted")]
    informative = mode.startswith("informative")
    for r in rankings + [label for label, _kind, _seats in rankers]:
        run.orders[r] = []
        if not r.startswith("elo"):
            run.settled[r] = []
    outcomes: dict[str, list[Outcome]] = {kind: [] for kind in kinds}
    deals_used: dict[tuple[str, ...], int] = {}
    set_deal: dict[int, int] = {}  # by duplicate set: its deal
    set_results: dict[int, list[dict[str, tuple]]] = {}  # by duplicate set: its rotations played
    seats_played = 0
    where_true = {n: i for i, n in enumerate(true_order)}

    def record(match: Match, by_name: dict[str, tuple]) -> None:
        participants = list(match.participants.order_by("seat"))
        for p in participants:
            p.rank, p.score = by_name[name_of[p.bot_id]][:2]
        Participant.objects.bulk_update(participants, ["rank", "score"])
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.save(update_fields=["status", "finished"])
        apply_match_ratings(match, participants)

    next_checkpoint = [step]

    def checkpoint() -> None:
        """The orders and settled counts, each time the matches per bot
        pass a multiple of ``step``."""
        if seats_played / len(names) < next_checkpoint[0]:
            return
        while next_checkpoint[0] <= seats_played / len(names):
            next_checkpoint[0] += step
        run.checkpoints.append(seats_played / len(names))
        elo_ids = (
            Rating.objects.filter(ladder=ladder, bot__in=list(bots.values()))
            .order_by("-elo", "-ordinal", "bot_id")
            .values_list("bot_id", flat=True)
        )
        run.orders[rankings[0]].append([name_of[b] for b in elo_ids])
        by_version = {v.pk: n for n, v in version_of.items()}
        for label, kind, seat_fit in rankers:
            ranks = rank(outcomes[kind], seats=seat_fit)
            shown = [by_version[r.version] for r in ranks]
            missing = [n for n in names if n not in shown]  # not played yet: last, by name
            run.orders[label].append(shown + sorted(missing))
            settled = [r for r in ranks if r.settled]
            right = sum(1 for r in settled if abs(r.place - 1 - where_true[by_version[r.version]]) <= 1)
            run.settled[label].append((right, len(settled)))
            run.waiting.setdefault(label, []).append(
                {by_version[r.version]: (r.matches, r.more_matches) for r in ranks}
            )

    # "single": the scheduler makes single matches, whatever the settings;
    # "sets": it makes the sets itself (a bot whose cost is not known yet
    # still plays single matches, as on the ladder)
    sets = [f"{game}:{k}"] if mode == "sets" else []
    with (
        transaction.atomic(),
        override_settings(
            CARDROOM_PAIRING="informative" if informative else "elo",
            CARDROOM_DUPLICATE_SETS=sets,
            CARDROOM_SEATING="balanced" if mode.endswith("balanced") else "shuffled",
        ),
    ):
        ladder = Ladder.objects.filter(game=game, players_per_match=k).order_by("pk").first()
        Ladder.objects.exclude(pk=ladder.pk).update(active=False)
        ladder.active = True
        ladder.save(update_fields=["active"])
        Bot.objects.filter(game=game).exclude(pk__in=[b.pk for b in bots.values()]).update(withdrawn=timezone.now())
        while seats_played / len(names) < horizon:
            if informative:
                refresh_adjusted(ladder)
            created = top_up_ladder(ladder, rng)
            if not created:
                raise RuntimeError("the scheduler made no match")
            for match in Match.objects.filter(pk__in=created).order_by("pk"):
                seat_names = [name_of[b] for b in match.participants.order_by("seat").values_list("bot_id", flat=True)]
                lineup = tuple(sorted(seat_names))
                if match.duplicate_set_id is None:  # a single match: the line-up's next deal
                    deal = deals_used.get(lineup, 0)
                    deals_used[lineup] = deal + 1
                    rotation = deal % k
                else:  # a rotation of a set: the set's one deal
                    if match.duplicate_set_id not in set_deal:
                        set_deal[match.duplicate_set_id] = deals_used.get(lineup, 0)
                        deals_used[lineup] = set_deal[match.duplicate_set_id] + 1
                    deal, rotation = set_deal[match.duplicate_set_id], match.set_rotation
                if match.duplicate_set_id is None and not rotate_seats:
                    # the seats the scheduler shuffled, as on the ladder
                    result = store.ladder_deal(game, lineup, deal, seats=seat_names, run=own_deals)
                else:
                    result = store.ladder_deal(game, lineup, deal, rotation, run=own_deals)
                if oracle:
                    result = with_oracle(result, lineup, centres, oracle)
                    if match.duplicate_set_id is None:
                        for kind, column in played_kinds.items():
                            run.deviations[kind] = run.deviations.get(kind, 0.0) + sum(
                                (result[n][column] - centres[lineup_key(lineup, n)]) ** 2 for n in lineup
                            )
                record(match, result)  # Elo rates each rotation on its own
                seats_played += k
                if match.duplicate_set_id is None:
                    # in seat order, as ladder.selectors.outcomes gives them
                    # (the model fits each seat's advantage)
                    played = seat_names if not rotate_seats else [lineup[(s + rotation) % k] for s in range(k)]
                    for kind, column in kinds.items():
                        outcomes[kind].append(
                            Outcome(tuple(version_of[n].pk for n in played), tuple(result[n][column] for n in played))
                        )
                else:
                    # a complete set is one outcome standing for k matches
                    # (ladder.selectors.outcomes); here every rotation is played
                    pending = set_results.setdefault(match.duplicate_set_id, [])
                    pending.append(result)
                    if len(pending) == k:
                        for kind, column in kinds.items():
                            outcomes[kind].append(
                                Outcome(
                                    tuple(version_of[n].pk for n in lineup),
                                    tuple(statistics.mean(res[n][column] for res in pending) for n in lineup),
                                    matches=k,
                                )
                            )
                checkpoint()
        transaction.set_rollback(True)
    return run


# -- the report --------------------------------------------------------------------


def more_matches_calibration(waiting: list[dict[str, tuple[int, int | None]]]) -> list[tuple[int, int | None]]:
    """For every checkpoint where a version was shown "about m more
    matches" (not the cap), the pair (m, the matches it then played until
    it was first shown settled; None if it never was in the run)."""
    from ladder.ranking import MORE_MATCHES_CAP

    out = []
    for t, shown in enumerate(waiting):
        for name, (played, more) in shown.items():
            if more is None or more >= MORE_MATCHES_CAP:
                continue
            later = next((w[name][0] for w in waiting[t + 1 :] if name in w and w[name][1] is None), None)
            out.append((more, None if later is None else later - played))
    return out


def calibration_summary(pairs: list[tuple[int, int | None]]) -> dict[str, Any]:
    """How "about m more matches" compared with what followed: the share of
    those shown that settled within the run, and among them the quartiles
    of actual / shown."""
    done = sorted(actual / more for more, actual in pairs if actual is not None)
    if not done:
        return {"shown": len(pairs), "settled_in_run": 0}

    def q(p: float) -> float:
        return done[min(len(done) - 1, int(p * len(done)))]

    return {"shown": len(pairs), "settled_in_run": len(done), "ratio_quartiles": [q(0.25), q(0.5), q(0.75)]}


def summarise(runs: list[Run], true_order: list[str]) -> dict[str, Any]:
    per: dict[str, dict[str, list]] = {}
    for run in runs:
        for label, orders in run.orders.items():
            taus = [kendall_tau(o, true_order) for o in orders]
            tops = [top_exact(o, true_order) for o in orders]
            row = per.setdefault(
                label,
                {
                    "tau_reached": [],
                    "tau_held": [],
                    "top_reached": [],
                    "top_held": [],
                    **{name: [] for name in CENSORED},
                    "final_tau": [],
                    "settled_right": [],
                    "settled_shown": [],
                    "settled_at_end": [],
                    "calibration": [],
                    "runs": 0,
                    "by_run": {},  # every run's value, None where not reached (for paired ratios)
                },
            )
            row["runs"] += 1
            tau_series = [(x, t >= TAU_TARGET) for x, t in zip(run.checkpoints, taus)]
            top_series = list(zip(run.checkpoints, tops))
            for name, value in (
                ("tau_reached", reached(tau_series)),
                ("tau_held", held(tau_series)),
                ("top_reached", reached(top_series)),
                ("top_held", held(top_series)),
            ):
                if value is not None:
                    row[name].append(value)
                row["by_run"].setdefault(name, []).append(value)
            for name, of in CENSORED.items():
                value = row["by_run"][of][-1]
                row[name].append(value if value is not None else run.checkpoints[-1])
                row["by_run"].setdefault(name, []).append(row[name][-1])
            row["final_tau"].append(taus[-1])
            if label in run.settled:
                row["settled_right"].append(sum(a for a, _b in run.settled[label]))
                row["settled_shown"].append(sum(b for _a, b in run.settled[label]))
                row["settled_at_end"].append(run.settled[label][-1][1] / len(true_order))
                row["calibration"] += more_matches_calibration(run.waiting.get(label, []))
    out = {}
    for label, row in per.items():
        entry = {"runs": row["runs"], "final_tau": mean_interval(row["final_tau"])}
        for name in ("tau_reached", "tau_held", "top_reached", "top_held"):
            entry[name] = {**mean_interval(row[name]), "runs_reaching": len(row[name]), "values": row[name]}
        for name, of in CENSORED.items():  # every run: "runs_reaching" says how many held
            entry[name] = {**mean_interval(row[name]), "runs_reaching": len(row[of]), "values": row[name]}
        if row["settled_shown"]:
            entry["settled_within_one"] = share_interval(row["settled_right"], row["settled_shown"])
            entry["settled_at_end"] = mean_interval(row["settled_at_end"])
            entry["more_matches"] = calibration_summary(row["calibration"])
        out[label] = entry
    ratios = {}
    for new in (
        "plain", "adjusted", "adjusted-alt", "elo-sets", "plain-sets", "adjusted-sets", "adjusted-alt-sets",
        "elo-informative", "plain-informative", "adjusted-informative", "adjusted-alt-informative",
        "elo-balanced", "plain-balanced", "adjusted-balanced",
        "elo-informative-balanced", "plain-informative-balanced", "adjusted-informative-balanced",
    ):  # fmt: skip
        if new in per and "elo" in per:
            ratios[f"elo/{new}"] = {name: ratio_interval(per["elo"][name], per[new][name]) for name in MEASURES}
    # The pairing alone: the same model, Elo's pairing over the informative one.
    for ranking in ("plain", "adjusted"):
        if ranking in per and f"{ranking}-informative" in per:
            ratios[f"{ranking}/{ranking}-informative"] = {
                name: ratio_interval(per[ranking][name], per[f"{ranking}-informative"][name]) for name in MEASURES
            }
    # The pairing alone, both seated as configured (balanced): the same model,
    # Elo's pairing over the informative one.
    for ranking in ("elo", "plain", "adjusted"):
        if f"{ranking}-balanced" in per and f"{ranking}-informative-balanced" in per:
            ratios[f"{ranking}-balanced/{ranking}-informative-balanced"] = {
                name: ratio_interval(per[f"{ranking}-balanced"][name], per[f"{ranking}-informative-balanced"][name])
                for name in MEASURES
            }
    # The seating alone: each ranking's matches per bot with seats shuffled
    # over balanced (different runs of the scheduler: each resampled on its own).
    for ranking in ("elo", "plain", "adjusted"):
        if ranking in per and f"{ranking}-balanced" in per:
            ratios[f"{ranking}/{ranking}-balanced"] = {
                name: ratio_interval(per[ranking][name], per[f"{ranking}-balanced"][name]) for name in MEASURES
            }
    # The sets alone: each ranking's matches per bot with sets over without
    # (different runs of the scheduler: each resampled on its own).
    for ranking in ("elo", "plain", "adjusted", "adjusted-alt"):
        if ranking in per and f"{ranking}-sets" in per:
            ratios[f"{ranking}-sets/{ranking}"] = {
                name: ratio_interval(per[f"{ranking}-sets"][name], per[ranking][name]) for name in MEASURES
            }
    # The seat advantages alone: the model without them over with them, on
    # the same runs (paired).
    for kind in ("plain", "adjusted"):
        for suffix in ("", "-sets", "-informative", "-balanced", "-informative-balanced"):
            a, b = f"{kind}{suffix}", f"{kind}-seatfit{suffix}"
            if a in per and b in per:
                ratios[f"{a}/{b}"] = {
                    name: paired_ratio_interval(per[a]["by_run"][name], per[b]["by_run"][name]) for name in MEASURES
                }
            if b in per and "elo" in per and not suffix:
                ratios[f"elo/{b}"] = {name: ratio_interval(per["elo"][name], per[b][name]) for name in MEASURES}
    # The value function alone: the record's adjusted ranking over the
    # other's, on the same runs (paired).
    for suffix in ("", "-sets", "-informative"):
        a, b = f"adjusted{suffix}", f"adjusted-alt{suffix}"
        if a in per and b in per:
            ratios[f"{a}/{b}"] = {
                name: paired_ratio_interval(per[a]["by_run"][name], per[b]["by_run"][name]) for name in MEASURES
            }
    # The oracle (decision 302): today's over it, and the model on plain
    # results over it on the same runs (paired).
    for label in per:
        if label.startswith("oracle-"):
            suffix = label[len("oracle-") :].partition("-")[2]
            plain = f"plain-{suffix}" if suffix else "plain"
            if "elo" in per:
                ratios[f"elo/{label}"] = {name: ratio_interval(per["elo"][name], per[label][name]) for name in MEASURES}
            if plain in per:
                ratios[f"{plain}/{label}"] = {
                    name: paired_ratio_interval(per[plain]["by_run"][name], per[label]["by_run"][name])
                    for name in MEASURES
                }
    summary = {"rankings": out, "ratios": ratios}
    # the share of a single match's squared deviation the luck keeps, by
    # mode: the record's, and the other value function's (if any)
    for kind, key in (("adjusted", "variance_kept"), ("adjusted-alt", "variance_kept_alt")):
        kept = {}
        for mode in dict.fromkeys(run.mode for run in runs if kind in run.deviations):
            of_mode = [run for run in runs if run.mode == mode and kind in run.deviations]
            kept[mode] = share_interval(
                [run.deviations[kind] for run in of_mode], [run.deviations["plain"] for run in of_mode]
            )
        if kept:
            summary[key] = kept
    return summary


# -- the runs in processes of their own (--jobs) -------------------------------------


def play_run(store: MatchStore, cell: dict[str, Any], rep: int, mode: str, progress=print) -> Run:
    """Run ``rep`` of ``mode`` in the cell (a game and player count: the
    fields ``measure`` gives) on this process's database, said when done."""
    run = ladder_run(
        store, cell["game"], cell["players"], cell["names"], cell["order"], mode, cell["horizon"], rep,
        cell["step"], cell["rotate_seats"], cell["fresh_deals"], cell.get("centres"), tuple(cell.get("oracle", ())),
    )  # fmt: skip
    progress(f"{cell['game']} {cell['players']}p run {rep} {mode}: {run.checkpoints[-1]:.0f} matches per bot")
    return run


def run_from_json(doc: dict[str, Any]) -> Run:
    """A Run from its ``dataclasses.asdict`` in JSON (the lists back to the tuples a Run holds)."""
    return Run(
        doc["mode"],
        doc["checkpoints"],
        doc["orders"],
        {label: [tuple(x) for x in xs] for label, xs in doc["settled"].items()},
        {
            label: [{name: (m, more) for name, (m, more) in seen.items()} for seen in per]
            for label, per in doc["waiting"].items()
        },
        doc.get("deviations", {}),
    )


def _job_database_urls(jobs: int) -> list[str]:
    """A database for each process of the runs, named after this process's
    (its own PostgreSQL server): NAME_job0, NAME_job1, ..."""
    from urllib.parse import quote

    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"] != "django.db.backends.postgresql":
        raise SystemExit("--jobs plays the runs on PostgreSQL databases of their own: this one is not PostgreSQL")
    auth = quote(db["USER"] or "postgres", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    where = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    return [f"postgres://{auth}@{where}/{db['NAME']}_job{i}" for i in range(jobs)]


def runs_in_processes(store: MatchStore, cell: dict[str, Any], plan: list[tuple[int, str]], jobs: int) -> list[Run]:
    """The runs of ``plan`` (run, mode) shared among ``jobs`` processes, each
    on a database of its own, in the order of ``plan``. A run depends on
    nothing but its number, its mode and the matches it plays (its
    scheduler's generator is seeded by them, and it starts from the same
    empty ladder, its writes rolled back), so where it is played does not
    change it (tests/ranking/test_convergence.py compares). The processes
    read the matches kept so far and append those they play to the same
    file (a row is one short write to a file opened for appending)."""
    import subprocess
    import tempfile

    from ladder_backlog import drop_database

    urls = _job_database_urls(min(jobs, len(plan)))
    shares = [plan[i :: len(urls)] for i in range(len(urls))]
    alt = {game: value.label for game, value in store.alt.items()}
    with tempfile.TemporaryDirectory(prefix="convergence-jobs-") as tmp:
        children = []
        for i, (url, share) in enumerate(zip(urls, shares)):
            spec = Path(tmp) / f"job{i}.json"
            spec.write_text(json.dumps({
                "database_url": url, "var": f"ladder_convergence/job{i}", "cache": str(store.path or ""),
                "alt": alt, "cell": cell, "plan": share, "out": str(Path(tmp) / f"runs{i}.json"),
            }))  # fmt: skip
            children.append(subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--runs-of", str(spec)]))
        codes = [child.wait() for child in children]
        try:
            if any(codes):
                raise RuntimeError(f"a process of the runs failed (exit statuses {codes}); its error is printed above")
            by_plan = {}
            for i, share in enumerate(shares):
                done = json.loads((Path(tmp) / f"runs{i}.json").read_text())
                store.played += done["played"]
                store.cpu += done["cpu"]
                by_plan.update({(rep, mode): run_from_json(r) for (rep, mode), r in zip(share, done["runs"])})
        finally:
            for url in urls:
                drop_database(url)
    return [by_plan[rep, mode] for rep, mode in plan]


def runs_of(spec_path: str) -> int:
    """A process of ``runs_in_processes``: its share of the runs on its own
    database, their Runs and the matches it played written where the spec says."""
    from ladder_backlog import bench_env, fresh_django

    spec = json.loads(Path(spec_path).read_text())
    env = bench_env(spec["database_url"], "memory://", spec["var"], CARDROOM_QUOTA_BOTS="100")
    fresh_django(spec["database_url"], env)
    store = MatchStore(Path(spec["cache"]) if spec["cache"] else None, alt_values_named(spec["alt"]))
    cell, runs = spec["cell"], []
    for rep, mode in spec["plan"]:
        runs.append(play_run(store, cell, rep, mode, lambda line: print(line, flush=True)))
    from django.db import connections

    connections.close_all()  # before the database is dropped
    doc = {"runs": [dataclasses.asdict(r) for r in runs], "played": store.played, "cpu": store.cpu}
    Path(spec["out"]).write_text(json.dumps(doc))
    return 0


def measure(
    store: MatchStore,
    game: str,
    k: int,
    names: list[str],
    truth_deals: int,
    repeats: int,
    horizon: float,
    progress=print,
    modes: tuple[str, ...] = ("single", "sets"),
    step: float = 1.0,
    rotate_seats: bool = False,
    first_run: int = 0,
    fresh_deals: bool = False,
    jobs: int = 1,
    oracle: tuple[float, ...] = (),
) -> dict[str, Any]:
    started = time.monotonic()
    truth_doc = truth(store, game, k, names, truth_deals, jobs=jobs)
    progress(f"{game} {k}p truth: {truth_doc['order']} ({truth_doc['matches']} matches)")
    plan = [(rep, mode) for rep in range(first_run, first_run + repeats) for mode in modes]
    cell = {
        "game": game, "players": k, "names": names, "order": truth_doc["order"], "horizon": horizon, "step": step,
        "rotate_seats": rotate_seats, "fresh_deals": fresh_deals,
    }  # fmt: skip
    if oracle:
        cell |= {"oracle": list(oracle), "centres": lineup_means(store, game, k, names, truth_deals)}
    if jobs > 1 and len(plan) > 1:
        runs = runs_in_processes(store, cell, plan, jobs)
    else:
        runs = [play_run(store, cell, rep, mode, progress) for rep, mode in plan]
    return {
        "game": game,
        "players": k,
        "field": names,
        "truth": truth_doc,
        "repeats": repeats,
        "first_run": first_run,
        "deals": "each run its own" if fresh_deals else "shared by the runs",
        "horizon_matches_per_bot": horizon,
        "checkpoint_every_matches_per_bot": step,
        "modes": list(modes),
        "seats": "rotated" if rotate_seats else "shuffled by the scheduler",
        "value_functions": {"adjusted": ADAPTERS[game]().value.label}
        | ({"adjusted-alt": store.alt[game].label} if game in store.alt else {}),
        "summary": summarise(runs, truth_doc["order"]),
        "seconds": time.monotonic() - started,
    }


def _per_players(text: str, cast=int) -> dict[Any, Any]:
    """K:VALUE per player count, and GAME:K:VALUE for one game's (which
    wins, ``_for``): "2:20,4:16,allegory:2:80"."""
    out: dict[Any, Any] = {}
    for part in text.split(","):
        *game, k, value = part.split(":")
        out[(game[0], int(k)) if game else int(k)] = cast(value)
    return out


def _for(table: dict[Any, Any], game: str, k: int) -> Any:
    return table.get((game, k), table[k])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="allegory,allegra")
    parser.add_argument("--players", default="2,4")
    parser.add_argument(
        "--truth-deals",
        default="2:20,4:16,allegory:2:80,allegra:2:40",
        help="deals of the round robin, per player count (K:DEALS) or game (GAME:K:DEALS)",
    )
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--first-run", type=int, default=0, help="the runs are FIRST_RUN .. FIRST_RUN + REPEATS - 1")
    parser.add_argument(
        "--horizon",
        default="2:120,4:80,allegory:2:240",  # Allegory's 2-player figure of record (decision 296)
        help="matches per bot a run lasts, per player count (K:N) or game (GAME:K:N)",
    )
    parser.add_argument(
        "--step", default="2:1,4:2", help="matches per bot between checkpoints, per player count or game"
    )
    parser.add_argument("--sets-games", default="allegory,allegra", help="games whose runs include duplicate sets")
    parser.add_argument(
        "--informative",
        action="store_true",
        help="also runs of single matches paired by the adjusted ranking (CARDROOM_PAIRING=informative)",
    )
    parser.add_argument(
        "--fresh-deals",
        action="store_true",
        help="each run its own deals (by default the runs share them: the intervals then leave out the deals)",
    )
    parser.add_argument(
        "--informative-balanced",
        action="store_true",
        help="also runs of single matches paired informatively and seated balanced (decision 301)",
    )
    parser.add_argument(
        "--balanced",
        action="store_true",
        help="also runs of single matches seated by balanced seating (CARDROOM_SEATING=balanced)",
    )
    parser.add_argument(
        "--oracle",
        nargs="?",
        const="0.5,0.333,0.25",
        default="",
        help="beside the model's rankings, rankings of results keeping these shares of their deviation "
        "from the truth's line-up means, and the share the luck keeps (a yardstick: decision 302)",
    )
    parser.add_argument(
        "--rotate-seats",
        action="store_true",
        help="single matches in the line-up's rotation deal mod k, not the scheduler's seats (as before decision 292)",
    )
    parser.add_argument("--truth-only", action="store_true", help="the round robins only (to choose a field)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes playing at once: the round robins' matches, then the runs (each on a database of its own)",
    )
    parser.add_argument("--runs-of", help=argparse.SUPPRESS)  # a process of --jobs: its spec file
    parser.add_argument(
        "--choose",
        action="store_true",
        help="with --truth-only: on seeds of their own (derive(38000, 'field-choice', ...)), not the truth's",
    )
    parser.add_argument(
        "--field",
        default="",
        help="GAME[:PLAYERS]=BOT,BOT,...;GAME=... in place of FIELDS (every player count without :)",
    )
    parser.add_argument(
        "--allegory-value", help="beside the record's, the rows adjusted-alt: Allegory adjusted by this value function"
    )
    parser.add_argument("--allegra-value", help="the same for Allegra (names: benchmarks/luck_variance.py)")
    parser.add_argument("--quick", action="store_true", help="four cheap bots, a small round robin, two short runs")
    parser.add_argument("--cache", default=str(CACHE), help="the matches played ('' for none)")
    parser.add_argument("--out", default=str(ROOT / "var" / "ladder_convergence" / "report.json"))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("CONVERGENCE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/cardroom_convergence"),
    )
    args = parser.parse_args(argv)
    if args.runs_of:
        return runs_of(args.runs_of)
    truth_deals, horizon = _per_players(args.truth_deals), _per_players(args.horizon, float)
    if args.quick:
        truth_deals, horizon, args.repeats = {2: 4, 4: 1}, {2: 12.0, 4: 8.0}, 2

    from ladder_backlog import bench_env, fresh_django

    # the field's bots are cardroom's own user's, beside the built-in ones:
    # more than a user's quota of bots
    env = bench_env(args.database_url, "memory://", "ladder_convergence", CARDROOM_QUOTA_BOTS="100")
    fresh_django(args.database_url, env)
    report = run_all(args, truth_deals, horizon)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print_report(report)
    return 0


def alt_values(args) -> dict[str, ValueFunction]:
    """By game, the value function named by --allegory-value / --allegra-value."""
    return alt_values_named({g: getattr(args, f"{g}_value", None) for g in ("allegory", "allegra")})


def alt_values_named(names: dict[str, str | None]) -> dict[str, ValueFunction]:
    """By game, the value function of that name (luck_variance's names)."""
    from luck_variance import ALLEGORY_VALUES, ALLEGRA_VALUES

    out = {}
    for game, known in (("allegory", ALLEGORY_VALUES), ("allegra", ALLEGRA_VALUES)):
        name = names.get(game)
        if name:
            if name not in known:
                raise SystemExit(f"--{game}-value: one of {', '.join(sorted(known))}")
            out[game] = known[name]()
            assert out[game].label == name, (out[game].label, name)
    return out


def run_all(args, truth_deals: dict[Any, int], horizon: dict[Any, float]) -> dict[str, Any]:
    store = MatchStore(Path(args.cache) if args.cache else None, alt_values(args))
    step = _per_players(getattr(args, "step", "2:1,4:2"), float)
    fields = dict(FIELDS)
    for part in filter(None, getattr(args, "field", "").split(";")):
        where, bots = part.split("=")
        game, _, count = where.partition(":")
        for k in [int(count)] if count else [2, 4]:
            fields[game, k] = bots.split(",")
    results = []
    for game in args.games.split(","):
        for k in (int(p) for p in args.players.split(",")):
            names = QUICK_FIELD if args.quick else fields[game, k]
            if getattr(args, "truth_only", False):
                seeds = "field-choice" if getattr(args, "choose", False) else "truth"
                doc = truth(store, game, k, names, _for(truth_deals, game, k), seeds, getattr(args, "jobs", 1))
                results.append({"game": game, "players": k, "field": names, "truth": doc})
                if getattr(args, "choose", False) and len(names) > FIELD_SIZE:
                    results[-1]["separated_field"] = separated_field(doc["standings"])
                continue
            results.append(
                measure(
                    store,
                    game,
                    k,
                    names,
                    _for(truth_deals, game, k),
                    args.repeats,
                    _for(horizon, game, k),
                    modes=("single",)
                    + (("sets",) if game in getattr(args, "sets_games", "allegory,allegra").split(",") else ())
                    + (("informative",) if getattr(args, "informative", False) else ())
                    + (("balanced",) if getattr(args, "balanced", False) else ())
                    + (("informative-balanced",) if getattr(args, "informative_balanced", False) else ()),
                    step=_for(step, game, k),
                    rotate_seats=getattr(args, "rotate_seats", False),
                    first_run=getattr(args, "first_run", 0),
                    fresh_deals=getattr(args, "fresh_deals", False),
                    jobs=getattr(args, "jobs", 1),
                    oracle=tuple(float(x) for x in filter(None, getattr(args, "oracle", "").split(","))),
                    progress=lambda s: print(s, flush=True),
                )
            )
    return {
        "model": MODEL,
        "load_average": os.getloadavg(),
        "matches_played_now": store.played,
        "match_cpu_seconds_now": store.cpu,
        "results": results,
    }


def _fmt(i: dict[str, Any], digits: int = 0) -> str:
    if i.get("estimate") is None:
        return "none"
    if i.get("low") is None:
        return f"{i['estimate']:.{digits}f}"
    return f"{i['estimate']:.{digits}f} ({i['low']:.{digits}f}-{i['high']:.{digits}f})"


def print_report(report: dict[str, Any]) -> None:
    print(f"model {report['model']}, load average {report['load_average']}")
    for res in report["results"]:
        print(f"\n{res['game']} {res['players']} players: truth {res['truth']['order']}")
        for n in res["truth"]["neighbours"]:
            print(f"  {n['a']} - {n['b']}: {_fmt(n['ci95'], 3)}{'' if n['significant'] else ' (not separated)'}")
        for row in res["truth"]["standings"]:
            print(f"  {row['place']}. {row['bot']}: {_fmt(row['ci95'], 3)}")
        if "separated_field" in res:
            chosen = res["separated_field"]
            print(f"  the separated field (decision 295): {','.join(chosen['field'])}, gaps {chosen['gaps']}")
        if "summary" not in res:
            continue
        if "adjusted-alt" in res["value_functions"]:
            print("  value functions: " + ", ".join(f"{k} {v}" for k, v in res["value_functions"].items()))
        for label, row in res["summary"]["rankings"].items():
            runs = row["runs"]
            parts = [f"{name} {_fmt(row[name])} [{row[name]['runs_reaching']}/{runs}]" for name in MEASURES]
            settled = row.get("settled_within_one")
            if settled:
                parts.append(f"settled within one {_fmt(settled, 3)} of {settled['shown']}")
                parts.append(f"share settled at the end {_fmt(row['settled_at_end'], 2)}")
                parts.append(f"more matches: {row['more_matches']}")
            print(f"  {label}: " + ", ".join(parts))
        for label, ratios in res["summary"]["ratios"].items():
            print(f"  {label}: " + ", ".join(f"{n} {_fmt(r, 2)}" for n, r in ratios.items()))
        for key, which in (("variance_kept", "the record's"), ("variance_kept_alt", "the other value function's")):
            for mode, kept in res["summary"].get(key, {}).items():
                print(f"  the share of a match's squared deviation {which} luck keeps ({mode}): {_fmt(kept, 3)}")


if __name__ == "__main__":
    sys.exit(main())
