"""The shared Allegory replays (written independently of this engine) re-play
exactly: every event legal, the game over at the last event, the recorded
scores and ranks reached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import new_game
from engine.core import CHANCE

HERE = Path(__file__).resolve()
REPLAYS = HERE.parents[2] / "tests/data/replays"
if not list(REPLAYS.glob("allegory-*.json")):  # until the lead copies them in
    REPLAYS = Path("/work/shared/replays")
FILES = sorted(REPLAYS.glob("allegory-*.json"))
NAMES = ["allegory-2p.json", "allegory-3p-unique-morals.json", "allegory-4p.json", "allegory-6p-forfeit.json"]


def test_all_four_shared_replays_are_present():
    assert [f.name for f in FILES] == NAMES


def replay(doc):
    state = new_game(doc["game"], doc["num_players"], doc["options"]).new_initial_state()
    for index, event in enumerate(doc["events"]):
        assert not state.is_terminal(), f"event {index} comes after the end"
        if event["by"] == CHANCE:
            assert state.is_chance_node()
            state.apply_chance(event["action"])
        else:
            assert state.to_act() == [event["by"]]
            state.apply(event["by"], event["action"])
    return state


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_shared_replay_replays_to_the_recorded_result(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    state = replay(doc)
    assert state.is_terminal()
    forfeited = {f["seat"] for f in doc["result"]["forfeits"]}
    result = state.result(forfeited=forfeited)
    assert result.scores == doc["result"]["scores"]
    assert result.ranks == doc["result"]["ranks"]


def test_forfeit_replay_marks_only_default_policy_moves_of_the_forfeiting_seat():
    doc = json.loads((REPLAYS / "allegory-6p-forfeit.json").read_text(encoding="utf-8"))
    (forfeit,) = doc["result"]["forfeits"]
    marked = [i for i, e in enumerate(doc["events"]) if e.get("forfeit")]
    assert marked and marked[0] == forfeit["event"]
    assert all(doc["events"][i]["by"] == forfeit["seat"] for i in marked)
    assert doc["result"]["ranks"][forfeit["seat"]] == doc["num_players"]


def test_replay_with_a_zero_entry_in_a_distribute():
    zero = [
        (f.name, i)
        for f in FILES
        for i, e in enumerate(json.loads(f.read_text(encoding="utf-8"))["events"])
        if e["action"].get("type") == "distribute" and 0 in e["action"]["chips"].values()
    ]
    assert zero  # one replay has "owl:2": 0 inside a distribute, and it re-plays (above)
