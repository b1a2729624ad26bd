"""``sample_world``: a complete engine state that agrees with a seat's view.

What each game hides, and how it is filled in (docs/decisions/087-what-a-seat-cannot-see-and-how.md):

* Allegory: the other seats' Morals (dealt from the Moral deck without the
  seat's own Moral card) and the Theme deck's order (its cards are the cards
  in play not in the Pool or a Tale). Nothing a seat saw earlier is hidden
  later, so ``history`` adds nothing.
* Allegra: the face-down cards, the deck, the knocker's held card while only
  the knocker sees it, the knock answers given but not yet revealed, and
  during the final turns the order of the turns left. The hidden cards are
  dealt from the cards the seat cannot account for (all 120 minus every card
  it sees). A face-down card has been face down since the deal, so it is
  also one of the cards that were hidden in every earlier observation of the
  round: with ``history``, the face-down cards are drawn only from the
  cards hidden in all of them, which keeps the cards that went from the
  discard pile into a reshuffled deck in the deck.

Every draw is rejection-free: a shuffle of a few dozen cards, so its time is
bounded.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from engine import EngineError, Game, State
from engine import new_game as _new_game
from engine.allegory.game import AllegoryGame, AllegoryState
from engine.allegra.game import CARDS, AllegraGame, AllegraState

Observation = dict[str, Any]


def sample_world(
    observation: Observation, rng: random.Random | None = None, history: list[Observation] | None = None
) -> State:
    """A state of the engine drawn at random among those the seat of
    ``observation`` cannot tell from the real one.

    ``world.observation(seat) == observation`` always holds, and play goes
    on legally from the world (``legal_actions``, ``apply``, chance events,
    to the end). Every hidden card is dealt at random from the cards the seat
    cannot account for, so every state consistent with what it has seen can
    come out, each as likely as under a random deal. ``history`` is the list
    of the seat's earlier observations of the match, oldest first (``run``'s
    ``context.history``); the world then also agrees with what the seat saw
    in them and can no longer see. ``rng`` is a ``random.Random`` (default: a
    fresh one).

    Raises ValueError when the observation (or the history) is not one an
    engine state can show: not a seat's observation, of a chance node, or
    with cards that do not add up.
    """
    if rng is None:
        rng = random.Random()
    if not isinstance(observation, dict) or not isinstance(observation.get("seat"), int):
        raise ValueError("sample_world needs a seat's observation (a dict with an integer 'seat')")
    seat = observation["seat"]
    try:
        history = _this_round(observation, list(history or []))
        game = _game(observation.get("game"), observation.get("num_players"), observation.get("options"))
        if isinstance(game, AllegoryGame):
            world: State = _allegory_world(game, observation, rng)
        elif isinstance(game, AllegraGame):
            world = _allegra_world(game, observation, rng, history)
        else:  # pragma: no cover - a game the SDK does not know yet
            raise ValueError(f"sample_world does not know the game {game.id!r}")
        shown = world.observation(seat)
    except EngineError as exc:
        raise ValueError(f"no engine state shows this observation: {exc}") from None
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"not an observation of this game: {exc!r}") from None
    if shown != observation:
        raise ValueError("no engine state shows this observation (it does not add up)")
    return world


_GAMES: dict[tuple, Game] = {}


def _game(game_id: Any, num_players: Any, options: Any) -> Game:
    """The engine's Game for a table, made once: a sampler is called many
    times for one table, and its states only read their game."""
    try:
        key = (game_id, num_players, tuple(sorted(options.items())) if isinstance(options, dict) else options)
        game = _GAMES.get(key)
    except TypeError:  # an unhashable part: the engine will say what is wrong
        return _new_game(game_id, num_players, options)
    if game is None:
        game = _new_game(game_id, num_players, options)
        if len(_GAMES) < 64:
            _GAMES[key] = game
    return game


def _this_round(obs: Observation, history: list[Observation]) -> list[Observation]:
    """The observations of ``history`` from the round of ``obs``, oldest
    first (only these are read: Allegory's rounds hide nothing new and an
    Allegra round starts with a new deal), each checked to be of the same
    game, seat and table."""
    recent = []
    for earlier in reversed(history):
        if type(earlier) is not dict or any(earlier.get(k) != obs.get(k) for k in ("game", "seat", "num_players")):
            raise ValueError("every observation in history must be of the same game, seat and table")
        if earlier.get("round") != obs.get("round"):
            break
        if earlier.get("phase") not in ("deal", "over"):
            recent.append(earlier)
    recent.reverse()
    return recent


# -- Allegory ---------------------------------------------------------------


def _allegory_world(game: AllegoryGame, obs: Observation, rng: random.Random) -> AllegoryState:
    n = game.num_players
    if obs.get("phase") == "setup":
        return game.new_initial_state()
    try:
        seen = {p["card"] for p in obs["pool"]}
        seen.update(c for player in obs["players"] for tale in player["tales"].values() for c in tale)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an Allegory observation: {exc!r}") from None
    deck = [c for c in game.deck_names if c not in seen]
    if len(deck) != obs.get("deck_size"):
        raise ValueError(f"{len(deck)} Theme cards are unaccounted for, but the deck holds {obs.get('deck_size')!r}")
    rng.shuffle(deck)
    if "morals" in obs:  # the end: every Moral is shown
        morals = list(obs["morals"])
    else:
        own = obs.get("moral")
        rest = list(game.moral_deck)
        if own not in rest:
            raise ValueError(f"{own!r} is not a Moral of this game")
        rest.remove(own)
        others = rng.sample(rest, n - 1)
        seat = obs["seat"]
        morals = others[:seat] + [own] + others[seat:]
    view = dict(obs, seat=None, moral=None, deck=deck, morals=morals)
    return AllegoryState.from_view(game, view)


# -- Allegra ----------------------------------------------------------------

_FULL_DECK: dict[int, int] = dict(Counter(CARDS))


def _visible(obs: Observation) -> list[int]:
    """Every card value the observation shows, wherever it is."""
    seen = [v for grid in obs["grids"] for row in grid for v in row if type(v) is int]
    seen += obs["discard"]
    seen += obs["removed"]
    if obs["drawn"] is not None:
        seen.append(obs["drawn"])
    held = obs.get("held")
    if held is not None and type(held["card"]) is int:
        seen.append(held["card"])
    return seen


def _unaccounted(obs: Observation) -> dict[int, int]:
    """The cards the seat cannot place: the full deck minus what it sees
    (value -> copies)."""
    visible = Counter(_visible(obs))
    left = {v: k - visible.get(v, 0) for v, k in _FULL_DECK.items()}
    if len(visible) > len(left) or min(left.values()) < 0:
        raise ValueError("the observation shows more copies of a card than the game has")
    return left


def _reshuffled_between(before: Observation, after: Observation) -> bool:
    """Whether the deck was reshuffled between two observations of a round.
    Without a reshuffle the deck only shrinks and the discard pile below its
    top card only grows; a reshuffle that these miss (the pile regrown into
    the very same cards) only makes the sampler know less, never wrongly."""
    below = before["discard"][:-1]
    return (
        after["deck_size"] > before["deck_size"]
        or len(after["discard"]) < len(before["discard"])
        or after["discard"][: len(below)] != below
    )


def _never_seen(obs: Observation, history: list[Observation]) -> dict[int, int]:
    """The cards that can be face down (or the hidden held card) now.

    A face-down card has been face down since the round's deal, and a held
    card was face down until the knocker took it: in each earlier
    observation of this round it was among the cards the seat could not
    account for. So the candidates are the cards unaccounted for in every
    observation of the round, this one included. Between two reshuffles the
    unaccounted cards only shrink, so the last observation before each
    reshuffle stands for all before it; with no reshuffle the candidates
    are this observation's unaccounted cards. After one, they leave out the
    cards the seat saw go into the reshuffled deck.
    """
    candidates = _unaccounted(obs)
    for earlier, later in zip(history, history[1:] + [obs]):
        if _reshuffled_between(earlier, later):
            for v, k in _unaccounted(earlier).items():
                if k < candidates[v]:
                    candidates[v] = k
    return candidates


def _final_queues(n: int, obs: Observation, history: list[Observation]) -> list[list[int]]:
    """The orders in which the seats still to take a final turn after the
    active one can play.

    The observation shows the ender and the active seat, not who was active
    when the ender was fixed. Before that every turn (passed ones too) moves
    to the next seat, so the seat active at turn t is (round - 1 + t) mod n;
    the seats then play once more in order, skipping the ender. Each
    feasible turn T of the fix (after every earlier observation without an
    ender, agreeing with every earlier one with this ender) gives one queue.
    """
    start = (obs["round"] - 1) % n
    ender, turns = obs["ender"], obs["turn"]
    earliest = 1
    sightings = [(turns, obs["active"])]
    for earlier in history:
        if earlier.get("round") != obs["round"] or earlier.get("phase") in ("deal", "over"):
            continue
        if earlier.get("ender") is None:
            earliest = max(earliest, earlier["turn"] + 1)
        elif earlier.get("ender") == ender:
            sightings.append((earlier["turn"], earlier["active"]))
    options = []
    for fix in range(max(earliest, turns - n + 2), turns + 1):
        trigger = (start + fix - 1) % n
        order = [(trigger + j) % n for j in range(1, n + 1) if (trigger + j) % n != ender]
        if all(0 <= t - fix < len(order) and order[t - fix] == active for t, active in sightings):
            options.append(order[turns - fix + 1 :])
    return options


def _allegra_world(game: AllegraGame, obs: Observation, rng: random.Random, history: list[Observation]) -> AllegraState:
    n = game.num_players
    seat = obs["seat"]
    phase = obs.get("phase")
    if phase not in ("reveal", "turn", "knock", "drawn", "place", "exchange", "over"):
        raise ValueError(f"sample_world needs an observation of a decision or of the end, not of phase {phase!r}")
    try:
        hidden = _unaccounted(obs)
        candidates = _never_seen(obs, history)
        grids = [[list(row) for row in grid] for grid in obs["grids"]]
        face_down = [(s, r, c) for s, grid in enumerate(grids) for r, row in enumerate(grid) for c, v in enumerate(row) if v == "?"]  # fmt: skip
        held = obs.get("held")
        held_hidden = held is not None and held["card"] == "?"
        deck_size = obs["deck_size"]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"not an Allegra observation: {exc!r}") from None
    slots = len(face_down) + held_hidden
    if sum(hidden.values()) != slots + deck_size:
        raise ValueError(
            f"{sum(hidden.values())} cards are unaccounted for, but {slots} hidden slots and a deck of "
            f"{deck_size!r} need them"
        )
    pool = [v for v, k in candidates.items() for _ in range(k)]
    if len(pool) < slots:
        raise ValueError("the history does not agree with the observation (too few cards can be face down)")
    # uniform shuffles: sorting by independent random keys (faster than
    # rng.shuffle, as in the engine's own deals)
    key = rng.random
    dealt = sorted(pool, key=lambda _v: key())[:slots]
    for v in dealt:
        hidden[v] -= 1
    deck = sorted([v for v, k in hidden.items() for _ in range(k)], key=lambda _v: key())
    for (s, r, c), value in zip(face_down, dealt):
        grids[s][r][c] = value
    view = dict(obs, seat=None, grids=grids, deck=deck, face_down=[list(x) for x in face_down])
    held_public = False
    if held is not None:
        if held_hidden:
            view["held"] = dict(held, card=dealt[-1])
        elif held["seat"] != seat:
            held_public = True
        else:  # the knocker sees its card either way: was it face up where it took it?
            held_public = _held_was_face_up(obs, history)
    view["answers"] = None
    if phase == "knock":
        answered = set(range(n)) - set(obs["to_act"]) - {obs["active"]}
        view["answers"] = [
            None if s not in answered else ("knock" if s in obs["knockers"] else "pass") if s == seat
            else ("knock" if rng.random() < 0.5 else "pass")
            for s in range(n)
        ]  # fmt: skip
    final_queue = None
    if obs.get("final_turns") and phase != "over":
        queues = _final_queues(n, obs, history)
        if not queues:
            raise ValueError("the final turns shown do not follow from any turn of the round")
        final_queue = rng.choice(queues)
    return AllegraState.from_view(game, view, final_queue=final_queue, held_public=held_public)


def _held_was_face_up(obs: Observation, history: list[Observation]) -> bool:
    """For the knocker itself: its held card was face up (everyone saw it)
    if the slot it placed on was face up in its last observation, the
    ``place`` decision; without that observation, face down is assumed."""
    if history:
        last = history[-1]
        if last.get("phase") == "place" and last.get("round") == obs["round"] and obs.get("placed"):
            s, r, c = obs["placed"]
            return last["grids"][s][r][c] != "?"
    return False
