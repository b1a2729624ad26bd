"""Luck from a replay alone: AIVAT's chance correction over explicit chance.

For every chance outcome the luck it gave seat ``s`` is

    V_s(state after the actual outcome) - E[V_s(state after an outcome)]

with the expectation over that chance node's true distribution, and the
adjusted payoff is ``payoff - sum of the seat's luck`` (Burch et al., AIVAT,
AAAI 2018: the correction has expectation 0 at every chance node, so the
adjusted payoff is an unbiased estimate of the expected payoff, whatever the
heuristic ``V``; the closer ``V`` is to the true conditional expectation, the
more variance it removes).

The chance model is the *lazy* one of docs/luck.md (decision 183): a card
comes into being when it first becomes known to anyone, drawn uniformly from
the cards not yet revealed in its pile. Each game's adapter turns one replay
event into at most one chance step (``Step``): the actual state after it and
the alternative states, either all of them with their probabilities
(``exact``) or a sampler for the sampled expectation.

Nothing here imports Django; the engine does all the rules.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import get_game_class
from engine.core import CHANCE, State
from engine.replay import Verification, iter_states

# Alternatives drawn when a step's outcomes are too many to enumerate.
SAMPLES = 32


@dataclass
class Step:
    """One chance outcome: ``actual`` is the state after it; ``exact`` lists
    every possible (probability, state after it), or ``sample(rng)`` draws
    the state after an outcome from the true distribution (``actual``
    itself when it draws the actual outcome: its ``V`` is not evaluated
    again). ``actual_at``:
    the place in ``exact`` of the actual outcome, whose state is ``actual``
    (its ``V`` is then evaluated once), or -1. ``key``: what was known to
    anyone before the outcome, which seeds the draws beside the value
    function and the event's place (``step_rng``), or ""."""

    index: int
    actual: State
    exact: list[tuple[float, State]] | None = None
    sample: Callable[[random.Random], State] | None = None
    actual_at: int = -1
    key: str = ""


@dataclass
class Context:
    """What an adapter keeps between events of one replay."""

    forfeited: frozenset[int] = frozenset()
    extra: dict[str, Any] = field(default_factory=dict)


class ValueFunction:
    """``V(state, forfeited)``: each seat's expected payoff (rank points)
    from the state; reads only what has been revealed to someone."""

    name: str = ""
    version: int = 0
    # How the estimator takes a chance step's E[V]: 0, over every outcome
    # where the adapter lists them (else the mean of SAMPLES draws); K > 0,
    # at every step the mean of V over K draws from the step's true
    # distribution (the adapter then gives a sampler, building only the
    # drawn outcomes): still unbiased, at the price of about the credited
    # luck's variance over K added to a match's adjusted result.
    draws: int = 0
    # True for a value function that reads cards no one has seen yet (a
    # lookahead, decision 285): its chance steps must then leave the rest of
    # each pile in the true distribution, which the adapter sees to.
    reads_hidden: bool = False

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def draws_label(self) -> str:
        """What seeds the outcomes its sampled expectations draw (``step_rng``): its own label, unless it is
        another value function scaled, which then draws that one's very outcomes (its luck that one's times the
        factor)."""
        return self.label

    def __call__(self, state: State, forfeited: frozenset[int]) -> list[float]:
        raise NotImplementedError


class Adapter:
    """A game's chance model over its engine states."""

    value: ValueFunction

    def step(self, pre: State, event: dict[str, Any], post: State, index: int, ctx: Context) -> Step | None:
        raise NotImplementedError


def rank_points(ranks: Sequence[int]) -> list[float]:
    """The standings' points (cardroom.tournament.standings.rank_points) as
    floats; a new list each call (callers may change it)."""
    return list(_rank_points(tuple(ranks)))


@functools.lru_cache(maxsize=1024)
def _rank_points(ranks: tuple[int, ...]) -> tuple[float, ...]:
    # few rankings occur (a table's size and its ties), each computed
    # once: in exact fractions it cost as much as the terminal state's result
    from cardroom.tournament.standings import rank_points as exact

    return tuple(float(p) for p in exact(ranks))


def terminal_points(state: State, forfeited: frozenset[int]) -> list[float]:
    return rank_points(state.result(forfeited).ranks)


