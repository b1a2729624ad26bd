"""One test per Allegra ruling (docs/rules-allegra.md),
plus the decisions the project made where the rulings are silent.

Tables are set up with ``make_deck``: chosen cards at chosen slots, every other
grid slot filled so that no two equal cards are within distance 2 of each
other in any line (so no single change can make an accidental triple), the
values -1 and 11 kept out of the filler for the tests to use as marked cards.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine import new_game
from engine.allegra import AllegraGame, AllegraState
from engine.allegra.game import CARDS, OVER, layout
from engine.core import IllegalActionError

RESERVED = (-1, 11)


def idx(s: int, r: int, c: int) -> int:
    return s * 12 + r * 4 + c


def make_deck(n, fixed=None, discard_top=None, deck_top=(), seed=0):
    """A full deal deck: ``fixed`` {(s, r, c): value} in the grids, then a
    filler, the first discard, ``deck_top`` (next cards drawn, in order)."""
    fixed = fixed or {}
    lay = layout(n)
    left = Counter(CARDS)
    vals = [None] * lay.N
    for (s, r, c), v in fixed.items():
        vals[idx(s, r, c)] = v
        left[v] -= 1
    for v in ([discard_top] if discard_top is not None else []) + list(deck_top):
        left[v] -= 1
    assert min(left.values()) >= 0
    for i in range(lay.N):
        if vals[i] is not None:
            continue
        banned = set()
        for line, p, _last in lay.slot_lines[i]:
            for j in line[max(0, p - 2) : p + 3]:
                banned.add(vals[j])
        choices = [v for v in left if left[v] > 0 and v not in RESERVED and v not in banned]
        v = max(choices, key=lambda v: (left[v], -v))
        vals[i] = v
        left[v] -= 1
    rest = [v for v in sorted(left.elements()) if v not in RESERVED] + [
        v for v in sorted(left.elements()) if v in RESERVED
    ]
    random.Random(seed).shuffle(rest)
    if discard_top is None:
        discard_top = next(v for v in rest if v not in RESERVED)
        rest.remove(discard_top)
    return vals + [discard_top] + list(deck_top) + rest


def dealt(n, **kw) -> AllegraState:
    st = AllegraGame(n).new_initial_state()
    st.apply_chance({"type": "deal", "deck": make_deck(n, **kw)})
    return st


def slot(s, r, c):
    return [s, r, c]


def act(st, seat, type_, **kw):
    st.apply(seat, {"type": type_, **kw})


def reveals(st, picks=None):
    """Finish the reveal phase: seat s reveals picks[s] (a list of slots)
    if given, else its first face-down slots."""
    picks = picks or {}
    while st.observation(None)["phase"] == "reveal":
        s = st.to_act()[0]
        chosen = picks.get(s, [])
        done = sum(1 for x in chosen if st.val[idx(*x)] is not None and st.upv[idx(*x)] is not None)
        if done < len(chosen):
            st.apply(s, {"type": "reveal", "slot": list(chosen[done])})
        else:
            st.apply(s, st.default_action(s))
    return st


def face_up(st, *slots):
    for x in slots:
        i = idx(*x)
        st.upv[i] = st.val[i]
    st._recount()


def all_face_up_except(st, *down):
    keep = {idx(*x) for x in down}
    for i in range(st.lay.N):
        if st.val[i] is not None:
            st.upv[i] = None if i in keep else st.val[i]
    st._recount()


def make_empty(st, *slots):
    for x in slots:
        i = idx(*x)
        st.removed.append(st.val[i])
        st.val[i] = None
        st.upv[i] = None
    st._recount()


def grid(st, seat=None):
    return st.observation(seat)["grids"]


def full_count(st) -> Counter:
    return st.card_count()


# ---------------------------------------------------------------- cards


def test_deck_is_120_cards_in_the_ruled_distribution():
    assert len(CARDS) == 120
    assert Counter(CARDS) == {-1: 5, 0: 7, 1: 9, 2: 10, 3: 11, 4: 12, 5: 12, 6: 12, 7: 11, 8: 10, 9: 9, 10: 7, 11: 5}
    st = new_game("allegra", 3).new_initial_state()
    event = st.sample_chance(random.Random(1))
    assert event["type"] == "deal" and sorted(event["deck"]) == sorted(CARDS)


def test_deal_must_be_a_permutation_of_the_whole_deck():
    st = AllegraGame(2).new_initial_state()
    deck = make_deck(2)
    bad = deck[:-1] + [11 if deck[-1] != 11 else 10]
    for wrong in (bad, deck[:-1], deck + [3], {"cards": deck}):
        with pytest.raises(IllegalActionError):
            st.apply_chance({"type": "deal", "deck": wrong})
    with pytest.raises(IllegalActionError):
        st.apply_chance({"type": "reshuffle", "deck": deck})
    assert st.is_chance_node()
    st.apply_chance({"type": "deal", "deck": deck})
    assert not st.is_chance_node()


# ---------------------------------------------------------------- the table


def test_deal_is_row_major_face_down_and_starts_the_discard_pile():
    n = 3
    deck = make_deck(n)
    st = AllegraGame(n).new_initial_state()
    st.apply_chance({"type": "deal", "deck": deck})
    spectator = st.observation(None)
    for s in range(n):
        assert [v for row in spectator["grids"][s] for v in row] == deck[12 * s : 12 * s + 12]
        assert grid(st, 1)[s] == [["?"] * 4] * 3
    assert spectator["discard"] == [deck[36]]
    assert spectator["deck"] == deck[37:]
    assert st.observation(0)["deck_size"] == 120 - 37


def test_area_includes_left_neighbours_column_three():
    st = dealt(4)
    # seat 0 reveals first: its own 12 slots, then seat 1's column 3
    own = [slot(0, r, c) for r in range(3) for c in range(4)]
    assert [a["slot"] for a in st.legal_actions(0)] == own + [slot(1, r, 3) for r in range(3)]
    # seat 3's left-hand neighbour is seat 0 (wrap-around)
    while st.to_act() != [3]:
        seat = st.to_act()[0]
        st.apply(seat, st.default_action(seat))
    assert [a["slot"] for a in st.legal_actions(3)][-3:] == [slot(0, 0, 3), slot(0, 1, 3), slot(0, 2, 3)]


def test_two_player_area_is_own_grid_plus_opponents_column_three():
    st = dealt(2)
    assert [a["slot"] for a in st.legal_actions(0)][12:] == [slot(1, 0, 3), slot(1, 1, 3), slot(1, 2, 3)]
    reveals(st, {0: [slot(0, 0, 0), slot(0, 0, 1)]})
    # seat 0 may take the discard into the opponent's column 3, not into its column 2
    takes = [a["slot"] for a in st.legal_actions(0) if a["type"] == "take_discard"]
    assert slot(1, 2, 3) in takes and slot(1, 2, 2) not in takes and len(takes) == 15


def test_reveal_may_use_the_neighbours_column():
    st = dealt(3)
    act(st, 0, "reveal", slot=slot(1, 2, 3))
    assert grid(st, 2)[1][2][3] == st.val[idx(1, 2, 3)]
    with pytest.raises(IllegalActionError):
        act(st, 0, "reveal", slot=slot(2, 0, 3))  # seat 2's column 3 is in seat 1's area, not seat 0's


def test_each_seat_reveals_two_slots_one_at_a_time_starting_with_seat_zero():
    st = dealt(3)
    order = []
    while st.observation(None)["phase"] == "reveal":
        s = st.to_act()
        assert len(s) == 1
        order.append(s[0])
        st.apply(s[0], st.default_action(s[0]))
    assert order == [0, 0, 1, 1, 2, 2]
    with pytest.raises(IllegalActionError):
        dealt(3).apply(0, {"type": "reveal", "slot": [0, 0, 0], "also": 1})


def test_round_opener_rotates_and_reveals_start_with_seat_zero_every_round():
    for n in (2, 3, 4):
        st = AllegraGame(n).new_initial_state()
        rng = random.Random(n)
        seen = []
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_chance(st.sample_chance(rng))
                assert st.to_act() == [0]  # the reveal phase starts with seat 0
                continue
            was = st.observation(None)["phase"]
            seat = st.to_act()[0]
            st.apply(seat, st.random_action(seat, rng))
            if was == "reveal" and st.observation(None)["phase"] != "reveal":
                seen.append(st.active)
        assert seen == [0, 1 % n, 2 % n]


# ---------------------------------------------------------------- a turn


def test_take_discard_swaps_into_any_occupied_slot_and_discards_the_replaced_card_face_up():
    st = dealt(2, fixed={(1, 1, 3): -1}, discard_top=11)
    reveals(st)
    act(st, 0, "take_discard", slot=slot(1, 1, 3))  # the opponent's column 3 is in seat 0's area
    obs = st.observation(1)
    assert obs["grids"][1][1][3] == 11
    assert obs["discard"] == [-1]
    assert st.to_act() == [1]


def test_draw_reveals_the_card_to_everyone():
    st = dealt(3, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    for seat in (None, 0, 1, 2):
        assert st.observation(seat)["drawn"] == 11
        assert st.observation(seat)["deck_size"] == 120 - 37 - 1


def test_no_knocking_with_two_players():
    st = dealt(2, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    obs = st.observation(1)
    assert obs["phase"] == "drawn" and st.to_act() == [0]
    assert st.legal_actions(1) == []
    assert {a["type"] for a in st.legal_actions(0)} == {"swap", "discard"}
    with pytest.raises(IllegalActionError):
        act(st, 1, "knock")


def test_knock_answers_are_simultaneous_in_any_order_and_hidden_until_all_answered():
    st = dealt(4, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    assert st.observation(0)["phase"] == "knock"
    assert st.to_act() == [1, 2, 3]
    assert st.legal_actions(2) == [{"type": "knock"}, {"type": "pass"}]
    act(st, 3, "knock")
    assert st.to_act() == [1, 2]
    for seat in (0, 1, 2):
        assert st.observation(seat)["knockers"] == []
    assert st.observation(3)["knockers"] == [3]  # a seat knows its own answer
    act(st, 1, "pass")
    with pytest.raises(IllegalActionError):
        act(st, 1, "knock")  # answered already
    act(st, 2, "knock")
    assert st.observation(1)["knockers"] == [2, 3]
    assert st.to_act() == [0]
    assert [a for a in st.legal_actions(0) if a["type"] == "give"] == [
        {"type": "give", "to": 2},
        {"type": "give", "to": 3},
    ]


def test_give_only_to_a_knocker():
    st = dealt(3, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    act(st, 1, "pass")
    act(st, 2, "knock")
    for bad in ({"type": "give", "to": 1}, {"type": "give", "to": 0}, {"type": "give", "to": True}, {"type": "give"}):
        with pytest.raises(IllegalActionError):
            st.apply(0, bad)
    act(st, 0, "give", to=2)
    assert st.to_act() == [2] and st.observation(0)["phase"] == "place"


def test_swap_puts_the_drawn_card_face_up_and_discards_the_replaced_card():
    st = dealt(3, fixed={(0, 2, 2): -1}, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    act(st, 1, "knock")
    act(st, 2, "knock")
    act(st, 0, "swap", slot=slot(0, 2, 2))
    assert grid(st, 1)[0][2][2] == 11
    assert st.observation(1)["discard"][-1] == -1


def test_discard_must_flip_a_face_down_slot_when_one_is_left():
    st = dealt(2, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    flips = [a["flip"] for a in st.legal_actions(0) if a["type"] == "discard"]
    assert None not in flips and len(flips) == 15 - 2
    with pytest.raises(IllegalActionError):
        act(st, 0, "discard", flip=None)
    with pytest.raises(IllegalActionError):
        act(st, 0, "discard", flip=slot(0, 0, 0))  # already face up (revealed)
    with pytest.raises(IllegalActionError):
        st.apply(0, {"type": "discard"})  # flip is always present
    act(st, 0, "discard", flip=slot(0, 2, 3))
    assert st.observation(1)["discard"][-1] == 11
    assert grid(st, 1)[0][2][3] == st.val[idx(0, 2, 3)]


def test_discard_without_flip_only_when_nothing_is_face_down():
    st = dealt(2, deck_top=[11])
    reveals(st)
    all_face_up_except(st, (1, 0, 0))  # seat 0's area all face up, seat 1's not
    act(st, 0, "draw")
    assert [a for a in st.legal_actions(0) if a["type"] == "discard"] == [{"type": "discard", "flip": None}]
    act(st, 0, "discard", flip=None)
    assert st.observation(1)["discard"][-1] == 11


def _given(st_fixed=None, place=None):
    """3 players: seat 0 draws 11, seat 1 knocks, seat 2 passes, seat 0
    gives it to seat 1 (who then places it at ``place``)."""
    fixed = {(1, 1, 1): -1, (1, 2, 2): 0, (0, 2, 2): 10}
    fixed.update(st_fixed or {})
    st = dealt(3, fixed=fixed, deck_top=[11])
    reveals(st)
    act(st, 0, "draw")
    act(st, 2, "pass")
    act(st, 1, "knock")
    act(st, 0, "give", to=1)
    if place is not None:
        act(st, 1, "place", slot=place)
    return st


def test_give_place_exchange_moves_the_cards():
    st = _given(place=slot(1, 1, 1))
    assert st.observation(0)["phase"] == "exchange" and st.to_act() == [0]
    assert grid(st, 2)[1][1][1] == 11
    assert st.observation(1)["held"] == {"seat": 1, "card": -1}
    before = full_count(st)
    act(st, 0, "exchange", take=slot(1, 2, 2), put=slot(0, 2, 2))
    g = grid(st, 2)
    assert g[0][2][2] == 0  # Q's card went to R, face up
    assert g[1][2][2] == -1  # the knocker's held card filled Q, face up
    assert st.observation(2)["discard"][-1] == 10  # R's card went to the discard
    assert st.observation(2)["held"] is None
    assert full_count(st) == before == Counter(CARDS)
    assert st.to_act() == [1]  # the turn is over


def test_exchange_takes_another_slot_of_the_knockers_area_and_puts_into_another_of_the_actives():
    st = _given(place=slot(1, 1, 1))
    legal = st.legal_actions(0)
    P = slot(1, 1, 1)
    assert all(a["take"] != P and a["put"] != P and a["take"] != a["put"] for a in legal)
    takes = {tuple(a["take"]) for a in legal}
    puts = {tuple(a["put"]) for a in legal}
    assert len(takes) == 14 and len(puts) == 15  # P excluded; seat 1's column 3 is in seat 0's area too
    assert len(legal) == 14 * 15 - 3  # a slot in both areas cannot be taken and put at once
    for bad in (
        {"type": "exchange", "take": P, "put": [0, 0, 0]},
        {"type": "exchange", "take": [1, 0, 0], "put": P},
        {"type": "exchange", "take": [1, 0, 3], "put": [1, 0, 3]},
        {"type": "exchange", "take": [2, 0, 0], "put": [0, 0, 0]},  # not in the knocker's area
        {"type": "exchange", "take": [1, 0, 0], "put": [2, 0, 0]},  # not in the active's area
        {"type": "exchange", "take": [1, 0, 0]},
    ):
        with pytest.raises(IllegalActionError):
            st.apply(0, bad)


def test_knocker_places_into_an_occupied_slot_of_its_own_area():
    st = _given()
    assert [a["slot"] for a in st.legal_actions(1)] == [
        list(x) for x in ((1, r, c) for r in range(3) for c in range(4))
    ] + [[2, 0, 3], [2, 1, 3], [2, 2, 3]]
    with pytest.raises(IllegalActionError):
        act(st, 1, "place", slot=slot(0, 0, 0))
    act(st, 1, "place", slot=slot(2, 1, 3))
    assert grid(st, 0)[2][1][3] == 11


def test_held_card_visible_only_to_the_knocker_when_it_was_face_down():
    st = _given(place=slot(1, 1, 1))  # (1,1,1) was face down
    assert st.observation(1)["held"] == {"seat": 1, "card": -1}
    assert st.observation(0)["held"] == {"seat": 1, "card": "?"}
    assert st.observation(2)["held"] == {"seat": 1, "card": "?"}
    assert st.observation(None)["held"] == {"seat": 1, "card": -1}


def test_held_card_is_public_when_it_was_face_up():
    st = _given(place=slot(1, 0, 0))  # revealed by seat 1 in the reveal phase
    v = st.observation(None)["held"]["card"]
    for seat in (0, 1, 2):
        assert st.observation(seat)["held"] == {"seat": 1, "card": v}


def test_held_card_is_discarded_when_no_exchange_is_possible():
    st = dealt(3, fixed={(1, 1, 1): -1}, deck_top=[11])
    reveals(st)
    make_empty(st, *[(1, r, c) for r in range(3) for c in range(4) if (r, c) != (1, 1)], *[(2, r, 3) for r in range(3)])
    act(st, 0, "draw")
    act(st, 1, "knock")
    act(st, 2, "pass")
    act(st, 0, "give", to=1)
    act(st, 1, "place", slot=slot(1, 1, 1))  # no other occupied slot in seat 1's area: no exchange
    obs = st.observation(0)
    assert obs["discard"][-1] == -1 and obs["held"] is None
    assert obs["phase"] == "turn"
    assert obs["ender"] == 1  # seat 1's area is now all face up or empty
    assert full_count(st) == Counter(CARDS)


def test_every_card_put_into_a_slot_is_face_up():
    st = _given(place=slot(1, 1, 1))
    # Q (1,2,2) and R (0,2,2) are face down before the exchange
    assert grid(st, 0)[1][2][2] == "?" and grid(st, 0)[0][2][2] == "?"
    act(st, 0, "exchange", take=slot(1, 2, 2), put=slot(0, 2, 2))
    for seat in (0, 1, 2):
        g = grid(st, seat)
        assert g[1][1][1] == 11 and g[1][2][2] == -1 and g[0][2][2] == 0


def test_knocker_with_no_card_in_its_area_cannot_be_given_the_card():
    st = dealt(3, deck_top=[11])
    reveals(st)
    make_empty(st, *[(1, r, c) for r in range(3) for c in range(4)], *[(2, r, 3) for r in range(3)])
    act(st, 0, "draw")
    act(st, 1, "knock")
    act(st, 2, "knock")
    assert st.observation(0)["knockers"] == [1, 2]
    assert [a["to"] for a in st.legal_actions(0) if a["type"] == "give"] == [2]
    with pytest.raises(IllegalActionError):
        act(st, 0, "give", to=1)


# ---------------------------------------------------------------- triples


def test_triple_across_shared_column_is_removed():
    st = dealt(3, fixed={(1, 0, 3): 11, (0, 0, 0): 11}, discard_top=11)
    reveals(st, {0: [slot(1, 0, 3), slot(0, 0, 0)]})
    replaced = st.val[idx(0, 0, 1)]
    act(st, 0, "take_discard", slot=slot(0, 0, 1))
    obs = st.observation(2)
    assert obs["removed"] == [11, 11, 11]
    assert obs["grids"][1][0][3] is None and obs["grids"][0][0][0] is None and obs["grids"][0][0][1] is None
    assert obs["discard"] == [replaced]
    assert full_count(st) == Counter(CARDS)


def test_triple_in_a_column_is_removed():
    st = dealt(2, fixed={(0, 0, 1): 11, (0, 1, 1): 11}, discard_top=11)
    reveals(st, {0: [slot(0, 0, 1), slot(0, 1, 1)]})
    act(st, 0, "take_discard", slot=slot(0, 2, 1))
    assert [grid(st, 1)[0][r][1] for r in range(3)] == [None, None, None]
    assert st.observation(1)["removed"] == [11, 11, 11]


def test_triple_in_the_neighbours_column_three_during_reveals():
    st = dealt(3, fixed={(1, 0, 3): -1, (1, 1, 3): -1, (1, 2, 3): -1})
    act(st, 0, "reveal", slot=slot(1, 0, 3))
    act(st, 0, "reveal", slot=slot(1, 1, 3))
    assert st.removed == []
    act(st, 1, "reveal", slot=slot(1, 2, 3))
    assert st.removed == [-1, -1, -1]
    assert st.to_act() == [1]  # seat 1 still has one reveal left
    assert slot(1, 2, 3) not in [a["slot"] for a in st.legal_actions(1)]


def test_run_of_four_is_removed_whole():
    st = dealt(2, fixed={(0, 0, 0): 11, (0, 0, 1): 11}, discard_top=11, deck_top=[11])
    reveals(st, {0: [slot(0, 0, 0), slot(0, 0, 1)]})
    act(st, 0, "take_discard", slot=slot(0, 0, 3))  # 11 11 ? 11: no triple yet
    assert st.removed == []
    act(st, 1, "take_discard", slot=slot(1, 1, 1))
    act(st, 0, "draw")
    act(st, 0, "swap", slot=slot(0, 0, 2))
    assert st.removed == [11, 11, 11, 11]
    assert grid(st, 1)[0][0] == [None, None, None, None]


def test_face_down_cards_do_not_form_triples():
    st = dealt(2, fixed={(0, 0, 0): 11, (0, 0, 1): 11, (0, 0, 2): 11}, deck_top=[7])
    reveals(st, {0: [slot(0, 0, 0), slot(0, 0, 1)]})
    assert st.removed == []  # (0,0,2) is still face down
    act(st, 0, "draw")
    act(st, 0, "discard", flip=slot(0, 0, 2))
    assert st.removed == [11, 11, 11]


def test_empty_slot_breaks_adjacency():
    st = dealt(2, fixed={(1, 0, 3): 11, (0, 0, 0): 11, (0, 0, 2): 11}, discard_top=11)
    reveals(st)
    make_empty(st, (0, 0, 1))
    face_up(st, (1, 0, 3), (0, 0, 0), (0, 0, 2))
    act(st, 0, "take_discard", slot=slot(0, 0, 3))  # 11 11 _ 11 11
    assert grid(st, 1)[0][0] == [11, None, 11, 11]
    assert st.removed == [st.removed[0]]  # only the card emptied by the setup


def test_empty_slot_cannot_be_chosen_and_counts_zero():
    st = dealt(2)
    reveals(st)
    make_empty(st, (0, 1, 1))
    assert slot(0, 1, 1) not in [a.get("slot") for a in st.legal_actions(0)]
    with pytest.raises(IllegalActionError):
        act(st, 0, "take_discard", slot=slot(0, 1, 1))
    act(st, 0, "draw")
    assert slot(0, 1, 1) not in [a.get("slot") or a.get("flip") for a in st.legal_actions(0)]
    with pytest.raises(IllegalActionError):
        act(st, 0, "discard", flip=slot(0, 1, 1))
    act(st, 0, "discard", flip=slot(0, 1, 2))
    # at the round end the empty slot adds nothing
    all_face_up_except(st)
    st.ender, st.final, st.queue = 0, True, []
    st._end_round()
    area0 = sum(st.val[i] for i in st.lay.area[0] if st.val[i] is not None)
    assert st.raw_scores[0][0] == area0


# ---------------------------------------------------------------- the deck


def _empty_deck(st, keep_below=True):
    """Move the deck onto the discard pile (below its top card), or out of
    play when ``keep_below`` is false."""
    top = st.discard[-1]
    if keep_below:
        st.discard = st.discard[:-1] + st.deck + [top]
    else:
        st.removed += st.deck + st.discard[:-1]
        st.discard = [top]
    st.deck = []


def test_reshuffle_keeps_top_discard():
    st = dealt(3)
    reveals(st)
    _empty_deck(st)
    top = st.discard[-1]
    below = st.discard[:-1]
    act(st, 0, "draw")
    assert st.is_chance_node() and st.to_act() == [] and st.legal_actions(0) == []
    assert st.observation(1)["phase"] == "deal"
    event = st.sample_chance(random.Random(5))
    assert event["type"] == "reshuffle" and sorted(event["deck"]) == sorted(below)
    st.apply_chance(event)
    obs = st.observation(1)
    assert obs["discard"] == [top]
    assert obs["drawn"] == event["deck"][0]
    assert obs["deck_size"] == len(below) - 1
    assert st.observation(None)["deck"] == event["deck"][1:]
    assert obs["phase"] == "knock" and st.to_act() == [1, 2]
    assert full_count(st) == Counter(CARDS)


def test_reshuffle_must_be_a_permutation_of_the_discard_pile_below_its_top():
    st = dealt(2)
    reveals(st)
    _empty_deck(st)
    act(st, 0, "draw")
    below = st.discard[:-1]
    before = st.observation(None)
    for wrong in (st.discard, below[:-1], below[:-1] + [99], list(CARDS)):
        with pytest.raises(IllegalActionError):
            st.apply_chance({"type": "reshuffle", "deck": wrong})
    with pytest.raises(IllegalActionError):
        st.apply_chance({"type": "deal", "deck": below})
    assert st.observation(None) == before
    st.apply_chance({"type": "reshuffle", "deck": below[::-1]})
    assert st.drawn == below[-1]


def test_draw_illegal_when_no_cards_to_reshuffle():
    st = dealt(2)
    reveals(st)
    _empty_deck(st, keep_below=False)
    assert {"type": "draw"} not in st.legal_actions(0)
    before = st.observation(None)
    with pytest.raises(IllegalActionError):
        act(st, 0, "draw")
    assert st.observation(None) == before
    assert st.default_action(0)["type"] == "take_discard"


# ---------------------------------------------------------------- end of a round


def _four_player_end():
    """4 players, seat 0 to play, everything face up except (0,1,1), (1,1,1)
    and (3,0,3). Seat 0 draws 11 and gives it to seat 2, who places it at
    (3,0,3) (in seat 2's area through seat 3's column): areas 2 and 3 are
    then complete."""
    st = dealt(4, deck_top=[11, -1])
    reveals(st)
    all_face_up_except(st, (0, 1, 1), (1, 1, 1), (3, 0, 3))
    act(st, 0, "draw")
    for s in (1, 3):
        act(st, s, "pass")
    act(st, 2, "knock")
    act(st, 0, "give", to=2)
    act(st, 2, "place", slot=slot(3, 0, 3))
    act(st, 0, "exchange", take=slot(2, 0, 0), put=slot(0, 0, 0))
    return st


def test_ender_is_the_first_complete_area_in_turn_order_from_the_active_seat():
    st = _four_player_end()
    obs = st.observation(0)
    assert obs["ender"] == 2  # areas 2 and 3 are complete; 2 comes first from seat 0
    assert obs["final_turns"] is True
    assert st.active == 1


def test_final_turns_skip_the_ender():
    st = _four_player_end()
    actives = []
    while st.round == 1:
        a = st.to_act()[0]
        actives.append(a)
        act(st, a, "take_discard", slot=slot(a, 1, 1))
    assert actives == [1, 3, 0]
    assert st.is_chance_node() and st.round == 2 and len(st.round_scores) == 1


def test_active_seat_gets_a_final_turn_when_it_is_not_the_ender():
    st = _four_player_end()
    for a in (1, 3):
        act(st, a, "take_discard", slot=slot(a, 1, 1))
    assert st.to_act() == [0] and st.observation(0)["final_turns"]


def test_ender_is_fixed_once():
    st = _four_player_end()
    act(st, 1, "take_discard", slot=slot(1, 1, 1))  # seat 1's area completes too
    assert st.observation(0)["ender"] == 2
    assert st.to_act() == [3]


def test_when_the_active_seat_ends_the_round_the_next_seats_play_once():
    st = dealt(3)
    reveals(st)
    all_face_up_except(st, (0, 1, 1), (1, 1, 1), (2, 1, 1))
    act(st, 0, "take_discard", slot=slot(0, 1, 1))
    assert st.ender == 0 and st.to_act() == [1]
    act(st, 1, "take_discard", slot=slot(1, 2, 2))
    assert st.to_act() == [2]
    act(st, 2, "take_discard", slot=slot(2, 2, 2))
    assert st.round == 2 and st.is_chance_node()


def test_ender_may_knock_during_final_turns():
    st = _four_player_end()
    act(st, 1, "take_discard", slot=slot(1, 1, 1))
    act(st, 3, "draw")
    assert st.to_act() == [0, 1, 2]  # the ender (seat 2) answers too
    act(st, 2, "knock")
    act(st, 0, "pass")
    act(st, 1, "pass")
    assert st.observation(3)["knockers"] == [2]
    act(st, 3, "give", to=2)
    assert st.to_act() == [2]


def test_round_end_turns_every_card_up_and_removes_triples_once_more():
    st = dealt(2, fixed={(1, 0, 0): 11, (1, 1, 0): 11, (1, 2, 0): 11, (0, 1, 1): -1}, discard_top=-1)
    reveals(st)
    all_face_up_except(st, (0, 1, 1), (1, 0, 0), (1, 1, 0), (1, 2, 0), (1, 0, 2))
    act(st, 0, "take_discard", slot=slot(0, 1, 1))
    assert st.ender == 0 and st.removed == []
    act(st, 1, "take_discard", slot=slot(1, 1, 2))
    assert st.round == 2 and st.removed == [11, 11, 11]
    g = st.observation(1)["grids"]
    assert [g[1][r][0] for r in range(3)] == [None, None, None]
    assert all(cell != "?" for seat in g for row in seat for cell in row)


def test_shared_column_counts_for_both_players():
    for n in (2, 3, 5):
        st = dealt(n)
        reveals(st)
        all_face_up_except(st)
        st.ender = 0
        st._end_round()
        for s in range(n):
            nb = (s + 1) % n
            own = sum(st.val[idx(s, r, c)] for r in range(3) for c in range(4))
            col = sum(st.val[idx(nb, r, 3)] for r in range(3))
            assert st.raw_scores[0][s] == own + col
        assert sum(st.raw_scores[0]) == sum(v for v in st.val) + sum(
            st.val[idx(s, r, 3)] for s in range(n) for r in range(3)
        )


def _score(sums, ender):
    n = len(sums)
    st = dealt(n)
    for i in range(st.lay.N):
        st.val[i] = None
    for s, v in enumerate(sums):
        st.val[idx(s, 0, 0)] = v
    st.upv = st.val[:]
    st._recount()
    st.ender = ender
    st._end_round()
    return st.round_scores[-1], st.doubled[-1]


@pytest.mark.parametrize(
    "sums, ender, expected, doubled",
    [
        ([20, 10, 30], 0, [40, 10, 30], True),  # not the lowest: doubled
        ([10, 20, 30], 0, [10, 20, 30], False),  # the lowest: not doubled
        ([10, 10, 30], 0, [10, 10, 30], False),  # tied lowest: nobody strictly lower
        ([0, -1, 5], 0, [0, -1, 5], False),  # zero is not positive
        ([-2, -5], 0, [-2, -5], False),  # negative is never doubled
        ([5, 1, 9, 7], 2, [5, 1, 18, 7], True),
    ],
)
def test_ender_doubled_only_if_positive_and_not_lowest(sums, ender, expected, doubled):
    assert _score(sums, ender) == (expected, doubled)


def test_lowest_total_wins_and_ties_share_rank():
    st = dealt(4)
    st.totals = [120, 90, 120, 150]
    st.phase = OVER
    res = st.result()
    assert res.scores == [120, 90, 120, 150]
    assert res.ranks == [2, 1, 2, 4]
    assert st.result(forfeited={1}).ranks == [1, 4, 1, 3]


def test_three_rounds_then_the_game_is_over():
    st = AllegraGame(2).new_initial_state()
    rng = random.Random(3)
    deals = 0
    while not st.is_terminal():
        if st.is_chance_node():
            event = st.sample_chance(rng)
            deals += event["type"] == "deal"
            st.apply_chance(event)
        else:
            seat = st.to_act()[0]
            st.apply(seat, st.random_action(seat, rng))
    assert deals == 3
    details = st.score_details()
    assert len(details["round_scores"]) == 3
    assert st.scores() == [sum(r[s] for r in details["round_scores"]) for s in range(2)]
    assert st.observation(0)["phase"] == "over" and st.to_act() == []


# ---------------------------------------------------------------- what each seat knows


def test_observation_hides_face_down_cards_and_the_deck_order():
    st = dealt(3)
    reveals(st)
    for seat in range(3):
        obs = st.observation(seat)
        assert "deck" not in obs and "face_down" not in obs
        cells = [c for g in obs["grids"] for row in g for c in row]
        assert cells.count("?") == 36 - 6
    assert len(st.observation(None)["deck"]) == st.observation(0)["deck_size"]
    assert len(st.observation(None)["face_down"]) == 30


# ---------------------------------------------------------------- decisions where the rulings are silent


def test_legal_action_order_is_fixed():
    st = dealt(2)
    reveals(st)
    legal = st.legal_actions(0)
    assert legal[0] == {"type": "draw"}
    assert [a["slot"] for a in legal[1:]] == [[0, r, c] for r in range(3) for c in range(4)] + [
        [1, r, 3] for r in range(3)
    ]
    assert st.legal_actions(1) == []


def test_default_policy():
    st = dealt(3)
    assert st.default_action(0) == {"type": "reveal", "slot": [0, 0, 0]}
    reveals(st)
    assert st.default_action(0) == {"type": "draw"}
    act(st, 0, "draw")
    assert st.default_action(1) == {"type": "pass"}
    act(st, 1, "knock")
    act(st, 2, "pass")
    assert st.default_action(0) == {"type": "discard", "flip": [0, 0, 2]}
    act(st, 0, "give", to=1)
    assert st.default_action(1) == {"type": "place", "slot": [1, 0, 0]}
    act(st, 1, "place", slot=[1, 0, 0])
    assert st.default_action(0) == st.legal_actions(0)[0] == {"type": "exchange", "take": [1, 0, 1], "put": [0, 0, 0]}


def test_seat_that_cannot_act_has_its_turn_passed():
    st = dealt(3)
    reveals(st)
    make_empty(st, *[(1, r, c) for r in range(3) for c in range(4)], *[(2, r, 3) for r in range(3)])
    _empty_deck(st, keep_below=False)
    st.ender, st.final, st.queue = 2, True, [1]  # seat 1 still has its final turn to play
    act(st, 0, "take_discard", slot=slot(0, 0, 0))
    assert st.round == 2 and st.is_chance_node()


def test_actions_have_exactly_the_documented_keys():
    st = dealt(2)
    for bad in (
        {"type": "reveal", "slot": [0, 0, 0], "x": 1},
        {"type": "reveal", "slot": [0, 0]},
        {"type": "reveal", "slot": [0, 0, True]},
        {"type": "reveal", "slot": (0, 0, 0)},
        {"type": "reveal", "slot": [0, 5, 0]},
        {"type": "reveal"},
        ["reveal", [0, 0, 0]],
    ):
        with pytest.raises(IllegalActionError):
            st.apply(0, bad)


# ---------------------------------------------------------------- turn limit


def _stall(st, seat):
    """A turn that never turns a card up: take the discard into a face-up slot."""
    up = [i for i in st.lay.area[seat] if st.val[i] is not None and st.upv[i] is not None]
    i = up[0]
    act(st, seat, "take_discard", slot=[i // 12, (i % 12) // 4, i % 4])


def test_turn_limit_ends_a_round_with_no_ender_after_its_200n_th_turn():
    for n in (2, 3):
        st = dealt(n)
        reveals(st)
        assert st.observation(0)["turn"] == 0 and st.observation(0)["turn_limit"] == 200 * n
        for t in range(200 * n - 1):
            _stall(st, st.to_act()[0])
            assert st.round == 1 and st.observation(None)["turn"] == t + 1
        _stall(st, st.to_act()[0])  # the 200 x n-th turn ends the round
        assert st.round == 2 and st.is_chance_node()
        assert st.score_details()["enders"] == [None]
        assert st.score_details()["turn_limit_ends"] == [True]


def test_turn_limit_round_turns_every_card_up_removes_triples_and_doubles_nobody():
    # seat 1's column 0 holds three 11s face down: they go only at the round's end
    st = dealt(2, fixed={(1, 0, 0): 11, (1, 1, 0): 11, (1, 2, 0): 11}, discard_top=-1)
    reveals(st, {1: [(1, 0, 1), (1, 0, 2)]})
    st.turns = st.turn_limit - 1
    _stall(st, st.to_act()[0])
    assert st.round == 2
    assert st.removed == [11, 11, 11]  # turned up at the round's end, then removed as a triple
    assert all(st.val[idx(1, r, 0)] is None for r in range(3))
    raw = st.raw_scores[0]
    assert st.round_scores[0] == raw  # no doubling without an ender
    assert st.doubled == [False]
    assert st.enders == [None]


def test_turn_limit_does_not_apply_once_an_ender_is_fixed():
    st = dealt(3)
    reveals(st)
    all_face_up_except(st, (0, 1, 1), (1, 1, 1), (2, 1, 1))
    st.turns = st.turn_limit - 1
    act(st, 0, "take_discard", slot=slot(0, 1, 1))  # turn 600 fixes seat 0 as ender
    assert st.ender == 0 and st.round == 1 and st.to_act() == [1]
    act(st, 1, "take_discard", slot=slot(1, 0, 0))  # final turns are still played
    act(st, 2, "take_discard", slot=slot(2, 0, 0))
    assert st.round == 2 and st.enders == [0] and st.score_details()["turn_limit_ends"] == [False]


def test_turn_count_restarts_each_round():
    st = dealt(2)
    reveals(st)
    _stall(st, 0)
    assert st.observation(1)["turn"] == 1
    st.turns = st.turn_limit - 1
    _stall(st, 1)
    assert st.round == 2 and st.limit_ends == [True]
    st.apply_chance(st.sample_chance(random.Random(1)))
    assert st.turns == 0 and st.observation(0)["turn"] == 0
    reveals(st)
    assert st.observation(0)["turn"] == 0  # reveals are not turns
