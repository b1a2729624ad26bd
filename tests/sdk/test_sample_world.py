"""``cardroom_sdk.sample_world`` over positions of real games: the world shows
the seat exactly its observation, honours what it saw earlier, deals every
hidden card everywhere it can be (chi-square), and plays on to the end."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardroom_sdk import sample_world
from engine.allegra.game import CARDS
from tests.sdk.positions import new_game, play, positions
from tests.sdk.stats import chi_square_p

FULL_ALLEGRA = Counter(CARDS)


def playout(world, rng):
    """Random play from the world to its end; every action is checked legal."""
    steps = 0
    while not world.is_terminal():
        steps += 1
        assert steps < 100_000, "the playout does not end"
        if world.is_chance_node():
            world.apply_chance(world.sample_chance(rng))
        else:
            seat = rng.choice(world.to_act())
            action = world.random_action(seat, rng)
            if action["type"] != "distribute":
                assert action in world.legal_actions(seat)
            world.apply(seat, action)
    return world.result()


def unaccounted(obs):
    """The Allegra cards a seat's observation does not show."""
    seen = Counter(v for g in obs["grids"] for row in g for v in row if type(v) is int)
    seen.update(obs["discard"])
    seen.update(obs["removed"])
    if obs["drawn"] is not None:
        seen[obs["drawn"]] += 1
    if obs["held"] is not None and type(obs["held"]["card"]) is int:
        seen[obs["held"]["card"]] += 1
    return FULL_ALLEGRA - seen


def face_down_cards(world, obs):
    """The values the world put where the seat sees "?" (grids and held)."""
    full = world.observation(None)
    cards = Counter(
        full["grids"][s][r][c]
        for s, grid in enumerate(obs["grids"])
        for r, row in enumerate(grid)
        for c, v in enumerate(row)
        if v == "?"
    )
    if obs["held"] is not None and obs["held"]["card"] == "?":
        cards[full["held"]["card"]] += 1
    return cards


