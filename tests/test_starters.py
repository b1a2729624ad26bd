"""The starter kits of bots/starters/: each is a complete bot that reads
every message of protocol v1 and plays both games to the end without a
forfeit, and its replays verify.

The C++ starter is built with its own Makefile (as its README tells an
author to) into a copy of its folder, never into the repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cardroom.launch import BotLimits, PlainLauncher
from cardroom.players import ProtocolPlayer
from cardroom.runner import run_match
from engine.replay import verify

ROOT = Path(__file__).resolve().parents[1]
STARTERS = ROOT / "bots" / "starters"
# The runtimes' commands, until the package checks know `runtime` (the
# manifests already say it): what each starter's manifest asks for.
ARGV = {"python-numpy": ["/usr/bin/python3", "bot.py"], "node": ["/usr/bin/node", "bot.js"], "cpp": ["./bot"]}
# V8 reserves far more address space than it uses: unsandboxed, only RLIMIT_AS limits memory.
LIMITS = BotLimits(memory_bytes=16 << 30)


@pytest.fixture(scope="module")
def starter_dirs(tmp_path_factory) -> dict[str, Path]:
    """Each starter's folder, as an author has it once built: the C++ one
    copied and built with `make`."""
    dirs = {name: STARTERS / name for name in ARGV}
    cpp = tmp_path_factory.mktemp("starters") / "cpp"
    shutil.copytree(STARTERS / "cpp", cpp, ignore=shutil.ignore_patterns("bot"))
    subprocess.run(["make", "-s"], cwd=cpp, check=True, capture_output=True, timeout=120)
    dirs["cpp"] = cpp
    return dirs


def test_every_starter_has_a_manifest_a_readme_and_its_entry():
    for name in ARGV:
        folder = STARTERS / name
        manifest = (folder / "cardroom.toml").read_text()
        assert "protocol = 1" in manifest
        entry = next(line.split('"')[1] for line in manifest.splitlines() if line.startswith("entry"))
        assert entry == ARGV[name][-1].removeprefix("./")
        assert (folder / entry).exists() or name == "cpp"  # the C++ entry is built
        assert "cardroom play" in (folder / "README.md").read_text()
        assert "cardroom submit" in (folder / "README.md").read_text()


def test_the_cpp_starter_builds_a_static_binary(starter_dirs):
    binary = starter_dirs["cpp"] / "bot"
    described = subprocess.run(["file", "-b", str(binary)], capture_output=True, text=True, check=True).stdout
    assert "ELF 64-bit" in described and "x86-64" in described and "statically linked" in described


@pytest.mark.parametrize("name", list(ARGV))
@pytest.mark.parametrize("game", ["allegory", "allegra"])
def test_starter_plays_whole_matches_of_both_games_and_the_replays_verify(starter_dirs, name, game):
    for n, seed in ((2, 21), (4, 22)):
        player = ProtocolPlayer(name, name, starter_dirs[name], ARGV[name], PlainLauncher(), LIMITS)
        others = ["builtin:random", "builtin:greedy", "builtin:random"][: n - 1]
        record = run_match(game, [player, *others], seed=seed)
        assert record.forfeits == [], record.forfeits
        assert "Traceback" not in record.logs[0] and "failed" not in record.logs[0], record.logs[0]
        verified = verify(json.loads(json.dumps(record.replay)))
        assert verified.result.ranks == record.result.ranks
        decisions = [e for e in record.replay["events"] if e["by"] == 0]
        assert decisions and not any(e.get("forfeit") for e in decisions)


def _talk(starter_dirs, name: str, lines: list[str]) -> list[dict]:
    out = subprocess.run(
        ARGV[name],
        cwd=starter_dirs[name],
        input="".join(lines),
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


START = (
    '{"type": "start", "protocol": 1, "game": "allegory", "seat": 1, "num_players": 2,'
    ' "match_id": "caf\\u00e9 \\ud83c\\udca1 \\"x\\"", "options": {"unique_morals": false},'
    ' "time": {"per_move_ms": 1000, "total_ms": 300000}}\n'
)
DISTRIBUTE = (
    '  {"legal": [{"type": "distribute", "total": 13, "cards": ["key:2", "flame:-1", "owl:5"]}],'
    ' "type": "act", "time_left_ms": 299998, "observation": {"game": "allegory", "seat": 1, "num_players": 2,'
    ' "round": 3, "round_kind": "story", "phase": "distribute", "to_act": [1], "high_bid": 13, "high_bidder": 1,'
    ' "winner": 1, "pool": [{"card": "key:2", "chips": 0}, {"card": "flame:-1", "chips": 4}, {"card": "owl:5", "chips": 0}],'
    ' "deck_size": 30, "players": [{"seat": 0, "chips": 15, "bid": 0, "rested": true, "tales": {"nature": [], "energy": [],'
    ' "spirit": []}, "cards": 0}, {"seat": 1, "chips": 15, "bid": 13, "rested": false, "tales": {"nature": ["crown:-1"],'
    ' "energy": [], "spirit": ["key:-1"]}, "cards": 2}], "moral": "owl", "note": [1.5e3, -0.25, null, true, "\\t\\/"]}}  \r\n'
)
SLOTS = (
    '{"type": "act", "observation": {"game": "allegra", "seat": 1, "num_players": 2, "round": 1, "phase": "turn",'
    ' "to_act": [1], "active": 1, "grids": [[["?", "?", "?", 7], ["?", "?", "?", "?"], ["?", "?", 7, 6]],'
    ' [[7, "?", "?", "?"], ["?", 8, "?", "?"], [null, null, null, "?"]]], "discard": [6, 2], "deck_size": 83,'
    ' "drawn": null, "knockers": [], "knocker": null, "placed": null, "held": null, "scores": [0, 0],'
    ' "round_scores": [], "ender": null, "removed": [4, 4, 4], "final_turns": false, "turn": 0, "turn_limit": 400},'
    ' "legal": [{"type": "take_discard", "slot": [1, 0, 0]}, {"type": "take_discard", "slot": [0, 2, 3]},'
    ' {"type": "draw"}], "time_left_ms": 299000}\n'
)
END = '{"type": "end", "observation": {}, "result": {"scores": [3, 8], "ranks": [2, 1], "forfeits": []}}\n'


@pytest.mark.parametrize("name", list(ARGV))
def test_starter_reads_escapes_whitespace_and_field_order_and_fills_the_template(starter_dirs, name):
    """Lines a bot must read like any other: unicode and surrogate escapes,
    whitespace around the object, keys in another order, keys it does not
    know, a message type it does not know and a line that is not JSON (both
    skipped), numbers of every form."""
    unknown = '{"type": "news", "text": "ignored"}\n'
    replies = _talk(starter_dirs, name, [START, unknown, DISTRIBUTE, "{not json\n", SLOTS, END])
    assert replies[0] == {"type": "ready"}
    assert len(replies) == 3, replies
    distribute = replies[1]["action"]
    assert (
        replies[1]["type"] == "action" and distribute["type"] == "distribute" and set(distribute) == {"type", "chips"}
    )
    chips = distribute["chips"]
    assert set(chips) <= {"key:2", "flame:-1", "owl:5"} and sum(chips.values()) == 13
    assert all(type(n) is int and n >= 0 for n in chips.values())
    legal = json.loads(SLOTS)["legal"]
    assert replies[2] == {"type": "action", "action": replies[2]["action"]} and replies[2]["action"] in legal