@dataclass(frozen=True)
class SeatLuck:
    seat: int
    payoff: float
    luck: float

    @property
    def adjusted(self) -> float:
        return self.payoff - self.luck

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "payoff": self.payoff, "luck": self.luck, "adjusted": self.adjusted}


@dataclass(frozen=True)
class LuckReport:
    game: str
    value_function: str
    seats: list[SeatLuck]
    steps: int

    def as_dict(self, replay: str) -> dict[str, Any]:
        return {
            "replay": replay,
            "game": self.game,
            "value_function": self.value_function,
            "seats": [s.as_dict() for s in self.seats],
        }


def step_rng(label: str, index: int, key: str = "") -> random.Random:
    """The sampling generator of the step at event ``index``: fixed by the
    value function, the event's place and, when given, ``key`` (what was
    known before the outcome), so independent of the outcome and the same
    on every run (a str seed hashes with SHA-512). Without a key every
    match draws the same numbers at the same event (decision 281: a value
    function that draws all its expectations needs the key, or its draws'
    error is shared by every match and does not average out)."""
    return random.Random(f"cardroom-luck:{label}:{index}" + (f":{key}" if key else ""))


def expectation(
    step: Step, value: ValueFunction, forfeited: frozenset[int], n: int, actual: list[float] | None = None
) -> list[float]:
    """``E[V]`` over the step's outcomes (or the mean over ``value.draws``
    drawn ones, when the value function says so); ``actual``, when given,
    is ``V`` of the actual outcome (not evaluated again)."""
    # each seat's sum term by term in the outcomes' order (the same floats
    # as ``out[s] += p * v[s]``), a list built per term: the loop is hot
    out = [0.0] * n
    if step.exact is not None and not value.draws:
        for i, (p, state) in enumerate(step.exact):
            v = actual if i == step.actual_at and actual is not None else value(state, forfeited)
            out = [o + p * x for o, x in zip(out, v)]
        return out
    if step.sample is None:
        raise ValueError(f"{value.label} draws its expectations, but the step at event {step.index} has no sampler")
    k = value.draws or SAMPLES
    rng = step_rng(value.draws_label, step.index, step.key)
    # a sampler may give the very state it gave before (the same outcome
    # drawn again): its V is the same, so it is evaluated once (each state
    # is held beside its V, so no identity is reused within the step)
    seen: dict[int, tuple[State, list[float]]] = {}
    for _ in range(k):
        drawn = step.sample(rng)
        if drawn is step.actual and actual is not None:
            v = actual
        elif id(drawn) in seen:
            v = seen[id(drawn)][1]
        else:
            v = value(drawn, forfeited)
            seen[id(drawn)] = (drawn, v)
        out = [o + x / k for o, x in zip(out, v)]
    return out


def iter_steps(
    doc: dict[str, Any],
    adapter: Adapter,
    forfeit_events: dict[int, int],
    states: Iterator[tuple[int, dict[str, Any], State]] | None = None,
):
    """Yield (step, forfeited seats then) for every chance outcome of
    ``doc``; ``states``: its events re-played (``iter_states(doc)`` when
    not given)."""
    ctx = Context()
    pre: State | None = None
    for index, event, post in iter_states(doc) if states is None else states:
        if pre is None:  # the initial state: a fresh one, the replay's first event not yet applied
            pre = get_game_class(doc["game"])(doc["num_players"], doc["options"]).new_initial_state()
        ctx.forfeited = frozenset(s for s, e in forfeit_events.items() if e <= index)
        step = adapter.step(pre, event, post, index, ctx)
        if step is not None:
            yield step, ctx.forfeited
        pre = post.clone()


class _FirstChoice:
    """A policy's generator in a lookahead: where the policy would draw
    among equally good actions, the first (so the lookahead, and the value
    function built on it, is a fixed function of the state)."""

    @staticmethod
    def choice(seq):
        return seq[0]


