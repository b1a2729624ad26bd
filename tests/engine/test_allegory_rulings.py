"""One test per Allegory ruling (docs/rules-allegory.md)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine import new_game
from engine.allegory import AllegoryGame, AllegoryState
from engine.allegory.game import CARD_ID, CARD_NAME, CARD_TALE, CARD_THEME, CARD_VALUE, DATA, GLOWING, THEMES
from engine.core import IllegalActionError

MORALS = ["owl", "key", "crown", "feather", "flame", "shell"]


def setup(n: int, first=(), morals=None, **options) -> AllegoryState:
    """A state right after setup, the deck starting with ``first`` (the Pool
    is its first n cards, 3 with 2 players); the rest in card-file order."""
    game = AllegoryGame(n, options)
    state = game.new_initial_state()
    names = [CARD_NAME[c] for c in game.cards_in_play]
    deck = list(first) + [c for c in names if c not in first]
    state.apply_chance({"type": "setup", "deck": deck, "morals": list(morals or MORALS[:n])})
    return state


def play(state: AllegoryState, *moves) -> AllegoryState:
    for seat, action in moves:
        state.apply(seat, action)
    return state


def bid(amount):
    return {"type": "bid", "amount": amount}


REST = {"type": "rest"}


def claim(card):
    return {"type": "rest", "claim": card}


def take(card):
    return {"type": "take", "card": card}


def dist(chips):
    return {"type": "distribute", "chips": chips}


def pool(state):
    return [(p["card"], p["chips"]) for p in state.observation(None)["pool"]]


def tales(state, seat):
    return state.observation(None)["players"][seat]["tales"]


def illegal(state, seat, action):
    before = state.observation(None)
    with pytest.raises(IllegalActionError):
        state.apply(seat, action)
    assert state.observation(None) == before


# -- cards -------------------------------------------------------------------
def test_nine_themes_in_card_file_order():
    assert THEMES == ["butterfly", "mask", "coin", "owl", "key", "crown", "feather", "flame", "shell"]


def test_glowing_themes_are_butterfly_mask_coin():
    assert [t for t, g in zip(THEMES, GLOWING) if g] == ["butterfly", "mask", "coin"]


def test_each_theme_has_one_card_of_each_value():
    assert len(CARD_NAME) == 63
    for t in range(9):
        assert sorted(CARD_VALUE[c] for c in range(63) if CARD_THEME[c] == t) == [-2, -1, 1, 2, 3, 4, 5]


def test_card_tale_is_value_index_plus_theme_index_mod_3():
    values = DATA["values"]
    for c in range(63):
        assert CARD_TALE[c] == (values.index(CARD_VALUE[c]) + CARD_THEME[c]) % 3


def test_each_tale_holds_each_value_three_times_or_twice_without_glowing():
    for n, per_value in ((4, 3), (2, 2)):
        cards = AllegoryGame(n).cards_in_play
        for tale in range(3):
            counts = Counter(CARD_VALUE[c] for c in cards if CARD_TALE[c] == tale)
            assert counts == {v: per_value for v in DATA["values"]}


@pytest.mark.parametrize("n", [2, 3])
def test_glowing_themes_removed_with_two_or_three_players(n):
    game = AllegoryGame(n)
    assert len(game.cards_in_play) == 42
    assert {THEMES[t] for t in game.themes_in_play} == {"owl", "key", "crown", "feather", "flame", "shell"}
    state = game.new_initial_state()
    deck = [CARD_NAME[c] for c in game.cards_in_play]
    bad = deck[:-1] + ["coin:5"]
    with pytest.raises(IllegalActionError):
        state.apply_chance({"type": "setup", "deck": bad, "morals": MORALS[:n]})
    with pytest.raises(IllegalActionError):  # glowing Morals are gone too
        state.apply_chance({"type": "setup", "deck": deck, "morals": ["mask"] + MORALS[: n - 1]})
    rng = random.Random(5)
    for _ in range(50):
        event = state.sample_chance(rng)
        assert not {m for m in event["morals"]} & {"butterfly", "mask", "coin"}


@pytest.mark.parametrize("n", [4, 5, 6])
def test_all_63_cards_used_with_four_or_more_players(n):
    assert len(AllegoryGame(n).cards_in_play) == 63
    event = AllegoryGame(n).new_initial_state().sample_chance(random.Random(1))
    assert sorted(event["deck"]) == sorted(CARD_NAME)


def test_moral_deck_holds_two_copies_of_each_theme():
    state = AllegoryGame(4).new_initial_state()
    deck = [CARD_NAME[c] for c in state.game.cards_in_play]
    state.clone().apply_chance({"type": "setup", "deck": deck, "morals": ["owl", "owl", "key", "key"]})
    with pytest.raises(IllegalActionError):
        state.apply_chance({"type": "setup", "deck": deck, "morals": ["owl", "owl", "owl", "key"]})


def test_unique_morals_option_keeps_one_copy_of_each_moral():
    game = AllegoryGame(4, {"unique_morals": True})
    state = game.new_initial_state()
    deck = [CARD_NAME[c] for c in game.cards_in_play]
    with pytest.raises(IllegalActionError):
        state.apply_chance({"type": "setup", "deck": deck, "morals": ["owl", "owl", "key", "crown"]})
    rng = random.Random(3)
    for _ in range(50):
        morals = state.sample_chance(rng)["morals"]
        assert len(set(morals)) == 4
    assert AllegoryGame(4).options == {"unique_morals": False}
    assert new_game("allegory", 3, {"unique_morals": True}).options == {"unique_morals": True}


# -- setup -------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_each_player_starts_with_15_chips_and_one_hidden_moral(n):
    state = setup(n)
    obs = state.observation(None)
    assert [p["chips"] for p in obs["players"]] == [15] * n
    assert obs["morals"] == MORALS[:n]
    for seat in range(n):
        assert state.observation(seat)["moral"] == MORALS[seat]


@pytest.mark.parametrize("n,size", [(2, 3), (3, 3), (4, 4), (5, 5), (6, 6)])
def test_pool_has_one_card_per_player_but_three_with_two_players(n, size):
    state = setup(n)
    obs = state.observation(None)
    assert len(obs["pool"]) == size
    assert obs["deck_size"] == len(state.game.cards_in_play) - size
    assert all(p["chips"] == 0 for p in obs["pool"])
    assert [p["card"] for p in obs["pool"]] + obs["deck"] == [CARD_NAME[c] for c in state.game.cards_in_play]


def test_setup_deck_top_first_fills_the_pool():
    state = setup(3, first=["shell:5", "owl:-2", "key:1", "crown:3"])
    assert pool(state) == [("shell:5", 0), ("owl:-2", 0), ("key:1", 0)]
    assert state.observation(None)["deck"][0] == "crown:3"


def test_setup_deck_must_be_a_permutation_of_the_cards_in_play():
    state = AllegoryGame(4).new_initial_state()
    deck = [CARD_NAME[c] for c in state.game.cards_in_play]
    for bad in (deck[:-1], deck + ["owl:1"], deck[:-1] + deck[:1], deck[:-1] + ["owl:7"]):
        with pytest.raises(IllegalActionError):
            state.apply_chance({"type": "setup", "deck": bad, "morals": MORALS[:4]})
    with pytest.raises(IllegalActionError):
        state.apply_chance({"type": "setup", "deck": deck, "morals": MORALS[:3]})
    with pytest.raises(IllegalActionError):
        state.apply_chance({"type": "setup", "deck": deck, "morals": MORALS[:4], "extra": 1})
    assert state.is_chance_node()


# -- a round -------------------------------------------------------------------
def test_prologue_is_opened_by_seat_zero():
    state = setup(4)
    obs = state.observation(0)
    assert obs["round"] == 1 and obs["round_kind"] == "prologue" and obs["to_act"] == [0]


def test_story_round_is_opened_left_of_the_previous_winner():
    state = setup(4, first=["owl:1", "owl:2", "owl:3", "owl:4"])
    play(state, (0, REST), (1, REST), (2, bid(2)), (3, REST), (2, take("owl:1")))
    play(state, (2, dist({"owl:2": 2})))
    obs = state.observation(0)
    assert obs["round"] == 2 and obs["round_kind"] == "story" and obs["to_act"] == [3]


def test_story_round_opener_wraps_around_to_seat_zero():
    state = setup(3, first=["owl:1", "key:2", "crown:3", "shell:4", "flame:5"])
    play(state, (0, REST), (1, bid(1)), (2, REST), (1, take("owl:1")), (1, dist({"key:2": 1})))
    assert state.to_act() == [2]
    play(state, (2, bid(1)), (0, REST), (1, REST), (2, take("crown:3")), (2, dist({"shell:4": 1})))
    assert state.to_act() == [0]


def test_smallest_bid_is_one_and_a_bid_raises_the_high_bid():
    state = setup(3)
    illegal(state, 0, bid(0))
    play(state, (0, bid(1)))
    illegal(state, 1, bid(1))
    play(state, (1, bid(2)))
    obs = state.observation(2)
    assert obs["high_bid"] == 2 and obs["high_bidder"] == 1


def test_bid_is_a_new_total_up_to_all_chips_owned():
    state = setup(2)
    play(state, (0, bid(3)), (1, bid(4)))
    illegal(state, 0, bid(16))
    play(state, (0, bid(15)))
    obs = state.observation(None)["players"][0]
    assert obs["bid"] == 15 and obs["chips"] == 15  # chips owned include the bid


def test_player_who_cannot_raise_must_rest():
    state = setup(3)
    play(state, (0, bid(15)))
    assert state.legal_actions(1) == [{"type": "rest"}]
    illegal(state, 1, bid(16))


def test_resting_returns_the_bid_chips():
    state = setup(3)
    play(state, (0, bid(5)), (1, bid(6)), (2, REST), (0, REST))
    players = state.observation(None)["players"]
    assert players[0]["chips"] == 15 and players[0]["bid"] == 0 and players[0]["rested"]


def test_turn_passes_clockwise_skipping_rested_seats():
    state = setup(4)
    play(state, (0, bid(1)), (1, REST), (2, bid(2)), (3, bid(3)))
    assert state.to_act() == [0]
    play(state, (0, bid(4)))
    assert state.to_act() == [2]
    illegal(state, 1, bid(5))
    illegal(state, 3, bid(5))


def test_no_claim_on_rest_in_the_prologue():
    state = setup(3)
    assert all("claim" not in a for a in state.legal_actions(0))
    illegal(state, 0, claim(pool(state)[0][0]))


def _story_round_with_chips(chips_on: dict[int, int]):
    """3 players; seat 0 wins the Prologue with a bid, takes the first card
    and spreads its bid as ``chips_on`` (Pool index -> chips)."""
    state = setup(3, first=["owl:1", "key:2", "crown:3", "shell:4", "flame:5", "feather:-2"])
    total = sum(chips_on.values())
    play(state, (0, bid(total)), (1, REST), (2, REST), (0, take("owl:1")))
    cards = [c for c, _ in pool(state)]
    play(state, (0, {"type": "distribute", "chips": {cards[i]: k for i, k in chips_on.items()}}))
    return state


def test_rest_claim_only_among_most_chipped_cards():
    state = _story_round_with_chips({0: 2, 1: 3, 2: 3})
    assert pool(state) == [("shell:4", 2), ("key:2", 3), ("crown:3", 3)]
    assert state.to_act() == [1]
    assert state.legal_actions(1)[:3] == [REST, claim("key:2"), claim("crown:3")]
    illegal(state, 1, claim("shell:4"))
    play(state, (1, claim("crown:3")))
    assert pool(state) == [("shell:4", 2), ("key:2", 3), ("flame:5", 0)]
    # only the most-chipped card now
    assert [a for a in state.legal_actions(2) if "claim" in a] == [claim("key:2")]


def test_rest_claim_takes_the_card_and_its_chips_and_refills_the_slot():
    state = _story_round_with_chips({1: 4})
    play(state, (1, claim("key:2")))
    p1 = state.observation(None)["players"][1]
    assert p1["chips"] == 19 and p1["cards"] == 1 and p1["tales"]["energy"] == ["key:2"]
    assert pool(state) == [("shell:4", 0), ("flame:5", 0), ("crown:3", 0)]


def test_no_claim_when_no_pool_card_holds_chips():
    state = setup(3)
    play(state, (0, REST), (1, REST), (2, take(pool(state)[0][0])))  # won with 0: nothing distributed
    assert state.observation(0)["round_kind"] == "story"
    assert all("claim" not in a for a in state.legal_actions(0))
    illegal(state, 0, claim(pool(state)[0][0]))


def test_claiming_on_rest_is_optional():
    state = _story_round_with_chips({0: 1})
    play(state, (1, REST))
    assert pool(state)[0] == ("shell:4", 1)
    assert state.observation(None)["players"][1]["cards"] == 0


def test_round_is_won_when_all_but_one_have_rested():
    state = setup(4)
    play(state, (0, bid(3)), (1, REST), (2, REST))
    assert state.observation(None)["phase"] == "bid"
    play(state, (3, REST))
    obs = state.observation(None)
    assert obs["phase"] == "take" and obs["winner"] == 0 and obs["to_act"] == [0]


def test_winner_with_zero_bid_has_no_distribute_decision():
    state = setup(3)
    play(state, (0, REST), (1, REST))
    obs = state.observation(None)
    assert obs["phase"] == "take" and obs["winner"] == 2 and obs["players"][2]["bid"] == 0
    play(state, (2, take(pool(state)[1][0])))
    obs = state.observation(None)
    assert obs["phase"] == "bid" and obs["round"] == 2 and obs["to_act"] == [0]
    assert [p["chips"] for p in obs["players"]] == [15, 15, 15]


def test_winner_takes_any_pool_card_with_its_chips_and_refills_in_place():
    state = _story_round_with_chips({2: 5})
    play(state, (1, bid(2)), (2, REST), (0, REST))
    assert [a["card"] for a in state.legal_actions(1)] == ["shell:4", "key:2", "crown:3"]
    play(state, (1, take("crown:3")))
    assert pool(state) == [("shell:4", 0), ("key:2", 0), ("flame:5", 0)]
    assert state.observation(None)["players"][1]["chips"] == 20


def test_taken_card_goes_to_the_tale_printed_on_it():
    state = setup(2, first=["owl:-2", "owl:-1", "owl:1", "key:5"])
    play(state, (0, REST), (1, take("owl:-1")))
    # owl is theme 3, -1 is value index 1: (1 + 3) mod 3 = 1 -> energy
    assert tales(state, 1) == {"nature": [], "energy": ["owl:-1"], "spirit": []}


def test_distribute_spreads_the_whole_bid_over_the_cards_now_in_the_pool():
    state = setup(3, first=["owl:1", "key:2", "crown:3", "shell:4"])
    play(state, (0, bid(4)), (1, REST), (2, REST), (0, take("owl:1")))
    legal = state.legal_actions(0)
    assert legal == [{"type": "distribute", "total": 4, "cards": ["shell:4", "key:2", "crown:3"]}]
    illegal(state, 0, {"type": "distribute", "chips": {"owl:1": 4}})  # the taken card is gone
    illegal(state, 0, {"type": "distribute", "chips": {"key:2": 3}})  # not the whole bid
    illegal(state, 0, {"type": "distribute", "chips": {"key:2": 5, "crown:3": -1}})
    illegal(state, 0, {"type": "distribute", "chips": {"key:2": True, "crown:3": 3}})
    play(state, (0, {"type": "distribute", "chips": {"shell:4": 0, "key:2": 1, "crown:3": 3}}))
    assert pool(state) == [("shell:4", 0), ("key:2", 1), ("crown:3", 3)]
    assert state.observation(None)["players"][0]["chips"] == 11


def test_pool_is_not_refilled_when_the_deck_is_empty():
    state = setup(3)
    state.deck = state.deck[-1:]  # white box: one card left in the deck
    top = state.observation(None)["deck"][0]
    first, second, third = [c for c, _ in pool(state)]
    play(state, (0, REST), (1, REST), (2, take(second)))
    assert [c for c, _ in pool(state)] == [first, top, third]
    play(state, (0, REST), (1, REST), (2, take(first)))
    assert [c for c, _ in pool(state)] == [top, third]
    assert state.observation(None)["deck_size"] == 0


def test_game_ends_when_a_round_would_start_with_an_empty_pool():
    state = setup(2)
    state.deck = []
    cards = [c for c, _ in pool(state)]
    for card in cards[:-1]:
        play(state, (state.to_act()[0], REST))
        play(state, (state.to_act()[0], take(card)))
        assert not state.is_terminal()
    play(state, (state.to_act()[0], REST))
    play(state, (state.to_act()[0], take(cards[-1])))
    assert state.is_terminal() and state.observation(0)["phase"] == "over"


def test_no_take_when_the_pool_is_empty_as_the_round_is_won():
    state = _story_round_with_chips({0: 1})  # Pool: shell:4 (1 chip), key:2, crown:3
    state.deck = []
    state.pool, state.pchips = state.pool[:1], state.pchips[:1]  # white box: only shell:4 is left
    play(state, (1, claim("shell:4")))  # the Pool is now empty
    play(state, (2, bid(3)), (0, REST))
    assert state.is_terminal()
    obs = state.observation(None)
    assert obs["winner"] == 2 and obs["players"][2]["chips"] == 15 and obs["players"][2]["cards"] == 0


def test_no_distribute_when_the_pool_is_empty_after_the_take_and_bid_stays_with_winner():
    state = setup(3)
    state.deck = []
    state.pool, state.pchips = state.pool[:1], state.pchips[:1]
    card = pool(state)[0][0]
    play(state, (0, bid(6)), (1, REST), (2, REST), (0, take(card)))
    assert state.is_terminal()
    players = state.observation(None)["players"]
    assert players[0]["chips"] == 15 and players[0]["bid"] == 0
    assert sum(p["chips"] for p in players) == 45  # no chip is destroyed


# -- end and score -------------------------------------------------------------
def _give(state: AllegoryState, seat: int, cards):
    """White box: put ``cards`` (taken out of deck/pool) into seat's Tales."""
    for name in cards:
        cid = CARD_ID[name]
        if cid in state.deck:
            state.deck.remove(cid)
        else:
            i = state.pool.index(cid)
            state.pool[i] = state.deck.pop()
            state.pchips[i] = 0
        state.tales[seat][CARD_TALE[cid]].append(cid)
        state.ncards[seat] += 1


