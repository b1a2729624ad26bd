#!/usr/bin/env python3
"""A cardroom starter bot for the `python` runtime, using numpy: it plays
both games (Allegory and Allegra) by scoring every legal action with a small
linear model, ``score = features @ weights``, and playing the best one
(ties broken at random).

The weights below are hand-set, not trained: a starting point. Make the bot
yours by changing the features, fitting the weights from replays, or
replacing the model altogether. ``cardroom_sdk.run`` speaks the protocol;
this file only chooses.

Try it locally:   cardroom play allegra bots/starters/python-numpy builtin:random
"""

import numpy as np

import cardroom_sdk

# ---------------------------------------------------------------------------
# Allegory: bid for Theme cards; only your weakest Tale counts at the end.
# ---------------------------------------------------------------------------
THEMES = ["butterfly", "mask", "coin", "owl", "key", "crown", "feather", "flame", "shell"]
VALUES = [-2, -1, 1, 2, 3, 4, 5]
TALES = ["nature", "energy", "spirit"]

ALLEGORY_FEATURES = [
    "rest",  # 1 for a rest (with or without a claim)
    "bid",  # 1 for a bid
    "bid_share",  # the bid as a share of the chips the seat owns
    "best_pool_card",  # a bid: the worth of the best card in the Pool (see card_worth)
    "card_worth",  # take / claim: how much the card helps (see card_worth)
    "card_chips",  # take / claim: chips lying on the card, /10
]
ALLEGORY_WEIGHTS = np.array([0.0, 0.3, -2.0, 0.8, 1.0, 0.5])


def card_tale(card):
    """The Tale a card belongs to: (value position + theme position) mod 3
    (docs/rules-allegory.md, Components)."""
    theme, value = card.split(":")
    return TALES[(VALUES.index(int(value)) + THEMES.index(theme)) % 3]


def card_worth(observation, card):
    """About how much taking ``card`` raises this seat's score: its value,
    doubled when it goes to the weakest Tale, plus a point for the Moral."""
    me = observation["players"][observation["seat"]]
    totals = {tale: sum(int(c.split(":")[1]) for c in cards) for tale, cards in me["tales"].items()}
    weakest = min(totals.values())
    value = int(card.split(":")[1])
    tale = card_tale(card)
    worth = value * (2.0 if totals[tale] == weakest else 1.0)
    if card.split(":")[0] == observation["moral"] and card not in sum(me["tales"].values(), []):
        worth += 1.0
    return worth / 5.0


def allegory_features(observation, action):
    f = dict.fromkeys(ALLEGORY_FEATURES, 0.0)
    chips_on = {entry["card"]: entry["chips"] for entry in observation["pool"]}
    kind = action["type"]
    if kind == "rest":
        f["rest"] = 1.0
        card = action.get("claim")
        if card is not None:
            f["card_worth"] = card_worth(observation, card)
            f["card_chips"] = chips_on[card] / 10.0
    elif kind == "bid":
        own = observation["players"][observation["seat"]]["chips"]
        f["bid"] = 1.0
        f["bid_share"] = action["amount"] / max(own, 1)
        f["best_pool_card"] = max(card_worth(observation, e["card"]) for e in observation["pool"])
    elif kind == "take":
        f["card_worth"] = card_worth(observation, action["card"])
        f["card_chips"] = chips_on[action["card"]] / 10.0
    return [f[name] for name in ALLEGORY_FEATURES]


def fill_distribute(observation, template, rng):
    """The whole bid over the Pool's cards, drawn from a multinomial that puts
    more chips on the cards worth least to us (whoever grabs those chips
    later gets a poor card with them)."""
    cards = template["cards"]
    worth = np.array([card_worth(observation, card) for card in cards])
    weights = np.exp(-worth)
    counts = rng.multinomial(template["total"], weights / weights.sum())
    # int(): numpy integers are not JSON numbers for json.dumps
    return {"type": "distribute", "chips": {card: int(n) for card, n in zip(cards, counts) if n > 0}}


# ---------------------------------------------------------------------------
# Allegra: Golf on a 3 x 4 grid; the lowest total wins.
# ---------------------------------------------------------------------------
ALLEGRA_KINDS = ["reveal", "take_discard", "draw", "knock", "pass", "give", "swap", "discard", "place", "exchange"]
ALLEGRA_FEATURES = ALLEGRA_KINDS + [
    "gain",  # points this action takes out of our area (a slot's card out, a lower card in), /10
    "drawn_low",  # a knock: how low the drawn card is, (5 - drawn) / 10
]
ALLEGRA_WEIGHTS = np.array([0.0, 0.0, 0.2, -0.1, 0.0, 0.1, 0.0, 0.05, 0.0, 0.0, 3.0, 2.0])
FACE_DOWN = 5.0  # what a face-down card is worth on average (values -1..11, middle ones most common)


def cell_value(observation, slot):
    owner, row, col = slot
    value = observation["grids"][owner][row][col]
    return FACE_DOWN if value == "?" else float(value)


def allegra_features(observation, action):
    f = dict.fromkeys(ALLEGRA_FEATURES, 0.0)
    kind = action["type"]
    f[kind] = 1.0
    drawn = observation["drawn"]
    incoming = float(drawn) if isinstance(drawn, int) else FACE_DOWN
    if kind == "take_discard":
        f["gain"] = (cell_value(observation, action["slot"]) - observation["discard"][-1]) / 10.0
    elif kind in ("swap", "place"):
        f["gain"] = (cell_value(observation, action["slot"]) - incoming) / 10.0
    elif kind == "exchange":
        f["gain"] = (cell_value(observation, action["put"]) - cell_value(observation, action["take"])) / 10.0
    elif kind == "knock":
        f["drawn_low"] = (5.0 - incoming) / 10.0
    return [f[name] for name in ALLEGRA_FEATURES]


# ---------------------------------------------------------------------------
# Choosing: score each legal action, play the best.
# ---------------------------------------------------------------------------
_generators = {}


def numpy_rng(context):
    """One numpy Generator per match, seeded from the SDK's ``context.rng``
    (itself from the operating system's entropy, which no other seat sees;
    ``CARDROOM_BOT_SEED`` set by hand replays it, docs/sdk.md)."""
    match = context.start.get("match_id")
    if match not in _generators:
        _generators[match] = np.random.default_rng(context.rng.getrandbits(64))
    return _generators[match]


def choose(observation, legal, context):
    rng = numpy_rng(context)
    if legal[0]["type"] == "distribute":  # Allegory's template, listed alone
        return fill_distribute(observation, legal[0], rng)
    if observation["game"] == "allegory":
        features, weights = [allegory_features(observation, a) for a in legal], ALLEGORY_WEIGHTS
    else:
        features, weights = [allegra_features(observation, a) for a in legal], ALLEGRA_WEIGHTS
    scores = np.asarray(features, dtype=float) @ weights
    best = np.flatnonzero(scores >= scores.max() - 1e-9)  # every action tied for best
    return legal[int(rng.choice(best))]


if __name__ == "__main__":
    cardroom_sdk.run(choose)
