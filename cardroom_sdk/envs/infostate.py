"""A seat's information state with perfect recall, for the OpenSpiel games
(decision 260): a log of what the table showed, one entry at a time, and
from it a fixed-size tensor and a digest that name the seat's whole
action-observation history.

The log holds, in order:

* ``("step", seat, index, group, shown)``, one per OpenSpiel decision step:
  who acted and the action index. Steps a seat takes in secret (Allegory's
  chips of a ``distribute``, placed one a step; Allegra's knock answers)
  form a group, hidden from the other seats (``shown`` is None) until the
  table shows its outcome; then ``shown`` is the index the others learn:
  each seat's indices of the group in sorted order (Allegory's others see
  how many chips went where, not in which order).
* What chance showed, as the table shows it: Allegory's Pool cards in the
  order they arrive (``("arrive", card, k)``, the k-th to arrive);
  Allegra's cards newly face up after a step (``("reveal", value, seat,
  k)``, the step's k-th in the order of their places, seat None when every
  seat sees it, the knocker's seat for a held card only the knocker is
  shown), the discard pile's first card at each deal (``("deal", value,
  k)``) and the table at the end of each round but the last
  (``("round_end", public view, its encoding for each seat)``), when every
  card is turned and the next deal takes them away.

A seat's view of the log (``Recall.seen_by``) leaves out what it was not shown; the
tensor and the string's digest are made from that view only, so they are
the same for two pasts the seat cannot tell apart and differ for two it
can (tests/sdk/research_conformance.py, ``openspiel_perfect_recall``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import numpy as np

from cardroom_sdk.envs import allegory_codec, allegra_codec

_UNKNOWN = "unknown"  # the digest of a seat whose past a resampled world does not know


def _entry_json(entry: tuple) -> str:
    if entry[0] == "round_end":  # the view, not its encodings (kept to save encoding it at every call)
        entry = entry[:2]
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


class Recall:
    """The log of one table, and each seat's view of it. Copied with the
    state (``copy``): entries are never changed in place, only replaced."""

    __slots__ = ("log", "open", "open_phase", "known", "digests", "bits", "aux")

    def __init__(self, n: int):
        self.log: list[tuple] = []
        self.open: int | None = None  # log position of the first step of the secret group in progress
        self.open_phase: str | None = None  # the phase the open group is taken in
        self.known: int | None = None  # in a resampled world, the one seat whose past is known
        self.digests: list[tuple[int, str]] = [(0, "")] * n  # per seat: (closed entries digested, digest)
        # per seat: (closed entries taken in, steps among them, the tensor's bits they set)
        self.bits: list[tuple[int, int, np.ndarray]] = [(0, 0, np.zeros(0, np.int64))] * n
        self.aux: Any = None  # what the game compares the next event with

    def copy(self) -> Recall:
        other = Recall.__new__(Recall)
        other.log = list(self.log)
        other.open, other.open_phase, other.known = self.open, self.open_phase, self.known
        other.digests = list(self.digests)
        other.bits = list(self.bits)  # the arrays are replaced, never changed in place
        other.aux = self.aux  # immutable (tuples, frozensets)
        return other

    # pickled (OpenSpiel's serialization) without the per-seat caches, made again when asked
    def __getstate__(self):
        return {k: getattr(self, k) for k in ("log", "open", "open_phase", "known", "aux")} | {"n": len(self.digests)}

    def __setstate__(self, data) -> None:
        self.__init__(data.pop("n"))
        for k, v in data.items():
            setattr(self, k, v)

    # -- recording ------------------------------------------------------------
    def step(self, seat: int, index: int, secret_phase: str | None) -> None:
        """Seat ``seat`` plays action ``index``; ``secret_phase``: the phase
        whose steps the other seats do not see until it ends, or None."""
        if secret_phase is None:
            self.log.append(("step", seat, index, None, index))
            return
        if self.open is None:
            self.open, self.open_phase = len(self.log), secret_phase
        self.log.append(("step", seat, index, self.open, None))

    def close_if_over(self, phase: str) -> None:
        """After an engine event: a secret group ends when the table has left
        its phase; the others then see each seat's indices of it, sorted."""
        if self.open is None or phase == self.open_phase:
            return
        start = self.open
        by_seat: dict[int, list[int]] = {}
        for entry in self.log[start:]:
            if entry[0] == "step" and entry[3] == start and entry[2] is not None:
                by_seat.setdefault(entry[1], []).append(entry[2])
        order = {seat: iter(sorted(indices)) for seat, indices in by_seat.items()}
        for k in range(start, len(self.log)):
            entry = self.log[k]
            if entry[0] == "step" and entry[3] == start and entry[2] is not None:
                self.log[k] = (*entry[:4], next(order[entry[1]]))
        self.open = self.open_phase = None

    # -- a seat's view --------------------------------------------------------
    def seen_by(self, entry: tuple, seat: int) -> tuple | None:
        """``entry`` as ``seat`` was shown it, or None if it was not."""
        kind = entry[0]
        if kind == "step":
            _, who, index, group, shown = entry
            return ("step", who, index if who == seat else shown)
        if kind == "reveal" and entry[2] is not None and entry[2] != seat:
            return None
        return entry

    def for_seat(self, seat: int) -> Recall:
        """A copy that keeps ``seat``'s view only (a world resampled for it:
        the other seats' pasts are not known there). Its digest and tensor
        are made again from that view, and come out the same."""
        other = self.copy()
        kept = [k for k, e in enumerate(self.log) if self.seen_by(e, seat) is not None]
        moved = {old: new for new, old in enumerate(kept)}  # a group is named by its first step's position
        other.log = []
        for k in kept:
            e = self.log[k]
            if e[0] == "step":  # another seat's action, as this one was shown it
                e = ("step", e[1], e[2] if e[1] == seat else e[4], None if e[3] is None else moved[e[3]], e[4])
            other.log.append(e)
        other.open = None if self.open is None else moved[self.open]
        other.known = seat
        n = len(self.digests)
        other.digests = [(0, "")] * n
        other.bits = [(0, 0, np.zeros(0, np.int64))] * n
        return other

    def _closed(self) -> int:
        return len(self.log) if self.open is None else self.open

    def digest(self, seat: int) -> str:
        """A chained digest of ``seat``'s view of the log (names the whole view)."""
        if self.known is not None and seat != self.known:
            return _UNKNOWN
        done, digest = self.digests[seat]
        closed = self._closed()
        if done < closed:
            for entry in self.log[done:closed]:
                seen = self.seen_by(entry, seat)
                if seen is not None:
                    digest = hashlib.sha256((digest + _entry_json(seen)).encode()).hexdigest()
            self.digests[seat] = (closed, digest)
        for entry in self.log[closed:]:  # the open group's steps, as the seat sees them now
            seen = self.seen_by(entry, seat)
            if seen is not None:
                digest = hashlib.sha256((digest + _entry_json(seen)).encode()).hexdigest()
        return digest

    def steps(self) -> int:
        return sum(1 for e in self.log if e[0] == "step")


