"""The game API every cardroom game implements (in the spirit of OpenSpiel).

A ``Game`` is built from a player count and options; it makes ``State``s.
A state is advanced by two kinds of events:

* chance events (dealing, shuffling), drawn by ``sample_chance(rng)`` from a
  random number generator that the *caller* owns, and applied with
  ``apply_chance(action)``; a replay stores them, so re-playing needs no RNG;
* decisions, ``apply(seat, action)``, by one of the seats in ``to_act()``.

Actions are plain JSON-ready dicts exactly as bot protocol v1 writes them, so
the engine, the bots, the replays and the wire all speak one language. Action
dicts handed out by the engine may be shared constants: never mutate them.

The engine never imports Django (or anything outside the standard library).
"""

from __future__ import annotations

import abc
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

Action = dict[str, Any]
CHANCE: Final = "chance"
# What a caller hands in (a seat, an action, an option): any object, which the
# engine checks itself. Typed Any so that the compiled engine (mypyc checks
# declared argument types at the call) refuses a bad one with the same
# EngineError as the reference, not a TypeError (docs/decisions/142-a-switch-and-arguments-typed-unchecked.md).
Unchecked = Any


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class GameNotFoundError(EngineError):
    """No game is registered under that id."""


class GameOptionError(EngineError):
    """A game option is unknown or has a value the game does not accept."""


class PlayerCountError(EngineError):
    """The game cannot be played with that many players."""


class IllegalActionError(EngineError):
    """An action that is not legal in the current state.

    ``seat`` is the seat that tried it (``"chance"`` for a chance event) and
    ``reason`` says, for a human, why it was refused.
    """

    def __init__(self, seat: Unchecked, action: Any, reason: str):
        self.seat = seat
        self.action = action
        self.reason = reason
        super().__init__(f"seat {seat}: illegal action {action!r}: {reason}")


@dataclass(frozen=True)
class Result:
    """The outcome of a finished game.

    ``scores`` are the game's own scores (higher is better in Allegory, lower
    in Allegra); ``ranks`` are 1-based competition ranks (1 + the number of
    seats strictly ahead), with forfeiting seats sharing the rank after the
    last seat that did not forfeit.
    """

    scores: list[int]
    ranks: list[int]
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"scores": list(self.scores), "ranks": list(self.ranks)}


def competition_ranks(keys: Sequence[Any], forfeited: Collection[int] = frozenset()) -> list[int]:
    """1-based competition ranks from per-seat keys where a larger key is better.

    Seats in ``forfeited`` are ranked below every other seat and share the rank
    right after the last seat that did not forfeit.
    """
    n = len(keys)
    live = [s for s in range(n) if s not in forfeited]
    ranks = [0] * n
    for s in live:
        ranks[s] = 1 + sum(1 for o in live if keys[o] > keys[s])
    for s in range(n):
        if s in forfeited:
            ranks[s] = len(live) + 1
    return ranks


def restore_state(cls: Any, fields: dict[str, Any]) -> Any:
    """Pickle's way back to a state (see ``State.__reduce__``): the class's
    ``__new__`` allocates without ``__init__``, as ``clone`` does."""
    state = cls.__new__(cls)
    for name, value in fields.items():
        setattr(state, name, value)
    return state


