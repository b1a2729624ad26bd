"""Issue 37's measurements of the luck estimator (docs/luck.md, decision 186).

    .venv/bin/python benchmarks/luck_variance.py unbiased [--game G] [--random N] [--search M] [--actions]
    .venv/bin/python benchmarks/luck_variance.py fewer [--game G] [--pairs P] [--sets S]
    .venv/bin/python benchmarks/luck_variance.py beside-record [--game G] [--pairs P] [--sets S] --allegory-value V
        [--against-allegra-value V]

    (any of them: [--allegra-value allegra-area@N] [--allegory-value allegory-net@1] [--seed-base B])
    .venv/bin/python benchmarks/luck_variance.py cost [--game G] [--matches K]
    .venv/bin/python benchmarks/luck_variance.py cost-sandboxed [--game G] [--matches K] [--players 2,3,4] [--loops]
        [--also-allegra-value V ...]
    .venv/bin/python benchmarks/luck_variance.py decompose [--matches K] [--seed-base B] [--allegra-value V]
    .venv/bin/python benchmarks/luck_variance.py net-speed [--game G] [--matches K] [--players 2,3,4]
    .venv/bin/python benchmarks/luck_variance.py deal-share [--game G] [--pairs P] [--sets S]
    .venv/bin/python benchmarks/luck_variance.py search-actions [--game G] [--sets S] [--samples K]
    .venv/bin/python benchmarks/luck_variance.py kept [--game G] [--matches K] [--lineups NAME,...]
    .venv/bin/python benchmarks/luck_variance.py own-draws [--game G] [--matches K] [--lineups NAME,...]

* ``unbiased``: N matches of random bots (2 players) and M of greedy
  against search (builtin ismcts with a small fixed iteration budget, seats
  alternating): each seat's mean luck with its 95% interval, and the mean
  difference greedy - search plain and adjusted, each with its interval;
  with ``--actions``, M more of greedy against weak greedy with the weak
  greedy's action luck (AIVAT's action term, its policy being known).
* ``fewer``: for close pairs (greedy against greedy playing a random move
  a tenth of the time; search at two iteration budgets), S duplicate sets
  (one deal, both seatings): the per-game variance of the difference
  between the two bots, plain and adjusted, single games and sets, and the
  games needed for the same interval, plain single games against each
  (with a bootstrap 95% interval of the ratio); for the weak greedy's
  pair, also with its action luck taken out. ``--pairs chips`` (Allegory):
  greedy against ``greedy-chips``, weakened without random moves
  (decision 298).
* ``beside-record`` (with ``--allegory-value`` or ``--allegra-value``):
  ``fewer``'s sets again, the chosen value function against the one of
  record on the same matches: the games needed adjusted by the record's
  over adjusted by the chosen one's, with a paired bootstrap interval
  (with ``--against-allegra-value``, that one in place of the record's).
* ``cost``: CPU of the luck computation against the CPU of playing the
  match (built-in bots in this process), per match; with
  ``--allegra-value``, the alternative's and, on the same matches, the
  value function of record's.
* ``cost-sandboxed``: the same against a match as a ladder worker plays
  it, the built-in greedy bots as programs in the sandbox (greedy at each
  of ``--players``' table sizes, 2 and 4 unless told); with ``--loops``
  and a network chosen, that network also through its reference's loops
  over the weights' lists (decision 280), its luck checked to be the same;
  with ``--also-allegra-value``, those value functions' luck timed too, on
  the same replays (decision 281).
* ``net-speed``: the learned networks' ``V`` per state (every state of K
  greedy matches a table size), with their weights as literals
  (cardroom/luck/nets.py) and through the reference's loops over the
  weights' lists (the form before decision 280), timed alternately in
  the same run, 10 rounds: each one's best µs a state, and the ratio's
  mean with its 95% interval over the rounds; the two checked equal.
* ``deal-share``: how much of a close pair's result its deal decides. S
  deals (the pair's seats alternating from deal to deal), each played
  twice in the same seats with the bots' own random draws independent
  (their generators salted apart); the covariance of the two results
  over the deals, within each seating, is the variance of the result's
  expectation given the deal, and its share of the result's variance
  bounds what a duplicate set can save: a set of one deal in both
  seatings needs at most ``1 / (1 - share)`` times fewer games than
  single games seated the same way (decision 298 gives the argument).
  Pairs: ``greedy`` (greedy v weak greedy), ``search`` (ismcts-40 v
  ismcts-20), ``deterministic`` (greedy v greedy: the deal decides
  everything, the check that the method finds a share of 1).
* ``search-actions``: ``fewer``'s search pair (S sets) with AIVAT's action
  term for both search seats: the search's policy is not written down,
  but it can be drawn from, so at each of its decisions the search runs K
  more times from the same observation and memory with generators of its
  own, and ``E_π[V(after a)]`` is the mean of ``V`` after those K
  actions (still unbiased: they and the played action come from one
  distribution, independently; decision 299).
* ``kept`` (decision 303): at 4 players, K matches of each line-up
  (``LINEUPS``: four greedy bots; two greedy and two weak greedy; the
  convergence field's best four and worst four), each a deal of its own,
  the seats rotated from match to match. A bot's deviation ``d`` is its
  rank points less its mean in its seat over the line-up's matches, its
  luck ``L`` the record's (or the chosen value function's), centred the
  same way. Per line-up: the share of the deviation the luck keeps,
  ``Σ(d − L)² / Σd²``; the best multiple of the luck, ``β̂ = Σd·L /
  ΣL²``; each with a bootstrap 95% interval over matches; and the share
  kept at ``β̂`` (in-sample: a bound).
* ``own-draws`` (decision 304): how much of a result the bots' own random
  draws decide, which no correction for chance can take out. K draws of
  each line-up's bots (``kept``'s 4-player line-ups, or the close pairs'
  names: ``greedy``, ``search``, ``chips``), each played on two deals of
  their own in the same seats (rotated from draw to draw), the bots'
  generators seeded by the draw alone. The covariance of the two results
  over the draws, within each seating, is the variance of the result's
  expectation given the bots' draws, ``Var(E[Y | r])``; every chance
  correction ``L`` (AIVAT's chance terms, whatever ``V``) is uncorrelated
  with every function of ``r``, so ``Var(Y − L) ≥ Var(E[Y | r])``: its
  share of ``Var(Y)`` is the least any value function keeps, and ``1 /
  share`` the most it can save, in single games or duplicate sets
  (decision 304 gives the argument). Each also seated at random (each
  bot about its mean over every seat: the seat's advantage, which no
  chance correction moves and a set of every rotation removes, is then in
  the floor), with the most a correction saves against plain single games
  seated at random, in single games and in sets. Beside them, on the same
  matches, the share the record's luck keeps (never below the floor, but
  by noise).
* ``decompose`` (Allegra, greedy against greedy): where the adjusted
  payoff's variance comes from. Seat 0's adjusted payoff is exactly
  ``V(start) + Σ drift + Σ move``: at each chance step the *drift*
  ``E[V after an outcome] − V(before)`` (the move that reveals the card
  applied in every alternative, so a revealing move's own effect is in
  it), at each other event the *move* ``V(after) − V(before)``; the
  credited luck is ``V(after) − E[V after an outcome]``. Each part's
  variance per match, and the variance of a round's raw and scored
  difference between the seats (the ender's doubling).

Matches run in this process through the ordinary runner with the built-in
bots in-process (no sandbox). Seeds come from ``derive(SEED_BASE, ...)``;
the value functions were set before any of these seeds was played, and are
never fitted on them. Each row prints as it is done.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # (kept's line-ups: the convergence benchmark's fields)

from bots import builtin_chooser, builtin_program  # noqa: E402
from cardroom.luck import luck_of  # noqa: E402
from cardroom.luck.allegory import (  # noqa: E402
    AllegoryAdapter,
    AllegoryValue,
    LookaheadAllegoryValue,
    NetAllegoryValue,
    ScaledNetAllegoryValue,
)
from cardroom.luck.allegra import (  # noqa: E402
    AllegraAdapter,
    DrawnNetAllegraValue,
    EnderAllegraValue,
    FittedAllegraValue,
    LookaheadAllegraValue,
    NetAllegraValue,
    OutcomeAllegraValue,
)
from cardroom.luck.estimator import expectation, iter_steps, luck_with, rank_points  # noqa: E402
from cardroom.players import InProcessPlayer, Player  # noqa: E402
from cardroom.runner import run_match  # noqa: E402
from cardroom.tournament.seeds import KeyedChance, derive  # noqa: E402

SEED_BASE = 37_000  # evaluation seeds; nothing is fitted on them
Z = 1.96
SEARCH_ITERATIONS = {"strong": 40, "weak": 20, "vs-greedy": 20}
WEAK_GREEDY_EPSILON = 0.1
# The close pairs by their --pairs name; "deterministic" is deal-share's
# check, "chips" Allegory's alone (Allegra's greedy bot draws its opening
# reveals, so it has no pair without random draws; decision 298).
PAIRS = {
    "greedy": ("greedy", "weak-greedy"),
    "search": (f"ismcts-{SEARCH_ITERATIONS['strong']}", f"ismcts-{SEARCH_ITERATIONS['weak']}"),
    "deterministic": ("greedy", "greedy"),
    "chips": ("greedy", "greedy-chips"),
}


def pairs_for(game: str, names: str) -> list[tuple[str, str]]:
    """The close pairs ``--pairs`` names that ``game`` has."""
    return [PAIRS[n] for n in names.split(",") if n != "chips" or game == "allegory"]


ALLEGRA_VALUES = {
    "allegra-area@2": FittedAllegraValue, "allegra-area@3": OutcomeAllegraValue, "allegra-ender@1": EnderAllegraValue,
    "allegra-net@1": NetAllegraValue, "allegra-net@2": DrawnNetAllegraValue, "allegra-look@1": LookaheadAllegraValue,
}  # fmt: skip
ALLEGRA_VALUE = None  # --allegra-value: another value function than the one of record
ALLEGORY_VALUES = {
    "allegory-tales@1": AllegoryValue, "allegory-net@1": NetAllegoryValue, "allegory-look@1": LookaheadAllegoryValue,
    "allegory-net@2": ScaledNetAllegoryValue,
}  # fmt: skip
ALLEGORY_VALUE = None  # --allegory-value: another value function than the one of record
# --loops: by game, the chosen network again through its reference's loops over
# the weights' lists (cardroom/luck/kernel.py; the form before decision 280)
LOOPS: dict[str, object] = {}
# --also-allegra-value: more Allegra value functions whose luck cost-sandboxed times on the same replays
ALSO: list = []
# --against-allegra-value: what beside-record compares the chosen one with, in place of the record's
AGAINST = None


class WeakGreedy(Player):
    """The greedy bot playing a uniformly random legal move a tenth of the time."""

    def __init__(self, game: str, epsilon: float = WEAK_GREEDY_EPSILON):
        self.name = "weak-greedy"
        self.spec = "builtin:weak-greedy"
        self._greedy = builtin_chooser("greedy", game)
        self._epsilon = epsilon
        self._rng = random.Random()

    def start(self, info) -> None:
        self._rng.seed(f"{info.seed}:{info.seat}:{self.name}")

    def act(self, state, seat):
        if self._rng.random() < self._epsilon:
            return state.random_action(seat, self._rng)
        return self._greedy(state.observation(seat), state.legal_actions(seat), self._rng)

    @staticmethod
    def policy(game: str, epsilon: float = WEAK_GREEDY_EPSILON):
        """The weak greedy's policy, exactly: ``epsilon`` uniform over the
        legal actions (``random_action`` is uniform), the rest the greedy
        bot's choice (uniform over the list it passes to ``rng.choice``,
        where it draws one: the built-in greedy bots draw at most once)."""
        greedy = builtin_chooser("greedy", game)

        class Recorder:
            def __init__(self):
                self.drawn_from = None

            def choice(self, seq):
                self.drawn_from = list(seq)
                return seq[0]

        def pi(state, seat):
            legal = state.legal_actions(seat)
            rec = Recorder()
            chosen = greedy(state.observation(seat), legal, rec)
            greedy_pi = [chosen] if rec.drawn_from is None else rec.drawn_from
            if legal[0]["type"] == "distribute":  # Allegory's legal list is a template, not the actions
                return allegory_distributions(legal[0], chosen, epsilon)
            out = []
            for a in legal:
                p = epsilon / len(legal) + (1 - epsilon) * greedy_pi.count(a) / len(greedy_pi)
                out.append((p, a))
            return out

        return pi


def allegory_distributions(template: dict, chosen: dict, epsilon: float) -> list[tuple[float, dict]]:
    """The weak greedy's policy at Allegory's distribute: ``random_action``
    puts each of the bid's chips on a Pool card drawn uniformly (every
    split of the chips, with its multinomial probability), a share
    ``epsilon``; the greedy bot's choice the rest."""
    cards, total = template["cards"], template["total"]
    out = [(1 - epsilon, chosen)]

    def splits(k: int, left: int):
        if k == len(cards) - 1:
            yield [left]
            return
        for x in range(left + 1):
            for rest in splits(k + 1, left - x):
                yield [x, *rest]

    for counts in splits(0, total):
        ways = math.factorial(total)
        for x in counts:
            ways //= math.factorial(x)
        p = epsilon * ways / len(cards) ** total
        out.append((p, {"type": "distribute", "chips": {c: x for c, x in zip(cards, counts) if x}}))
    return out