class _Layout:
    """Where each part of a game's information-state tensor lies, and how a
    seat's view of the log sets its bits."""

    codec: Any
    n: int
    max_steps: int
    action_width: int
    step_width: int
    parts: dict[str, tuple[int, int]]  # name -> (offset, size), in order
    size: int

    def _place(self, parts: list[tuple[str, int]]) -> None:
        offset, self.parts = 0, {}
        for name, size in parts:
            self.parts[name] = (offset, size)
            offset += size
        self.size = offset

    def action_bits(self, index: int) -> list[int]:
        return [index]

    def write(self, recall: Recall, seat: int, observation: np.ndarray, out: np.ndarray) -> None:
        """Seat ``seat``'s tensor into ``out`` (``size`` floats)."""
        out.fill(0)
        start, size = self.parts["observation"]
        out[start : start + size] = observation
        if recall.known is not None and seat != recall.known:
            return  # a resampled world does not know this seat's past
        done, steps, bits = recall.bits[seat]
        closed = recall._closed()
        if done < closed:  # kept per seat for the part of the log no later event changes
            more, steps = self._bits(recall.log[done:closed], seat, steps, recall)
            bits = np.concatenate([bits, np.asarray(more, np.int64)])
            recall.bits[seat] = (closed, steps, bits)
        out[bits] = 1
        tail, _ = self._bits(recall.log[closed:], seat, steps, recall)
        out[tail] = 1
        self._write_floats(recall, seat, out)

    def _bits(self, entries: list[tuple], seat: int, steps: int, recall: Recall) -> tuple[list[int], int]:
        """The bits ``entries`` set for ``seat``, after ``steps`` steps."""
        base = self.parts["steps"][0]
        on: list[int] = []
        for entry in entries:
            seen = recall.seen_by(entry, seat)
            if seen is None:
                continue
            if seen[0] == "step":
                slot = base + steps * self.step_width
                on.append(slot + (seen[1] - seat) % self.n)
                if seen[2] is not None:
                    on.extend(slot + self.n + b for b in self.action_bits(seen[2]))
                steps += 1
            else:
                on.extend(self._chance_bits(seen, seat, steps))
        return on, steps

    def _chance_bits(self, entry: tuple, seat: int, steps: int) -> list[int]:
        raise NotImplementedError

    def _write_floats(self, recall: Recall, seat: int, out: np.ndarray) -> None:
        """Parts that are not 0/1 (none by default)."""


