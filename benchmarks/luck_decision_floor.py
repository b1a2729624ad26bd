"""What no chance correction can take out of a result: the variance the
players' own decisions add (decision 305, issue 37).

    .venv/bin/python benchmarks/luck_decision_floor.py --game allegory [--lineups greedy,search,field-top,field-bottom]
        [--matches 200] [--nodes 4]

Decision 304 bounded what any chance correction keeps from below by the
part of a result the bots' own draws decide, ``Var(E[Y | r])``, and
showed that the bound need not be reached. This measures the bound that
is reached. Let ``V*(h) = E[Y | h]``, a seat's expected result given the
match's history ``h`` so far (every card seen, every move made), the bots
being the bots of the match. ``Y − V*(start)`` is the sum of ``V*``'s
steps, one per event; the steps have mean 0 given the history before them
and so are uncorrelated. The steps at chance events are exactly the luck
AIVAT's chance terms give with ``V = V*``; any other chance correction
(any fixed ``V``, expectations drawn or exact) differs from that only at
chance events, where the difference is uncorrelated with the rest. So
for every chance correction ``L``

    Var(Y − L) ≥ E[Σ over the decisions of Var_a V*(h·a)],

with equality for ``V*``: the variance the decisions add, a decision's
``V*`` spread over the actions its bot might have played there, is the
least any chance correction keeps. Only a term that knows a bot's policy
(AIVAT's action term) goes below it.

The measure, per match of a line-up (its seats rotated from match to
match, each match on seeds ``derive(37000, game, "decision-floor",
line-up, i)`` that no earlier measurement played):

- the match is played, and ``nodes`` of its decisions are drawn uniformly
  without replacement (the sum over all ``n`` decisions is estimated by
  ``n / nodes`` times the sum over those drawn: unbiased);
- at a drawn decision the seat's bot is asked twice for its action, by
  two fresh copies that know what it knew (the search bot's earlier
  observations) and draw from generators of their own: two independent
  actions ``a1``, ``a2`` from its policy. Where they are the same action
  the decision's term is 0 (its expectation given the two actions is
  ``½(V*(h·a1) − V*(h·a2))² = 0``); otherwise each is played out twice to
  the end by the match's bots, the unseen cards drawn afresh, giving
  ``y11, y12, y21, y22`` (by seat), and the term is

      ½(ȳ1 − ȳ2)² − ⅛((y11 − y12)² + (y21 − y22)²),

  whose expectation is ``Var_a V*(h·a)`` (the second part takes out the
  play-outs' own noise: ``E[(y11 − y12)²] = 2 Var(y | h·a1)``).

Reported by line-up, with bootstrap 95% intervals over the matches:
``floor``, the decisions' variance over the result's (each bot about its
mean in each seating, with n/(n − 1)); ``floor_seated``, the same seated
at random (each bot about its mean over every seat; a seat's advantage is
fixed before any card, so no chance correction moves it: it is added to
the decisions' part); the most any chance correction saves, their
inverses; and beside them the share the record's luck keeps on the same
matches, which is never below the floor but by noise.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from luck_variance import (  # noqa: E402
    SEED_BASE,
    bootstrap,
    chosen_value,
    kept_share,
    lineup_names,
    luck_report,
    make,
    with_interval,
)

from cardroom.luck.estimator import terminal_points  # noqa: E402
from cardroom.players import Player, StartInfo, TimeControl  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament.seeds import derive  # noqa: E402
from engine.core import CHANCE  # noqa: E402
from engine.replay import iter_states, state_after  # noqa: E402

DEFAULT_LINEUPS = "greedy,search,field-top,field-bottom"


class SearchFrom(Player):
    """The built-in search bot at a fixed budget, knowing ``history``: the
    observations its seat had at its earlier decisions, as the bot keeps
    them (bots/ismcts_bot.py ``make_choose``), so that a copy made in the
    middle of a match plays as the match's own would."""

    def __init__(self, name: str, history: list[dict]):
        from bots.ismcts_bot import decide

        self.name, self.spec = name, f"builtin:{name}"
        self._decide = decide
        self._iterations = int(name.split("-", 1)[1])
        self._history = list(history)
        self._rng = random.Random()

    def start(self, info: StartInfo) -> None:
        self._rng.seed(f"{info.seed}:{info.seat}:{self.name}")

    def act(self, state, seat):
        observation = state.observation(seat)
        action, _ = self._decide(
            observation, state.legal_actions(seat), self._rng, list(self._history), None, self._iterations
        )
        self._history.append(observation)
        return action


