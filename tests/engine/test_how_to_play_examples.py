"""The worked examples of the rules pages' "How to play" (docs/rules-*.md)
say what their replays did: each claim there is checked here against the
engine replaying the same file, so the prose cannot drift from the game."""

from __future__ import annotations

import json
from pathlib import Path

import cardroom_sdk

REPLAYS = Path(__file__).resolve().parents[1] / "data" / "replays"


def states(name: str, game: str, count: int):
    """The observation of seat 0 after each of the replay's first ``count`` events."""
    replay = json.loads((REPLAYS / name).read_text())
    state = cardroom_sdk.new_game(game, replay["num_players"], replay["options"]).new_initial_state()
    out = []
    for event in replay["events"][:count]:
        if event["by"] == "chance":
            state.apply_chance(event["action"])
        else:
            state.apply(event["by"], event["action"])
        out.append((event, state.observation(0)))
    return replay, out


def test_the_allegra_example():
    replay, seen = states("allegra-2p.json", "allegra", 12)
    assert replay["seed"] == 1
    assert seen[0][1]["discard"] == [1]
    grid = seen[4][1]["grids"]
    assert (grid[0][1][2], grid[0][2][1], grid[0][0][3], grid[1][0][0]) == (5, 6, 8, 4)
    assert (seen[3][0]["by"], seen[3][0]["action"]) == (1, {"type": "reveal", "slot": [0, 0, 3]})  # seat 1 turns seat 0's column 3
    assert seen[5][1]["drawn"] == 9
    after = seen[6][1]
    assert after["grids"][0][1][1] == 9 and after["discard"][-1] == 8
    after = seen[7][1]
    assert seen[7][0]["by"] == 1 and after["grids"][1][2][0] == 8 and after["discard"][-1] == 0
    after = seen[8][1]
    assert (seen[8][0]["by"], seen[8][0]["action"]) == (0, {"type": "take_discard", "slot": [1, 2, 3]})
    assert after["grids"][1][2][3] == 0 and after["discard"][-1] == 7
    after = seen[9][1]
    assert after["grids"][1][1][0] == 7 and after["discard"][-1] == 7
    assert seen[10][1]["drawn"] == 5
    assert seen[11][0]["action"] == {"type": "discard", "flip": [0, 1, 0]} and seen[11][1]["grids"][0][1][0] == 4


def test_the_allegory_example():
    replay, seen = states("allegory-2p.json", "allegory", 14)
    assert replay["seed"] == 2 and seen[0][0]["action"]["morals"] == ["flame", "key"]
    assert [p["card"] for p in seen[0][1]["pool"]] == ["feather:-2", "key:-1", "flame:3"]
    assert [(e["by"], e["action"]) for e, _ in seen[1:6]] == [
        (0, {"type": "bid", "amount": 1}), (1, {"type": "bid", "amount": 4}), (0, {"type": "bid", "amount": 8}),
        (1, {"type": "bid", "amount": 11}), (0, {"type": "rest"}),
    ]  # fmt: skip
    after = seen[7][1]
    assert after["players"][1]["tales"]["spirit"] == ["flame:3"] and after["players"][1]["chips"] == 4
    assert {p["card"]: p["chips"] for p in after["pool"]} == {"feather:-2": 2, "key:-1": 7, "shell:1": 2}
    assert seen[9][0]["action"] == {"type": "rest", "claim": "key:-1"} and seen[9][1]["players"][1]["chips"] == 11
    assert seen[10][0]["action"] == {"type": "take", "card": "shell:1"} and seen[10][1]["players"][0]["chips"] == 17
    assert seen[11][0]["action"]["chips"] == {"feather:1": 2, "feather:-2": 1, "crown:5": 1}
    assert seen[12][0]["action"] == {"type": "rest", "claim": "feather:-2"} and seen[12][1]["high_bid"] == 0
    assert seen[13][0]["action"] == {"type": "take", "card": "owl:5"} and seen[13][1]["players"][0]["tales"]["nature"] == ["owl:5"]
