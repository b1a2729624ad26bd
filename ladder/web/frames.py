"""Replay frames for the match page's viewer.

The viewer never re-implements the rules: the server re-plays the stored
replay through the engine (``engine.replay.iter_states``) and hands the page,
per event, the observation of the chosen view plus a line of text describing
the event. ``view`` is ``"full"`` (the spectator's view, everything) or
``"seat-N"`` (exactly what seat N knew at that moment: the engine's
``observation(N)``).

Whatever we add beside the observation (the description, the slots to
highlight, the cards that left the table, the round summary) is built only
from the view's own observations before and after the event and from the
public parts of the action, so a seat view never carries another seat's
hidden cards or Moral.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core import CHANCE
from engine.replay import iter_states

FRAMES_VERSION = 4  # bump when the frame format or its text changes (cache keys use it)

THEME_LABEL = {
    "butterfly": "Butterfly", "mask": "Mask", "coin": "Coin", "owl": "Owl", "key": "Key",
    "crown": "Crown", "feather": "Feather", "flame": "Flame", "shell": "Shell",
}  # fmt: skip


class ViewError(ValueError):
    pass


def parse_view(view: str | None, num_players: int) -> int | None:
    """``"full"`` -> None, ``"seat-N"`` -> N; ViewError otherwise."""
    if view in (None, "", "full"):
        return None
    if view.startswith("seat-"):
        try:
            seat = int(view[5:])
        except ValueError:
            seat = -1
        if 0 <= seat < num_players:
            return seat
    raise ViewError(f"view must be 'full' or 'seat-N' with N from 0 to {num_players - 1}, not {view!r}")


def card_label(card: str) -> str:
    theme, _, value = card.partition(":")
    return f"{THEME_LABEL.get(theme, theme.title())} {value}"


# ---------------------------------------------------------------------------
# Allegory
# ---------------------------------------------------------------------------


def _allegory_frame(event, before, after, seat, names) -> dict[str, Any]:
    by, action = event["by"], event["action"]
    mark: list[str] = []
    if by == CHANCE:
        pool = ", ".join(card_label(p["card"]) for p in after["pool"])
        if seat is None:
            morals = "; ".join(f"{names[s]}: {THEME_LABEL.get(m, m)}" for s, m in enumerate(after.get("morals", [])))
            text = f"Setup: the Inspiration Pool is {pool}; {after['deck_size']} cards in the deck; Morals — {morals}."
        else:
            text = (
                f"Setup: the Inspiration Pool is {pool}; {after['deck_size']} cards in the deck; "
                f"every player holds 15 Lore chips; your Moral is {THEME_LABEL.get(after['moral'], after['moral'])}."
            )
        return {"text": text, "mark": [p["card"] for p in after["pool"]]}
    who = names[by]
    kind = action.get("type")
    if kind == "bid":
        text = f"{who} bids {action['amount']}."
    elif kind == "rest":
        if "claim" in action:
            card = action["claim"]
            chips = next((p["chips"] for p in before["pool"] if p["card"] == card), 0)
            text = f"{who} Rests and claims {card_label(card)} with its {chips} chip{'s' * (chips != 1)} ({_tale_of(after, by, card)} Tale)."
            mark.append(card)
        else:
            text = f"{who} Rests."
    elif kind == "take":
        card = action["card"]
        chips = next((p["chips"] for p in before["pool"] if p["card"] == card), 0)
        bid = before["players"][by]["bid"]
        text = (
            f"{who} wins the round (bid {bid}) and takes {card_label(card)}"
            + (f" with {chips} chip{'s' * (chips != 1)}" if chips else "")
            + f" ({_tale_of(after, by, card)} Tale)."
        )
        mark.append(card)
    elif kind == "distribute":
        parts = [f"{n} on {card_label(c)}" for c, n in action.get("chips", {}).items() if n]
        total = sum(action.get("chips", {}).values())
        text = f"{who} pays the bid out: {total} chip{'s' * (total != 1)} — " + (", ".join(parts) or "none") + "."
        mark.extend(c for c, n in action.get("chips", {}).items() if n)
    else:  # pragma: no cover - the engine accepted it, so it is one of the above
        text = f"{who}: {kind}."
    # What the event led to (all public).
    if before["phase"] == "bid" and after["phase"] in ("take", "distribute", "over") and kind == "rest":
        w = after.get("winner")
        if w is not None and w != by:
            text += f" {names[w]} is the last one standing and wins the round."
    if after["phase"] == "over":
        text += " The game is over: the Morals are revealed and the Tales scored."
    elif after["round"] > before["round"]:
        opener = after["to_act"][0] if after["to_act"] else None
        text += f" Round {after['round']} (Story) begins" + (f"; {names[opener]} opens." if opener is not None else ".")
    return {"text": text, "mark": mark}


def _tale_of(obs, seat, card) -> str:
    for tale, cards in obs["players"][seat]["tales"].items():
        if card in cards:
            return tale.title()
    return "?"


# ---------------------------------------------------------------------------
# Allegra
# ---------------------------------------------------------------------------


def _slot_text(slot, names) -> str:
    """Rows and columns from 0, as the protocol's slots [seat, row, column]
    count them (and the rules and rulings after them)."""
    s, r, c = slot
    return f"{names[s]}'s row {r}, column {c}"


def _cell(obs, slot):
    s, r, c = slot
    return obs["grids"][s][r][c]


def _a(v) -> str:
    """'a 7', 'an 8', 'an 11', 'a -1'."""
    return f"an {v}" if str(v) in ("8", "11", "18") else f"a {v}"


def _value_text(v) -> str:
    if v is None:
        return "a card (now gone in a triple)"
    return "a hidden card" if v == "?" else _a(v)


def _allegra_frame(event, before, after, seat, names, state) -> dict[str, Any]:
    by, action = event["by"], event["action"]
    kind = action.get("type")
    mark: list[list[int]] = []
    text = ""
    if by == CHANCE:
        if kind == "deal":
            text = (
                f"Round {after['round']}: 12 cards are dealt face down to every grid; "
                f"the discard pile starts with {_a(after['discard'][-1])}; {after['deck_size']} cards in the deck."
            )
        else:
            text = (
                f"The deck is empty: the discard pile below its top card is shuffled into a new deck "
                f"({after['deck_size'] + 1} cards); {names[after['active']]} draws {_a(after['drawn'])}."
            )
    else:
        who = names[by]
        if kind == "reveal":
            slot = action["slot"]
            text = f"{who} reveals {_value_text(_cell(after, slot))} at {_slot_text(slot, names)}."
            mark.append(slot)
        elif kind == "draw":
            if after["drawn"] is not None:
                text = f"{who} draws {_a(after['drawn'])} from the deck."
            else:
                text = f"{who} draws from an empty deck: the discard pile will be reshuffled."
        elif kind in ("knock", "pass"):
            if seat is None or seat == by:
                text = f"{who} {'knocks' if kind == 'knock' else 'passes'}."
            else:
                text = f"{who} answers the draw (knock or pass: secret until everyone has answered)."
            if before["phase"] == "knock" and after["phase"] != "knock":
                ks = after.get("knockers") or []
                text += (" Knocks: " + ", ".join(names[k] for k in ks) + ".") if ks else " Nobody knocked."
        elif kind == "give":
            text = f"{who} gives the {before['drawn']} to {names[action['to']]}."
        elif kind == "swap":
            slot = action["slot"]
            was = _cell(before, slot)
            text = (
                f"{who} swaps the {before['drawn']} into {_slot_text(slot, names)}; "
                f"the {after['discard'][-1]} there{' (face down until now)' if was == '?' else ''} goes to the discard pile."
            )
            mark.append(slot)
        elif kind == "discard":
            if action.get("flip") is None:
                text = f"{who} discards the {before['drawn']}."
            else:
                slot = action["flip"]
                text = f"{who} discards the {before['drawn']} and turns up {_value_text(_cell(after, slot))} at {_slot_text(slot, names)}."
                mark.append(slot)
        elif kind == "take_discard":
            slot = action["slot"]
            was = _cell(before, slot)
            text = (
                f"{who} takes the {before['discard'][-1]} from the discard pile into {_slot_text(slot, names)}; "
                f"the {after['discard'][-1]} there{' (face down until now)' if was == '?' else ''} is discarded."
            )
            mark.append(slot)
        elif kind == "place":
            slot = action["slot"]
            held = after.get("held")
            if held is not None:
                card = held["card"]
                took = "the card there" if card == "?" else f"the {card} there"
                text = f"{who} places the given card at {_slot_text(slot, names)} and takes {took} into hand."
            else:
                text = (
                    f"{who} places the given card at {_slot_text(slot, names)}; no exchange is possible, so the "
                    f"{after['discard'][-1]} taken from there goes to the discard pile."
                )
            mark.append(slot)
        elif kind == "exchange":
            q, r = action["take"], action["put"]
            knocker = before.get("knocker")
            text = (
                f"{who} moves {_value_text(_cell(after, r))} from {_slot_text(q, names)} to {_slot_text(r, names)}, "
                f"discarding the {after['discard'][-1]}; "
                f"{names[knocker] if knocker is not None else 'the knocker'}'s held card ({_value_text(_cell(after, q))}) fills {_slot_text(q, names)}."
            )
            mark.extend([q, r])
        else:  # pragma: no cover
            text = f"{who}: {kind}."
    # Cards that left the table with this event (triples): visible in both
    # views, since only face-up cards make triples and empty slots are public.
    gone = []
    if before is not None and kind != "deal":
        for s, grid in enumerate(after["grids"]):
            for r, row in enumerate(grid):
                for c, v in enumerate(row):
                    if v is None and before["grids"][s][r][c] is not None:
                        gone.append([s, r, c])
    round_end = None
    if before is not None and len(after["round_scores"]) > len(before["round_scores"]):
        k = len(after["round_scores"]) - 1
        round_end = {
            "round": k + 1,
            "raw": list(state.raw_scores[k]),
            "scores": list(after["round_scores"][k]),
            "ender": state.enders[k],
            "doubled": bool(state.doubled[k]),
            "turn_limit": bool(state.limit_ends[k]),
        }
    removed_before = before["removed"] if before is not None else []
    left = after["removed"][len(removed_before):] if len(after["removed"]) >= len(removed_before) else after["removed"]
    if round_end is None and left and gone:
        vals = sorted(set(left))
        text += f" A triple: {len(left)} card{'s' * (len(left) != 1)} ({', '.join(str(v) for v in vals)}) leave the table."
    if round_end is not None:
        e = round_end["ender"]
        if left:
            text += f" {len(left)} more card{'s' * (len(left) != 1)} leave the table in triples."
        if round_end["turn_limit"]:
            text += f" The turn limit is reached ({before['turn_limit']} turns) and nobody has ended the round."
        text += (
            f" Round {round_end['round']} is over: every card is turned up; scores "
            + ", ".join(f"{names[s]} {v}" for s, v in enumerate(round_end["scores"]))
            + "."
        )
        if e is not None:
            text += f" {names[e]} ended the round" + (
                f" and is doubled ({round_end['raw'][e]} × 2 = {round_end['scores'][e]})." if round_end["doubled"] else "."
            )
    elif before is not None and not before.get("final_turns") and after.get("final_turns") and after.get("ender") is not None:
        text += f" {names[after['ender']]}'s area is all face up: everyone else takes one last turn."
    if after["phase"] == "over":
        text += " The game is over."
    out: dict[str, Any] = {"text": text, "mark": mark}
    if gone:
        out["gone"] = gone
        out["left"] = left
    if round_end is not None:
        out["round_end"] = round_end
    return out


def _slim_allegra(obs: dict[str, Any]) -> dict[str, Any]:
    """Drop what the viewer does not draw (keeps the frames small)."""
    obs = dict(obs)
    deck = obs.pop("deck", None)
    if deck is not None:
        obs["deck_top"] = deck[0] if deck else None
    obs["removed_count"] = len(obs.pop("removed"))
    return obs


def _slim_allegory(obs: dict[str, Any]) -> dict[str, Any]:
    obs = dict(obs)
    deck = obs.pop("deck", None)
    if deck is not None:
        obs["deck_top"] = deck[0] if deck else None
    return obs


# ---------------------------------------------------------------------------


def build_frames(doc: dict[str, Any], seat: int | None, names: list[str], start: int = 0) -> list[dict[str, Any]]:
    """One frame per replay event: the view's observation after the event,
    who acted, and the event described in a line of text; from event
    ``start`` on (the events before it are re-played, not described)."""
    game = doc["game"]
    frames: list[dict[str, Any]] = []
    before = None
    for index, event, state in iter_states(doc):
        if index < start - 1:
            continue
        obs = state.observation(seat)
        if index < start:  # the observation the first frame wanted is described against
            before = obs
            continue
        view_of = GAME_VIEWS[game]
        info = view_of.describe(event, before, obs, seat, names, state)
        slim = view_of.slim(obs)
        frame = {"i": index, "by": event["by"], "round": frame_round(obs, event), "obs": slim, **info}
        if event.get("forfeit"):
            frame["forfeit"] = True
            frame["text"] += " (played by the default policy: this seat has forfeited)"
        frames.append(frame)
        before = obs
    return frames


def frame_round(obs: dict[str, Any], event: dict[str, Any]) -> int:
    """The round a frame shows: an Allegra table waiting for the next deal
    still shows the round that just ended (but a table waiting for a
    reshuffle, after a draw from the empty deck, is still in its round)."""
    r = obs.get("round") or 1
    if obs.get("game") == "allegra" and obs.get("phase") == "deal" and event["action"].get("type") != "draw":
        return max(1, r - 1)
    return r


def rounds_index(frames: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Where each round starts (the first frame showing it)."""
    out: list[dict[str, int]] = []
    for k, frame in enumerate(frames):
        r = frame["round"]
        if r is not None and (not out or out[-1]["round"] != r):
            out.append({"round": r, "frame": k})
    return out