def player_from(name: str, game: str, history: list[dict]) -> Player:
    """A fresh copy of a line-up's bot that knows what the seat's bot knew."""
    return SearchFrom(name, history) if name.startswith("ismcts-") else make(name, game)


def started(players: list[Player], game: str, seed: int) -> list[Player]:
    n = len(players)
    for seat, player in enumerate(players):
        player.start(StartInfo(game, seat, n, "decision-floor", {}, TimeControl(), seed))
    return players


def decisions(doc: dict) -> list[tuple[object, int, list[list[dict]], bool]]:
    """Every decision of a replay: (the state before it, the seat to act,
    each seat's observations at its earlier decisions, whether Allegra's
    round has had its first reshuffle: its unseen cards then lie in two
    piles)."""
    n = doc["num_players"]
    histories: list[list[dict]] = [[] for _ in range(n)]
    out = []
    before = state_after(doc["game"], doc["num_players"], doc["options"], [])  # the initial state
    reshuffled = False
    for _index, event, state in iter_states(doc):
        if event["by"] == CHANCE:
            reshuffled = event["action"].get("type") == "reshuffle"
        else:
            seat = event["by"]
            out.append((before, seat, [list(h) for h in histories], reshuffled))
            histories[seat].append(before.observation(seat))
        before = state.clone()
    return out


def unseen_dealt_anew(game: str, state, reshuffled: bool, rng: random.Random):
    """``state`` with the cards nobody has seen dealt anew among their
    places, as the luck estimator's chance model has them (the engine's
    state holds the deck's order; the estimator takes the next card known
    from a pile as uniform over the pile): Allegory's deck (the setup
    showed the Pool and each Moral); Allegra's face-down slots and deck,
    one pile until the round's first reshuffle and two after it
    (cardroom/luck/allegra.py)."""
    alt = state.clone()
    if game == "allegory":
        rng.shuffle(alt.deck)
        return alt
    from cardroom.luck.allegra import _resample, _same
    from cardroom.luck.kernel import deck_locations, face_down_locations

    face_down, deck = face_down_locations(alt), deck_locations(len(alt.deck))
    return _resample(alt, [face_down, deck] if reshuffled else [face_down + deck], rng, _same)


def play_out(game: str, names: list[str], state, histories: list[list[dict]], seed: int) -> list[float]:
    """The rest of a match from ``state`` by the line-up's bots (each knowing
    its seat's history), chance and the bots' draws from ``seed``: each
    seat's rank points."""
    players = started([player_from(n, game, h) for n, h in zip(names, histories)], game, seed)
    chance = random.Random(derive(seed, "chance"))
    state = state.clone()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(chance))
            continue
        seat = state.to_act()[0]
        state.apply(seat, players[seat].act(state, seat))
    return terminal_points(state, frozenset())


def decision_term(
    game: str,
    names: list[str],
    state,
    seat: int,
    histories: list[list[dict]],
    reshuffled: bool,
    seed: int,
    plays: int,
) -> tuple[list[float], int]:
    """An unbiased estimate, by seat, of ``Var_a V*(h·a)`` at one decision
    (the module's formula), and the play-outs it took (0 or 2 ``plays``)."""
    k = len(names)
    actions = []
    for copy in (0, 1):
        bot = started([player_from(names[seat], game, histories[seat])], game, derive(seed, "action", copy))[0]
        # (started seats it as seat 0: only its generator's seed depends on the seat)
        actions.append(bot.act(state, seat))
    if actions[0] == actions[1]:
        return [0.0] * k, 0
    after = list(histories)
    after[seat] = [*histories[seat], state.observation(seat)]  # what the seat's bot keeps after deciding
    gaps: list[list[float]] = []  # by play-out, by seat: y1 − y2
    for j in range(plays):
        # the two actions' j-th play-outs share their seeds (common random numbers: less noise in the gap);
        # the unseen cards are dealt anew before the action, which may itself turn one up
        dealt = unseen_dealt_anew(game, state, reshuffled, random.Random(derive(seed, "play-out", j, "cards")))
        ys = []
        for action in actions:
            child = dealt.clone()
            child.apply(seat, action)
            ys.append(play_out(game, names, child, after, derive(seed, "play-out", j)))
        gaps.append([a - b for a, b in zip(*ys)])
    return [variance_term([row[s] for row in gaps]) for s in range(k)], 2 * plays