class AllegoryLayout(_Layout):
    """The observation (835), then a slot per step up to ``max_game_length``:
    the acting seat relative to this one (n) and the action index (109),
    then the Pool's cards in order of arrival (63 x 63 card one-hots)."""

    codec = allegory_codec

    def __init__(self, game):
        codec = self.codec
        self.n = game.num_players
        self.max_steps = codec.max_steps(game)
        self.action_width = codec.NUM_ACTIONS
        self.step_width = self.n + self.action_width
        self._place(
            [
                ("observation", codec.OBS_SIZE),
                ("steps", self.max_steps * self.step_width),
                ("arrivals", codec.NUM_CARDS * codec.NUM_CARDS),
            ]
        )

    def _chance_bits(self, entry, seat, steps):
        _, card, k = entry  # the k-th card to arrive in the Pool
        return [self.parts["arrivals"][0] + k * self.codec.NUM_CARDS + allegory_codec.CARD_ID[card]]

    @staticmethod
    def secret_phase(obs: dict[str, Any], index: int) -> str | None:
        return "distribute" if allegory_codec.CHIP <= index < allegory_codec.BID else None

    def after_event(self, recall: Recall, public: dict[str, Any], event: str, private: dict | None) -> None:
        """After an engine event: the Pool cards that arrived, in Pool order."""
        arrived: frozenset = recall.aux or frozenset()
        new = [slot["card"] for slot in public["pool"] if slot["card"] not in arrived]
        if new:
            recall.log.extend(("arrive", card, len(arrived) + k) for k, card in enumerate(new))
            recall.aux = arrived | frozenset(new)
        recall.close_if_over(public["phase"])