class State(metaclass=abc.ABCMeta):
    """A position in one game. Mutable: ``apply`` changes it in place."""

    game: Game

    # Pickled field by field, never through ``__init__``: the compiled
    # engine's classes have no default pickling (mypyc's native classes
    # call ``__init__`` without its arguments), and OpenSpiel's
    # serialization of a sampled world pickles its state.
    def __reduce__(self) -> tuple[Any, ...]:
        from engine.form import state_fields

        return (restore_state, (type(self), {name: getattr(self, name) for name in state_fields(self)}))

    @property
    def num_players(self) -> int:
        return self.game.num_players

    # -- whose turn ------------------------------------------------------
    @abc.abstractmethod
    def is_terminal(self) -> bool: ...

    @abc.abstractmethod
    def is_chance_node(self) -> bool:
        """True when the next event must be a chance event."""

    @abc.abstractmethod
    def to_act(self) -> list[int]:
        """Seats that may decide now (several while answers are simultaneous,
        empty at a chance node or at the end)."""

    # -- chance ----------------------------------------------------------
    @abc.abstractmethod
    def sample_chance(self, rng: random.Random) -> Action:
        """Draw the chance event due now from ``rng`` (does not apply it)."""

    def chance_kind(self) -> str:
        """What kind of chance event is due (``"setup"``, ``"deal"``,
        ``"reshuffle"``, ...). A caller that keeps one random stream per kind
        (duplicate tournaments) gets the same deals whatever play did to the
        other streams."""
        return "chance"

    @abc.abstractmethod
    def apply_chance(self, action: Unchecked) -> None:
        """Apply a chance event; raises IllegalActionError(seat="chance") if
        it is not a possible outcome here (a replay's deck that is not a
        permutation of the cards left, say)."""

    # -- decisions -------------------------------------------------------
    @abc.abstractmethod
    def legal_actions(self, seat: Unchecked) -> list[Action]:
        """The legal actions of ``seat`` in protocol form (Allegory's
        ``distribute`` as its template). Empty when ``seat`` may not act."""

    @abc.abstractmethod
    def apply(self, seat: Unchecked, action: Unchecked) -> None:
        """Apply a decision of ``seat``; raises IllegalActionError if illegal
        (and then leaves the state unchanged)."""

    @abc.abstractmethod
    def random_action(self, seat: Unchecked, rng: random.Random) -> Action:
        """A uniformly random legal action (a random filling of templates)."""

    @abc.abstractmethod
    def default_action(self, seat: Unchecked) -> Action:
        """The fixed, documented default policy that plays a forfeited seat."""

    # -- information -----------------------------------------------------
    @abc.abstractmethod
    def observation(self, seat: Unchecked) -> dict[str, Any]:
        """What ``seat`` may know now, as JSON-ready data; ``None`` gives the
        spectator's full view (everything, including hidden cards)."""

    @abc.abstractmethod
    def ranking_keys(self) -> list[Any]:
        """Per-seat sort keys, larger is better; equal keys share a rank."""

    @abc.abstractmethod
    def scores(self) -> list[int]:
        """The per-seat final scores (valid once terminal)."""

    def result(self, forfeited: Collection[int] = frozenset()) -> Result:
        if not self.is_terminal():
            raise EngineError("the game is not over")
        return Result(self.scores(), competition_ranks(self.ranking_keys(), forfeited), self.score_details())

    def score_details(self) -> dict[str, Any]:
        """Game-specific breakdown of the scores (for viewers); optional."""
        return {}

    @abc.abstractmethod
    def clone(self) -> State: ...


class Game(metaclass=abc.ABCMeta):
    """A game with a fixed player count and options."""

    id: ClassVar[str]
    name: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    # option name -> (type, default); a new option is a contract change.
    option_specs: ClassVar[Mapping[str, tuple[type, Any]]] = {}
    # whether a lower score is the better one (the standings' margins read it)
    lower_scores_win: ClassVar[bool] = False

    def __init__(self, num_players: Unchecked, options: Mapping[str, Any] | None = None):
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise PlayerCountError(f"{self.id}: the number of players must be a whole number, not {num_players!r}")
        if not self.min_players <= num_players <= self.max_players:
            raise PlayerCountError(
                f"{self.id} is played by {self.min_players} to {self.max_players} players, not {num_players}"
            )
        self.num_players = num_players
        self.options = self.normalize_options(options or {})

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.num_players, dict(self.options)))

    @classmethod
    def normalize_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """Check options against ``option_specs`` and fill in defaults."""
        if not isinstance(options, Mapping):
            raise GameOptionError(f"{cls.id}: options must be an object, not {type(options).__name__}")
        out: dict[str, Any] = {}
        for key, value in options.items():
            if key not in cls.option_specs:
                known = ", ".join(sorted(cls.option_specs)) or "none"
                raise GameOptionError(f"{cls.id} has no option {key!r} (its options: {known})")
            typ, _default = cls.option_specs[key]
            if typ is bool and not isinstance(value, bool):
                raise GameOptionError(f"{cls.id}: option {key!r} must be true or false, not {value!r}")
            if typ is not bool and not isinstance(value, typ):
                raise GameOptionError(f"{cls.id}: option {key!r} must be a {typ.__name__}, not {value!r}")
            out[key] = value
        for key, (_typ, default) in cls.option_specs.items():
            out.setdefault(key, default)
        return out

    @classmethod
    def parse_option(cls, key: Unchecked, text: Unchecked) -> Any:
        """Turn a command-line ``K=V`` value into the option's type."""
        if key not in cls.option_specs:
            known = ", ".join(sorted(cls.option_specs)) or "none"
            raise GameOptionError(f"{cls.id} has no option {key!r} (its options: {known})")
        typ, _default = cls.option_specs[key]
        if typ is bool:
            low = text.strip().lower()
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
            raise GameOptionError(f"{cls.id}: option {key!r} must be true or false, not {text!r}")
        try:
            return typ(text)
        except ValueError:
            raise GameOptionError(f"{cls.id}: option {key!r} must be a {typ.__name__}, not {text!r}") from None

    @abc.abstractmethod
    def new_initial_state(self) -> State: ...

    # -- bounds on a game's length (derived from the rules' numbers) -------
    @abc.abstractmethod
    def max_game_length(self) -> int:
        """The most decisions (``apply`` calls; chance events are not
        counted) one game of this player count and options can take:
        OpenSpiel's ``MaxGameLength``. A bound, not an estimate."""

    def max_decisions_per_seat(self) -> int | None:
        """The most decisions one seat can face in a game (the match
        ceiling's bound, cardroom/ceiling.py); None where the game offers no
        per-seat bound (docs/decisions/235-the-engine-bounds-a-game-s-length.md)."""
        return None