def variance_term(gaps: list[float]) -> float:
    """From the gaps ``y1 − y2`` between two actions' paired play-outs, an
    unbiased estimate of ``½(V*(h·a1) − V*(h·a2))²``: the squared mean gap
    less what the play-outs' noise adds to it (``Var(gap) / m``), halved.
    Its expectation over two actions drawn from the bot's policy is
    ``Var_a V*(h·a)``."""
    m = len(gaps)
    mean = sum(gaps) / m
    spread = sum((x - mean) ** 2 for x in gaps) / (m - 1)
    return (mean * mean - spread / m) / 2


def match_row(game: str, lineup: str, i: int, nodes: int, plays: int) -> dict:
    """One match of the line-up and its decisions' terms, by the line-up's order."""
    names = lineup_names(game, lineup)
    k = len(names)
    rotation = i % k
    seated = names[rotation:] + names[:rotation]  # seat s holds names[(rotation + s) % k]
    seed = derive(SEED_BASE, game, "decision-floor", lineup, i)
    doc = run_match(game, [make(n, game) for n in seated], seed=seed).replay
    report = luck_report(doc)
    every = decisions(doc)
    drawn = random.Random(derive(seed, "nodes")).sample(range(len(every)), min(nodes or len(every), len(every)))
    weight = len(every) / len(drawn)
    terms, play_outs = [0.0] * k, 0
    for node in drawn:
        state, seat, histories, reshuffled = every[node]
        got, n = decision_term(game, seated, state, seat, histories, reshuffled, derive(seed, "node", node), plays)
        play_outs += n
        for s in range(k):
            terms[s] += weight * got[s]
    pay, luck, floor = [0.0] * k, [0.0] * k, [0.0] * k
    for seat, x in enumerate(report.seats):
        j = (rotation + seat) % k
        pay[j], luck[j], floor[j] = x.payoff, x.luck, terms[seat]
    return {"rotation": rotation, "payoffs": pay, "lucks": luck, "terms": floor, "decisions": len(every),
            "play_outs": play_outs}  # fmt: skip


def _cells(rows: list[dict], seating) -> tuple[dict, dict]:
    """Each (seating, bot)'s payoffs and their mean."""
    cells: dict[tuple, list[float]] = {}
    for row in rows:
        for j, p in enumerate(row["payoffs"]):
            cells.setdefault((seating(row["rotation"]), j), []).append(p)
    return cells, {c: statistics.mean(v) for c, v in cells.items()}


def _unbiased_ss(cells: dict, means: dict) -> float:
    """The cells' sums of squares about their means, each times n/(n − 1)."""
    return sum(sum((p - means[c]) ** 2 for p in v) * len(v) / (len(v) - 1) for c, v in cells.items() if len(v) > 1)