def test_game_ends_at_the_end_of_the_round_with_a_tenth_card_not_before():
    state = setup(3, first=["owl:1", "key:2", "crown:3"])
    _give(
        state, 0, ["shell:-2", "shell:-1", "shell:1", "shell:2", "shell:3", "shell:4", "shell:5", "flame:5", "flame:4"]
    )
    play(state, (0, bid(2)), (1, REST), (2, REST), (0, take("owl:1")))
    assert state.observation(None)["players"][0]["cards"] == 10
    assert not state.is_terminal()  # the round ends after the distribute
    play(state, (0, {"type": "distribute", "chips": {"key:2": 2}}))
    assert state.is_terminal()


def test_tenth_card_by_a_claim_ends_the_game_at_the_round_end():
    state = _story_round_with_chips({1: 2})
    _give(state, 1, ["owl:-2", "owl:-1", "owl:2", "owl:3", "owl:4", "owl:5", "key:-2", "key:-1", "key:1"])
    play(state, (1, claim("key:2")))
    assert state.observation(None)["players"][1]["cards"] == 10
    assert not state.is_terminal()
    play(state, (2, bid(1)), (0, REST), (2, take("crown:3")))
    assert not state.is_terminal()
    play(state, (2, dist({"shell:4": 1})))
    assert state.is_terminal()


