#!/usr/bin/env python3
"""A cardroom bot that searches over worlds that ``cardroom_sdk.sample_world``
draws, for both games (``builtin:ismcts``).

Starter kit and the SDK's worked example: it uses only ``cardroom_sdk``'s
public API (a state's ``legal_actions``, ``apply``, ``clone``,
``observation``, ``result``).

**The search** (``PairedSearch``, the default): each world drawn is
consistent with everything this seat has seen (``sample_world(observation,
rng, history)``: a determinization), and every candidate move is tried in
it, each with the same random numbers for what follows. Two moves are so
always compared on the same deck and the same hidden cards, and that luck,
far larger than the difference between two moves, cancels out. The move
with the best mean value is played. (A determinized Monte Carlo search one
move deep; ``Search`` is the full information-set MCTS of Cowling, Powley
& Whitehouse 2012 for Allegory, with ``TREE = True``: at this budget it is
the weaker: docs/decisions/103-the-search-bot-builtin-ismcts.md.)

**What follows a move** (the game's playout), and its value in [0, 1]:

* **Allegory**: the game is played to its end, every seat following a
  quick one-ply heuristic (take the card that raises its smoothed score
  most, raise by one chip while the best card is worth the price, put the
  chips it pays on the worst card); the value is the seat's rank, (n - rank)
  / (n - 1), with a tenth for its score margin. Of the bids only the
  smallest raise is a candidate, and for ``distribute`` the whole bid on
  each Pool card and an even spread.
* **Allegra**: random play tells nothing, so a quick heuristic plays on
  only until this seat is to begin its next turn (or the round ends): a
  card goes where it lowers the area most, a shared last-column slot
  counted for what it gives the neighbour too. There each seat's total so
  far plus its area's sum (a face-down card at the mean of the cards this
  seat cannot see, an ender who is not the lowest doubled) is its projected
  score, and the value is its margin over the others' mean, squashed.

The budget is per decision: ``TIME_MS`` of thinking (150 ms of this
process's CPU time, so that a busy machine does not make it play worse,
but never more than ``BUSY_FACTOR`` times that in wall time, a quarter of
the match time left or half the time a move may take), or a fixed number
of ``ITERATIONS`` (an iteration is one move tried in one world; the search
always finishes the world it is in), which makes the bot deterministic
given its seed. A decision with one candidate takes no time at all.
"""

from __future__ import annotations

import json
import math
import random
import time

import cardroom_sdk

TIME_MS = 150  # thinking per decision (CPU time) when no iteration budget is set
BUSY_FACTOR = 4  # on a busy machine, thinking stops at this many times TIME_MS of wall time
ITERATIONS = None  # a fixed number of iterations instead (deterministic)
TREE = False  # Allegory: search with the ISMCTS tree (Search) instead of PairedSearch
EXPLORATION = 0.5  # UCB's constant (Allegory's tree), for values in [0, 1]


def action_key(action: dict) -> str:
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


# -- Allegory -----------------------------------------------------------------

# A card "theme:value" belongs to Tale (value index + theme index) mod 3 (the rules).
THEMES = ("butterfly", "mask", "coin", "owl", "key", "crown", "feather", "flame", "shell")
VALUES = (-2, -1, 1, 2, 3, 4, 5)
TALE_NAMES = ("nature", "energy", "spirit")
_CARDS: dict[str, tuple[str, int, int]] = {
    f"{theme}:{value}": (theme, value, (v + t) % 3) for t, theme in enumerate(THEMES) for v, value in enumerate(VALUES)
}
# the playout heuristic's weights: a smoothed final score
MIDDLE_TALE, TOP_TALE = 0.3, 0.1  # the lowest Tale counts fully, the others a little
NO_CARD_IN_TALE = 6.0
PAIR_OF_THEME = 0.8
CHIP_WORTH = 0.12
WORTH_RAISING = 0.5  # a raise must beat Resting by this much
PLAYOUT_NOISE = 0.1  # chance of a random bid-phase move in a playout


def distribute_choices(template: dict) -> list[dict]:
    """The fillings the tree considers: the whole bid on each Pool card, and
    the bid spread as evenly as it goes (from the first card on)."""
    total, cards = template["total"], list(template["cards"])
    if total == 0 or not cards:
        return [{"type": "distribute", "chips": {}}]
    choices = [{"type": "distribute", "chips": {card: total}} for card in cards]
    if len(cards) > 1:
        share, extra = divmod(total, len(cards))
        even = {card: share + (1 if i < extra else 0) for i, card in enumerate(cards)}
        choices.append({"type": "distribute", "chips": {c: k for c, k in even.items() if k}})
    return choices