def frames_document(doc: dict[str, Any], view: str | None, players: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON the viewer loads. ``players``: per seat, what the page shows
    about its bot (name, version, url) — public data."""
    n = doc["num_players"]
    seat = parse_view(view, n)
    names = [f"Seat {p['seat']} · {p['name']}" for p in players]
    frames = build_frames(doc, seat, names)
    extra = GAME_VIEWS[doc["game"]].extra()
    return {
        **extra,
        "game": doc["game"],
        "num_players": n,
        "options": doc.get("options", {}),
        "view": "full" if seat is None else f"seat-{seat}",
        "seat": seat,
        "players": players,
        "names": names,
        "frames": frames,
        "rounds": rounds_index(frames),
        "result": {
            "scores": doc["result"]["scores"],
            "ranks": doc["result"]["ranks"],
            "forfeits": doc["result"].get("forfeits", []),
        },
    }


def allegory_card_tales() -> dict[str, str]:
    """Each Allegory card's Tale (the viewer writes it on the card)."""
    from engine.allegory.game import CARD_NAME, CARD_TALE, TALES

    return {name: TALES[CARD_TALE[i]] for i, name in enumerate(CARD_NAME)}


def frames_json_gz(doc: dict[str, Any], view: str | None, players: list[dict[str, Any]]) -> bytes:
    data = json.dumps(frames_document(doc, view, players), separators=(",", ":")).encode()
    return gzip.compress(data, compresslevel=6, mtime=0)


@dataclass(frozen=True)
class GameView:
    """What the viewer needs of one game: a frame's line of text, the
    observation it draws, and what the whole document adds."""

    describe: Callable[..., dict[str, Any]]  # (event, before, after, seat, names, state)
    slim: Callable[[dict[str, Any]], dict[str, Any]]
    extra: Callable[[], dict[str, Any]]


# Keyed by the engine's game ids: a test holds the keys to engine.game_ids(),
# so a game the engine adds cannot reach the viewer without its parts.
GAME_VIEWS: dict[str, GameView] = {
    "allegory": GameView(
        describe=lambda event, before, after, seat, names, _state: _allegory_frame(event, before, after, seat, names),
        slim=_slim_allegory,
        extra=lambda: {"card_tales": allegory_card_tales()},
    ),
    "allegra": GameView(describe=_allegra_frame, slim=_slim_allegra, extra=dict),
}
