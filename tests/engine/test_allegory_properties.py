"""Property tests of the Allegory engine: random play over seeds and 2-6 players."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.allegory import AllegoryGame
from engine.allegory.game import CARD_NAME
from engine.core import IllegalActionError
from engine.form import state_fields

MAX_DECISIONS = 3000  # far above any real game (~50 decisions per player)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

seeds = st.integers(min_value=0, max_value=2**32 - 1)
players = st.integers(min_value=2, max_value=6)


def new_state(n, unique, rng):
    state = AllegoryGame(n, {"unique_morals": unique}).new_initial_state()
    event = state.sample_chance(rng)
    state.apply_chance(event)
    return state, event


def snapshot(state):
    return (state.observation(None), state.to_act(), state.is_terminal())


def fingerprint(state):
    """Every field of the state (cheaper than a full observation)."""
    return repr([getattr(state, name) for name in FIELDS])


FIELDS = [name for name in state_fields(AllegoryGame(2).new_initial_state()) if name not in ("game", "_legal")]


def random_game(n, seed, unique=False, check=None):
    """Play a whole game at random; returns (state, events)."""
    rng = random.Random(seed)
    state, event = new_state(n, unique, rng)
    events = [("chance", event)]
    steps = 0
    while not state.is_terminal():
        if check:
            check(state, rng)
        (seat,) = state.to_act()
        action = state.random_action(seat, rng)
        state.apply(seat, action)
        events.append((seat, action))
        steps += 1
        assert steps < MAX_DECISIONS, "the game does not end"
    if check:
        check(state, rng)
    return state, events


def is_valid_filling(action, template):
    if type(action) is not dict or set(action) != {"type", "chips"} or action["type"] != "distribute":
        return False
    chips = action["chips"]
    if type(chips) is not dict:
        return False
    if not all(k in template["cards"] and type(v) is int and v >= 0 for k, v in chips.items()):
        return False
    return sum(chips.values()) == template["total"]


def oracle_legal(state, seat, action):
    """Independent legality check from the legal list (strict about types)."""
    legal = state.legal_actions(seat)
    if not legal:
        return False
    if legal[0]["type"] == "distribute":
        return is_valid_filling(action, legal[0])
    if type(action) is not dict:
        return False
    for option in legal:
        if set(option) == set(action) and all(
            type(option[k]) is type(action[k]) and option[k] == action[k] for k in option
        ):
            return True
    return False


@SETTINGS
@given(n=players, seed=seeds, unique=st.booleans())
def test_random_play_never_raises_and_always_ends(n, seed, unique):
    state, events = random_game(n, seed, unique)
    assert state.is_terminal() and state.to_act() == []
    result = state.result()
    assert len(result.scores) == n and all(1 <= r <= n for r in result.ranks)
    assert min(result.ranks) == 1
    cards = [p["cards"] for p in state.observation(None)["players"]]
    obs = state.observation(None)
    assert max(cards) >= 10 or not obs["pool"]


@SETTINGS
@given(n=players, seed=seeds)
def test_lore_chips_are_conserved_at_every_step(n, seed):
    def check(state, rng):
        obs = state.observation(None)
        owned = sum(p["chips"] for p in obs["players"])
        on_cards = sum(p["chips"] for p in obs["pool"])
        assert owned + on_cards == 15 * n
        assert all(p["chips"] >= 0 and 0 <= p["bid"] <= p["chips"] for p in obs["players"])

    random_game(n, seed, check=check)


@SETTINGS
@given(n=players, seed=seeds)
def test_every_theme_card_is_in_exactly_one_place(n, seed):
    in_play = Counter(CARD_NAME[c] for c in AllegoryGame(n).cards_in_play)

    def check(state, rng):
        obs = state.observation(None)
        places = list(obs["deck"]) + [p["card"] for p in obs["pool"]]
        for p in obs["players"]:
            cards = [c for tale in p["tales"].values() for c in tale]
            assert len(cards) == p["cards"]
            places += cards
        assert Counter(places) == in_play
        assert obs["deck_size"] == len(obs["deck"])

    random_game(n, seed, check=check)


@SETTINGS
@given(n=players, seed=seeds, unique=st.booleans())
def test_same_seed_and_actions_give_identical_events_and_states(n, seed, unique):
    first, events1 = random_game(n, seed, unique)
    second, events2 = random_game(n, seed, unique)
    assert events1 == events2
    assert snapshot(first) == snapshot(second)
    # re-playing the recorded events (as a replay would) reaches the same state
    replay = AllegoryGame(n, {"unique_morals": unique}).new_initial_state()
    for by, action in events1:
        if by == "chance":
            replay.apply_chance(action)
        else:
            replay.apply(by, action)
    assert snapshot(replay) == snapshot(first)
    assert replay.result() == first.result()


@SETTINGS
@given(n=players, seed=seeds)
def test_observations_hide_other_morals_and_the_deck_order(n, seed):
    def check(state, rng):
        full = state.observation(None)
        over = state.is_terminal()
        for seat in range(n):
            obs = state.observation(seat)
            assert obs["seat"] == seat and obs["moral"] == full["morals"][seat]
            assert "deck" not in obs
            assert ("morals" in obs) == over
            if not over:
                assert "scores" not in obs and "breakdown" not in obs
            assert obs["deck_size"] == full["deck_size"]
            # nothing in the view but the documented public data and the own Moral
            without = {k: v for k, v in full.items() if k not in ("deck", "morals", "moral", "seat")}
            assert {k: v for k, v in obs.items() if k not in ("morals", "moral", "seat")} == without

    random_game(n, seed, check=check)


def junk_actions(state, seat, rng):
    """Candidate actions around the legal ones: mutated, mistyped, out of turn."""
    legal = state.legal_actions(seat)
    pool = [p["card"] for p in state.observation(None)["pool"]]
    everything = [CARD_NAME[c] for c in state.game.cards_in_play]
    out = [
        None, [], "rest", {}, {"type": "pass"}, {"type": "rest", "claim": None},
        {"type": "bid", "amount": rng.randint(-2, 100)},
        {"type": "bid", "amount": True},
        {"type": "bid", "amount": 2.0},
        {"type": "bid", "amount": 3, "extra": 0},
        {"type": "rest", "claim": rng.choice(everything)},
        {"type": "take", "card": rng.choice(everything)},
        {"type": "take", "card": rng.choice(pool) if pool else "owl:1"},
        {"type": "take"},
        {"type": "distribute", "chips": {}},
        {"type": "distribute", "chips": {rng.choice(everything): rng.randint(0, 30)}},
        {"type": "distribute", "chips": [1]},
    ]  # fmt: skip
    for option in legal[:3] + rng.sample(legal[3:], min(4, len(legal[3:]))) + legal[-1:]:
        if option["type"] == "distribute":
            total, cards = option["total"], option["cards"]
            out.append({"type": "distribute", "chips": {cards[0]: total}})
            out.append({"type": "distribute", "chips": {cards[-1]: total + 1}})
            out.append({"type": "distribute", "chips": {cards[0]: total, cards[-1]: -1} if len(cards) > 1 else {}})
            out.append({"type": "distribute", "chips": {c: 0 for c in cards} | {cards[0]: total}})
            out.append({"type": "distribute", "chips": {cards[0]: total}, "total": total})
            out.append({"type": "distribute", "chips": {cards[0]: float(total)}})
            out.append({"type": "distribute", "chips": {cards[0]: total - 1, "x": 1} | {cards[-1]: True}})
            out.append(
                {
                    "type": "distribute",
                    "chips": {c: total - 1 if i == 0 else (c == cards[1]) for i, c in enumerate(cards)},
                }
            )
            out.append({"type": "distribute", "total": total, "cards": cards})
        else:
            out.append(dict(option))
            out.append(dict(option, extra=1))
            if option["type"] == "bid":
                out.append({"type": "bid", "amount": float(option["amount"])})
    return out


@settings(SETTINGS, max_examples=25)
@given(n=players, seed=seeds)
def test_illegal_actions_raise_and_leave_the_state_unchanged(n, seed):
    def check(state, rng):
        if state.is_terminal():
            for seat in range(n):
                assert state.legal_actions(seat) == []
            return
        (seat,) = state.to_act()
        before = snapshot(state)
        fast = fingerprint(state)
        for action in junk_actions(state, seat, rng):
            for who in (seat, (seat + 1) % n):
                legal = who == seat and oracle_legal(state, who, action)
                trial = state.clone()
                if legal:
                    trial.apply(who, action)
                else:
                    try:
                        state.apply(who, action)
                    except IllegalActionError:
                        pass
                    else:
                        raise AssertionError(f"seat {who} could play {action!r}")
            assert fingerprint(state) == fast  # unchanged (and the clone is independent)
        assert snapshot(state) == before

    random_game(n, seed, check=check)


@SETTINGS
@given(n=players, seed=seeds)
def test_random_and_default_actions_are_legal(n, seed):
    def check(state, rng):
        if state.is_terminal():
            return
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        for action in (state.random_action(seat, random.Random(rng.random())), state.default_action(seat)):
            assert oracle_legal(state, seat, action), action
        for action in legal:
            if action["type"] != "distribute":
                state.clone().apply(seat, action)

    random_game(n, seed, check=check)
