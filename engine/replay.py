"""Replay format v1: re-playing a recorded match through the engine.

A replay holds every chance outcome as an event, so re-playing it needs no
random number generator and gives the same game on any machine. ``verify``
checks a replay completely: shape, every chance event possible, every decision
legal and by a seat allowed to act, the forfeit markings consistent, the game
over exactly at the last event, and the recorded result the one reached.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import get_game_class
from engine.core import CHANCE, EngineError, IllegalActionError, Result, State

FORMAT = "cardroom-replay"
VERSION = 1


class ReplayError(EngineError):
    """A replay that is malformed or does not re-play. ``event`` is the index
    of the offending event (None for a problem outside the event list)."""

    def __init__(self, reason: str, event: int | None = None):
        self.reason = reason
        self.event = event
        super().__init__(f"event {event}: {reason}" if event is not None else reason)


@dataclass(frozen=True)
class VerifiedReplay:
    game: str
    num_players: int
    events: int
    result: Result
    forfeits: list[dict[str, Any]]


def document(game: Any, seed: int, players: list[dict[str, Any]], events: list[dict[str, Any]],
             result: Result | None, forfeits: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """A replay v1 document: the one writer of every path that gives a replay
    (the runner, the research environments). ``players`` holds each seat's
    ``{"seat", "name", "bot"}``; ``forfeits`` each forfeited seat's
    ``{"seat", "reason", "event"}``; ``result`` is None while the game is not
    over (a replay of an unfinished game has a null result, and does not verify)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": game.id,
        "options": dict(game.options),
        "num_players": game.num_players,
        "seed": seed,
        "players": [{"seat": p["seat"], "name": p["name"], "bot": p["bot"]} for p in players],
        "events": list(events),
        "result": None if result is None else {**result.as_dict(), "forfeits": [dict(f) for f in forfeits]},
    }