def test_tale_score_is_the_lowest_tale_total_and_an_empty_tale_counts_zero():
    state = setup(4)
    _give(state, 0, ["owl:5", "owl:4", "key:-2", "owl:-2"])  # nature, spirit, energy, nature
    _give(state, 1, ["flame:5", "flame:4"])  # energy, nature: no Spirit card
    details = state.score_details()["breakdown"]
    assert details[0]["tale_totals"] == {"nature": 3, "energy": -2, "spirit": 4}
    assert details[0]["lowest_tale"] == -2 and details[0]["complete"]
    assert details[1]["tale_totals"] == {"nature": 4, "energy": 5, "spirit": 0}
    assert details[1]["lowest_tale"] == 0 and not details[1]["complete"]


def test_theme_bonus_is_two_points_per_set_of_three_of_a_theme():
    state = setup(4)
    _give(state, 0, ["owl:-2", "owl:-1", "owl:1", "owl:2"])  # one set (4 cards)
    _give(state, 1, ["key:-2", "key:-1", "key:1", "key:2", "key:3", "key:4"])  # two sets
    _give(state, 2, ["crown:1", "crown:2", "flame:1", "flame:2"])  # no set
    bonus = [d["theme_bonus"] for d in state.score_details()["breakdown"]]
    assert bonus == [2, 4, 0, 0]