# "greedy-chips": Allegory's greedy bot valuing a Lore chip at 0.2 instead of
# 0.12 (decision 298): weakened without any random move, so it plays a deal
# the same way every time; chosen on seeds 36600 among three such weakenings
# as the one nearest the greedy bot.
CHIPS_WEAKENED = 0.2


@functools.cache
def _chips_choose():
    """Allegory's greedy bot's ``choose`` with its Lore chip valued at
    ``CHIPS_WEAKENED``: a copy of its module (so the greedy bot itself is
    unchanged), loaded once a process."""
    spec = importlib.util.spec_from_file_location("allegory_greedy_chips", ROOT / "bots" / "allegory_greedy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.CHIP = CHIPS_WEAKENED
    return module.choose


def make(name: str, game: str) -> Player:
    if name == "greedy-chips":
        if game != "allegory":
            raise ValueError("greedy-chips is Allegory's greedy bot weakened")
        return InProcessPlayer("greedy-chips", _chips_choose())
    if name == "random":
        return InProcessPlayer("random", None)
    if name == "greedy":
        return InProcessPlayer("greedy", builtin_chooser("greedy", game))
    if name == "weak-greedy":
        return WeakGreedy(game)
    if name.startswith("greedy-e"):  # the weak greedy at another rate, under its own name (which seeds its moves)
        player = WeakGreedy(game, float(name[len("greedy-e") :]))
        player.name, player.spec = name, f"builtin:{name}"
        return player
    if name.startswith("ismcts-"):
        from bots.ismcts_bot import make_choose

        iterations = int(name.split("-", 1)[1])
        return InProcessPlayer(name, make_choose(time_ms=None, iterations=iterations))
    raise ValueError(name)


class Salted(Player):
    """A built-in bot whose own generator is seeded apart by ``salt``: the
    same deal and seats played again with the bot's own random draws
    independent of the first time (``deal-share``). It reseeds the bot's
    generator after the bot's own ``start`` (rather than telling the bot
    another seed) so that docs/luck.md's shares come out as measured."""

    def __init__(self, inner: Player, salt: str):
        self.name, self.spec = inner.name, inner.spec
        self._inner = inner
        self._salt = salt

    def start(self, info) -> None:
        self._inner.start(info)
        self._inner._rng.seed(f"{info.seed}:{info.seat}:{self.name}:{self._salt}")

    def act(self, state, seat):
        return self._inner.act(state, seat)


class OwnDraws(Salted):
    """A built-in bot whose own generator is seeded by ``key`` and its seat
    alone, not by the deal: two deals played with one key share the bot's
    random stream and nothing else (``own-draws``)."""

    def start(self, info) -> None:
        self._inner.start(info)
        self._inner._rng.seed(f"own-draws:{self._salt}:{info.seat}:{self.name}")


def known_policies(game: str, names: list[str]) -> dict:
    """The seats whose policy the action correction may use: the weak greedy's."""
    return {s: WeakGreedy.policy(game) for s, n in enumerate(names) if n == "weak-greedy"}


def play(
    game: str, names: list[str], seed: int, duplicate: bool = False, actions: bool = False
) -> tuple[list[float], list[float], float, float]:
    """(payoffs, adjusted payoffs, match CPU s, luck CPU s) by seat; with
    ``actions``, the adjustment includes the action luck of the seats whose
    policy is known."""
    t0 = time.process_time()
    record = run_match(game, [make(n, game) for n in names], seed=seed, chance=KeyedChance(seed) if duplicate else None)
    t1 = time.process_time()
    policies = known_policies(game, names) if actions else None
    report = luck_report(record.replay, policies)
    t2 = time.process_time()
    return [s.payoff for s in report.seats], [s.adjusted for s in report.seats], t1 - t0, t2 - t1


def chosen_value(game: str):
    """The value function chosen on the command line for ``game``, or None (the one of record)."""
    return {"allegra": ALLEGRA_VALUE, "allegory": ALLEGORY_VALUE}.get(game)


def luck_report(doc: dict, policies: dict | None = None):
    """The luck report of a replay with the value function chosen on the command line, or the one of record."""
    value = chosen_value(doc["game"])
    if value is None:
        return luck_of(doc, policies)
    adapter = AllegraAdapter if doc["game"] == "allegra" else AllegoryAdapter
    return luck_with(doc, lambda _g: adapter(value), policies)


def interval(xs: list[float]) -> tuple[float, float]:
    """Mean and 95% half-width."""
    return statistics.mean(xs), Z * statistics.stdev(xs) / math.sqrt(len(xs))


def fmt(xs: list[float]) -> str:
    m, h = interval(xs)
    return f"{m:+.4f} ± {h:.4f}" + ("" if abs(m) <= h else " (0 outside)")


def versus(game: str, other: str, matches: int, label: str, actions: bool = False) -> None:
    """Greedy against ``other``, seats alternating: each seat's mean luck,
    and the mean difference greedy - other plain and adjusted (with
    ``actions``, the action luck of the seats whose policy is known added)."""
    luck = [[], []]
    plain, adjusted = [], []
    for i in range(matches):
        names = ["greedy", other] if i % 2 == 0 else [other, "greedy"]
        g = names.index("greedy")
        pay, adj, _c, _l = play(game, names, derive(SEED_BASE, game, label, i), actions=actions)
        for s in range(2):
            luck[s].append(pay[s] - adj[s])
        plain.append(pay[g] - pay[1 - g])
        adjusted.append(adj[g] - adj[1 - g])
    print(
        f"{game} greedy vs {other} x{matches}{', with action luck' if actions else ''}: mean luck seat 0 "
        f"{fmt(luck[0])}, seat 1 {fmt(luck[1])}; greedy - {other} plain {fmt(plain)}, adjusted {fmt(adjusted)}",
        flush=True,
    )


def unbiased(game: str, n_random: int, n_search: int) -> None:
    luck = [[], []]
    for i in range(n_random):
        pay, adj, _c, _l = play(game, ["random", "random"], derive(SEED_BASE, game, "random", i))
        for s in range(2):
            luck[s].append(pay[s] - adj[s])
    print(f"{game} random x{n_random}: mean luck seat 0 {fmt(luck[0])}, seat 1 {fmt(luck[1])}", flush=True)
    if n_search:
        versus(game, f"ismcts-{SEARCH_ITERATIONS['vs-greedy']}", n_search, "search")


def ratio_interval(
    a: list[float], b: list[float], per_a: int, per_b: int, rounds: int = 1000
) -> tuple[float, float, float]:
    """Games needed plain (``a``, per_a games an item) over games needed
    adjusted (``b``): per-game variances' ratio, with a paired bootstrap."""

    def r(xa, xb):
        # a resample without variance in ``b`` (few sets of close bots that
        # draw nothing: every set level) needs no games at all: an infinite ratio
        vb = statistics.variance(xb)
        return (per_a * statistics.variance(xa)) / (per_b * vb) if vb else math.inf

    rng = random.Random(7)
    n = len(a)
    boots = []
    for _ in range(rounds):
        idx = [int(rng.random() * n) for _ in range(n)]
        boots.append(r([a[i] for i in idx], [b[i] for i in idx]))
    boots.sort()
    return r(a, b), boots[int(0.025 * rounds)], boots[int(0.975 * rounds) - 1]


def fewer(game: str, pair: tuple[str, str], sets: int) -> None:
    a_name, b_name = pair
    actions = bool(known_policies(game, list(pair)))
    single_plain, single_adj, set_plain, set_adj, single_act, set_act = [], [], [], [], [], []
    for i in range(sets):
        seed = derive(SEED_BASE, game, "close", a_name, b_name, i)
        dp, da, dx = [], [], []
        for names in ([a_name, b_name], [b_name, a_name]):
            pay, adj, _c, _l = play(game, names, seed, duplicate=True)
            a = names.index(a_name)
            dp.append(pay[a] - pay[1 - a])
            da.append(adj[a] - adj[1 - a])
            if actions:  # the same match (seed and seating), its luck with the action correction added
                _p, adx, _c, _l = play(game, names, seed, duplicate=True, actions=True)
                dx.append(adx[a] - adx[1 - a])
        # single games: the first seating of each set (independent deals)
        single_plain.append(dp[i % 2])
        single_adj.append(da[i % 2])
        set_plain.append(sum(dp) / 2)
        set_adj.append(sum(da) / 2)
        if actions:
            single_act.append(dx[i % 2])
            set_act.append(sum(dx) / 2)
    m, h = interval(single_plain)
    print(
        f"{game} {a_name} vs {b_name}, {sets} sets: difference plain {m:+.4f} ± {h:.4f}, adjusted {fmt(single_adj)}; "
        f"sets plain {fmt(set_plain)}, sets adjusted {fmt(set_adj)}",
        flush=True,
    )
    # single_plain[i] and the set i come from the same deal: pair by index
    if actions:
        print(f"  with the action correction: adjusted {fmt(single_act)}, sets adjusted {fmt(set_act)}", flush=True)
    for label, other, per in (
        ("adjusted", single_adj, 1),
        ("duplicate plain", set_plain, 2),
        ("duplicate adjusted", set_adj, 2),
        *(
            (("adjusted with actions", single_act, 1), ("duplicate adjusted with actions", set_act, 2))
            if actions
            else ()
        ),
    ):
        ratio, lo, hi = ratio_interval(single_plain, other, 1, per)
        print(f"  games needed, plain / {label}: {ratio:.2f} (95% {lo:.2f}-{hi:.2f})", flush=True)


class SampledSearch(Player):
    """The built-in search bot at a fixed iteration budget, which at each of
    its decisions also runs its search ``samples`` more times from the same
    observation and memory with generators of their own: draws from the
    very distribution its played action came from, independent of it
    (decision 299). The played action is the plain bot's (its generator is
    seeded as ``InProcessPlayer`` seeds it)."""

    def __init__(self, name: str, samples: int):
        from bots.ismcts_bot import decide

        self.name, self.spec = name, f"builtin:{name}"
        self._decide = decide
        self._iterations = int(name.split("-", 1)[1])
        self._samples = samples
        self._rng = random.Random()
        self.drawn: list[list[dict]] = []  # per decision, in order: the actions drawn beside the played one

    def start(self, info) -> None:
        self._rng.seed(f"{info.seed}:{info.seat}:{self.name}")
        self._key = f"{info.seed}:{info.seat}:{self.name}:sampled"
        self._history: list[dict] = []
        self.drawn = []

    def act(self, state, seat):
        observation, legal = state.observation(seat), state.legal_actions(seat)
        action, _ = self._decide(observation, legal, self._rng, list(self._history), None, self._iterations)
        t = len(self.drawn)
        self.drawn.append([
            self._decide(
                observation, legal, random.Random(f"{self._key}:{t}:{k}"), list(self._history), None, self._iterations
            )[0]
            for k in range(self._samples)
        ])  # fmt: skip
        self._history.append(observation)
        return action


def sampled_policy(drawn: list[list[dict]]):
    """The action term's ``E_π[V(after a)]`` at a sampled seat's decisions,
    in order: the mean over the actions drawn beside the played one."""
    queue = iter(drawn)

    def pi(state, seat):
        actions = next(queue)
        return [(1 / len(actions), a) for a in actions]

    return pi


def search_actions(game: str, pair: tuple[str, str], sets: int, samples: int) -> None:
    """``fewer``'s search pair with AIVAT's action term for both search
    seats, the expectation over each decision taken from ``samples``
    further runs of the search (decision 299)."""
    from cardroom.luck.estimator import action_luck
    from cardroom.luck.games import adapter_for
    from engine.replay import Verification

    a_name, b_name = pair
    value = chosen_value(game) or adapter_for(game).value
    single_plain, single_adj, single_act, set_plain, set_adj, set_act, luck_act = [], [], [], [], [], [], []
    started = time.process_time()
    for i in range(sets):
        seed = derive(SEED_BASE, game, "close", a_name, b_name, i)
        dp, da, dx = [], [], []
        for names in ([a_name, b_name], [b_name, a_name]):
            players = [SampledSearch(n, samples) for n in names]
            doc = run_match(game, players, seed=seed, chance=KeyedChance(seed)).replay
            report = luck_report(doc)
            policies = {s: sampled_policy(p.drawn) for s, p in enumerate(players)}
            acted = action_luck(doc, value, policies, dict(Verification(doc).recorded))
            a = names.index(a_name)
            pay = [x.payoff for x in report.seats]
            adj = [x.adjusted for x in report.seats]
            dp.append(pay[a] - pay[1 - a])
            da.append(adj[a] - adj[1 - a])
            dx.append(da[-1] - (acted[a] - acted[1 - a]))
            luck_act.append(acted[0])
        single_plain.append(dp[i % 2])
        single_adj.append(da[i % 2])
        single_act.append(dx[i % 2])
        set_plain.append(sum(dp) / 2)
        set_adj.append(sum(da) / 2)
        set_act.append(sum(dx) / 2)
    print(
        f"{game} {a_name} vs {b_name}, {sets} sets, the action term from {samples} searches more a decision "
        f"({time.process_time() - started:.0f} s CPU): difference plain {fmt(single_plain)}, adjusted "
        f"{fmt(single_adj)}, with actions {fmt(single_act)}; sets with actions {fmt(set_act)}; "
        f"seat 0's action luck {fmt(luck_act)}",
        flush=True,
    )
    for label, other, per in (
        ("adjusted", single_adj, 1),
        ("adjusted with sampled actions", single_act, 1),
        ("duplicate plain", set_plain, 2),
        ("duplicate adjusted", set_adj, 2),
        ("duplicate adjusted with sampled actions", set_act, 2),
    ):
        ratio, lo, hi = ratio_interval(single_plain, other, 1, per)
        print(f"  games needed, plain / {label}: {ratio:.2f} (95% {lo:.2f}-{hi:.2f})", flush=True)
    ratio, lo, hi = ratio_interval(single_adj, single_act, 1, 1)
    print(f"  games needed, adjusted / adjusted with sampled actions: {ratio:.2f} (95% {lo:.2f}-{hi:.2f})", flush=True)


def versus_record(game: str, pair: tuple[str, str], sets: int) -> None:
    """The chosen value function against the one of record on the same
    duplicate sets (``fewer``'s seeds): the per-game variance of the
    adjusted difference with the record's over the chosen one's, single
    games and sets, with and without the action luck of the seats whose
    policy is known, each with a paired bootstrap 95% interval (above 1:
    the chosen one needs fewer games)."""
    a_name, b_name = pair
    names_of = ([a_name, b_name], [b_name, a_name])
    with_actions = (False, True) if known_policies(game, list(pair)) else (False,)
    diffs: dict[tuple[str, bool], list[list[float]]] = {}
    for i in range(sets):
        seed = derive(SEED_BASE, game, "close", a_name, b_name, i)
        for names in names_of:
            doc = run_match(
                game, [make(n, game) for n in names], seed=seed, chance=KeyedChance(seed)
            ).replay  # fmt: skip
            a = names.index(a_name)
            for actions in with_actions:
                policies = known_policies(game, names) if actions else None
                record = luck_of(doc, policies) if AGAINST is None else against(doc, policies)
                for label, report in (("record", record), ("chosen", luck_report(doc, policies))):
                    diffs.setdefault((label, actions), []).append(
                        report.seats[a].adjusted - report.seats[1 - a].adjusted
                    )
    for actions in with_actions:
        record, chosen = diffs[("record", actions)], diffs[("chosen", actions)]
        single = ([record[2 * i + i % 2] for i in range(sets)], [chosen[2 * i + i % 2] for i in range(sets)])
        paired = [[(x[2 * i] + x[2 * i + 1]) / 2 for i in range(sets)] for x in (record, chosen)]
        for label, (r, c) in (("single games", single), ("duplicate sets", paired)):
            ratio, lo, hi = ratio_interval(r, c, 1, 1)
            print(
                f"{game} {a_name} vs {b_name}, {sets} sets, {label}{', with actions' if actions else ''}: "
                f"games needed, of record / chosen: {ratio:.2f} (95% {lo:.2f}-{hi:.2f})",
                flush=True,
            )


def against(doc: dict, policies: dict | None):
    """The luck report of a replay with ``--against-allegra-value``'s value function (Allegra)."""
    if doc["game"] != "allegra":
        return luck_of(doc, policies)
    return luck_with(doc, lambda _g: AllegraAdapter(AGAINST), policies)


def cost(game: str, matches: int) -> None:
    for names in (
        ["random", "random"],
        ["greedy", "greedy"],
        ["greedy", "greedy", "greedy", "greedy"],
        ["greedy", f"ismcts-{SEARCH_ITERATIONS['vs-greedy']}"],
    ):
        match_cpu = luck_cpu = record_cpu = 0.0
        for i in range(matches):
            seed = derive(SEED_BASE, game, "cost", len(names), i)
            _p, _a, c, lk = play(game, names, seed)
            match_cpu += c
            luck_cpu += lk
            record_cpu += of_record_cpu(game, names, seed)
        print(
            f"{game} {'+'.join(names)}: match CPU {1000 * match_cpu / matches:.1f} ms, luck CPU "
            f"{1000 * luck_cpu / matches:.1f} ms ({100 * luck_cpu / match_cpu:.0f}%)"
            + record_cpu_note(record_cpu, match_cpu, matches),
            flush=True,
        )


def chosen_instead_of_record(game: str) -> bool:
    return (game == "allegory" and ALLEGORY_VALUE is not None) or (game == "allegra" and ALLEGRA_VALUE is not None)


def of_record_cpu(game: str, names: list[str], seed: int, doc: dict | None = None) -> float:
    """With another value function chosen: the CPU of the luck with the
    one of record on the same match (played again in process when no
    replay is given), so both are measured in the same run; else 0."""
    if not chosen_instead_of_record(game):
        return 0.0
    if doc is None:
        doc = run_match(game, [make(n, game) for n in names], seed=seed).replay
    t0 = time.process_time()
    luck_of(doc)
    return time.process_time() - t0


def record_cpu_note(record_cpu: float, whole_cpu: float, matches: int) -> str:
    if not record_cpu:
        return ""
    return f"; the value function of record on the same matches: {1000 * record_cpu / matches:.1f} ms ({100 * record_cpu / whole_cpu:.0f}%)"


def loops_cpu(game: str, doc: dict) -> float:
    """With ``--loops``: the CPU of the luck with the chosen network through
    its reference loops on the same replay, checked to be the same luck."""
    value = LOOPS.get(game)
    if value is None:
        return 0.0
    adapter = AllegraAdapter if game == "allegra" else AllegoryAdapter
    t0 = time.process_time()
    report = luck_with(doc, lambda _g: adapter(value))
    took = time.process_time() - t0
    if [s.luck for s in report.seats] != [s.luck for s in luck_report(doc).seats]:
        raise AssertionError(f"{game} seed {doc['seed']}: the loops' luck is not the literal networks'")
    return took


def cost_sandboxed(game: str, matches: int, players: list[int]) -> None:
    """As a ladder worker plays: the built-in bots as protocol programs in
    the sandbox (``get_launcher()``, which refuses to run unsandboxed). The
    worker's CPU is this process's (the runner, the engine, the pipes);
    the bots' own CPU, in their sandboxes, is given beside it (the
    children's, as far as the kernel counts them once they are reaped)."""
    import resource

    from cardroom.sandbox import get_launcher

    launcher = get_launcher()
    for names in (["greedy"] * n for n in players):
        worker = bots = luck = record_luck = loops_luck = 0.0
        also = [0.0] * len(ALSO) if game == "allegra" else []
        per_match: list[tuple[float, ...]] = []  # (whole match, luck, record's luck, loops' luck) CPU
        for i in range(matches):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.process_time()
            record = run_match(
                game,
                [str(builtin_program(n, game)) for n in names],
                seed=derive(SEED_BASE, game, "sandboxed", len(names), i),
                launcher=launcher,
            )
            t1 = time.process_time()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            luck_report(record.replay)
            row = (
                t1 - t0,
                (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
                time.process_time() - t1,
                of_record_cpu(game, names, 0, record.replay),
                loops_cpu(game, record.replay),
            )
            also_row = [also_cpu(value, record.replay) for value in ALSO] if also else []
            per_match.append((row[0] + row[1], *row[2:], *also_row))
            also = [a + b for a, b in zip(also, also_row)]
            worker, bots, luck, record_luck, loops_luck = (
                a + b for a, b in zip((worker, bots, luck, record_luck, loops_luck), row)
            )
        shares = ", ".join(
            f"{label} {100 * s:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"
            for label, k in (
                ("luck", 1),
                ("record", 2),
                ("loops", 3),
                *((v.label, 4 + j) for j, v in enumerate(ALSO) if also),
            )
            if per_match[0][k] or k == 1
            for s, lo, hi in [share_interval([m[k] for m in per_match], [m[0] for m in per_match])]
        )
        print(
            f"{game} {'+'.join(names)} sandboxed: worker CPU {1000 * worker / matches:.0f} ms, bots' CPU "
            f"{1000 * bots / matches:.0f} ms, luck CPU {1000 * luck / matches:.0f} ms "
            f"({100 * luck / worker:.0f}% of the worker's, {100 * luck / (worker + bots):.0f}% of all)"
            + record_cpu_note(record_luck, worker + bots, matches)
            + (
                f"; through the reference loops: {1000 * loops_luck / matches:.0f} ms "
                f"({100 * loops_luck / (worker + bots):.0f}%)"
                if loops_luck
                else ""
            )
            + "".join(f"; {v.label}: {1000 * t / matches:.0f} ms" for v, t in zip(ALSO, also))
            + f"\n  of all, 95% bootstrap over the matches: {shares}",
            flush=True,
        )


def also_cpu(value, doc: dict) -> float:
    """The CPU of the luck of a replay with another Allegra value function."""
    t0 = time.process_time()
    luck_with(doc, lambda _g: AllegraAdapter(value))
    return time.process_time() - t0


def share_interval(part: list[float], whole: list[float], rounds: int = 1000) -> tuple[float, float, float]:
    """``sum(part) / sum(whole)`` over the matches, with a bootstrap 95% interval (matches resampled)."""
    rng = random.Random(7)
    n = len(part)
    boots = []
    for _ in range(rounds):
        idx = [int(rng.random() * n) for _ in range(n)]
        boots.append(sum(part[i] for i in idx) / sum(whole[i] for i in idx))
    boots.sort()
    return sum(part) / sum(whole), boots[int(0.025 * rounds)], boots[int(0.975 * rounds) - 1]


def net_speed(game: str, matches: int, players: list[int], rounds: int = 10) -> None:
    from engine.replay import iter_states

    value = NetAllegraValue() if game == "allegra" else NetAllegoryValue()
    literal = value.evaluate
    loops = value.model.value if isinstance(value, NetAllegraValue) else value.net.value
    nothing = frozenset()
    for n in players:
        states = []
        for i in range(matches):
            seed = derive(SEED_BASE, game, "net-speed", n, i)
            doc = run_match(game, [make("greedy", game) for _ in range(n)], seed=seed).replay
            states += [post.clone() for _i, _e, post in iter_states(doc) if not post.is_terminal()]
        if any(literal(s, nothing) != loops(s, nothing) for s in states):
            raise AssertionError(f"{game} {n}p: the literal network is not the loops'")
        times: dict[str, list[float]] = {"literal": [], "loops": []}
        for r in range(rounds):
            for name in ("literal", "loops") if r % 2 else ("loops", "literal"):
                f = literal if name == "literal" else loops
                t0 = time.perf_counter()
                for s in states:
                    f(s, nothing)
                times[name].append(1e6 * (time.perf_counter() - t0) / len(states))
        ratios = [a / b for a, b in zip(times["loops"], times["literal"])]
        mean, half = interval(ratios)
        print(
            f"{game} {n}p, {len(states)} states: V {min(times['literal']):.2f} µs a state with literal weights, "
            f"{min(times['loops']):.2f} µs through the loops (best of {rounds}); "
            f"loops / literal {mean:.2f} (95% {mean - half:.2f}-{mean + half:.2f})",
            flush=True,
        )


def deal_share_of(first: list[float], second: list[float], seating: list[int]) -> float:
    """The share of a result's variance its deal decides: ``first[i]`` and
    ``second[i]`` are deal i's results played twice in the same seats
    (``seating[i]``), the bots' own draws independent. Within each seating
    the two plays are independent given the deal, so their covariance over
    the deals is the variance of the result's expectation given the deal;
    the seating's own mean is taken out (it is not the deal's)."""
    cov, var = paired_moments(first, second, seating)
    return cov / var


def paired_moments(first: list[float], second: list[float], groups: list) -> tuple[float, float]:
    """(covariance, variance) of paired plays ``first[i]``, ``second[i]``
    (what they share: a deal, or the bots' draws), each about its group's
    mean (``groups[i]``), pooled over the groups."""
    cov = var = 0.0
    dof = 0
    for group in sorted(set(groups)):
        a = [x for x, g in zip(first, groups) if g == group]
        b = [x for x, g in zip(second, groups) if g == group]
        if len(a) < 2:
            continue
        ma, mb = statistics.mean(a), statistics.mean(b)
        cov += sum((x - ma) * (y - mb) for x, y in zip(a, b))
        var += sum((x - ma) ** 2 for x in a) + sum((y - mb) ** 2 for y in b)
        dof += len(a) - 1
    if not dof or not var:
        raise ValueError("paired plays need at least two in a group, and some variance")
    return cov / dof, var / (2 * dof)


def deal_share(game: str, pair: tuple[str, str], deals: int, rounds: int = 1000) -> None:
    a_name, b_name = pair
    first, second, seating = [], [], []
    for i in range(deals):
        seed = derive(SEED_BASE, game, "deal-share", a_name, b_name, i)
        names = [a_name, b_name] if i % 2 == 0 else [b_name, a_name]
        a = names.index(a_name)
        results = []
        for salt in ("first", "second"):
            players = [Salted(make(n, game), salt) for n in names]
            ranks = run_match(game, players, seed=seed, chance=KeyedChance(seed)).result.ranks
            pay = rank_points(ranks)
            results.append(pay[a] - pay[1 - a])
        first.append(results[0])
        second.append(results[1])
        seating.append(i % 2)
    share = deal_share_of(first, second, seating)
    rng = random.Random(11)
    boots = []
    for _ in range(rounds):
        idx = [int(rng.random() * deals) for _ in range(deals)]
        try:
            boots.append(deal_share_of([first[j] for j in idx], [second[j] for j in idx], [seating[j] for j in idx]))
        except ValueError:
            continue
    boots.sort()
    lo, hi = boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]

    def most(x: float) -> str:  # a share estimated below 0 (noise: it is a variance's) bounds the saving at 1
        return f"{1 / (1 - max(x, 0.0)):.2f}" if x < 1 else "unbounded"

    print(
        f"{game} {a_name} vs {b_name}, {deals} deals each played twice: the deal decides {share:.3f} "
        f"(95% {lo:.3f} to {hi:.3f}) of the result's variance; a duplicate set saves at most {most(share)}× "
        f"(95% up to {most(hi)}×) the games of single matches seated the same way",
        flush=True,
    )


def decompose(matches: int) -> None:
    from collections import defaultdict

    from engine import get_game_class
    from engine.replay import iter_states

    value = ALLEGRA_VALUE or FittedAllegraValue()
    adapter = AllegraAdapter(value)
    parts: list[dict[str, float]] = []
    raw, scored = [], []
    nothing = frozenset()
    for i in range(matches):
        seed = derive(SEED_BASE, "allegra", "decompose", i)
        doc = run_match("allegra", [make("greedy", "allegra") for _ in range(2)], seed=seed).replay
        steps = {step.index: step for step, _f in iter_steps(doc, adapter, {})}
        pre = get_game_class("allegra")(2, doc["options"]).new_initial_state()
        acc: dict[str, float] = defaultdict(float)
        acc["start"] = value(pre, nothing)[0]
        for index, event, post in iter_states(doc):
            before, after = value(pre, nothing)[0], value(post, nothing)[0]
            kind = "chance" if event["by"] == "chance" else event["action"]["type"]
            if index in steps:
                expected = expectation(steps[index], value, nothing, 2)[0]
                acc["luck"] += after - expected
                acc[f"drift: {kind}"] += expected - before
            else:
                acc[f"move: {kind}"] += after - before
            pre = post.clone()
        parts.append(dict(acc))
        raw.extend(r[0] - r[1] for r in post.raw_scores)
        scored.extend(r[0] - r[1] for r in post.round_scores)
    print(f"allegra greedy vs greedy x{matches}, {value.label}, seat 0 (variance per match):", flush=True)
    for key in sorted({k for p in parts for k in p}):
        xs = [p.get(key, 0.0) for p in parts]
        print(f"  {key:22} mean {statistics.mean(xs):+.4f} variance {statistics.variance(xs):.4f}", flush=True)
    adjusted = [sum(v for k, v in p.items() if k != "luck") for p in parts]
    payoff = [a + p["luck"] for a, p in zip(adjusted, parts)]
    print(f"  payoff variance {statistics.variance(payoff):.4f}, adjusted {statistics.variance(adjusted):.4f}")
    print(
        f"  a round's difference seat 0 - seat 1: raw variance {statistics.variance(raw):.1f}, "
        f"scored {statistics.variance(scored):.1f} ({len(raw)} rounds)",
        flush=True,
    )


# decision 303's line-ups at 4 players: the family the networks were fitted
# on, and the convergence benchmark's 4-player fields (best four, worst four)
LINEUPS = ("greedy×4", "greedy+weak", "field-top", "field-bottom")


def lineup_names(game: str, lineup: str) -> list[str]:
    if lineup in PAIRS and lineup != "deterministic":  # own-draws: a close pair, at 2 players
        if lineup == "chips" and game != "allegory":
            raise ValueError("the chips pair is Allegory's")
        return list(PAIRS[lineup])
    if lineup == "greedy×4":
        return ["greedy"] * 4
    if lineup == "greedy+weak":
        return ["greedy", "weak-greedy", "greedy", "weak-greedy"]
    from ladder_convergence import FIELDS  # (only the names: no database)

    field = FIELDS[(game, 4)]
    if lineup == "field-top":
        return field[:4]
    if lineup == "field-bottom":
        return field[4:]
    raise ValueError(f"unknown line-up {lineup!r} (one of {', '.join(LINEUPS)}; own-draws also greedy, search, chips)")


def deviations_and_luck(rows: list[tuple[int, list[float], list[float]]]):
    """Per match, each seat's (deviation, luck), both less their mean for
    that bot in that seat: ``rows`` are (rotation, payoffs, lucks) by seat."""
    cells: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for rotation, pay, luck in rows:
        for seat, (p, lk) in enumerate(zip(pay, luck)):
            cells.setdefault((rotation, seat), []).append((p, lk))
    means = {key: (statistics.mean(p for p, _ in v), statistics.mean(lk for _, lk in v)) for key, v in cells.items()}
    out = []
    for rotation, pay, luck in rows:
        out.append(
            [(p - means[rotation, s][0], lk - means[rotation, s][1]) for s, (p, lk) in enumerate(zip(pay, luck))]
        )
    return out


def kept(game: str, lineups: list[str], matches: int) -> None:
    from cardroom.luck.games import adapter_for

    value = (chosen_value(game) or adapter_for(game).value).label
    pooled: list = []
    for lineup in lineups:
        names = lineup_names(game, lineup)
        rows = []
        for i in range(matches):
            rotation = i % len(names)
            seated = names[rotation:] + names[:rotation]
            seed = derive(SEED_BASE, game, "kept", lineup, i)
            record = run_match(game, [make(n, game) for n in seated], seed=seed)
            report = luck_report(record.replay)
            rows.append((rotation, [x.payoff for x in report.seats], [x.luck for x in report.seats]))
        centred = deviations_and_luck(rows)  # (each line-up about its own means)
        pooled += centred
        print(
            f"{game} 4p {lineup} ({','.join(names)}), {matches} matches, luck by {value}: {kept_line(centred)}",
            flush=True,
        )
    if len(lineups) > 1:
        print(f"{game} 4p, the {len(lineups)} line-ups pooled, luck by {value}: {kept_line(pooled)}", flush=True)


def own_draws(game: str, lineups: list[str], draws: int, rounds: int = 1000) -> None:
    from cardroom.luck.games import adapter_for

    value = (chosen_value(game) or adapter_for(game).value).label
    for lineup in lineups:
        names = lineup_names(game, lineup)
        plays = own_draws_plays(game, lineup, draws)
        figures = own_draws_figures(plays)
        boots = bootstrap(plays, own_draws_figures, rounds)
        print(
            f"{game} {len(names)}p {lineup} ({','.join(names)}), {draws} draws each on 2 deals: {own_draws_line(figures, boots, value)}",
            flush=True,
        )


def own_draws_plays(game: str, lineup: str, draws: int) -> list:
    """``own-draws``' matches: per draw of the bots' generators, (rotation,
    [(payoffs, lucks) on its first deal, the same on its second]), each
    list in the line-up's order."""
    names = lineup_names(game, lineup)
    k = len(names)
    plays = []
    for i in range(draws):
        rotation = i % k
        seated = names[rotation:] + names[:rotation]  # seat s holds names[(rotation + s) % k]
        key = str(derive(SEED_BASE, game, "own-draws", lineup, i))
        both = []
        for deal in (0, 1):
            seed = derive(SEED_BASE, game, "own-draws", lineup, i, "deal", deal)
            players = [OwnDraws(make(n, game), key) for n in seated]
            report = luck_report(run_match(game, players, seed=seed, chance=KeyedChance(seed)).replay)
            pay, luck = [0.0] * k, [0.0] * k
            for seat, x in enumerate(report.seats):
                pay[(rotation + seat) % k], luck[(rotation + seat) % k] = x.payoff, x.luck
            both.append((pay, luck))
        plays.append((rotation, both))
    return plays


def with_interval(figures: dict[str, float], boots: list[dict[str, float]], name: str, form=".3f", unit="") -> str:
    """A figure and its bootstrap 95% interval (the middle 95% of ``boots``' values of it)."""
    xs = sorted(b[name] for b in boots)
    lo, hi = xs[int(0.025 * len(xs))], xs[int(0.975 * len(xs)) - 1]
    return f"{figures[name]:{form}}{unit} (95% {lo:{form}}-{hi:{form}}{unit})"


def own_draws_line(figures: dict[str, float], boots: list[dict[str, float]], value: str) -> str:
    """``own-draws``' line: each figure with its bootstrap 95% interval."""

    def line(name: str, form: str = ".3f", unit: str = "") -> str:
        return with_interval(figures, boots, name, form, unit)

    return (
        f"the bots' own draws decide {line('floor')} of a result's variance within a seating, "
        f"{line('floor_seated')} seated at random; a chance correction saves at most "
        f"{line('most', '.2f', '×')} against plain games in balanced seats (seats' means out of both), and against "
        f"plain single games seated at random {line('most_singles', '.2f', '×')} in single games, "
        f"{line('most_sets', '.2f', '×')} in sets of every rotation; "
        f"luck by {value} keeps {line('kept')} within a seating, {line('kept_seated')} seated at random"
    )


def own_draws_figures(plays: list[tuple[int, list[tuple[list[float], list[float]]]]]) -> dict[str, float]:
    """``own-draws``' figures (decision 304): ``plays`` are, per draw of the
    bots' own generators, (rotation, [(payoffs, lucks) on the first deal,
    the same on the second]), each list in the line-up's order.

    - ``floor``: the share of a result's variance the draws decide, within
      a seating (the covariance of a draw's two results over the draws,
      about each bot's mean in each seating); ``floor_seated``: the same
      about each bot's mean over every seat (a seat's advantage is shared
      by a draw's two deals, and no chance correction moves it either).
    - ``most`` = 1 / ``floor``: the most any chance correction saves in
      games whose seats are balanced, each seat's mean taken out of both
      the plain results and the adjusted ones (single games or sets).
    - ``most_singles`` = 1 / ``floor_seated``: the most any chance
      correction saves in single games seated at random; ``most_sets``:
      in sets of every rotation (the seat's advantage leaves the set), both
      against plain single games seated at random.
    - ``kept`` and ``kept_seated``: the share the luck keeps, ``Σ(d −
      L)² / Σd²``, deviations and luck about the same means."""
    k = len(plays[0][1][0][0])
    first, second, within, bot = [], [], [], []
    for rotation, ((pay1, _), (pay2, _)) in plays:
        for j in range(k):
            first.append(pay1[j])
            second.append(pay2[j])
            within.append((rotation, j))
            bot.append(j)
    cov_within, var_within = paired_moments(first, second, within)
    cov_seated, var_seated = paired_moments(first, second, bot)
    out = {
        "floor": cov_within / var_within, "floor_seated": cov_seated / var_seated,
        "most": var_within / cov_within if cov_within > 0 else math.inf,
        "most_singles": var_seated / cov_seated if cov_seated > 0 else math.inf,
        "most_sets": var_seated / cov_within if cov_within > 0 else math.inf,
    }  # fmt: skip
    # kept's centring (about each bot's mean in each seating); seated at random, one seating for all
    rows = [(rotation, pay, luck) for rotation, both in plays for pay, luck in both]
    out["kept"] = kept_share(rows)
    out["kept_seated"] = kept_share([(0, pay, luck) for _rotation, pay, luck in rows])
    return out


def kept_share(rows: list[tuple[int, list[float], list[float]]]) -> float:
    """The share of the results' variance the luck keeps, ``Σ(d − L)² / Σd²``,
    deviations and luck about each bot's means in each rotation: ``rows``
    are (rotation, payoffs, lucks) by seat, as ``deviations_and_luck``'s."""
    centred = deviations_and_luck(rows)
    return sum((d - lk) ** 2 for m in centred for d, lk in m) / sum(d * d for m in centred for d, _ in m)


def bootstrap(items: list, figures_of, rounds: int = 1000) -> list[dict[str, float]]:
    """``figures_of`` on ``rounds`` resamples of ``items`` with replacement
    (a fixed generator: the intervals are the same run to run), less those
    it cannot be computed on (a resample with a seating left empty)."""
    rng = random.Random(13)
    boots = []
    for _ in range(rounds):
        try:
            boots.append(figures_of([items[int(rng.random() * len(items))] for _ in items]))
        except (ValueError, ZeroDivisionError):
            continue
    return boots


def kept_line(centred: list) -> str:
    k = kept_shares(centred)
    return (
        f"kept at 1 {k['kept']:.3f} (95% {k['kept_lo']:.3f}-{k['kept_hi']:.3f}); "
        f"best multiple {k['beta']:.3f} (95% {k['beta_lo']:.3f}-{k['beta_hi']:.3f}), "
        f"kept at it {k['kept_at_beta']:.3f} (in-sample); var(L)/var(d) {k['luck_over_deviation']:.3f}"
    )


def kept_shares(centred: list[list[tuple[float, float]]]) -> dict[str, float]:
    """``kept``'s figures from each match's (deviation, luck) by seat, centred (``deviations_and_luck``)."""
    dd = [sum(d * d for d, _ in m) for m in centred]
    left = [sum((d - lk) ** 2 for d, lk in m) for m in centred]
    dl = [sum(d * lk for d, lk in m) for m in centred]
    ll = [sum(lk * lk for _, lk in m) for m in centred]
    share, lo, hi = share_interval(left, dd)
    beta, blo, bhi = share_interval(dl, ll)
    return {
        "kept": share, "kept_lo": lo, "kept_hi": hi, "beta": beta, "beta_lo": blo, "beta_hi": bhi,
        "kept_at_beta": 1 - sum(dl) ** 2 / (sum(ll) * sum(dd)), "luck_over_deviation": sum(ll) / sum(dd),
    }  # fmt: skip


def main() -> int:
    global AGAINST, ALLEGORY_VALUE, ALLEGRA_VALUE, SEED_BASE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what",
        choices=[
            "unbiased",
            "fewer",
            "beside-record",
            "cost",
            "cost-sandboxed",
            "decompose",
            "net-speed",
            "deal-share",
            "search-actions",
            "kept",
            "own-draws",
        ],  # fmt: skip
    )
    parser.add_argument("--game", action="append", help="allegory and/or allegra (default both)")
    parser.add_argument("--random", type=int, default=2000)
    parser.add_argument("--search", type=int, default=500)
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument(
        "--pairs",
        default="greedy,search",
        help="greedy, search, chips (Allegory: greedy v greedy-chips); deal-share: also deterministic",
    )
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument(
        "--lineups", default=",".join(LINEUPS),
        help="kept, own-draws: the 4-player line-ups, comma-separated (own-draws also the pairs greedy, search, chips)",
    )  # fmt: skip
    parser.add_argument(
        "--samples", type=int, default=4, help="search-actions: the searches run beside each played decision"
    )
    parser.add_argument("--allegra-value", choices=sorted(ALLEGRA_VALUES), help="default: the one of record")
    parser.add_argument("--allegory-value", choices=sorted(ALLEGORY_VALUES), help="default: the one of record")
    parser.add_argument(
        "--seed-base", type=int, default=SEED_BASE, help="another seed range (36500: where value functions are chosen)"
    )
    parser.add_argument("--actions", action="store_true", help="unbiased: also greedy v weak greedy, action luck")
    parser.add_argument("--players", default="2,4", help="cost-sandboxed: the table sizes, comma-separated")
    parser.add_argument(
        "--also-allegra-value", action="append", default=[], choices=sorted(ALLEGRA_VALUES),
        help="cost-sandboxed: that value function's luck timed too, on the same replays",
    )  # fmt: skip
    parser.add_argument(
        "--against-allegra-value", choices=sorted(ALLEGRA_VALUES),
        help="beside-record: compare with that value function, not the record's",
    )  # fmt: skip
    parser.add_argument(
        "--loops", action="store_true", help="cost-sandboxed: the chosen network through its reference loops too"
    )
    args = parser.parse_args()
    SEED_BASE = args.seed_base
    if args.allegra_value:
        ALLEGRA_VALUE = ALLEGRA_VALUES[args.allegra_value]()
        print(f"allegra value function: {ALLEGRA_VALUE.label}", flush=True)
    if args.allegory_value:
        ALLEGORY_VALUE = ALLEGORY_VALUES[args.allegory_value]()
        print(f"allegory value function: {ALLEGORY_VALUE.label}", flush=True)
    if args.against_allegra_value:
        AGAINST = ALLEGRA_VALUES[args.against_allegra_value]()
        print(f"beside-record against {AGAINST.label} (its rows say 'of record')", flush=True)
    ALSO.extend(ALLEGRA_VALUES[name]() for name in args.also_allegra_value)
    if args.loops:
        for game, value in (("allegra", ALLEGRA_VALUE), ("allegory", ALLEGORY_VALUE)):
            if isinstance(value, (NetAllegraValue, NetAllegoryValue)):
                weights = ROOT / "cardroom" / "luck" / f"{value.name}-{value.version}.json"
                LOOPS[game] = type(value)(json.loads(weights.read_text(encoding="utf-8")))
    if args.what == "decompose":
        decompose(args.matches)
        return 0
    for game in args.game or ["allegory", "allegra"]:
        started = time.monotonic()
        if args.what == "unbiased":
            unbiased(game, args.random, args.search)
            if args.actions:
                versus(game, "weak-greedy", args.search, "actions", actions=True)
        elif args.what in ("fewer", "beside-record"):
            measure = fewer if args.what == "fewer" else versus_record
            for pair in pairs_for(game, args.pairs):
                measure(game, pair, args.sets)
        elif args.what == "search-actions":
            search_actions(game, PAIRS["search"], args.sets, args.samples)
        elif args.what == "deal-share":
            for pair in pairs_for(game, args.pairs):
                deal_share(game, pair, args.sets)
        elif args.what == "cost-sandboxed":
            cost_sandboxed(game, args.matches, [int(n) for n in args.players.split(",")])
        elif args.what == "kept":
            kept(game, args.lineups.split(","), args.matches)
        elif args.what == "own-draws":
            own_draws(game, [x for x in args.lineups.split(",") if x != "chips" or game == "allegory"], args.matches)
        elif args.what == "net-speed":
            net_speed(game, args.matches, [int(n) for n in args.players.split(",")])
        else:
            cost(game, args.matches)
        print(f"{game}: {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
