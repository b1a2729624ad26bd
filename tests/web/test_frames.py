"""The replay viewer's frames (ladder.web.frames), without a browser: one
frame per replay event, the view's own observation, and nothing in a seat's
view that the seat could not know at that moment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.replay import iter_states
from ladder.web import frames

REPLAYS = Path(__file__).resolve().parents[1] / "data" / "replays"
ALL = sorted(REPLAYS.glob("*.json"))


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def _players(doc: dict) -> list[dict]:
    return [{"seat": p["seat"], "name": p["name"]} for p in doc["players"]]


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_one_frame_per_event_ending_on_the_result(path):
    doc = _doc(path)
    out = frames.frames_document(doc, "full", _players(doc))
    assert len(out["frames"]) == len(doc["events"])
    assert [f["i"] for f in out["frames"]] == list(range(len(doc["events"])))
    assert all(f["text"] for f in out["frames"])
    last = out["frames"][-1]["obs"]
    assert last["phase"] == "over"
    assert last["scores"] == doc["result"]["scores"]
    assert out["result"]["ranks"] == doc["result"]["ranks"]
    assert out["rounds"][0] == {"round": 1, "frame": 0}
    assert [r["round"] for r in out["rounds"]] == sorted({r["round"] for r in out["rounds"]})


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_a_seat_view_is_that_seats_observation_and_hides_the_rest(path):
    doc = _doc(path)
    n = doc["num_players"]
    full = frames.frames_document(doc, "full", _players(doc))["frames"]
    for seat in range(n):
        view = frames.frames_document(doc, f"seat-{seat}", _players(doc))
        assert view["seat"] == seat and view["view"] == f"seat-{seat}"
        states = iter_states(doc)
        for frame, full_frame, (_i, _event, state) in zip(view["frames"], full, states):
            obs = frame["obs"]
            engine_obs = state.observation(seat)
            # the frame's observation is the engine's, minus what the viewer does not draw
            for key in ("grids", "pool", "players", "discard", "moral", "drawn", "held", "knockers"):
                if key in engine_obs:
                    assert obs[key] == engine_obs[key], key
            assert "deck" not in obs and "deck_top" not in obs and "face_down" not in obs
            blob = json.dumps(frame)
            if doc["game"] == "allegra":
                assert "answers" not in obs
                for s, grid in enumerate(obs["grids"]):
                    for r, row in enumerate(grid):
                        for c, v in enumerate(row):
                            if [s, r, c] in full_frame["obs"]["face_down"]:
                                assert v == "?", (s, r, c)
                # a knock or pass by another seat stays secret while answers are being given
                by = frame["by"]
                action = doc["events"][frame["i"]]["action"]
                if action.get("type") in ("knock", "pass") and by != seat and obs["phase"] == "knock":
                    assert " knocks." not in frame["text"] and " passes." not in frame["text"]
            else:
                if obs["phase"] != "over":
                    assert "morals" not in obs
                    others = {m for s, m in enumerate(full[-1]["obs"]["morals"]) if s != seat} - {obs["moral"]}
                    for theme in others:
                        assert f"Moral is {frames.THEME_LABEL[theme]}" not in blob
                    assert "Morals —" not in frame["text"]
                else:
                    assert obs["morals"] == full[-1]["obs"]["morals"]


def test_descriptions_say_what_happened():
    doc = _doc(REPLAYS / "allegra-3p-knocks.json")
    full = frames.frames_document(doc, "full", _players(doc))["frames"]
    texts = [f["text"] for f in full]
    assert texts[0].startswith("Round 1: 12 cards are dealt face down")
    assert any(" knocks." in t for t in texts)
    assert any("Round 3 is over" in t for t in texts)
    assert any(f.get("round_end") for f in full)
    doubled = [f["round_end"] for f in full if f.get("round_end") and f["round_end"]["doubled"]]
    for r in doubled:
        e = r["ender"]
        assert r["scores"][e] == 2 * r["raw"][e]
    allegory = _doc(REPLAYS / "allegory-4p.json")
    texts = [f["text"] for f in frames.frames_document(allegory, "full", _players(allegory))["frames"]]
    assert texts[0].startswith("Setup: the Inspiration Pool is")
    assert any(" bids " in t for t in texts) and any("takes" in t for t in texts)
    assert texts[-1].endswith("The game is over: the Morals are revealed and the Tales scored.")


def test_a_round_ended_by_the_turn_limit_says_so():
    doc = _doc(REPLAYS / "allegra-2p-turn-limit.json")
    full = frames.frames_document(doc, "full", _players(doc))["frames"]
    ends = [f for f in full if f.get("round_end")]
    assert [f["round_end"]["turn_limit"] for f in ends] == [True, True, True]
    assert all("The turn limit is reached (400 turns) and nobody has ended the round." in f["text"] for f in ends)
    assert all(f["round_end"]["ender"] is None and not f["round_end"]["doubled"] for f in ends)
    knocks = _doc(REPLAYS / "allegra-3p-knocks.json")
    texts = [f["text"] for f in frames.frames_document(knocks, "full", _players(knocks))["frames"]]
    assert not any("turn limit" in t for t in texts)


def test_bad_views_are_refused():
    with pytest.raises(frames.ViewError):
        frames.parse_view("seat-4", 4)
    with pytest.raises(frames.ViewError):
        frames.parse_view("seat-x", 4)
    with pytest.raises(frames.ViewError):
        frames.parse_view("everything", 4)
    assert frames.parse_view("full", 4) is None
    assert frames.parse_view("seat-3", 4) == 3


def test_the_viewer_has_its_parts_for_every_game_of_the_engine():
    """The viewer's per-game code is looked up by the engine's game ids:
    the frames' parts and the tables of replay.js and play.js name exactly
    the games the engine's registry has, so a new game cannot reach the
    viewer half drawn."""
    import re
    from pathlib import Path

    from engine import game_ids
    from ladder.web.frames import GAME_VIEWS

    games = set(game_ids())
    assert set(GAME_VIEWS) == games
    static = Path(__file__).resolve().parents[2] / "ladder" / "static" / "cardroom"
    for script, tables in (("replay.js", ("TABLES", "ROUND_NAMES")), ("play.js", ("MOVES",))):
        source = (static / script).read_text()
        for table in tables:
            body = re.search(rf"var {table} = \{{(.*?)\}};", source, re.S)
            assert body, f"{script} has no table {table}"
            keys = set(re.findall(r"(?:^|[{,])\s*(\w+):", body.group(1), re.M))
            assert keys == games, (script, table, keys)