def test_moral_bonus_is_one_point_per_tale_holding_the_moral_theme():
    state = setup(4, morals=["owl", "key", "crown", "feather"])
    _give(state, 0, ["owl:-2", "owl:-1", "owl:1"])  # owl in all three Tales (one card each)
    _give(state, 1, ["key:-2", "key:2", "key:3"])  # energy, energy, spirit
    _give(state, 2, ["owl:5"])  # not crown
    details = state.score_details()["breakdown"]
    assert details[0]["moral_bonus"] == 3
    assert details[1]["moral_bonus"] == 2
    assert details[2]["moral_bonus"] == 0
    assert state.scores()[0] == details[0]["lowest_tale"] + details[0]["theme_bonus"] + 3


def _finish(state: AllegoryState):
    state.phase = 4  # white box: OVER


def test_player_with_empty_tale_ranks_below_complete_players():
    state = setup(3)
    _give(state, 0, ["owl:5", "owl:2", "key:5", "key:2"])  # nature 7, energy 7, no Spirit card
    _give(state, 1, ["shell:-2", "shell:-1", "shell:1"])  # one card in each Tale
    _finish(state)
    d = state.score_details()["breakdown"]
    assert not d[0]["complete"] and d[1]["complete"] and not d[2]["complete"]
    assert state.scores() == [1, 0, 0]  # seat 0: 0 + owl Moral in one Tale; seat 1: -2 + a set
    assert state.result().ranks == [2, 1, 3]


