"""Allegory: bid for Theme cards, build three Tales, score the weakest one.

The rules as implemented are described in docs/rules-allegory.md; the card
list and the game's numbers live in cards.json next to this file.

Internally a card is a small integer (its index in cards.json), the deck is a
list with its top card at the *end* (so drawing is ``pop()``), and every action
the engine hands out comes from per-game tables of constant dicts (never
mutate them). The state is mutable and cheap to copy with ``clone()``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from importlib import resources
from typing import Any, ClassVar, Final, cast

from engine.core import Action, EngineError, Game, IllegalActionError, State, Unchecked

# --------------------------------------------------------------------------
# Card data (cards.json)
# --------------------------------------------------------------------------
DATA: dict[str, Any] = json.loads(resources.files(__package__).joinpath("cards.json").read_text(encoding="utf-8"))

THEMES: Final[list[str]] = [t["name"] for t in DATA["themes"]]
GLOWING: Final[list[bool]] = [bool(t["glowing"]) for t in DATA["themes"]]
TALES: Final[list[str]] = list(DATA["tales"])
VALUES: Final[list[int]] = list(DATA["values"])
_THEME_INDEX: Final = {name: i for i, name in enumerate(THEMES)}
_TALE_INDEX: Final = {name: i for i, name in enumerate(TALES)}

CARD_NAME: Final[list[str]] = [c["card"] for c in DATA["cards"]]
CARD_THEME: Final[list[int]] = [_THEME_INDEX[c["theme"]] for c in DATA["cards"]]
CARD_VALUE: Final[list[int]] = [int(c["value"]) for c in DATA["cards"]]
CARD_TALE: Final[list[int]] = [_TALE_INDEX[c["tale"]] for c in DATA["cards"]]
CARD_ID: Final[dict[str, int]] = {name: i for i, name in enumerate(CARD_NAME)}

_SETUP = DATA["setup"]
CHIPS_PER_PLAYER: Final[int] = int(_SETUP["chips_per_player"])
MORAL_COPIES: Final[int] = int(_SETUP["moral_copies"])
MORAL_COPIES_UNIQUE: Final[int] = int(_SETUP["moral_copies_unique"])
GLOWING_MIN_PLAYERS: Final[int] = int(_SETUP["glowing_themes_min_players"])
CARDS_TO_END: Final[int] = int(DATA["end"]["cards_to_end"])
SET_SIZE: Final[int] = int(DATA["scoring"]["set_size"])
SET_BONUS: Final[int] = int(DATA["scoring"]["set_bonus"])
MORAL_BONUS: Final[int] = int(DATA["scoring"]["moral_bonus_per_tale"])


def pool_size(num_players: int) -> int:
    """Number of face-up Pool cards at setup (cards.json ``pool_size``)."""
    rule = _SETUP["pool_size"]
    special = rule.get("by_players", {})
    if str(num_players) in special:
        return int(special[str(num_players)])
    if rule.get("default") == "num_players":
        return num_players
    return int(rule["default"])


# Phases (small ints internally, names in observations).
SETUP: Final = 0
BID: Final = 1
TAKE: Final = 2
DIST: Final = 3
OVER: Final = 4
PHASE_NAMES: Final = ("setup", "bid", "take", "distribute", "over")

REST: Final[Action] = {"type": "rest"}
_CLAIM: Final[list[Action]] = [{"type": "rest", "claim": name} for name in CARD_NAME]
_TAKE: Final[list[Action]] = [{"type": "take", "card": name} for name in CARD_NAME]


def _most(values: list[int]) -> int:
    """``max(values)`` of a non-empty list, as a loop: compiled, this runs in
    C, where the builtin ``max`` is a generic call that parses arguments."""
    most = values[0]
    for v in values:
        if v > most:
            most = v
    return most


def _describe_keys(action: dict, allowed: tuple[str, ...]) -> str:
    extra = sorted(str(k) for k in action if k not in allowed)
    missing = [k for k in allowed if k not in action]
    parts = []
    if missing:
        parts.append("missing " + ", ".join(repr(k) for k in missing))
    if extra:
        parts.append("unexpected " + ", ".join(repr(k) for k in extra))
    return f"a {action.get('type')!r} action has exactly the keys {', '.join(allowed)} ({'; '.join(parts)})"


class AllegoryGame(Game):
    id: ClassVar[str] = "allegory"
    name: ClassVar[str] = "Allegory"
    min_players: ClassVar[int] = int(_SETUP["min_players"])
    max_players: ClassVar[int] = int(_SETUP["max_players"])
    option_specs: ClassVar[dict[str, tuple[type, Any]]] = {"unique_morals": (bool, False)}

    def __init__(self, num_players: Unchecked, options=None):
        super().__init__(num_players, options)
        n = self.num_players
        glowing_in = n >= GLOWING_MIN_PLAYERS
        self.themes_in_play: list[int] = [t for t in range(len(THEMES)) if glowing_in or not GLOWING[t]]
        themes = set(self.themes_in_play)
        self.cards_in_play: list[int] = [c for c in range(len(CARD_NAME)) if CARD_THEME[c] in themes]
        self.cards_in_play_set: frozenset[int] = frozenset(self.cards_in_play)
        self.deck_names: list[str] = [CARD_NAME[c] for c in self.cards_in_play]
        self.moral_themes: frozenset[str] = frozenset(THEMES[t] for t in self.themes_in_play)
        self.pool_size: int = pool_size(n)
        self.moral_copies: int = MORAL_COPIES_UNIQUE if self.options["unique_morals"] else MORAL_COPIES
        self.moral_deck: list[str] = [THEMES[t] for t in self.themes_in_play for _ in range(self.moral_copies)]
        self.total_chips: int = CHIPS_PER_PLAYER * n
        # bid actions by amount (amount 0 is never legal; kept for indexing)
        self.bid_actions: list[Action] = [{"type": "bid", "amount": a} for a in range(self.total_chips + 1)]

    def new_initial_state(self) -> AllegoryState:
        return AllegoryState(self)

    def max_rounds(self) -> int:
        """The most rounds a game can have: every round but the last gives
        a Pool card away (the take, or a claim), and the game ends once a
        seat holds CARDS_TO_END cards."""
        return self.num_players * (CARDS_TO_END - 1) + 1

    def max_game_length(self) -> int:
        # a round: bids that each raise the high bid (at most one a chip in
        # play), a rest a seat, the take and the distribute
        return self.max_rounds() * (self.total_chips + self.num_players + 2)


class AllegoryState(State):
    __slots__ = (
        "game", "n", "phase", "deck", "pool", "pchips", "chips", "bids", "rested", "active",
        "cur", "high", "hbidder", "winner", "round", "tales", "ncards", "morals", "_legal",
    )  # fmt: skip

    def __new__(cls, *args: Any) -> AllegoryState:
        # allocation alone: clone() makes a blank state this way, without __init__
        return object.__new__(cls)

    def __init__(self, game: AllegoryGame):
        n = game.num_players
        self.game = game
        self.n = n
        self.phase = SETUP
        self.deck: list[int] = []  # top card last
        self.pool: list[int] = []
        self.pchips: list[int] = []
        self.chips = [CHIPS_PER_PLAYER] * n  # owned chips, current bid included
        self.bids = [0] * n
        self.rested = [False] * n
        self.active = n
        self.cur = 0
        self.high = 0
        self.hbidder = -1
        self.winner = -1  # winner of the current (or, once over, the last) round
        self.round = 1
        self.tales: list[list[list[int]]] = [[[], [], []] for _ in range(n)]
        self.ncards = [0] * n
        self.morals: list[int] = []
        self._legal: list[Action] | None = None

    # -- whose turn ----------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == 4  # OVER

    def is_chance_node(self) -> bool:
        return self.phase == 0  # SETUP

    def to_act(self) -> list[int]:
        return [self.cur] if 0 < self.phase < 4 else []

    # -- chance --------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> Action:
        if self.phase != SETUP:
            raise EngineError("no chance event is due")
        g = cast(AllegoryGame, self.game)
        # a uniform shuffle: sort by one random key per card (faster than
        # rng.shuffle, which draws a bounded integer per card)
        r = rng.random
        deck = sorted(g.deck_names, key=lambda _card: r())
        morals = sorted(g.moral_deck, key=lambda _theme: r())
        return {"type": "setup", "deck": deck, "morals": morals[: self.n]}

    def chance_kind(self) -> str:
        return "setup"

    def apply_chance(self, action: Unchecked) -> None:
        g = cast(AllegoryGame, self.game)
        if self.phase != SETUP:
            raise IllegalActionError("chance", action, "no chance event is due (the setup is done)")
        if type(action) is not dict:
            raise IllegalActionError("chance", action, "a chance event is a JSON object")
        if action.get("type") != "setup":
            raise IllegalActionError("chance", action, "the only Allegory chance event is 'setup'")
        if len(action) != 3 or "deck" not in action or "morals" not in action:
            raise IllegalActionError("chance", action, _describe_keys(action, ("type", "deck", "morals")))
        deck, morals = action["deck"], action["morals"]
        ids = None
        if type(deck) is list and len(deck) == len(g.cards_in_play):
            try:
                ids = [CARD_ID[c] for c in deck if type(c) is str]
            except KeyError:
                ids = None
        if ids is None or len(ids) != len(deck) or set(ids) != g.cards_in_play_set:
            raise IllegalActionError(
                "chance", action,
                f"'deck' must be a permutation of the {len(g.cards_in_play)} Theme cards in play with {self.n} players",
            )  # fmt: skip
        if type(morals) is not list or len(morals) != self.n:
            raise IllegalActionError("chance", action, f"'morals' must be a list of {self.n} theme names")
        copies = g.moral_copies
        for theme in morals:
            if type(theme) is not str or theme not in g.moral_themes:
                raise IllegalActionError("chance", action, f"{theme!r} is not a Moral in play with {self.n} players")
            if morals.count(theme) > copies:
                raise IllegalActionError(
                    "chance", action, f"the Moral deck holds only {copies} {theme!r} card(s), not {morals.count(theme)}"
                )
        k = g.pool_size
        self.pool = ids[:k]
        self.pchips = [0] * len(self.pool)
        self.deck = ids[: k - 1 : -1]  # the rest, top card last
        self.morals = [_THEME_INDEX[m] for m in morals]
        self.phase = BID
        self.cur = 0
        self._legal = None

    # -- decisions -----------------------------------------------------------
    def _claims(self) -> list[int]:
        """Pool indices a Resting player may claim now (Story rounds only)."""
        if self.round == 1 or not self.pchips:
            return []
        pc = self.pchips
        m = _most(pc)
        if m < 1:
            return []
        return [i for i, c in enumerate(pc) if c == m]

    def legal_actions(self, seat: Unchecked) -> list[Action]:
        phase = self.phase
        if phase == SETUP or phase == OVER or seat != self.cur or type(seat) is not int:
            return []
        legal = self._legal
        if legal is None:
            pool = self.pool
            if phase == BID:
                legal = [REST]
                legal += [_CLAIM[pool[i]] for i in self._claims()]
                legal += cast(AllegoryGame, self.game).bid_actions[self.high + 1 : self.chips[seat] + 1]
            elif phase == TAKE:
                legal = [_TAKE[c] for c in pool]
            else:
                legal = [{"type": "distribute", "total": self.bids[seat], "cards": [CARD_NAME[c] for c in pool]}]
            self._legal = legal
        if phase == DIST:  # the template holds a list: hand out a fresh copy
            t = legal[0]
            return [{"type": "distribute", "total": t["total"], "cards": list(t["cards"])}]
        return list(legal)

    def random_action(self, seat: Unchecked, rng: random.Random) -> Action:
        phase = self.phase
        if phase == SETUP or phase == OVER or seat != self.cur:
            raise IllegalActionError(seat, None, "this seat has no decision to make now")
        pool = self.pool
        if phase == BID:
            high = self.high
            nb = self.chips[seat] - high
            if nb < 0:
                nb = 0
            nc = 0
            pc = self.pchips
            if self.round > 1 and pc:
                most = _most(pc)
                if most > 0:
                    nc = pc.count(most)
            r = int(rng.random() * (1 + nc + nb))
            if r == 0:
                return REST
            if r <= nc:  # the r-th Pool card holding the most chips
                i = -1
                for _ in range(r):
                    i = pc.index(most, i + 1)
                return _CLAIM[pool[i]]
            return cast(AllegoryGame, self.game).bid_actions[high + r - nc]
        if phase == TAKE:
            return _TAKE[pool[int(rng.random() * len(pool))]]
        # one uniform draw of a Pool card per chip: the numbers of
        # rng.choices(names, k=bid), without building the list of names
        rnd = rng.random
        size = len(pool)
        chips: dict[str, int] = {}
        for _ in range(self.bids[seat]):
            name = CARD_NAME[pool[int(rnd() * size)]]
            chips[name] = chips.get(name, 0) + 1
        return {"type": "distribute", "chips": chips}

    def default_action(self, seat: Unchecked) -> Action:
        phase = self.phase
        if phase == SETUP or phase == OVER or seat != self.cur:
            raise IllegalActionError(seat, None, "this seat has no decision to make now")
        if phase == BID:
            return REST
        if phase == TAKE:
            return _TAKE[self.pool[0]]
        return {"type": "distribute", "chips": {CARD_NAME[self.pool[0]]: self.bids[seat]}}

    def apply(self, seat: Unchecked, action: Unchecked) -> None:
        phase = self.phase
        if phase == SETUP or phase == OVER:
            raise IllegalActionError(
                seat, action, "the game is over" if phase == OVER else "the setup chance event comes first"
            )
        if seat != self.cur or type(seat) is not int:
            raise IllegalActionError(seat, action, f"it is seat {self.cur}'s turn, not seat {seat!r}'s")
        if type(action) is not dict:
            raise IllegalActionError(seat, action, "an action is a JSON object")
        kind = action.get("type")
        if phase == BID:
            if kind == "bid":
                self._bid(seat, action)
            elif kind == "rest":
                self._rest(seat, action)
            else:
                raise IllegalActionError(seat, action, "in the bid phase the actions are 'bid' and 'rest'")
        elif phase == TAKE:
            if kind != "take":
                raise IllegalActionError(seat, action, "the round's winner must now 'take' a Pool card")
            self._take(seat, action)
        else:
            if kind != "distribute":
                raise IllegalActionError(seat, action, "the round's winner must now 'distribute' their bid")
            self._distribute(seat, action)
        self._legal = None

    # each handler validates everything before it changes anything
    def _bid(self, seat: int, action: Action) -> None:
        if len(action) != 2 or "amount" not in action:
            raise IllegalActionError(seat, action, _describe_keys(action, ("type", "amount")))
        amount = action["amount"]
        if type(amount) is not int:
            raise IllegalActionError(seat, action, "'amount' must be a whole number")
        if amount <= self.high:
            raise IllegalActionError(
                seat, action, f"a bid must be at least {self.high + 1} (the high bid is {self.high})"
            )
        if amount > self.chips[seat]:
            raise IllegalActionError(seat, action, f"seat {seat} owns only {self.chips[seat]} Lore chips")
        self.bids[seat] = amount
        self.high = amount
        self.hbidder = seat
        self.cur = self._next_active(seat)

    def _rest(self, seat: int, action: Action) -> None:
        idx = -1
        if len(action) == 1:
            pass
        elif len(action) == 2 and "claim" in action:
            name = action["claim"]
            if type(name) is not str:
                raise IllegalActionError(seat, action, "'claim' must be a card name")
            if self.round == 1:
                raise IllegalActionError(seat, action, "no card can be claimed on Resting in the Prologue")
            cid = CARD_ID.get(name, -1)
            if cid < 0 or cid not in self.pool:
                raise IllegalActionError(seat, action, f"{name!r} is not in the Inspiration Pool")
            idx = self.pool.index(cid)
            most = _most(self.pchips)
            if most < 1:
                raise IllegalActionError(seat, action, "no Pool card holds any chips, so nothing can be claimed")
            if self.pchips[idx] != most:
                raise IllegalActionError(
                    seat,
                    action,
                    f"{name!r} holds {self.pchips[idx]} chips; only a card with the most ({most}) can be claimed",
                )
        else:
            raise IllegalActionError(seat, action, "a 'rest' action has the key 'type' and optionally 'claim'")
        self.rested[seat] = True
        self.bids[seat] = 0
        self.active -= 1
        if idx >= 0:
            self._gain(seat, idx)
        if self.active == 1:
            w = self.rested.index(False)
            self.winner = w
            self.cur = w
            if self.pool:
                self.phase = TAKE
            else:  # ruling gap: nothing to take, nothing to distribute on
                self._end_round()
        else:
            self.cur = self._next_active(seat)

    def _take(self, seat: int, action: Action) -> None:
        if len(action) != 2 or "card" not in action:
            raise IllegalActionError(seat, action, _describe_keys(action, ("type", "card")))
        name = action["card"]
        cid = CARD_ID.get(name, -1) if type(name) is str else -1
        if cid < 0 or cid not in self.pool:
            raise IllegalActionError(seat, action, f"{name!r} is not a card in the Inspiration Pool")
        self._gain(seat, self.pool.index(cid))
        if self.bids[seat] > 0 and self.pool:
            self.phase = DIST
        else:  # bid 0, or the Pool ran dry: the bid (if any) stays with the winner
            self._end_round()

    def _distribute(self, seat: int, action: Action) -> None:
        if len(action) != 2 or "chips" not in action:
            raise IllegalActionError(seat, action, _describe_keys(action, ("type", "chips")))
        spread = action["chips"]
        if type(spread) is not dict:
            raise IllegalActionError(seat, action, "'chips' must be an object {card: number of chips}")
        pool = self.pool
        total = 0
        moves = []
        for name, count in spread.items():
            try:
                i = pool.index(CARD_ID[name])
            except (KeyError, ValueError, TypeError):
                raise IllegalActionError(seat, action, f"{name!r} is not a card in the Inspiration Pool") from None
            if type(count) is not int or count < 0:
                raise IllegalActionError(seat, action, f"the chips on {name!r} must be a whole number >= 0")
            total += count
            moves.append((i, count))
        bid = self.bids[seat]
        if total != bid:
            raise IllegalActionError(seat, action, f"the chips must add up to the winning bid {bid}, not {total}")
        self.chips[seat] -= bid
        pc = self.pchips
        for i, count in moves:
            pc[i] += count
        self._end_round()

    # -- internals -------------------------------------------------------------
    def _next_active(self, seat: int) -> int:
        n = self.n
        rested = self.rested
        s = seat + 1
        while True:
            if s >= n:
                s = 0
            if not rested[s]:
                return s
            s += 1

    def _gain(self, seat: int, idx: int) -> None:
        """``seat`` gets the Pool card at ``idx`` with its chips; the slot is
        refilled in place from the deck, or disappears if the deck is empty."""
        cid = self.pool[idx]
        self.chips[seat] += self.pchips[idx]
        self.tales[seat][CARD_TALE[cid]].append(cid)
        self.ncards[seat] += 1
        if self.deck:
            self.pool[idx] = self.deck.pop()
            self.pchips[idx] = 0
        else:
            del self.pool[idx]
            del self.pchips[idx]

    def _end_round(self) -> None:
        n = self.n
        self.bids = [0] * n
        self.rested = [False] * n
        self.active = n
        self.high = 0
        self.hbidder = -1
        if _most(self.ncards) >= CARDS_TO_END or not self.pool:
            self.phase = OVER
            return
        self.round += 1
        self.cur = self.winner + 1 if self.winner + 1 < n else 0
        self.winner = -1
        self.phase = BID

    # -- scoring ---------------------------------------------------------------
    def _breakdown(self, seat: int) -> dict[str, Any]:
        tales = self.tales[seat]
        totals = [sum(CARD_VALUE[c] for c in tale) for tale in tales]
        counts = Counter(CARD_THEME[c] for tale in tales for c in tale)
        theme_bonus = SET_BONUS * sum(k // SET_SIZE for k in counts.values())
        moral = self.morals[seat] if self.morals else -1
        moral_bonus = MORAL_BONUS * sum(1 for tale in tales if any(CARD_THEME[c] == moral for c in tale))
        lowest = min(totals)
        return {
            "tale_totals": dict(zip(TALES, totals)),
            "lowest_tale": lowest,
            "theme_bonus": theme_bonus,
            "moral_bonus": moral_bonus,
            "complete": all(tales),
            "score": lowest + theme_bonus + moral_bonus,
        }

    def scores(self) -> list[int]:
        return [self._breakdown(s)["score"] for s in range(self.n)]

    def ranking_keys(self) -> list[Any]:
        out = []
        for s in range(self.n):
            b = self._breakdown(s)
            out.append((b["complete"], b["score"], self.chips[s]))
        return out

    def score_details(self) -> dict[str, Any]:
        return {"breakdown": [self._breakdown(s) for s in range(self.n)]}

    # -- information -------------------------------------------------------------
    def observation(self, seat: Unchecked) -> dict[str, Any]:
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.n):
            raise EngineError(f"there is no seat {seat!r} in a {self.n}-player game")
        phase = self.phase
        players = []
        for s in range(self.n):
            players.append(
                {
                    "seat": s,
                    "chips": self.chips[s],
                    "bid": self.bids[s],
                    "rested": self.rested[s],
                    "tales": {TALES[t]: [CARD_NAME[c] for c in self.tales[s][t]] for t in range(3)},
                    "cards": self.ncards[s],
                }
            )
        obs: dict[str, Any] = {
            "game": self.game.id,
            "seat": seat,
            "num_players": self.n,
            "options": dict(self.game.options),
            "round": self.round,
            "round_kind": "prologue" if self.round == 1 else "story",
            "phase": PHASE_NAMES[phase],
            "to_act": self.to_act(),
            "high_bid": self.high,
            "high_bidder": self.hbidder if self.hbidder >= 0 else None,
            "winner": self.winner if phase in (TAKE, DIST, OVER) and self.winner >= 0 else None,
            "pool": [{"card": CARD_NAME[c], "chips": k} for c, k in zip(self.pool, self.pchips)],
            "deck_size": len(self.deck),
            "players": players,
            "moral": THEMES[self.morals[seat]] if seat is not None and self.morals else None,
        }
        if self.morals and (seat is None or phase == OVER):
            obs["morals"] = [THEMES[m] for m in self.morals]
        if seat is None and phase != SETUP:
            obs["deck"] = [CARD_NAME[c] for c in reversed(self.deck)]
        if phase == OVER:
            details = [self._breakdown(s) for s in range(self.n)]
            obs["scores"] = [d["score"] for d in details]
            obs["breakdown"] = details
        return obs

    @classmethod
    def from_view(cls, game: AllegoryGame, view: Unchecked) -> AllegoryState:
        """The state a spectator's full view shows (``observation(None)``).

        The inverse of the full view: ``from_view(g, s.observation(None))``
        has the same observations, legal actions and future as ``s``. A seat's
        view completed with the two things it lacks, the ``deck`` (top first)
        and every seat's ``morals``, is such a view: this is how
        ``cardroom_sdk.sample_world`` builds a world. The view is checked
        (every card in play exactly once, the Morals from the Moral deck, the
        phase and turn consistent); a view that no state has raises
        EngineError.
        """
        n = game.num_players
        if view.get("game") != game.id or view.get("num_players") != n:
            raise EngineError(f"the view is not of a {n}-player {game.id} game")
        state = cls(game)
        phase = view.get("phase")
        if phase == "setup":
            return state
        if phase not in PHASE_NAMES[1:]:
            raise EngineError(f"unknown phase {phase!r}")
        try:
            state.phase = PHASE_NAMES.index(phase)
            state.round = int(view["round"])
            to_act = view["to_act"]
            state.cur = to_act[0] if to_act else 0
            state.high = int(view["high_bid"])
            state.hbidder = -1 if view["high_bidder"] is None else int(view["high_bidder"])
            state.winner = -1 if view["winner"] is None else int(view["winner"])
            state.pool = [CARD_ID[p["card"]] for p in view["pool"]]
            state.pchips = [int(p["chips"]) for p in view["pool"]]
            state.deck = [CARD_ID[c] for c in reversed(view["deck"])]
            players = view["players"]
            state.chips = [int(p["chips"]) for p in players]
            state.bids = [int(p["bid"]) for p in players]
            state.rested = [bool(p["rested"]) for p in players]
            state.tales = [[[CARD_ID[c] for c in p["tales"][t]] for t in TALES] for p in players]
            state.morals = [_THEME_INDEX[m] for m in view["morals"]]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise EngineError(f"not a full Allegory view: {exc!r}") from None
        state.ncards = [sum(len(t) for t in tales) for tales in state.tales]
        state.active = n - sum(state.rested)
        cards = state.pool + state.deck + [c for tales in state.tales for t in tales for c in t]
        if len(cards) != len(game.cards_in_play) or set(cards) != game.cards_in_play_set:
            raise EngineError("the view does not hold every Theme card in play exactly once")
        if len(state.morals) != n or any(
            state.morals.count(m) > game.moral_copies or THEMES[m] not in game.moral_themes for m in state.morals
        ):
            raise EngineError("the view's Morals are not a deal from the Moral deck")
        if len(players) != n or state.to_act() != list(to_act):
            raise EngineError("the view's turn does not fit its phase")
        return state

    def clone(self) -> AllegoryState:
        new = AllegoryState.__new__(AllegoryState)
        new.game = self.game
        new.n = self.n
        new.phase = self.phase
        new.deck = self.deck[:]
        new.pool = self.pool[:]
        new.pchips = self.pchips[:]
        new.chips = self.chips[:]
        new.bids = self.bids[:]
        new.rested = self.rested[:]
        new.active = self.active
        new.cur = self.cur
        new.high = self.high
        new.hbidder = self.hbidder
        new.winner = self.winner
        new.round = self.round
        new.tales = [[t[0][:], t[1][:], t[2][:]] for t in self.tales]
        new.ncards = self.ncards[:]
        new.morals = self.morals[:]
        new._legal = self._legal
        return new

    def __repr__(self) -> str:
        return f"<AllegoryState {self.n}p round {self.round} {PHASE_NAMES[self.phase]} to_act={self.to_act()}>"
