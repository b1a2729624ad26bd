"""The starter kits of bots/starters/ as programs: each reads every kind of
line protocol v1 may send it (and a few it must skip) and answers correctly,
run as its manifest says (the package checks' own command). Whole matches
of both games in the real sandbox: tests/sandbox/test_starters_sandbox.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cardroom.packages import BotPackage, load_bot_package, package_argv

ROOT = Path(__file__).resolve().parents[1]
STARTERS = ROOT / "bots" / "starters"
KITS = {
    "python-numpy": ("python", "bot.py"),
    "python-onnx": ("python", "bot.py"),
    "node": ("node", "bot.js"),
    "cpp": ("native", "bot"),
    "rust": ("native", "bot"),
}


@pytest.fixture(scope="module")
def packages(cpp_starter, rust_starter, tmp_path_factory) -> dict[str, BotPackage]:
    """Each starter as the package checks load it (the C++ and Rust ones built)."""
    work = tmp_path_factory.mktemp("unpacked")
    folders = {name: STARTERS / name for name in KITS} | {"cpp": cpp_starter, "rust": rust_starter}
    return {name: load_bot_package(folder, work) for name, folder in folders.items()}


def test_every_starter_has_its_runtime_entry_and_a_readme(packages):
    for name, (runtime, entry) in KITS.items():
        assert (packages[name].runtime, packages[name].entry, packages[name].protocol) == (runtime, entry, 1)
        readme = (STARTERS / name / "README.md").read_text()
        assert "cardroom play" in readme and "cardroom submit" in readme


@pytest.mark.parametrize("name", ["cpp", "rust"])
def test_the_native_starters_build_a_static_binary(packages, cpp_starter, rust_starter, name):
    binary = packages[name].root / "bot"
    described = subprocess.run(["file", "-b", str(binary)], capture_output=True, text=True, check=True).stdout
    assert "ELF 64-bit" in described and "x86-64" in described and "statically linked" in described
    # `make check`, as the README says: the built folder's binary is static and ldd says it is not dynamic.
    folder = {"cpp": cpp_starter, "rust": rust_starter}[name]
    check = subprocess.run(["make", "check"], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert check.returncode == 0 and "not a dynamic executable" in check.stdout, check.stdout


def _talk(package: BotPackage, lines: list[str], env: dict[str, str] | None = None) -> list[dict]:
    out = subprocess.run(
        package_argv(package),
        cwd=package.root,
        input="".join(lines),
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **(env or {})},
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


@pytest.mark.parametrize("name", list(KITS))
def test_starter_reads_escapes_whitespace_and_field_order_and_fills_the_template(packages, name):
    """Lines a bot must read like any other: unicode and surrogate escapes,
    whitespace around the object, keys in another order, keys it does not
    know, a message type it does not know and a line that is not JSON (both
    skipped), numbers of every form."""
    unknown = '{"type": "news", "text": "ignored"}\n'
    replies = _talk(packages[name], [START, unknown, DISTRIBUTE, "{not json\n", SLOTS, END])
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


# The ONNX kit draws nothing: it plays its model's most probable legal action.
DETERMINISTIC = {"python-onnx"}


@pytest.mark.parametrize("name", [name for name in KITS if name not in DETERMINISTIC])
def test_starter_draws_from_the_os_unless_its_author_sets_a_debugging_seed(packages, name):
    """The same messages twice (the same match_id): the kit's draws differ,
    for they come from the operating system, not the match (issue 35);
    with CARDROOM_BOT_SEED set by its author, they repeat."""
    lines = [START, DISTRIBUTE, DISTRIBUTE, DISTRIBUTE, END]
    assert _talk(packages[name], lines) != _talk(packages[name], lines)
    seeded = {"CARDROOM_BOT_SEED": "debug-3"}
    assert _talk(packages[name], lines, seeded) == _talk(packages[name], lines, seeded)
    assert _talk(packages[name], lines, seeded) != _talk(packages[name], lines, {"CARDROOM_BOT_SEED": "debug-4"})


def test_the_onnx_starters_training_record_names_the_models_it_ships():
    """training.json says how each shipped model was made; its SHA-256 must
    be the file's, or the record describes a model that is not there."""
    import hashlib

    kit = STARTERS / "python-onnx"
    records = json.loads((kit / "training.json").read_text())
    models = {p.stem for p in kit.glob("*.onnx")}
    assert models == set(records) == {"allegory", "allegra"}
    for game, record in records.items():
        assert record["model_sha256"] == hashlib.sha256((kit / f"{game}.onnx").read_bytes()).hexdigest(), game