def test_equal_scores_are_broken_by_remaining_chips_then_shared():
    state = setup(3)
    _give(state, 0, ["shell:-2", "shell:-1", "shell:1"])
    _give(state, 1, ["flame:-2", "flame:-1", "flame:1"])
    _give(state, 2, ["feather:-2", "feather:-1", "feather:1"])
    _finish(state)
    assert len(set(state.scores())) == 1
    assert state.result().ranks == [1, 1, 1]
    state.chips = [14, 16, 15]
    assert state.result().ranks == [3, 1, 2]
    state.chips = [16, 16, 13]
    assert state.result().ranks == [1, 1, 3]
    assert state.ranking_keys()[0] == (True, state.scores()[0], 16)


def test_forfeited_seats_rank_after_every_other_seat():
    state = setup(3)
    _give(state, 0, ["shell:3", "shell:4", "shell:5", "owl:5"])
    _finish(state)
    assert state.result(forfeited={0}).ranks[0] == 3
    assert state.result(forfeited={0, 1}).ranks[:2] == [2, 2]


# -- what each player knows --------------------------------------------------------
def test_own_moral_only_until_the_end_then_all_morals():
    state = setup(4, morals=["owl", "key", "crown", "feather"])
    for seat in range(4):
        obs = state.observation(seat)
        assert obs["moral"] == MORALS[seat]
        assert "morals" not in obs and "deck" not in obs
    _finish(state)
    obs = state.observation(2)
    assert obs["morals"] == ["owl", "key", "crown", "feather"] and obs["moral"] == "crown"
    assert "scores" in obs and len(obs["breakdown"]) == 4