def candidates(legal: list[dict]) -> list[dict]:
    """Concrete actions for the tree: ``legal`` with templates filled and, of
    Allegory's bids, only the smallest raise (a jump in the bidding only
    tells the others more and costs more)."""
    out: list[dict] = []
    raised = False
    for action in legal:
        kind = action.get("type")
        if kind == "distribute" and "total" in action:
            out.extend(distribute_choices(action))
        elif kind == "bid":
            if not raised:
                out.append(action)
                raised = True
        else:
            out.append(action)
    return out


def _sets(count: int) -> float:
    """What ``count`` cards of one theme are worth to the heuristic."""
    return 2 * (count // 3) + PAIR_OF_THEME * (count % 3 == 2)


class Tableau:
    """One Allegory seat's cards as the playout heuristic reads them."""

    __slots__ = ("totals", "sizes", "themes", "sets", "moral", "moral_tales", "chips")

    def __init__(self, player: dict, moral: str | None):
        self.totals = [0, 0, 0]
        self.sizes = [0, 0, 0]
        self.themes: dict[str, int] = {}
        self.sets = 0.0  # the sum of _sets over the themes
        self.moral = moral
        self.moral_tales: set[int] = set()
        self.chips = player["chips"]
        for name in (c for tale in TALE_NAMES for c in player["tales"][tale]):
            self.add(name)

    def add(self, name: str) -> None:
        theme, value, tale = _CARDS[name]
        self.totals[tale] += value
        self.sizes[tale] += 1
        count = self.themes.get(theme, 0)
        self.themes[theme] = count + 1
        self.sets += _sets(count + 1) - _sets(count)
        if theme == self.moral:
            self.moral_tales.add(tale)

    def worth(self, extra: str | None = None, chips: int = 0) -> float:
        """The smoothed score, with one more card ``extra`` and ``chips``."""
        totals, sizes, morals, sets = self.totals, self.sizes, len(self.moral_tales), self.sets
        if extra is not None:
            theme, value, tale = _CARDS[extra]
            totals, sizes = totals[:], sizes[:]
            totals[tale] += value
            sizes[tale] += 1
            count = self.themes.get(theme, 0)
            sets += _sets(count + 1) - _sets(count)
            if theme == self.moral and tale not in self.moral_tales:
                morals += 1
        low, mid, top = sorted(totals)
        return (
            low + MIDDLE_TALE * mid + TOP_TALE * top - NO_CARD_IN_TALE * sizes.count(0)
            + sets + morals + CHIP_WORTH * (self.chips + chips)
        )  # fmt: skip


class AllegoryPlayout:
    """Plays a world to its end with the one-ply heuristic for every seat.
    It reads the world's full view once, then keeps the Pool and the
    tableaux itself from the actions it plays (each action still goes
    through the engine, which alone decides what is legal)."""

    def __init__(self, state, rng: random.Random):
        view = state.observation(None)
        self.pool = [[p["card"], p["chips"]] for p in view["pool"]]
        self.deck = list(view["deck"])  # top first
        morals = view["morals"]
        self.seats = [Tableau(p, morals[s]) for s, p in enumerate(view["players"])]
        self.rng = rng
        self.cache: dict[int, dict[str, float]] = {}

    def run(self, state) -> None:
        while not state.is_terminal():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            action = self.choose(seat, legal)
            state.apply(seat, action)
            self.played(seat, action)

    def gains(self, seat: int) -> dict[str, float]:
        """What each Pool card (with its chips) adds to ``seat``'s smoothed
        score; kept until a card or chips move (bids and rests move none)."""
        gains = self.cache.get(seat)
        if gains is None:
            me = self.seats[seat]
            base = me.worth()
            gains = self.cache[seat] = {card: me.worth(card, chips) - base for card, chips in self.pool}
        return gains

    def choose(self, seat: int, legal: list[dict]) -> dict:
        gains = self.gains(seat)
        kind = legal[0]["type"]
        if kind == "take":
            return max(legal, key=lambda a: gains[a["card"]])
        if kind == "distribute":
            cards = legal[0]["cards"]
            worst = min(cards, key=lambda c: (_CARDS[c][1], c))
            return {"type": "distribute", "chips": {worst: legal[0]["total"]}}
        bid = next((a for a in legal if a["type"] == "bid"), None)
        if self.rng.random() < PLAYOUT_NOISE:
            return bid if bid is not None and self.rng.random() < 0.5 else legal[0]
        rest, rest_gain = legal[0], 0.0
        for action in legal:
            if "claim" in action and gains[action["claim"]] > rest_gain:
                rest, rest_gain = action, gains[action["claim"]]
        if bid is not None and gains:
            if max(gains.values()) - CHIP_WORTH * bid["amount"] > rest_gain + WORTH_RAISING:
                return bid
        return rest

    def played(self, seat: int, action: dict) -> None:
        kind = action["type"]
        card = action.get("card") or action.get("claim")
        if card is not None or kind == "distribute":
            self.cache.clear()
        if card is not None:  # a take or a claim: the card and its chips go to the seat
            i = next(i for i, (c, _) in enumerate(self.pool) if c == card)
            me = self.seats[seat]
            me.add(card)
            me.chips += self.pool[i][1]
            if self.deck:
                self.pool[i] = [self.deck.pop(0), 0]
            else:
                del self.pool[i]
        elif kind == "distribute":
            for c, k in action["chips"].items():
                self.seats[seat].chips -= k
                next(p for p in self.pool if p[0] == c)[1] += k


def allegory_values(state, rng: random.Random) -> list[float]:
    """A seat's value at the end of a heuristic playout: its rank, (n - rank)
    / (n - 1), with a tenth for its score margin over the others' mean."""
    AllegoryPlayout(state, rng).run(state)
    result = state.result()
    n = len(result.ranks)
    total = sum(result.scores)
    return [
        0.9 * (n - rank) / (n - 1) + 0.1 * (0.5 + 0.5 * math.tanh((score - (total - score) / (n - 1)) / 5))
        for rank, score in zip(result.ranks, result.scores)
    ]


# -- Allegra ------------------------------------------------------------------

ROWS, COLS = 3, 4
MARGIN_SCALE = 12.0  # points of margin that make a value of about 0.88


def hidden_mean(world) -> float:
    """The mean of the cards the searching seat cannot see: in a sampled
    world, the deck and the face-down cards are exactly those cards."""
    view = world.observation(None)
    cards = list(view["deck"])
    cards += [view["grids"][s][r][c] for s, r, c in view["face_down"]]
    return sum(cards) / len(cards) if cards else 0.0


def slot_worths(view: dict, mean: float) -> dict[tuple[int, int, int], float]:
    """Every occupied slot's card value, a face-down one counted at ``mean``."""
    down = {tuple(x) for x in view["face_down"]}
    return {
        (s, r, c): (mean if (s, r, c) in down else v)
        for s, grid in enumerate(view["grids"]) for r, row in enumerate(grid) for c, v in enumerate(row)
        if v is not None
    }  # fmt: skip


class Table:
    """The full view of a world as the quick policy reads it: each occupied
    slot's worth (a face-down card at ``mean``) and the face-up cards, which
    alone make triples."""

    __slots__ = ("view", "n", "worths", "up")

    def __init__(self, view: dict, mean: float):
        self.view = view
        self.n = view["num_players"]
        down = {tuple(x) for x in view["face_down"]}
        self.worths: dict[tuple[int, int, int], float] = {}
        self.up: dict[tuple[int, int, int], int] = {}
        for s, grid in enumerate(view["grids"]):
            for r, row in enumerate(grid):
                for c, v in enumerate(row):
                    if v is not None:
                        cell = (s, r, c)
                        if cell in down:
                            self.worths[cell] = mean
                        else:
                            self.worths[cell] = self.up[cell] = v

    def weight(self, cell: tuple[int, int, int], seat: int) -> float:
        """What a point in ``cell`` costs ``seat`` against the others' mean:
        1 in its own area, -1 / (n - 1) in a rival's; a last-column cell is
        in its owner's area and its right-hand neighbour's."""
        s, _r, c = cell
        rival = -1 / (self.n - 1)
        w = 1.0 if s == seat else rival
        if c == COLS - 1:
            w += 1.0 if (s - 1) % self.n == seat else rival
        return w

    def triples(self, slot: tuple[int, int, int], card: int) -> set:
        """The cells that a face-up ``card`` put into ``slot`` removes with
        itself: three or more equal face-up cards side by side in a line."""
        gone: set = set()
        up = self.up
        lines, beside = lines_through(slot, self.n)
        if not any(up.get(cell) == card for cell in beside):  # the common case
            return gone
        for line in lines:
            p = line.index(slot)
            lo, hi = p, p
            while lo > 0 and up.get(line[lo - 1]) == card:
                lo -= 1
            while hi < len(line) - 1 and up.get(line[hi + 1]) == card:
                hi += 1
            if hi - lo >= 2:
                gone.update(line[lo : hi + 1])
        return gone

    def gain(self, slot, card: int, seat: int) -> float:
        """What a face-up ``card`` put into ``slot`` gains ``seat`` against
        the others' mean, triples included (a removed card counts 0). A last
        column is in two areas, so what it gains the seat it gains a rival
        too, who counts 1 / (n - 1) of the seat's own."""
        slot = tuple(slot)
        gone = self.triples(slot, card)
        if not gone:
            return self.weight(slot, seat) * (self.worths[slot] - card)
        return sum(self.weight(cell, seat) * self.worths[cell] for cell in gone)


_LINES: dict[tuple[int, tuple[int, int, int]], tuple[list[list[tuple[int, int, int]]], list[tuple[int, int, int]]]] = {}


def lines_through(slot: tuple[int, int, int], n: int) -> tuple[list[list[tuple[int, int, int]]], list[tuple[int, int, int]]]:
    """The lines (rows of five, columns of three) of every area holding
    ``slot`` (seat s's rows start with seat s + 1's last-column slot), and
    the cells beside ``slot`` in them (a triple needs one of those)."""
    key = (n, slot)
    known = _LINES.get(key)
    if known is None:
        s, r, c = slot
        lines = [[((s + 1) % n, r, COLS - 1)] + [(s, r, j) for j in range(COLS)], [(s, i, c) for i in range(ROWS)]]
        if c == COLS - 1:
            lines.append([(s, r, COLS - 1)] + [((s - 1) % n, r, j) for j in range(COLS)])
        beside = []
        for line in lines:
            p = line.index(slot)
            beside += line[max(p - 1, 0) : p] + line[p + 1 : p + 2]
        known = _LINES[key] = (lines, beside)
    return known


def allegra_values(view: dict, mean: float, round_over: bool = False) -> list[float]:
    """Each seat's projected total in the full ``view`` (its score so far
    and, unless the round is over, its area's sum, a face-down card worth
    ``mean``, an ender not the lowest doubled), as a margin over the
    others' mean squashed into [0, 1]."""
    totals = view["scores"]
    n = len(totals)
    if round_over or view["phase"] == "over":
        projected = [float(t) for t in totals]
    else:
        area = [0.0] * n
        for (s, _r, c), worth in slot_worths(view, mean).items():
            area[s] += worth
            if c == COLS - 1:
                area[(s - 1) % n] += worth  # the last column is in the right-hand neighbour's area too
        ender = view["ender"]
        if ender is not None and area[ender] > 0 and any(area[s] < area[ender] for s in range(n) if s != ender):
            area[ender] *= 2
        projected = [totals[s] + area[s] for s in range(n)]
    whole = sum(projected)
    return [0.5 + 0.5 * math.tanh(((whole - mine) / (n - 1) - mine) / MARGIN_SCALE) for mine in projected]


def quick_allegra(state, seat: int, legal: list[dict], mean: float, rng: random.Random, table: Table | None = None) -> dict:
    """The playout's move: a discard or a drawn card goes where it lowers
    the seat's area most (a face-down card counted at ``mean``, triples
    removed), if anywhere; otherwise draw, or discard and turn a card up.
    It knocks, and gives, when the card would replace the knocker's lowest
    card to the knocker's gain (to the giver's); reveals at random.
    ``table``: the state's, if known (the knock answers share one)."""
    kind = legal[0]["type"]
    if kind == "reveal":
        return legal[int(rng.random() * len(legal))]
    table = table or Table(state.observation(None), mean)
    view = table.view
    worths = table.worths
    n = table.n
    if kind == "knock":  # given the card, a knocker ends up with it instead of its lowest card
        return legal[0] if view["drawn"] < lowest(worths, seat, n) - 1 else legal[1]
    if kind == "give":  # the knocker's lowest card beats the drawn one
        k = min((a["to"] for a in legal if a["type"] == "give"), key=lambda k: lowest(worths, k, n))
        if lowest(worths, k, n) < view["drawn"] - 1:
            return {"type": "give", "to": k}
    if kind == "place":
        return max(legal, key=lambda a: table.gain(a["slot"], view["drawn"], seat))
    if kind == "exchange":  # the knocker's lowest card, put where it gains most
        take = min({tuple(a["take"]) for a in legal}, key=lambda q: (worths[q], q))
        return max((a for a in legal if tuple(a["take"]) == take), key=lambda a: exchange_gain(table, a, seat))
    card = view["discard"][-1] if view["drawn"] is None else view["drawn"]
    best, gain = None, 0.0
    for action in legal:
        if action["type"] in ("take_discard", "swap"):
            g = table.gain(action["slot"], card, seat)
            if g > gain:
                best, gain = action, g
    if best is not None and (gain >= 2 or best["type"] == "swap" or card < mean - 2):
        return best
    if kind == "draw":
        return legal[0]
    rest = [a for a in legal if a["type"] == "discard"]
    if rest:
        return rest[int(rng.random() * len(rest))]
    return best or legal[0]


def exchange_gain(table: Table, action: dict, seat: int) -> float:
    """An exchange's first effect for the giver ``seat``: the knocker's card
    at ``take`` into ``put`` (its card discarded), the knocker's held card
    into ``take`` (each change counted alone, triples included)."""
    take, put = tuple(action["take"]), tuple(action["put"])
    if take in table.up:
        gain = table.gain(put, table.up[take], seat)
    else:  # a face-down card: its worth, and no triple
        gain = table.weight(put, seat) * (table.worths[put] - table.worths[take])
    held = (table.view.get("held") or {}).get("card")
    if isinstance(held, int):
        gain += table.gain(take, held, seat)
    return gain


def lowest(worths: dict, seat: int, n: int) -> float:
    """The lowest card in ``seat``'s area (its grid and the next seat's last column)."""
    right = (seat + 1) % n
    return min((w for (s, _r, c), w in worths.items() if s == seat or (s == right and c == COLS - 1)), default=99.0)


PLAYOUT_TURNS = 3  # Allegra: a playout's most turns per seat (a safety bound)


REPLIES = 1  # Allegra: the other seats' turns a playout plays before it is scored


def allegra_playout(state, root: int, mean: float, rng: random.Random) -> list[float]:
    """Plays on with ``quick_allegra`` to the end of ``root``'s turn and
    ``REPLIES`` turns of others (or the round or the game is over), then
    values the table there: every move is valued at the same point of the
    turn cycle, so a move that takes one decision is not compared with one
    whose turn is still half done."""
    view = state.observation(None)
    round_now = view["round"]
    replied: set[int] = set()
    knock_table = None
    for _ in range(PLAYOUT_TURNS * 4 * state.num_players):
        if state.is_terminal():
            break
        if state.is_chance_node():
            view = state.observation(None)
            if view["round"] != round_now:
                return allegra_values(view, mean, round_over=True)
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        kind = legal[0]["type"]
        if kind in ("draw", "take_discard"):  # a turn begins
            if seat == root or (seat not in replied and len(replied) == REPLIES):
                break
            replied.add(seat)
        if kind != "knock":
            knock_table = None
        elif knock_table is None:  # an answer changes no card: the answers share one table
            knock_table = Table(state.observation(None), mean)
        state.apply(seat, quick_allegra(state, seat, legal, mean, rng, knock_table))
    return allegra_values(state.observation(None), mean)


# -- the search ---------------------------------------------------------------


class Node:
    __slots__ = ("seat", "visits", "reward", "available", "children")

    def __init__(self, seat: int | None):
        self.seat = seat  # who chose the action that leads here (None: the root)
        self.visits = 0
        self.reward = 0.0
        self.available = 0  # iterations in which this node's action was legal
        self.children: dict[str, tuple[dict, Node]] = {}


def settle_chance(state, rng: random.Random) -> None:
    while state.is_chance_node():
        state.apply_chance(state.sample_chance(rng))


class Search:
    """One ISMCTS search from one Allegory decision."""

    def __init__(self, observation: dict, history: list[dict], rng: random.Random):
        self.observation = observation
        self.history = history
        self.rng = rng
        self.root = Node(None)
        self.keys: dict[int, tuple[dict, str]] = {}

    def key(self, action: dict) -> str:
        """The tree's key of an action. The engine hands out the same action
        objects again (never changed), so keys are kept by object; the
        object is kept with its key, so its id is not reused meanwhile."""
        known = self.keys.get(id(action))
        if known is None:
            known = self.keys[id(action)] = (action, action_key(action))
        return known[1]

    def values(self, state) -> list[float]:
        return allegory_values(state, self.rng)

    def iterate(self) -> None:
        rng = self.rng
        state = cardroom_sdk.sample_world(self.observation, rng, self.history)
        node, path = self.root, [self.root]
        c = EXPLORATION
        while True:
            settle_chance(state, rng)
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            keyed = [(self.key(m), m) for m in candidates(state.legal_actions(seat))]
            children = node.children
            untried = [km for km in keyed if km[0] not in children]
            if untried:
                key, move = untried[int(rng.random() * len(untried))]
                child = Node(seat)
                children[key] = (move, child)
                child.available = 1
                state.apply(seat, move)
                path.append(child)
                settle_chance(state, rng)
                break
            best, best_value = None, -1.0
            for key, _move in keyed:
                move, child = children[key]
                child.available += 1
                value = child.reward / child.visits + c * math.sqrt(math.log(child.available) / child.visits)
                if value > best_value:
                    best, best_value = (move, child), value
            move, node = best
            state.apply(seat, move)
            path.append(node)
        payoff = self.values(state)
        for visited in path:
            visited.visits += 1
            if visited.seat is not None:
                visited.reward += payoff[visited.seat]

    def complete(self) -> bool:
        return bool(self.root.children)

    def best_action(self) -> dict:
        _, (move, _child) = max(self.root.children.items(), key=lambda kv: (kv[1][1].visits, kv[0]))
        return move


class PairedSearch:
    """The default search: every candidate move is tried in every sampled
    world, with the same random numbers for its playout, so two moves are
    always compared on the same deck and the same hidden cards (that luck
    is far larger than the difference between two moves: a tree whose
    every edge saw other worlds needs many more iterations to tell them
    apart). Allegra plays on with ``allegra_playout``, Allegory with the
    heuristic playout to the end. An iteration is one move tried in one
    world; a world counts once every candidate has been tried in it."""

    def __init__(self, observation: dict, history: list[dict], rng: random.Random, legal: list[dict]):
        self.observation = observation
        self.history = history
        self.rng = rng
        self.legal = legal
        self.moves: list[dict] = []
        self.values: list[float] = []
        self.trial: list[float] = []
        self.world = None
        self.luck = 0.0
        self.worlds = 0
        self.mean = 0.0

    def iterate(self) -> None:
        seat = self.observation["seat"]
        if not self.trial:
            self.world = cardroom_sdk.sample_world(self.observation, self.rng, self.history)
            self.luck = self.rng.random()  # every move's playout in this world draws the same numbers
            if not self.moves:
                if self.observation["game"] == "allegra":
                    self.mean = hidden_mean(self.world)
                    self.moves = allegra_candidates(self.world, self.legal, self.mean)
                else:
                    self.moves = list(self.legal)
                self.values = [0.0] * len(self.moves)
        state = self.world.clone()
        rng = random.Random(self.luck)
        state.apply(seat, self.moves[len(self.trial)])
        settle_chance(state, rng)
        if self.observation["game"] == "allegra":
            self.trial.append(allegra_playout(state, seat, self.mean, rng)[seat])
        else:
            self.trial.append(allegory_values(state, rng)[seat])
        if len(self.trial) == len(self.moves):
            self.values = [a + b for a, b in zip(self.values, self.trial)]
            self.trial = []
            self.worlds += 1

    def complete(self) -> bool:
        return self.worlds > 0

    def best_action(self) -> dict:
        """The move of the highest mean (a tie: the earlier in ``legal``,
        pass before knock)."""
        order = sorted(range(len(self.moves)), key=lambda i: (-self.values[i], self.moves[i]["type"] == "knock", i))
        return self.moves[order[0]]


EXCHANGES = 12  # Allegra: the exchanges (of up to 14 x 13) a search tries, the best by their first effect
SLOTS = 5  # Allegra: the slots a search tries for the discard or the drawn card, the best where they stand
FLIPS = 2  # Allegra: the face-down slots a search tries turning up, its own unshared ones first


def allegra_candidates(world, legal: list[dict], mean: float) -> list[dict]:
    """The moves Allegra's search tries, of ``legal``: drawing and every
    give; the ``SLOTS`` slots where the discard or the drawn card gains
    most where it stands, triples removed (a shared slot for what it gives
    a rival too); ``FLIPS`` flips or reveals, the seat's unshared slots
    first; the ``EXCHANGES`` best exchanges by their first effect."""
    kind = legal[0]["type"]
    if kind in ("knock", "place") or len(legal) <= SLOTS:
        return list(legal)
    view = world.observation(None)
    table = Table(view, mean)
    seat = view["to_act"][0]
    if kind == "exchange":
        return sorted(legal, key=lambda a: -exchange_gain(table, a, seat))[:EXCHANGES]
    if kind == "reveal":
        return sorted(legal, key=lambda a: shared_or_rival(a["slot"], seat))[:FLIPS]
    card = view["discard"][-1] if view["drawn"] is None else view["drawn"]
    slots = [a for a in legal if a["type"] in ("take_discard", "swap")]
    slots.sort(key=lambda a: -table.gain(a["slot"], card, seat))
    flips = [a for a in legal if a["type"] == "discard"]
    flips = sorted(flips, key=lambda a: a["flip"] is not None and shared_or_rival(a["flip"], seat))[:FLIPS]
    return [a for a in legal if a["type"] in ("draw", "give")] + slots[:SLOTS] + flips


def shared_or_rival(slot: list[int], seat: int) -> bool:
    """Whether ``slot`` is in another seat's area too (a card turned up
    there tells the neighbour as much as the seat)."""
    return slot[0] != seat or slot[2] == COLS - 1


def new_search(observation: dict, history: list[dict], rng: random.Random, moves: list[dict]) -> Search | PairedSearch:
    """The game's search from this decision (``moves``: ``candidates(legal)``)."""
    if TREE and observation["game"] == "allegory":
        return Search(observation, history, rng)
    return PairedSearch(observation, history, rng, moves)


def decide(observation: dict, legal: list[dict], rng: random.Random, history: list[dict],
           time_ms: float | None = TIME_MS, iterations: int | None = ITERATIONS,
           wall_ms: float | None = None) -> tuple[dict, int]:
    """The action to play and the iterations the search ran: ``iterations``
    of them, or as many as ``time_ms`` of CPU time allows within ``wall_ms``
    of wall time (by default ``BUSY_FACTOR`` times ``time_ms``)."""
    moves = candidates(legal)
    if len(moves) == 1:
        return moves[0], 0
    search = new_search(observation, history, rng, moves)
    done = 0
    if iterations is not None:
        while done < iterations or not search.complete():
            search.iterate()
            done += 1
    else:
        cpu_end = time.process_time() + time_ms / 1000
        wall_end = time.perf_counter() + (BUSY_FACTOR * time_ms if wall_ms is None else wall_ms) / 1000
        while not search.complete() or (time.process_time() < cpu_end and time.perf_counter() < wall_end):
            search.iterate()
            done += 1
    return search.best_action(), done


def make_choose(time_ms: float | None = TIME_MS, iterations: int | None = ITERATIONS):
    """A ``choose(observation, legal, rng)`` for one seat of one match (it
    keeps the seat's earlier observations for ``sample_world``)."""
    history: list[dict] = []

    def choose(observation, legal, rng):
        action, _ = decide(observation, legal, rng, list(history), time_ms, iterations)
        history.append(observation)
        return action

    return choose


def choose(observation, legal, context):
    """For ``cardroom_sdk.run``: the wall time also stays within a quarter
    of the match time left and half the time a move may take."""
    wall_ms = BUSY_FACTOR * TIME_MS
    if context.time_left_ms is not None:
        wall_ms = min(wall_ms, context.time_left_ms / 4)
    if context.per_move_ms is not None:
        wall_ms = min(wall_ms, context.per_move_ms / 2)
    action, _ = decide(observation, legal, context.rng, context.history, min(TIME_MS, wall_ms), ITERATIONS, wall_ms)
    return action


if __name__ == "__main__":
    cardroom_sdk.run(choose)
