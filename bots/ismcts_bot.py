#!/usr/bin/env python3
"""A cardroom bot that searches: information-set Monte Carlo tree search
(single-observer ISMCTS, Cowling, Powley & Whitehouse 2012) over worlds that
``cardroom_sdk.sample_world`` draws, for both games.

Starter kit and the SDK's worked example: it uses only ``cardroom_sdk``'s
public API. Each iteration of the search

1. draws a world consistent with everything this seat has seen
   (``sample_world(observation, rng, history)``): the determinization;
2. walks down one tree shared by all worlds, whose edges are actions: at each
   node only the actions legal in *this* world are candidates (so a child's
   chances are counted in the iterations where it was available, and UCB
   uses that count), and the seat to act there picks by its own reward;
3. adds one node, then plays at random to the end of the game (chance events
   drawn as they come);
4. credits every node on the path with the reward of the seat that chose it:
   ``(n - rank) / (n - 1)``, 1 for first and 0 for last, as the ladder ranks.

Allegory's ``distribute`` is a filling of a template; the tree offers a few
fillings (everything on one card, for each card of the Pool, and an even
spread), and random playouts fill it at random.

The budget is per decision: ``TIME_MS`` of thinking (150 ms, at most a
quarter of the match time left), or a fixed number of ``ITERATIONS``, which
makes the bot deterministic given its seed. A decision with one candidate
takes no time at all.
"""

from __future__ import annotations

import json
import math
import random
import time

import cardroom_sdk

TIME_MS = 150  # thinking per decision when no iteration budget is set
ITERATIONS = None  # a fixed number of iterations instead (deterministic)
EXPLORATION = 0.7  # UCB's constant, for rewards in [0, 1]


def action_key(action: dict) -> str:
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


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
    """Concrete actions for the tree: ``legal`` with templates filled."""
    out: list[dict] = []
    for action in legal:
        if action.get("type") == "distribute" and "total" in action:
            out.extend(distribute_choices(action))
        else:
            out.append(action)
    return out


class Node:
    __slots__ = ("seat", "visits", "reward", "available", "children")

    def __init__(self, seat: int | None):
        self.seat = seat  # who chose the action that leads here (None: the root)
        self.visits = 0
        self.reward = 0.0
        self.available = 0  # iterations in which this node's action was legal
        self.children: dict[str, tuple[dict, Node]] = {}


def rewards(state) -> list[float]:
    ranks = state.result().ranks
    n = len(ranks)
    return [(n - r) / (n - 1) for r in ranks]


def settle_chance(state, rng: random.Random) -> None:
    while state.is_chance_node():
        state.apply_chance(state.sample_chance(rng))


def playout(state, rng: random.Random) -> None:
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        state.apply(seat, state.random_action(seat, rng))


class Search:
    """One ISMCTS search from one decision."""

    def __init__(self, observation: dict, history: list[dict], rng: random.Random):
        self.observation = observation
        self.history = history
        self.rng = rng
        self.root = Node(None)

    def iterate(self) -> None:
        rng = self.rng
        state = cardroom_sdk.sample_world(self.observation, rng, self.history)
        node, path = self.root, [self.root]
        while True:
            settle_chance(state, rng)
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            moves = candidates(state.legal_actions(seat))
            untried = [m for m in moves if action_key(m) not in node.children]
            if untried:
                move = untried[int(rng.random() * len(untried))]
                child = Node(seat)
                node.children[action_key(move)] = (move, child)
                child.available = 1
                state.apply(seat, move)
                path.append(child)
                playout(state, rng)
                break
            best, best_value = None, -1.0
            for move in moves:
                _, child = node.children[action_key(move)]
                child.available += 1
                value = child.reward / child.visits + EXPLORATION * math.sqrt(math.log(child.available) / child.visits)
                if value > best_value:
                    best, best_value = (move, child), value
            move, node = best
            state.apply(seat, move)
            path.append(node)
        payoff = rewards(state)
        for visited in path:
            visited.visits += 1
            if visited.seat is not None:
                visited.reward += payoff[visited.seat]

    def best_action(self) -> dict:
        _, (move, _child) = max(self.root.children.items(), key=lambda kv: (kv[1][1].visits, kv[0]))
        return move


def decide(observation: dict, legal: list[dict], rng: random.Random, history: list[dict],
           time_ms: float | None = TIME_MS, iterations: int | None = ITERATIONS) -> tuple[dict, int]:
    """The action to play and the iterations the search ran."""
    moves = candidates(legal)
    if len(moves) == 1:
        return moves[0], 0
    search = Search(observation, history, rng)
    done = 0
    if iterations is not None:
        for _ in range(iterations):
            search.iterate()
        done = iterations
    else:
        deadline = time.perf_counter() + time_ms / 1000
        while done < 1 or time.perf_counter() < deadline:
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
    """For ``cardroom_sdk.run``: the budget also stays within a quarter of
    the match time left."""
    time_ms = TIME_MS
    if context.time_left_ms is not None:
        time_ms = min(time_ms, context.time_left_ms / 4)
    action, _ = decide(observation, legal, context.rng, context.history, time_ms, ITERATIONS)
    return action


if __name__ == "__main__":
    cardroom_sdk.run(choose)