def figures(rows: list[dict]) -> dict[str, float]:
    """The floor and the record's share kept (see the module), from ``match_row``'s rows."""
    k = len(rows[0]["payoffs"])
    terms = sum(sum(row["terms"]) for row in rows)
    out: dict[str, float] = {}
    cells, means = _cells(rows, lambda rotation: rotation)
    var_within = _unbiased_ss(cells, means)  # within a seating
    out["floor"] = terms / var_within if var_within > 0 else math.nan
    # seated at random: each bot about its mean over every seat; the seats' part
    # of that (between the seatings, less what the cells' own noise adds to it)
    # stays in whatever a chance correction does
    bot_cells, bot_means = _cells(rows, lambda _rotation: 0)
    seats_part = 0.0
    for j in range(k):
        mine = [(c, v) for c, v in cells.items() if c[1] == j]
        between = sum(len(v) * (means[c] - bot_means[(0, j)]) ** 2 for c, v in mine)
        within = sum(sum((p - means[c]) ** 2 for p in v) for c, v in mine)
        n_j = sum(len(v) for _, v in mine)
        noise = (len(mine) - 1) * within / (n_j - len(mine)) if n_j > len(mine) else 0.0
        seats_part += max(0.0, between - noise)
    out["floor_seated"] = (terms + seats_part) / _unbiased_ss(bot_cells, bot_means)
    lucks = [(row["rotation"], row["payoffs"], row["lucks"]) for row in rows]
    out["kept"] = kept_share(lucks)
    out["kept_seated"] = kept_share([(0, pay, luck) for _rotation, pay, luck in lucks])
    out["most"] = 1 / out["floor"] if out["floor"] > 0 else math.inf
    out["most_seated"] = 1 / out["floor_seated"] if out["floor_seated"] > 0 else math.inf
    return out


def line(fig: dict[str, float], boots: list[dict[str, float]], value: str) -> str:
    def one(name: str, form: str = ".3f", unit: str = "") -> str:
        return with_interval(fig, boots, name, form, unit)

    return (
        f"the decisions add {one('floor')} of a result's variance within a seating, {one('floor_seated')} "
        f"seated at random; a chance correction saves at most {one('most', '.2f', '×')} in balanced seats, "
        f"{one('most_seated', '.2f', '×')} against plain single games seated at random; luck by {value} keeps "
        f"{one('kept')} within a seating, {one('kept_seated')} seated at random"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="allegory and/or allegra (default both)")
    parser.add_argument(
        "--lineups", default=DEFAULT_LINEUPS, help="pairs (greedy, search, chips) and 4-player line-ups"
    )
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--nodes", type=int, default=0, help="decisions drawn a match (0: every decision)")
    parser.add_argument("--plays", type=int, default=12, help="play-outs an action, at a decision drawn")
    parser.add_argument("--first", type=int, default=0, help="the first match's index (a run in parts)")
    parser.add_argument(
        "--rows", type=Path, help="append each match's row to this file (JSON lines), and report on every row in it"
    )
    parser.add_argument("--report", action="store_true", help="only report on --rows' file")
    args = parser.parse_args()
    from cardroom.luck.games import adapter_for

    for game in args.game or ["allegory", "allegra"]:
        value = (chosen_value(game) or adapter_for(game).value).label
        for lineup in args.lineups.split(","):
            if lineup == "chips" and game != "allegory":
                continue
            names = lineup_names(game, lineup)
            t0 = time.monotonic()
            key = {"game": game, "lineup": lineup, "nodes": args.nodes, "plays": args.plays}
            rows = []
            if not args.report:
                for i in range(args.first, args.first + args.matches):
                    row = {**key, "i": i, **match_row(game, lineup, i, args.nodes, args.plays)}
                    rows.append(row)
                    if args.rows:
                        with args.rows.open("a", encoding="utf-8") as out:
                            out.write(json.dumps(row) + "\n")
            if args.rows and args.rows.exists():  # every row of this line-up and design in the file, once each
                kept_rows = {}
                for text in args.rows.read_text(encoding="utf-8").splitlines():
                    row = json.loads(text)
                    if all(row.get(name) == want for name, want in key.items()):
                        kept_rows[row["i"]] = row
                rows = [kept_rows[i] for i in sorted(kept_rows)]
            if len(rows) < 2 * len(names):
                print(f"{game} {lineup}: {len(rows)} matches, too few to report", flush=True)
                continue
            fig = figures(rows)
            every = "every decision" if args.nodes == 0 else f"{args.nodes} decisions each"
            print(
                f"{game} {len(names)}p {lineup} ({','.join(names)}), {len(rows)} matches, {every} "
                f"(of {statistics.mean(r['decisions'] for r in rows):.0f} a match), {args.plays} play-outs an action "
                f"({sum(r['play_outs'] for r in rows)} in all): {line(fig, bootstrap(rows, figures), value)} "
                f"[{time.monotonic() - t0:.0f} s]",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