def play_ahead(
    state: State,
    forfeited: frozenset[int],
    choose: Callable[[dict[str, Any], list[Any], Any], Any],
    limit: int,
    verdict: Callable[[State, Any], str],
    marker: Callable[[State], Any],
) -> State:
    """The state a bot's policy ``choose(observation, legal, rng)`` takes
    ``state`` to, played for whichever seat is to move, for up to ``limit``
    decisions (decision 285's lookahead value functions). Stops at a
    chance node or the end, where several seats act at once or a seat
    that forfeited is to move; before a decision ``verdict`` calls
    ``"stop"``, after one it calls ``"last"``, and after one that changes
    ``marker`` (a round's end, a card coming in). ``state`` is never
    changed: the lookahead plays on a clone."""
    ahead = state
    for _ in range(limit):
        if ahead.is_terminal() or ahead.is_chance_node():
            break
        seats = ahead.to_act()
        if len(seats) != 1 or seats[0] in forfeited:
            break
        seat = seats[0]
        action = choose(ahead.observation(seat), ahead.legal_actions(seat), _FirstChoice)
        say = verdict(ahead, action)
        if say == "stop":
            break
        if ahead is state:
            ahead = state.clone()
        mark = marker(ahead)
        ahead.apply(seat, action)
        if say == "last" or marker(ahead) != mark:
            break
    return ahead


# A seat's known policy: (probability, action) for every action it may take
# in a state (the probabilities adding up to 1).
Policy = Callable[[State, int], list[tuple[float, dict[str, Any]]]]


def action_luck(
    doc: dict[str, Any], value: ValueFunction, policies: dict[int, Policy], forfeit_events: dict[int, int]
) -> list[float]:
    """AIVAT's action correction (Burch et al. 2018, section 4) for the
    seats whose policy is known: at each of their decisions,
    ``V(state after the action taken) - Σ_a π(a) V(state after a)``. Each
    term has expectation 0 given the full state before it (the policy reads
    only the seat's observation, so the action is drawn from ``π`` whatever
    the hidden cards), so adding these to the chance luck keeps the
    adjusted payoff unbiased; it removes what the seat's own random choices
    did to every seat's result."""
    n = doc["num_players"]
    luck = [0.0] * n
    pre: State | None = None
    for index, event, post in iter_states(doc):
        if pre is None:
            pre = get_game_class(doc["game"])(n, doc["options"]).new_initial_state()
        seat = event["by"]
        if seat != CHANCE and seat in policies:
            forfeited = frozenset(s for s, e in forfeit_events.items() if e <= index)
            actual = value(post, forfeited)
            for p, action in policies[seat](pre, seat):
                alt = pre.clone()
                alt.apply(seat, action)
                v = value(alt, forfeited)
                for s in range(n):
                    actual[s] -= p * v[s]
            for s in range(n):
                luck[s] += actual[s]
        pre = post.clone()
    return luck


def luck_with(
    doc: dict[str, Any], adapter_for: Callable[[str], Adapter], policies: dict[int, Policy] | None = None
) -> LuckReport:
    """The luck of every seat in a replay document (verified completely as it
    is re-played: a replay that does not check out raises ReplayError, no
    report), with the chance model and
    value function ``adapter_for(game)`` gives (cardroom.luck.games: the
    games' adapters build on this module, so it does not import them);
    with ``policies``, also the action luck of the seats whose policy is
    known (``action_luck``)."""
    check = Verification(doc)  # verified as it is re-played for the luck: one re-play
    adapter = adapter_for(doc["game"])
    value = adapter.value
    n = check.state.num_players
    forfeit_events = dict(check.recorded)
    luck = [0.0] * n
    steps = 0
    for step, forfeited in iter_steps(doc, adapter, forfeit_events, check.events()):
        actual = value(step.actual, forfeited)
        expected = expectation(step, value, forfeited, n, actual)
        for s in range(n):
            luck[s] += actual[s] - expected[s]
        steps += 1
    checked = check.result
    assert checked is not None  # every event was re-played: the end was checked
    if policies:
        for s, x in enumerate(action_luck(doc, value, policies, forfeit_events)):
            luck[s] += x
    payoff = rank_points(checked.result.ranks)
    return LuckReport(
        checked.game,
        value.label,
        [SeatLuck(s, payoff[s], luck[s]) for s in range(n)],
        steps,
    )


__all__ = [
    "CHANCE", "Adapter", "Context", "LuckReport", "Policy", "SeatLuck", "Step", "ValueFunction", "action_luck",
    "luck_with", "play_ahead",
]  # fmt: skip