def check_history(world, position):
    """What the seat saw earlier in the round and no longer sees: a card now
    face down was face down in every earlier observation, so it is one the
    seat could not account for in each of them; and a slot face down now was
    face down then."""
    obs = position.observation
    if obs["game"] != "allegra":
        return
    hidden_now = face_down_cards(world, obs)
    for earlier in position.history:
        if earlier["round"] != obs["round"]:
            continue
        assert not hidden_now - unaccounted(earlier), "a face-down card the seat had seen elsewhere"
        for s, grid in enumerate(obs["grids"]):
            for r, row in enumerate(grid):
                for c, v in enumerate(row):
                    if v == "?":
                        assert earlier["grids"][s][r][c] == "?"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(["allegory", "allegra"]),
    n=st.integers(2, 6),
    unique=st.booleans(),
    policy=st.sampled_from(["random", "greedy"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_world_shows_the_seat_its_observation_and_plays_on(game, n, unique, policy, seed):
    g = new_game(game, n, unique)
    rng = random.Random(seed)
    seen = 0
    for position in positions(g, seed, every=0.08, policy=policy):
        for with_history in (False, True):
            world = sample_world(position.observation, rng, position.history if with_history else None)
            assert world.observation(position.seat) == position.observation
            if with_history:
                check_history(world, position)
        seen += 1
        if rng.random() < 0.15:
            result = playout(world, rng)
            assert len(result.ranks) == n
    assert seen >= 1


def reshuffle_positions(n, seeds):
    """Allegra positions in a round after a reshuffle the seat saw happen
    from its own turn: its previous observation is its turn with an empty
    deck, so every hidden card then was face down."""
    for seed in seeds:
        g = new_game("allegra", n)
        for state, histories in play(g, seed, policy="drawer"):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            history = histories[seat]
            if not history:
                continue
            last, obs = history[-1], state.observation(seat)
            if (
                last["phase"] == "turn"
                and last["deck_size"] == 0
                and last["active"] == seat
                and obs["round"] == last["round"]
                and obs["phase"] == "drawn"
                and obs["active"] == seat
                and obs["deck_size"] > 0
            ):
                yield obs, history, unaccounted(last)


@pytest.mark.parametrize("n", [2, 4])
def test_cards_seen_going_into_a_reshuffled_deck_stay_out_of_the_face_down_slots(n):
    """A seat drew from an empty deck: the discard pile it saw (all but its
    top) became the deck. In every world the face-down cards are exactly the cards that
    were hidden before the reshuffle, so each card it saw on the pile is in
    the deck (or still in sight); without the history a world is free to
    put some of them face down."""
    rng = random.Random(5)
    found = 0
    mixed_without_history = 0
    for obs, history, before in reshuffle_positions(n, range(40)):
        found += 1
        for _ in range(20):
            world = sample_world(obs, rng, history)
            assert world.observation(obs["seat"]) == obs
            assert face_down_cards(world, obs) == before
            deck = Counter(world.observation(None)["deck"])
            assert deck == unaccounted(obs) - face_down_cards(world, obs)
            blind = sample_world(obs, rng)
            if face_down_cards(blind, obs) != face_down_cards(world, obs):
                mixed_without_history += 1
        if found >= 12:
            break
    assert found >= 5
    assert mixed_without_history > 0


# -- every hidden card in every place it can be ------------------------------


def late_position(game, n, seed, unique=False, min_phase_index=20):
    g = new_game(game, n, unique)
    chosen = None
    for i, (state, histories) in enumerate(play(g, seed)):
        if state.is_terminal():
            break
        chosen = (state.clone(), histories)
        if i >= min_phase_index:
            break
    state, histories = chosen
    seat = state.to_act()[0]
    return state, seat, state.observation(seat), list(histories[seat])


DRAWS = 3000


@pytest.mark.parametrize("n,unique", [(2, True), (3, False), (5, True), (6, False)])
def test_allegory_deals_every_hidden_card_everywhere_it_can_be(n, unique):
    state, seat, obs, _ = late_position("allegory", n, seed=n, unique=unique, min_phase_index=12)
    g = state.game
    rng = random.Random(11)
    seen_cards = {p["card"] for p in obs["pool"]} | {
        c for p in obs["players"] for tale in p["tales"].values() for c in tale
    }
    deck_cards = [c for c in g.deck_names if c not in seen_cards]
    morals_left = Counter(g.moral_deck)
    morals_left[obs["moral"]] -= 1
    other = (seat + 1) % n
    tops, bottoms, moral_of_other = Counter(), Counter(), Counter()
    for _ in range(DRAWS):
        full = sample_world(obs, rng).observation(None)
        tops[full["deck"][0]] += 1
        bottoms[full["deck"][-1]] += 1
        moral_of_other[full["morals"][other]] += 1
        assert full["morals"][seat] == obs["moral"]
    uniform = dict.fromkeys(deck_cards, 1)
    for counts in (tops, bottoms):
        assert set(counts) == set(deck_cards)
        assert chi_square_p(counts, uniform) > 1e-4
    assert set(moral_of_other) == {t for t, k in morals_left.items() if k > 0}
    assert chi_square_p(moral_of_other, morals_left) > 1e-4


@pytest.mark.parametrize("n", [2, 4, 6])
def test_allegra_deals_every_hidden_card_everywhere_it_can_be(n):
    state, seat, obs, history = late_position("allegra", n, seed=n, min_phase_index=60)
    rng = random.Random(12)
    hidden = unaccounted(obs)
    places = [
        (s, r, c)
        for s, grid in enumerate(obs["grids"])
        for r, row in enumerate(grid)
        for c, v in enumerate(row)
        if v == "?"
    ]
    watched = [places[0], places[-1]]
    counts = {p: Counter() for p in watched}
    tops, bottoms = Counter(), Counter()
    for _ in range(DRAWS):
        full = sample_world(obs, rng, history).observation(None)
        for s, r, c in watched:
            counts[(s, r, c)][full["grids"][s][r][c]] += 1
        tops[full["deck"][0]] += 1
        bottoms[full["deck"][-1]] += 1
    for c in [*counts.values(), tops, bottoms]:
        assert set(c) == {v for v, k in hidden.items() if k > 0}
        assert chi_square_p(c, hidden) > 1e-4


def test_a_world_that_deals_from_the_wrong_cards_is_caught_by_the_chi_square():
    """The test above can fail: cards dealt by value (each value as likely,
    not each card) give p-values near zero."""
    _, _, obs, _ = late_position("allegra", 4, seed=4, min_phase_index=60)
    hidden = unaccounted(obs)
    rng = random.Random(3)
    skewed = Counter(rng.choice([v for v in hidden if hidden[v]]) for _ in range(DRAWS))
    assert chi_square_p(skewed, hidden) < 1e-4


def test_bad_observations_are_refused_with_a_reason():
    state, seat, obs, history = late_position("allegra", 3, seed=1, min_phase_index=30)
    with pytest.raises(ValueError, match="seat"):
        sample_world(dict(obs, seat=None))
    with pytest.raises(ValueError, match="unaccounted|copies"):
        sample_world(dict(obs, discard=obs["discard"] + [11] * 6))
    with pytest.raises(ValueError, match="same game, seat"):
        sample_world(obs, history=[dict(obs, seat=(seat + 1) % 3)])
    for history in (5, ["not an observation"], [None]):
        with pytest.raises(ValueError):
            sample_world(obs, history=history)
    with pytest.raises(ValueError, match="unknown game|no engine state"):
        sample_world(dict(obs, game="poker"))


def final_turn_seats(state):
    """The seats that take a turn from here to the round's end (default play)."""
    state, seats, round_ = state.clone(), [], state.observation(None)["round"]
    while not state.is_terminal() and not state.is_chance_node() and state.observation(None)["round"] == round_:
        seat = state.to_act()[0]
        active = state.observation(None)["active"]
        if not seats or seats[-1] != active:
            seats.append(active)
        state.apply(seat, state.default_action(seat))
    return seats


def test_the_final_turns_left_in_a_world_are_the_real_ones_or_as_the_seat_cannot_tell_them_apart():
    """After the ender is fixed every other seat plays once more; the seat's
    view does not show who was active when that happened, so a world may
    give another order of the turns left, but the real one always comes out
    and the ender never plays again."""
    rng = random.Random(9)
    checked = 0
    for seed in range(40):
        n = 3 + seed % 4
        in_this_game = 0
        for state, histories in play(new_game("allegra", n), seed):
            if state.is_terminal() or in_this_game == 2:
                break
            if not state.observation(None)["final_turns"] or rng.random() > 0.3:
                continue
            in_this_game += 1
            seat = state.to_act()[0]
            obs = state.observation(seat)
            real = final_turn_seats(state)
            seen = {tuple(final_turn_seats(sample_world(obs, rng, histories[seat]))) for _ in range(40)}
            assert tuple(real) in seen
            assert all(obs["ender"] not in order for order in seen)
            checked += 1
    assert checked >= 40


def mutations(obs, rng):
    """A real observation with one part broken: a key gone, a value of the
    wrong type, a list cut short, a card named wrong."""
    broken = json.loads(json.dumps(obs))
    key = rng.choice(sorted(broken))
    kind = rng.randrange(4)
    if kind == 0:
        del broken[key]
    elif kind == 1:
        broken[key] = rng.choice([None, "x", 7, [], {}, [None]])
    elif kind == 2 and isinstance(broken[key], list) and broken[key]:
        broken[key] = broken[key][:-1]
    else:
        broken[key] = {"?": broken[key]}
    return broken


@settings(max_examples=40, deadline=None)
@given(game=st.sampled_from(["allegory", "allegra"]), n=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_a_broken_observation_gets_a_value_error_or_a_world_that_shows_it(game, n, seed):
    rng = random.Random(seed)
    for position in positions(new_game(game, n), seed, every=0.05):
        for _ in range(5):
            broken = mutations(position.observation, rng)
            try:
                world = sample_world(broken, rng, position.history)
            except ValueError:
                continue
            assert world.observation(position.seat) == broken


def test_after_a_reshuffle_the_face_down_and_deck_cards_are_each_dealt_uniformly():
    """With the history the seat's knowledge splits the hidden cards in two:
    the never-seen ones face down, the reshuffled ones in the deck. Within
    each part every card still comes out in every place it can be."""
    obs, history, before = next(reshuffle_positions(2, range(40)))
    deck_cards = unaccounted(obs) - before
    rng = random.Random(21)
    first_face_down = next(
        (s, r, c) for s, g in enumerate(obs["grids"]) for r, row in enumerate(g) for c, v in enumerate(row) if v == "?"
    )
    slot, tops = Counter(), Counter()
    for _ in range(DRAWS):
        full = sample_world(obs, rng, history).observation(None)
        s, r, c = first_face_down
        slot[full["grids"][s][r][c]] += 1
        tops[full["deck"][0]] += 1
    assert set(slot) == {v for v, k in before.items() if k}
    assert set(tops) == {v for v, k in deck_cards.items() if k}
    assert chi_square_p(slot, before) > 1e-4
    assert chi_square_p(tops, deck_cards) > 1e-4