def test_public_information_is_in_every_observation():
    state = _story_round_with_chips({1: 4})
    play(state, (1, bid(3)))
    obs = state.observation(2)
    assert obs["high_bid"] == 3 and obs["high_bidder"] == 1 and obs["phase"] == "bid"
    assert obs["players"][1]["bid"] == 3 and obs["players"][0]["chips"] == 11
    assert obs["players"][0]["tales"]["spirit"] == ["owl:1"]
    assert obs["pool"][1] == {"card": "key:2", "chips": 4}
    assert obs["deck_size"] == 42 - 4
    assert "deck" not in obs and obs["moral"] == "crown"


# -- actions ---------------------------------------------------------------------
def test_legal_actions_order_rest_then_claims_then_bids_ascending():
    state = _story_round_with_chips({0: 2, 2: 2})
    legal = state.legal_actions(1)
    assert legal[:3] == [REST, claim("shell:4"), claim("crown:3")]
    assert legal[3:] == [bid(a) for a in range(1, 16)]
    assert state.legal_actions(0) == [] and state.legal_actions(2) == []


def test_default_policy_rests_takes_first_card_and_puts_the_bid_on_the_first_card():
    state = setup(3, first=["owl:1", "key:2", "crown:3", "shell:4"])
    assert state.default_action(0) == REST
    play(state, (0, bid(3)), (1, REST), (2, REST))
    assert state.default_action(0) == take("owl:1")
    play(state, (0, state.default_action(0)))
    assert state.default_action(0) == {"type": "distribute", "chips": {"shell:4": 3}}


@pytest.mark.parametrize(
    "action",
    [
        None,
        "rest",
        {},
        {"type": "pass"},
        {"type": "bid"},
        {"type": "bid", "amount": "3"},
        {"type": "bid", "amount": 3.0},
        {"type": "bid", "amount": True},
        {"type": "bid", "amount": 3, "extra": 1},
        {"type": "rest", "claim": None},
        {"type": "rest", "extra": 1},
        {"type": "take", "card": "owl:1"},
        {"type": "distribute", "chips": {}},
    ],
)
def test_malformed_actions_are_refused_and_leave_the_state_unchanged(action):
    state = setup(3, first=["owl:1", "key:2", "crown:3"])
    illegal(state, 0, action)


def test_acting_out_of_turn_or_after_the_end_is_refused():
    state = setup(3)
    illegal(state, 1, REST)
    illegal(state, True, REST)  # not a seat number
    _finish(state)
    illegal(state, 0, REST)
    with pytest.raises(IllegalActionError):
        AllegoryGame(3).new_initial_state().apply(0, REST)  # setup first


def test_game_identity_and_option():
    assert AllegoryGame.id == "allegory" and AllegoryGame.name == "Allegory"
    assert AllegoryGame.option_specs == {"unique_morals": (bool, False)}
