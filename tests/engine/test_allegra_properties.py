"""Property tests of the Allegra engine over seeds and 2-6 players."""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.allegra import AllegraGame
from engine.allegra.game import CARDS
from engine.core import CHANCE, IllegalActionError

FULL = Counter(CARDS)
MAX_EVENTS = 20_000

seeds = st.integers(min_value=0, max_value=2**32 - 1)
players = st.integers(min_value=2, max_value=6)


def play(n, seed, policy="random", on_step=None):
    """Random play to the end; returns (events, final state)."""
    rng = random.Random(seed)
    state = AllegraGame(n).new_initial_state()
    events = []
    while not state.is_terminal():
        assert len(events) < MAX_EVENTS, "the game does not end"
        if state.is_chance_node():
            event = state.sample_chance(rng)
            state.apply_chance(event)
            events.append((CHANCE, event))
        else:
            to_act = state.to_act()
            assert to_act
            seat = rng.choice(to_act)  # any seat that may act (knock answers in any order)
            if policy == "default":
                action = state.default_action(seat)
            else:
                action = state.random_action(seat, rng)
            assert action in state.legal_actions(seat)
            state.apply(seat, action)
            events.append((seat, action))
        if on_step is not None:
            on_step(state, rng)
    return events, state


def cards_on_table(obs) -> Counter:
    """Every card from the spectator's view: grids, discard, deck, drawn,
    held, removed by triples."""
    c = Counter(v for g in obs["grids"] for row in g for v in row if v is not None)
    c.update(obs["discard"])
    c.update(obs["deck"])
    c.update(obs["removed"])
    if obs["drawn"] is not None:
        c[obs["drawn"]] += 1
    if obs["held"] is not None:
        c[obs["held"]["card"]] += 1
    return c


@settings(max_examples=40, deadline=None)
@given(seed=seeds, n=players)
def test_random_play_never_raises_and_always_ends(seed, n):
    _events, state = play(n, seed)
    result = state.result()
    assert len(result.scores) == n and sorted(result.ranks)[0] == 1
    assert len(state.score_details()["round_scores"]) == 3


@settings(max_examples=20, deadline=None)
@given(seed=seeds, n=players)
def test_default_policy_always_ends(seed, n):
    _events, state = play(n, seed, policy="default")
    assert state.is_terminal()


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players)
def test_all_120_cards_accounted_for_at_every_step(seed, n):
    def check(state, _rng):
        obs = state.observation(None)
        if obs["round"] == 1 and obs["phase"] == "deal" and not obs["round_scores"]:
            return  # nothing dealt yet
        assert cards_on_table(obs) == FULL
        assert state.card_count() == FULL

    play(n, seed, on_step=check)


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players)
def test_same_seed_and_actions_give_identical_events(seed, n):
    events1, state1 = play(n, seed)
    events2, state2 = play(n, seed)
    assert events1 == events2
    assert state1.observation(None) == state2.observation(None)
    # re-playing the recorded events reaches the same state
    state3 = AllegraGame(n).new_initial_state()
    for by, action in events1:
        if by == CHANCE:
            state3.apply_chance(json.loads(json.dumps(action)))
        else:
            state3.apply(by, json.loads(json.dumps(action)))
    assert state3.observation(None) == state1.observation(None)
    assert state3.result() == state1.result()


def _shuffle_hidden(state, rng):
    """A copy of ``state`` with every hidden card (face-down slots and the
    deck) dealt again at random."""
    c = state.clone()
    down = [i for i in range(c.lay.N) if c.val[i] is not None and c.upv[i] is None]
    hidden = [c.val[i] for i in down] + c.deck
    rng.shuffle(hidden)
    for i in down:
        c.val[i] = hidden.pop()
    c.deck = hidden
    return c


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players)
def test_observations_never_show_face_down_cards_or_the_deck_order(seed, n):
    def check(state, rng):
        if rng.random() > 0.2:
            return
        other = _shuffle_hidden(state, random.Random(rng.random()))
        for seat in range(n):
            obs = state.observation(seat)
            assert "deck" not in obs and "face_down" not in obs
            assert obs == other.observation(seat)
            json.dumps(obs)
            down = sum(1 for i in range(state.lay.N) if state.val[i] is not None and state.upv[i] is None)
            assert sum(1 for g in obs["grids"] for row in g for v in row if v == "?") == down

    play(n, seed, on_step=check)