class AllegraLayout(_Layout):
    """The observation (1,295), the table at the end of each round but the
    last (2 x 1,295, the public view encoded for this seat), the first
    discard of each deal (3 x 13 value one-hots), then a slot per step up
    to ``max_game_length``: the acting seat relative to this one (n), the
    action factored (its kind of 11, a first area index of 15 and a second
    of 15: the exchange's), and the value it turned face up for everyone
    and the one it showed this seat alone (13 + 13)."""

    codec = allegra_codec
    KINDS = 11  # draw, knock, pass, discard; reveal, take, swap, flip, place, give; exchange
    REVEALS = 3  # cards one step turns face up for every seat, at most (an exchange: both cells and the held card)

    def __init__(self, game):
        codec = self.codec
        self.n = game.num_players
        self.max_steps = codec.max_steps(game)
        self.action_width = self.KINDS + 2 * codec.AREA
        self.step_width = self.n + self.action_width + (self.REVEALS + 1) * codec.NUM_VALUES
        self._place(
            [
                ("observation", codec.OBS_SIZE),
                ("round_ends", (codec.ROUNDS - 1) * codec.OBS_SIZE),
                ("deals", codec.ROUNDS * codec.NUM_VALUES),
                ("steps", self.max_steps * self.step_width),
            ]
        )

    def action_bits(self, index: int) -> list[int]:
        c, kinds = self.codec, self.KINDS
        if index < c.REVEAL:  # draw, knock, pass, discard
            return [index]
        if index < c.EXCHANGE:  # reveal, take, swap, flip, place at area index a; give to a seats on
            kind, a = divmod(index - c.REVEAL, c.AREA)
            return [4 + kind, kinds + a]
        q, r = divmod(index - c.EXCHANGE, c.AREA)
        return [10, kinds + q, kinds + c.AREA + r]

    def _chance_bits(self, entry, seat, steps):
        c = self.codec
        if entry[0] == "reveal":  # belongs to the step before it: its k-th card for all, or the seat's own
            _, value, only, k = entry
            slot = self.parts["steps"][0] + (steps - 1) * self.step_width + self.n + self.action_width
            return [slot + (self.REVEALS if only is not None else k) * c.NUM_VALUES + c.VALUES.index(value)]
        if entry[0] == "deal":
            _, value, k = entry
            return [self.parts["deals"][0] + k * c.NUM_VALUES + c.VALUES.index(value)]
        return []  # a round's end: floats, set by ``_write_floats``

    def _write_floats(self, recall, seat, out):
        c = self.codec
        start, _ = self.parts["round_ends"]
        k = 0
        for entry in recall.log:
            if entry[0] == "round_end":  # ("round_end", public view, its encoding for each seat)
                out[start + k * c.OBS_SIZE : start + (k + 1) * c.OBS_SIZE] = entry[2][seat]
                k += 1

    @staticmethod
    def secret_phase(obs: dict[str, Any], index: int) -> str | None:
        return "knock" if obs["phase"] == "knock" else None

    @staticmethod
    def places(obs: dict[str, Any]) -> list[tuple[Any, int]]:
        """Every card face up in ``obs`` with its place, in a fixed order:
        the grids' cells, the drawn card, the discard pile and the removed
        cards (bottom first), the held card."""
        places = [
            (("cell", i), v)
            for i, v in enumerate(v for grid in obs["grids"] for row in grid for v in row)
            if v is not None and v != "?"
        ]
        if obs["drawn"] is not None:
            places.append(("drawn", obs["drawn"]))
        places.extend((("discard", k), v) for k, v in enumerate(obs["discard"]))
        places.extend((("removed", k), v) for k, v in enumerate(obs["removed"]))
        held = obs["held"]
        if held is not None and held["card"] != "?":
            places.append(("held", held["card"]))
        return places

    @staticmethod
    def turned(before: list[tuple[Any, int]], now: list[tuple[Any, int]]) -> list[int]:
        """The cards face up ``now`` that were not ``before`` (places, as
        ``places`` gives them; the multiset difference of their values),
        named in the order of their places: a card that moved and a new one
        of the same value are told apart by place only where the table
        shows a difference."""
        budget = Counter(v for _, v in now)
        budget.subtract(v for _, v in before)
        if all(k <= 0 for k in budget.values()):
            return []
        old = dict(before)
        out = []
        for place, v in now:
            if budget[v] > 0 and old.get(place) != v:
                out.append(v)
                budget[v] -= 1
        return out + sorted(v for v, k in budget.items() for _ in range(k))

    def after_event(self, recall: Recall, public: dict[str, Any], event: str, private: dict | None) -> None:
        """After an engine event (``event``: "deal", "reshuffle", "round_end",
        "over" or "move"), given the public view after it and ``private``,
        the view of a seat that sees more (the knocker shown the held card
        alone): what was turned face up, for everyone and for that seat."""
        before, before_private = recall.aux or ([], None)
        now = self.places(public)
        if event == "deal":  # every card face down but the discard pile's first
            deals = sum(1 for e in recall.log if e[0] == "deal")
            recall.log.append(("deal", public["discard"][-1], deals))
        elif event == "round_end":  # every card turned; the next deal takes them away
            encoded = tuple(self.codec.encode({**public, "seat": s}) for s in range(self.n))
            recall.log.append(("round_end", {**public, "seat": None}, encoded))
        elif event == "reshuffle":  # the discard pile went back to the deck, its first card is drawn
            recall.log.append(("reveal", public["drawn"], None, 0))
        elif event == "move":
            new = self.turned(before, now)
            if len(new) > self.REVEALS:
                raise ValueError(f"one step turned {len(new)} cards face up: {new}")
            recall.log.extend(("reveal", v, None, k) for k, v in enumerate(new))
        extra = None
        if private is not None:  # what the seat sees beyond the public view, if it is new to it
            seat = private["seat"]
            extra = (seat, Counter(v for _, v in self.places(private)) - Counter(v for _, v in now))
            mine = extra[1]
            if before_private is not None and before_private[0] == seat:
                mine = mine - before_private[1]
            if sum(mine.values()) > 1:
                raise ValueError(f"one step showed seat {seat} alone {sum(mine.values())} cards: {dict(mine)}")
            recall.log.extend(("reveal", v, seat, 0) for v in mine.elements())
        recall.aux = (now, extra)
        recall.close_if_over(public["phase"])


def layout(game) -> _Layout:
    """The information-state layout of an engine game (``new_game(...)``)."""
    return (AllegoryLayout if game.id == "allegory" else AllegraLayout)(game)
