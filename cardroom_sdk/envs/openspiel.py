"""Allegory and Allegra as OpenSpiel Python games.

``import cardroom_sdk.envs.openspiel`` registers ``python_allegory`` and
``python_allegra`` with ``pyspiel.register_game``; then
``pyspiel.load_game("python_allegra", {"players": 4})`` (Allegory also takes
``unique_morals``). They are made as OpenSpiel's own python/games are, over
the cardroom engine, and agree with the PettingZoo environments
(docs/sdk.md, "Research interfaces"; decisions 107, 108 and 114 in
docs/decisions/):

* **Decisions** are the PettingZoo action indices (``allegory_codec`` and
  ``allegra_codec``): 109 and 310 actions, an Allegory ``distribute`` placed
  one chip a step. Allegra's simultaneous knock answers are asked one seat
  at a time, in ``to_act()`` order.
* **Chance** is explicit: each engine chance event (Allegory's setup,
  Allegra's deals and reshuffles) is dealt as a run of chance nodes, one card
  each, in the order of the event's deck (Allegory's Morals after it). An
  outcome is a card (Allegory: its id; a Moral: ``NUM_CARDS`` + the theme's
  index; Allegra: the index of its value) with its probability among the
  cards left, so the run has exactly the distribution of the engine's
  shuffle. The engine applies the event when its last card is drawn.
* **Observations** come from the seat's own observation (what bot protocol
  v1 sends): the string is its JSON, the tensor the PettingZoo encoding.
  The **information state** has perfect recall: it is the seat's view of a
  log of what the table showed, step by step (``cardroom_sdk.envs.infostate``):
  the tensor adds a slot per step up to ``max_game_length`` and what chance
  showed, the string a digest of the same view (decision 260). The **public**
  observation is a seat's observation less its own part, the same for every
  seat; the **private** one is that part (decision 212).
  ``resample_from_infostate`` is ``cardroom_sdk.sample_world`` given those
  observations as ``history``.
* **Returns** come at the end: (n - rank)/(n - 1), as the ladder scores.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import numpy as np
import pyspiel

from cardroom_sdk.envs import allegory_codec, allegra_codec, codec, infostate
from cardroom_sdk.envs._common import decision_step, rank_rewards, replay_document
from cardroom_sdk.envs.infostate import Recall
from cardroom_sdk.worlds import sample_world
from engine import CHANCE, new_game
from engine.allegory.game import CARD_ID, CARD_NAME, THEMES
from engine.allegra.game import CARDS

__all__ = ["AllegoryGame", "AllegraGame", "CardroomState"]

NUM_CARDS = len(CARD_NAME)  # Allegory's chance outcomes: a card's id, or NUM_CARDS + a Moral's theme
VALUES = sorted(set(CARDS))  # Allegra's chance outcomes: the index of a card's value


def _json(obs: dict[str, Any]) -> str:
    return json.dumps(obs, sort_keys=True, separators=(",", ":"))


class _Table:
    """The mutable part of a state, in one attribute: pyspiel clones a
    Python state by deep-copying its attributes, and this copies itself in
    the engine's cheap way (observations and events are never changed once
    recorded, so lists of them are copied shallowly)."""

    __slots__ = ("engine", "events", "draws", "pending", "seen", "recall", "views", "left")

    def __init__(self, engine, n: int):
        self.engine = engine
        # the replay's events so far (None in a sampled world, whose past is not known)
        self.events: list[dict[str, Any]] | None = []
        self.draws: list[int] | None = None  # chance outcomes of the engine event being dealt
        self.left: dict[int, int] | None = None  # chance outcome -> cards of it left to deal now
        self.pending: list[int] | None = None  # an Allegory distribute's chips so far
        self.seen: list[list[dict[str, Any]]] = [[] for _ in range(n)]  # each seat's decision observations
        self.recall = Recall(n)  # what the table showed, step by step: the information states (decision 260)
        self.views: dict[Any, Any] = {}  # engine observations (and encodings) of this position, by seat

    def view(self, seat: int) -> dict[str, Any]:
        """``engine.observation(seat)``, kept until the engine state changes
        (OpenSpiel asks for a seat's string and tensor one after the other)."""
        obs = self.views.get(seat)
        if obs is None:
            obs = self.views[seat] = self.engine.observation(seat)
        return obs

    def __deepcopy__(self, memo) -> _Table:
        other = _Table.__new__(_Table)
        other.engine = self.engine.clone()
        other.events = None if self.events is None else list(self.events)
        other.draws = None if self.draws is None else list(self.draws)
        other.left = None if self.left is None else dict(self.left)
        other.pending = None if self.pending is None else list(self.pending)
        other.seen = [list(s) for s in self.seen]
        other.recall = self.recall.copy()
        other.views = dict(self.views)
        return other

    # pickled (OpenSpiel's serialization) as its events, re-played on load;
    # a sampled world, which has no events, as its engine state
    def __getstate__(self):
        game = self.engine.game
        return {
            "game": (game.id, game.num_players, dict(game.options)),
            "events": self.events, "draws": self.draws, "pending": self.pending,
            "seen": self.seen, "recall": self.recall,
            "engine": self.engine if self.events is None else None,
        }  # fmt: skip

    def __setstate__(self, data) -> None:
        state = data["engine"]
        if state is None:
            state = new_game(*data["game"]).new_initial_state()
            for event in data["events"]:
                if event["by"] == CHANCE:
                    state.apply_chance(event["action"])
                else:
                    state.apply(event["by"], event["action"])
        self.engine = state
        self.views = {}
        self.left = None
        for key in ("events", "draws", "pending", "seen", "recall"):
            setattr(self, key, data[key])


class CardroomState(pyspiel.State):
    """A position: the engine's State, plus the chance event being dealt
    card by card and the distribute being placed chip by chip."""

    def __init__(self, game: CardroomGame, table: _Table | None = None):
        super().__init__(game)
        self._t = table or _Table(game.engine_game.new_initial_state(), game.num_players())
        self._game_id = game.engine_game.id

    @property
    def _codec(self):
        return codec(self._game_id)

    # -- what OpenSpiel asks ------------------------------------------------
    def current_player(self) -> int:
        engine = self._t.engine
        if engine.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if engine.is_chance_node():
            return pyspiel.PlayerId.CHANCE
        return engine.to_act()[0]

    def _legal_actions(self, player: int) -> list[int]:
        t = self._t
        key = ("legal", player, None if t.pending is None else sum(t.pending))
        legal = t.views.get(key)
        if legal is None:
            mask = self._codec.action_mask(t.view(player), t.engine.legal_actions(player), t.pending)
            legal = t.views[key] = [int(i) for i in np.flatnonzero(mask)]
        return list(legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = self._cards_left()
        total = sum(left.values())
        return [(outcome, count / total) for outcome, count in sorted(left.items())]

    def _apply_action(self, action: int) -> None:
        t = self._t
        engine = t.engine
        if engine.is_chance_node():
            left = self._cards_left()
            action = int(action)
            if action not in left:
                raise ValueError(f"chance outcome {action} is not a card left to deal")
            if left[action] == 1:
                del left[action]
            else:
                left[action] -= 1
            if t.draws is None:
                t.draws = []
            t.draws.append(action)
            if self._game_id == "allegory" and len(t.draws) == len(engine.game.cards_in_play):
                t.left = None  # the deck is dealt; the Morals come next
            event = self._event(t.draws)
            if event is not None:
                t.draws = t.left = None
                t.views = {}
                engine.apply_chance(event)
                if t.events is not None:
                    t.events.append({"by": CHANCE, "action": event})
                self._record(event["type"])
            return
        seat = engine.to_act()[0]
        if int(action) not in self._legal_actions(seat):
            raise ValueError(f"action {action} is not legal for seat {seat} now")
        layout = self.get_game().layout
        t.recall.step(seat, int(action), layout.secret_phase(t.view(seat), int(action)))
        move, t.pending = decision_step(self._codec, engine, seat, t.view(seat), int(action), t.pending)
        if move is not None:
            t.views = {}
            engine.apply(seat, move)
            if t.events is not None:
                t.events.append({"by": seat, "action": move, "ms": 0})
            self._record("move")

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {self._outcome_name(action)}"
        return _json(self._codec.action_to_protocol(self._t.view(player), action))

    def is_terminal(self) -> bool:
        return self._t.engine.is_terminal()

    def returns(self) -> list[float]:
        engine = self._t.engine
        if not engine.is_terminal():
            return [0.0] * engine.num_players
        return rank_rewards(engine.result().ranks)

    def __str__(self) -> str:
        t = self._t
        lines = [self._codec.render(t.engine.observation(None))]
        if t.draws is not None:
            lines.append(f"dealing: {len(t.draws)} cards drawn")
        if t.pending is not None:
            lines.append(f"distribute so far: {t.pending}")
        return "\n".join(lines)

    # -- the information state ---------------------------------------------
    def _record(self, event: str) -> None:
        """After an engine event (a chance event's type, or "move"): the log
        of what the table showed takes in what it shows now, and the seat
        that decides next receives its observation (what an ``act`` message
        would carry)."""
        t = self._t
        engine = t.engine
        if event == "move" and engine.is_terminal():
            event = "over"
        elif event == "move" and engine.is_chance_node() and engine.chance_kind() == "deal":
            event = "round_end"
        public = self.public_view()
        private = None
        if self._game_id == "allegra" and public["held"] is not None:
            knocker = t.view(public["held"]["seat"])
            if knocker["held"] != public["held"]:  # the knocker alone is shown the held card
                private = knocker
        self.get_game().layout.after_event(t.recall, public, event, private)
        if engine.is_terminal() or engine.is_chance_node():
            return
        seat = engine.to_act()[0]
        obs = t.view(seat)
        t.seen[seat].append(obs)

    def seat_history(self, player: int) -> list[dict[str, Any]]:
        """The observations ``player`` received at its decisions so far,
        oldest first, the current one last while it decides (what
        ``Context.history`` holds in a bot, plus the current one)."""
        return list(self._t.seen[player])

    def seat_pending(self, player: int) -> list[int] | None:
        """The chips ``player`` has placed of a distribute in progress (its own choices)."""
        t = self._t
        if t.pending is not None and self.current_player() == player:
            return t.pending
        return None

    def observation_string_of(self, player: int, perfect_recall: bool) -> str:
        t = self._t
        text = _json(t.view(player))
        pending = self.seat_pending(player)
        if pending is not None:
            text += f"\ndistribute so far: {pending}"
        if perfect_recall:
            digest = t.recall.digest(player) or "none"
            text = f"seat {player}, {t.recall.steps()} steps, digest {digest[:24]}\n{text}"
        return text

    def observation_tensor_of(self, player: int) -> np.ndarray:
        t = self._t
        pending = self.seat_pending(player)
        if pending is not None:
            return self._codec.encode(t.view(player), pending)
        key = ("tensor", player)
        tensor = t.views.get(key)
        if tensor is None:  # kept beside the observation (never changed in place)
            tensor = t.views[key] = self._codec.encode(t.view(player))
        return tensor

    def information_state_tensor_of(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observation's tensor, then the seat's view of the log, slot by
        slot (``cardroom_sdk.envs.infostate``; decision 260), into ``out``."""
        layout = self.get_game().layout
        if out is None:
            out = np.zeros(layout.size, np.float32)
        layout.write(self._t.recall, player, self.observation_tensor_of(player), out)
        return out

    # -- public and private observations (OpenSpiel's factored observations) --
    def public_view(self) -> dict[str, Any]:
        """What every seat sees: a seat's observation less what that seat
        alone sees, the same whichever seat asks (decision 212)."""
        t = self._t
        view = t.views.get("public")
        if view is None:
            if self._game_id == "allegory":
                view = allegory_codec.public_view(t.view(0))
            else:
                # a seat that is not the knocker: it sees the held card only if everyone does
                view = {**t.view(1 if t.view(0)["knocker"] == 0 else 0), "seat": None}
                if view["phase"] == "knock":
                    view["knockers"] = []  # the answers are secret until every seat has given its own
            t.views["public"] = view
        return view

    def private_view(self, player: int) -> dict[str, Any]:
        """What ``player``'s observation shows beyond the public view (the
        keys whose values differ), with its ``seat``."""
        obs = self._t.view(player)
        public = self.public_view()
        return {"seat": player, **{k: v for k, v in obs.items() if k != "seat" and v != public[k]}}

    def public_string(self) -> str:
        return _json(self.public_view())

    def public_tensor(self) -> np.ndarray:
        """The public view encoded with absolute seats (block k is seat k)."""
        t = self._t
        tensor = t.views.get("public tensor")
        if tensor is None:
            tensor = t.views["public tensor"] = self._codec.encode({**self.public_view(), "seat": 0})
        return tensor

    def private_string(self, player: int) -> str:
        text = _json(self.private_view(player))
        pending = self.seat_pending(player)
        if pending is not None:
            text += f"\ndistribute so far: {pending}"
        return text

    def private_tensor(self, player: int) -> np.ndarray:
        if self._game_id == "allegory":
            return allegory_codec.encode_private(self.private_view(player), self.seat_pending(player))
        return allegra_codec.encode_private(self.private_view(player))

    def resample_from_infostate(self, player_id: int, probability_sampler) -> CardroomState:
        """A state ``player_id`` cannot tell from this one, drawn by
        ``cardroom_sdk.sample_world`` from its observation and its earlier
        decision observations (``history``). The world keeps the seat's own
        past and its own distribute in progress; the other seats' pasts are
        not known in it (and another seat's distribute starts afresh)."""
        t = self._t
        engine = t.engine
        if engine.is_terminal() or engine.is_chance_node():
            raise ValueError("resample_from_infostate needs a decision node")
        obs = t.view(player_id)
        history = t.seen[player_id]
        if history and history[-1] == obs:
            history = history[:-1]
        rng = random.Random(int(probability_sampler() * 2**52))
        world = _Table(sample_world(obs, rng, history), engine.num_players)
        world.events = None
        world.seen = [list(s) if p == player_id else [] for p, s in enumerate(t.seen)]
        world.recall = t.recall.for_seat(player_id)
        world.pending = self.seat_pending(player_id)
        world.pending = None if world.pending is None else list(world.pending)
        return self.get_game().new_initial_state_from(world)

    # -- chance, card by card -----------------------------------------------
    def _cards_left(self) -> dict[int, int]:
        """Chance outcome -> how many such cards are left to deal now (kept
        in the table and counted down as cards are drawn)."""
        t = self._t
        if t.left is None:
            t.left = self._count_cards_left()
        return t.left

    def _count_cards_left(self) -> dict[int, int]:
        t = self._t
        engine = t.engine
        drawn = t.draws or []
        if self._game_id == "allegory":
            game = engine.game
            deck = len(game.cards_in_play)
            if len(drawn) < deck:
                return {c: 1 for c in game.cards_in_play_set.difference(drawn)}
            left = Counter(NUM_CARDS + THEMES.index(m) for m in game.moral_deck)
            left.subtract(drawn[deck:])
            return dict(+left)
        cards = CARDS if engine.chance_kind() == "deal" else engine.discard[:-1]
        left = Counter(VALUES.index(v) for v in cards)
        left.subtract(drawn)
        return dict(+left)

    def _event(self, draws: list[int]) -> dict[str, Any] | None:
        """The engine's chance event once every card of it is drawn, else None."""
        engine = self._t.engine
        if self._game_id == "allegory":
            game = engine.game
            deck = len(game.cards_in_play)
            if len(draws) < deck + engine.num_players:
                return None
            morals = [THEMES[m - NUM_CARDS] for m in draws[deck:]]
            return {"type": "setup", "deck": [CARD_NAME[c] for c in draws[:deck]], "morals": morals}
        size = len(CARDS) if engine.chance_kind() == "deal" else len(engine.discard) - 1
        if len(draws) < size:
            return None
        return {"type": engine.chance_kind(), "deck": [VALUES[i] for i in draws]}

    def _outcome_name(self, outcome: int) -> str:
        if self._game_id == "allegory":
            return CARD_NAME[outcome] if outcome < NUM_CARDS else f"Moral {THEMES[outcome - NUM_CARDS]}"
        return str(VALUES[outcome])

    # -- for cardroom ---------------------------------------------------------
    def chance_actions(self, event: dict[str, Any]) -> list[int]:
        """The chance outcomes that deal the engine chance ``event`` (say, one
        from ``engine_state.sample_chance(rng)``) here, in order."""
        if self._game_id == "allegory":
            return [CARD_ID[c] for c in event["deck"]] + [NUM_CARDS + THEMES.index(m) for m in event["morals"]]
        return [VALUES.index(v) for v in event["deck"]]

    @property
    def engine_state(self):
        """The engine's State (do not change it; clone it to explore)."""
        return self._t.engine

    def replay(self, seed: int | None = None) -> dict[str, Any]:
        """The game so far as a replay v1 (``cardroom verify`` checks a finished one)."""
        engine = self._t.engine
        if self._t.events is None:
            raise ValueError("a state from resample_from_infostate has no past to replay")
        names = [f"player_{s}" for s in range(engine.num_players)]
        return replay_document(engine.game, seed, names, "openspiel", self._t.events, engine)


class _Observer:
    """OpenSpiel's PyObserver, for the kinds of observation a seat has
    (``pyspiel.IIGObservationType``; decision 212):

    * its own observation (public info and its private info, the default):
      the JSON of what bot protocol v1 sends, the PettingZoo tensor;
    * with ``perfect_recall``, its information state: its past step by step
      too, in named parts (decision 260);
    * public info only: the public view, the same for every seat;
    * its private info only: what its observation shows beyond that.

    Any other kind (every seat's private info, a public or private record
    with perfect recall) is refused: a seat never sees another's cards."""

    def __init__(self, codec, layout, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters are not supported, not {params}")
        if iig_obs_type is None:
            public, private, recall = True, True, False
        else:
            public, recall = bool(iig_obs_type.public_info), bool(iig_obs_type.perfect_recall)
            private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
            if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
                raise ValueError("no observation holds every seat's private information")
            if not (public or private):
                raise ValueError("an observation needs public or private information")
            if recall and not (public and private):
                raise ValueError("perfect recall is offered for a seat's whole information state only")
        self.kind = "infostate" if recall else "seat" if public and private else "public" if public else "private"
        if self.kind == "infostate":  # named parts, as OpenSpiel's C++ games name theirs
            self.tensor = np.zeros(layout.size, np.float32)
            self.dict = {name: self.tensor[a : a + size] for name, (a, size) in layout.parts.items()}
            return
        size = {"seat": codec.OBS_SIZE, "public": codec.OBS_SIZE, "private": codec.PRIVATE_SIZE}[self.kind]
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CardroomState, player: int) -> None:
        kind = self.kind
        if kind == "seat":
            self.tensor[:] = state.observation_tensor_of(player)
        elif kind == "infostate":
            state.information_state_tensor_of(player, self.tensor)
        elif kind == "public":
            self.tensor[:] = state.public_tensor()
        else:
            self.tensor[:] = state.private_tensor(player)

    def string_from(self, state: CardroomState, player: int) -> str:
        kind = self.kind
        if kind in ("seat", "infostate"):
            return state.observation_string_of(player, kind == "infostate")
        if kind == "public":
            return state.public_string()
        return state.private_string(player)


def _game_type(game_id: str, long_name: str, options: dict[str, Any]) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=f"python_{game_id}",
        long_name=f"cardroom {long_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,  # rank rewards: ties share a rank
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=6,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=True,
        parameter_specification={"players": 2, **options},
    )


class CardroomGame(pyspiel.Game):
    game_id: str
    codec: Any
    game_type: pyspiel.GameType
    chance_outcome_count: int

    def __init__(self, params=None):
        params = dict(params or {})
        n = int(params.get("players", 2))
        options = {k: v for k, v in params.items() if k != "players"}
        self.engine_game = new_game(self.game_id, n, options)  # raises on a bad count or option
        self.layout = infostate.layout(self.engine_game)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.codec.NUM_ACTIONS,
            max_chance_outcomes=self.chance_outcome_count,
            num_players=n,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=None,
            max_game_length=self.codec.max_steps(self.engine_game),
        )
        super().__init__(self.game_type, info, {"players": n, **self.engine_game.options})

    def new_initial_state(self) -> CardroomState:
        return CardroomState(self)

    def new_initial_state_from(self, table: _Table) -> CardroomState:
        return CardroomState(self, table)

    def make_py_observer(self, iig_obs_type=None, params=None) -> _Observer:
        return _Observer(self.codec, self.layout, iig_obs_type, params)


class AllegoryGame(CardroomGame):
    game_id = "allegory"
    codec = allegory_codec
    game_type = _game_type("allegory", "Allegory", {"unique_morals": False})
    chance_outcome_count = NUM_CARDS + len(THEMES)


class AllegraGame(CardroomGame):
    game_id = "allegra"
    codec = allegra_codec
    game_type = _game_type("allegra", "Allegra", {})
    chance_outcome_count = len(set(CARDS))


for _game in (AllegoryGame, AllegraGame):
    pyspiel.register_game(_game.game_type, _game)
