"""Every starter kit of bots/starters/ plays whole matches of both games, at
2 and 4 players, in the real bwrap sandbox, as an author's folder is given
to `cardroom play` (the C++ and Rust kits built with their own Makefiles first), and
`cardroom verify` accepts every replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cardroom.runner import run_match

REPO = Path(__file__).resolve().parents[2]
STARTERS = REPO / "bots" / "starters"
KITS = ("python-numpy", "python-onnx", "node", "cpp", "rust")
DETERMINISTIC = {"python-onnx"}  # plays its model's most probable legal action: nothing to draw


@pytest.fixture(scope="module")
def kit_folders(cpp_starter, rust_starter) -> dict[str, Path]:
    """Each kit as an author has it: the C++ and Rust ones built with `make`."""
    return {name: STARTERS / name for name in KITS} | {"cpp": cpp_starter, "rust": rust_starter}


@pytest.mark.parametrize("kit", KITS)
def test_starter_kit_plays_both_games_in_the_sandbox_and_its_replays_verify(bwrap_launcher, kit_folders, kit, tmp_path):
    replays = []
    for game in ("allegory", "allegra"):
        for n, seed in ((2, 31), (4, 32)):
            others = ["builtin:greedy", "builtin:random", "builtin:greedy"][: n - 1]
            record = run_match(game, [str(kit_folders[kit]), *others], seed=seed, launcher=bwrap_launcher)
            where = f"{kit}, {game}, {n} players"
            assert record.forfeits == [], (where, record.forfeits, record.logs[0])
            log = record.logs[0]
            assert "Traceback" not in log and "failed" not in log and "skipped" not in log, (where, log)
            decisions = [e for e in record.replay["events"] if e["by"] == 0]
            assert len(decisions) >= 5 and not any(e.get("forfeit") for e in decisions), where
            path = tmp_path / f"{game}-{n}.json"
            path.write_text(json.dumps(record.replay))
            replays.append(str(path))
    check = subprocess.run(
        [sys.executable, "-m", "cardroom", "verify", *replays], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count(": OK:") == 4


@pytest.mark.parametrize("kit", [kit for kit in KITS if kit not in DETERMINISTIC])
def test_starter_kits_draw_their_own_randomness_not_the_matchs(bwrap_launcher, kit_folders, kit):
    """The same match twice (the same seed, the same match id, the same
    deterministic opponent): a kit seeded from what the match sends would
    play the same moves both times (issue 35: an opponent could replay
    them); seeded from the operating system, its moves differ."""
    moves = []
    for _ in range(2):
        record = run_match("allegra", [str(kit_folders[kit]), "builtin:greedy"], seed=41, match_id="the-same-id",
                           launcher=bwrap_launcher)  # fmt: skip
        assert record.forfeits == [], (kit, record.forfeits, record.logs[0])
        moves.append([e["action"] for e in record.replay["events"] if e["by"] == 0])
    assert len(moves[0]) >= 10 and moves[0] != moves[1], kit