def _candidates(state, rng):
    """Actions, most of them illegal, for random seats."""
    n = state.num_players
    slots = [[rng.randrange(-1, n + 1), rng.randrange(-1, 4), rng.randrange(-1, 5)] for _ in range(4)]
    slots += [[rng.randrange(n), rng.randrange(3), rng.randrange(4)] for _ in range(6)]
    out = [
        {"type": "draw"},
        {"type": "knock"},
        {"type": "pass"},
        {"type": "discard", "flip": None},
        {"type": "give", "to": rng.randrange(-1, n + 1)},
        {"type": "draw", "extra": 1},
        {"type": "pass", "slot": [0, 0, 0]},
        {"type": "reveal", "slot": [0, 0, True]},
        {"type": "swap", "slot": "0,0,0"},
        {"type": "exchange", "take": [0, 0, 0]},
        {"type": "give", "to": True},
        {"type": "teleport"},
        {},
        None,
        "draw",
    ]
    for s in slots:
        for t in ("reveal", "take_discard", "swap", "place"):
            out.append({"type": t, "slot": s})
        out.append({"type": "discard", "flip": s})
        out.append({"type": "exchange", "take": s, "put": rng.choice(slots)})
    return out


def _key(action):
    return json.dumps(action, sort_keys=True)


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players)
def test_illegal_actions_raise_and_leave_the_state_unchanged(seed, n):
    def check(state, rng):
        if state.is_terminal() or rng.random() > 0.06:
            return
        before = state.observation(None)
        legal_of = [{_key(a) for a in state.legal_actions(seat)} for seat in range(n)]
        for action in _candidates(state, rng):
            seat = rng.randrange(n)
            if _key(action) in legal_of[seat]:
                continue
            try:
                state.apply(seat, action)
            except IllegalActionError:
                pass
            else:
                raise AssertionError(f"seat {seat} could play {action!r}")
            assert state.observation(None) == before
        # a legal action by a seat that may not act now
        for seat in range(n):
            if seat not in state.to_act() and not state.is_chance_node():
                for action in state.legal_actions(state.to_act()[0])[:3]:
                    try:
                        state.apply(seat, action)
                    except IllegalActionError:
                        pass
                    else:
                        raise AssertionError("a seat played out of turn")
        assert state.observation(None) == before

    play(n, seed, on_step=check)


@settings(max_examples=15, deadline=None)
@given(seed=seeds, n=players)
def test_clone_is_an_independent_deep_copy(seed, n):
    snapshots = []

    def keep(state, rng):
        if rng.random() < 0.02:
            snapshots.append((state.clone(), state.observation(None), rng.random()))

    play(n, seed, on_step=keep)
    for clone, obs, sub in snapshots:
        assert clone.observation(None) == obs  # untouched by the original's later moves
        a, b = clone.clone(), clone.clone()
        for state in (a, b):
            rng = random.Random(sub)
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_chance(state.sample_chance(rng))
                else:
                    seat = state.to_act()[0]
                    state.apply(seat, state.random_action(seat, rng))
        assert a.observation(None) == b.observation(None)
        assert clone.observation(None) == obs


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=players)
def test_random_action_is_always_legal_and_covers_the_legal_list(seed, n):
    counts: list[tuple[int, int]] = []

    def check(state, rng):
        if state.is_terminal() or state.is_chance_node() or rng.random() > 0.1:
            return
        seat = state.to_act()[0]
        legal = {_key(a) for a in state.legal_actions(seat)}
        seen = {_key(state.random_action(seat, rng)) for _ in range(6 * len(legal) + 20)}
        assert seen <= legal
        counts.append((len(seen), len(legal)))
        assert _key(state.default_action(seat)) in legal

    play(n, seed, on_step=check)
    # with ~6 draws per legal action, nearly everything shows up
    if counts:
        assert sum(s for s, _ in counts) >= 0.9 * sum(total for _, total in counts)