def load(path: str | Path) -> dict[str, Any]:
    """Read a replay file; a file that is not JSON raises ReplayError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReplayError(f"{path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_header(doc: Any) -> tuple[State, list[dict[str, Any]]]:
    if not isinstance(doc, dict):
        raise ReplayError("a replay must be a JSON object")
    if doc.get("format") != FORMAT:
        raise ReplayError(f"format must be {FORMAT!r}, not {doc.get('format')!r}")
    if doc.get("version") != VERSION:
        raise ReplayError(f"unsupported replay version {doc.get('version')!r} (this engine reads version {VERSION})")
    for key in ("game", "options", "num_players", "seed", "players", "events", "result"):
        if key not in doc:
            raise ReplayError(f"the replay has no {key!r}")
    try:
        game = get_game_class(doc["game"])(doc["num_players"], doc["options"])
    except EngineError as exc:
        raise ReplayError(str(exc)) from None
    if not _is_int(doc["seed"]):
        raise ReplayError(f"seed must be an integer, not {doc['seed']!r}")
    players = doc["players"]
    if not isinstance(players, list) or len(players) != game.num_players:
        raise ReplayError(f"players must list all {game.num_players} seats")
    for i, player in enumerate(players):
        if not isinstance(player, dict) or player.get("seat") != i:
            raise ReplayError(f"players[{i}] must be an object with seat {i}")
    if not isinstance(doc["events"], list):
        raise ReplayError("events must be a list")
    return game.new_initial_state(), doc["events"]


def _check_result_shape(result: Any, n: int) -> dict[int, int]:
    """Returns {seat: recorded forfeit event index}."""
    if not isinstance(result, dict):
        raise ReplayError("result must be an object")
    for key in ("scores", "ranks"):
        values = result.get(key)
        if not isinstance(values, list) or len(values) != n or not all(_is_int(v) for v in values):
            raise ReplayError(f"result.{key} must list {n} integers")
    forfeits = result.get("forfeits")
    if not isinstance(forfeits, list):  # required, empty when no seat forfeited (docs/replay-format.md)
        raise ReplayError("result.forfeits must be a list (empty when no seat forfeited)")
    recorded: dict[int, int] = {}
    for i, forfeit in enumerate(forfeits):
        if not isinstance(forfeit, dict):
            raise ReplayError(f"result.forfeits[{i}] must be an object")
        seat, event = forfeit.get("seat"), forfeit.get("event")
        if not _is_int(seat) or not 0 <= seat < n:
            raise ReplayError(f"result.forfeits[{i}].seat must be a seat number, not {seat!r}")
        if seat in recorded:
            raise ReplayError(f"result.forfeits lists seat {seat} twice")
        if not _is_int(event) or event < 0:
            raise ReplayError(f"result.forfeits[{i}].event must be an event index, not {event!r}")
        if not isinstance(forfeit.get("reason"), str) or not forfeit["reason"]:
            raise ReplayError(f"result.forfeits[{i}].reason must be a non-empty string")
        recorded[seat] = event
    return recorded


def iter_states(doc: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], State]]:
    """Re-play ``doc`` event by event, yielding (index, event, state after it).

    The same State object is yielded each time (it is advanced in place);
    clone it to keep a snapshot. Raises ReplayError at the first bad event.
    """
    state, events = _check_header(doc)
    yield from _replay_events(state, events)


def _replay_events(state: State, events: list[Any]) -> Iterator[tuple[int, dict[str, Any], State]]:
    for index, event in enumerate(events):
        if state.is_terminal():
            raise ReplayError("the game was already over", index)
        if not isinstance(event, dict) or "by" not in event or "action" not in event:
            raise ReplayError("an event must be an object with 'by' and 'action'", index)
        by, action = event["by"], event["action"]
        try:
            if by == CHANCE:
                if not state.is_chance_node():
                    raise ReplayError("a chance event where a decision is due", index)
                state.apply_chance(action)
            else:
                if state.is_chance_node():
                    raise ReplayError(f"a decision by {by!r} where a chance event is due", index)
                if not _is_int(by) or by not in state.to_act():
                    raise ReplayError(f"seat {by!r} may not act now (to act: {state.to_act()})", index)
                ms = event.get("ms")
                if not (_is_int(ms) or isinstance(ms, float)) or ms < 0:
                    raise ReplayError(f"a decision needs 'ms', a non-negative number, not {ms!r}", index)
                state.apply(by, action)
        except IllegalActionError as exc:
            raise ReplayError(str(exc), index) from None
        yield index, event, state


def state_after(game: str, num_players: int, options: dict[str, Any], events: list[Any]) -> State:
    """The state a match of ``game`` reaches after ``events`` (a replay's
    events so far): where a match in play stands, rebuilt (ReplayError if
    any event is bad)."""
    state = get_game_class(game)(num_players, options).new_initial_state()
    for _ in _replay_events(state, events):
        pass
    return state


def replay_to_end(doc: dict[str, Any]) -> State:
    """The final state of a replay (ReplayError if any event is bad)."""
    state, events = _check_header(doc)
    for _ in _replay_events(state, events):
        pass
    return state


def expected_forfeit_events(events: list[dict[str, Any]], seats: set[int]) -> dict[int, int]:
    """For each forfeiting seat, the index of its first decision marked
    ``forfeit`` (or the number of events if it never decided again)."""
    first: dict[int, int] = {}
    for index, event in enumerate(events):
        by = event.get("by")
        if by in seats and by not in first and event.get("forfeit") is True:
            first[by] = index
    return {seat: first.get(seat, len(events)) for seat in seats}


def verify(doc: dict[str, Any]) -> VerifiedReplay:
    """Verify a replay completely; raises ReplayError with the event index."""
    check = Verification(doc)
    for _ in check.events():
        pass
    assert check.result is not None
    return check.result


class Verification:
    """``verify`` while the replay is re-played, for a caller that has work
    to do at each event (the luck estimator): one re-play, not two. The
    header and the result's shape are checked at construction (``recorded``:
    each forfeited seat's recorded event); ``events()`` yields, as
    ``iter_states`` does, (index, event, state after it), the same State
    advanced in place, checking each event before it is yielded and the
    end once the last has been; ``result`` is then the VerifiedReplay.
    Raises ReplayError where ``verify`` does."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.state, self.event_list = _check_header(doc)
        self.recorded = _check_result_shape(doc["result"], self.state.num_players)
        self.result: VerifiedReplay | None = None

    def events(self) -> Iterator[tuple[int, dict[str, Any], State]]:
        doc, state, events, recorded = self.doc, self.state, self.event_list, self.recorded
        last = None
        for index, event, _state in _replay_events(state, events):
            marked = event.get("forfeit", False)
            if marked not in (True, False):
                raise ReplayError(f"'forfeit' must be true or false, not {marked!r}", index)
            if marked and (event["by"] == CHANCE or event["by"] not in recorded):
                raise ReplayError(f"event marked forfeit, but seat {event['by']!r} is not among the forfeits", index)
            if event["by"] in recorded and event["by"] != CHANCE:
                should = index >= recorded[event["by"]]
                if marked != should:
                    where = "at or after" if should else "before"
                    raise ReplayError(
                        f"seat {event['by']}'s decision {where} its forfeit (event {recorded[event['by']]}) "
                        f"must {'' if should else 'not '}be marked forfeit",
                        index,
                    )
            last = index
            yield index, event, state
        if not state.is_terminal():
            raise ReplayError("the replay ends before the game is over", len(events))
        for seat, event in expected_forfeit_events(events, set(recorded)).items():
            if event != recorded[seat]:
                raise ReplayError(
                    f"seat {seat}'s forfeit is recorded at event {recorded[seat]}, but the default policy "
                    f"first played for it at event {event}"
                )
        result = state.result(frozenset(recorded))
        if result.scores != doc["result"]["scores"]:
            raise ReplayError(f"recorded scores {doc['result']['scores']} but the game gives {result.scores}", last)
        if result.ranks != doc["result"]["ranks"]:
            raise ReplayError(f"recorded ranks {doc['result']['ranks']} but the game gives {result.ranks}", last)
        forfeits = list(doc["result"]["forfeits"])
        self.result = VerifiedReplay(doc["game"], state.num_players, len(events), result, forfeits)
