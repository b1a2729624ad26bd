"""The PyTorch recipe (research/train_torch.py, docs/train.md) end to end in
seconds: a few thousand steps of MaskablePPO, exported to ONNX, checked
against torch by the trainer itself, and the package it writes plays a
whole match of the game it learned, with a replay `cardroom verify` accepts.

Needs the training extra (torch, sb3-contrib, onnx, gymnasium), which the
platform's test environment does not have: skipped there. What the suite
always runs of this path: the starter kit's models (exported by this
trainer) in the sandbox (tests/sandbox/test_starters_sandbox.py) and on
the ladder (tests/ladder/test_starter_validation.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

for _module in ("torch", "sb3_contrib", "onnx", "gymnasium", "onnxruntime"):
    pytest.importorskip(_module)

ROOT = Path(__file__).resolve().parents[1]


def _trainer():
    spec = importlib.util.spec_from_file_location("train_torch", ROOT / "research" / "train_torch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_briefly_trained_policy_exports_and_plays_a_verified_match(tmp_path):
    from cardroom.runner import run_match
    from cardroom.sandbox import local_launcher

    out = tmp_path / "bot"
    assert (
        _trainer().main(["allegra", "--out", str(out), "--timesteps", "2048", "--minutes", "2", "--hidden", "16"]) == 0
    )
    assert {p.name for p in out.iterdir()} == {"bot.py", "cardroom.toml", "allegra.onnx", "training.json"}
    record = json.loads((out / "training.json").read_text())["allegra"]
    assert record["steps"] >= 2048 and record["algorithm"] == "sb3-contrib MaskablePPO"
    match = run_match("allegra", [str(out), "builtin:random"], seed=5, launcher=local_launcher)
    assert match.forfeits == [], match.logs[0]
    assert sum(1 for e in match.replay["events"] if e["by"] == 0) >= 5
    replay = tmp_path / "match.json"
    replay.write_text(json.dumps(match.replay))
    check = subprocess.run(
        [sys.executable, "-m", "cardroom", "verify", str(replay)], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0 and ": OK:" in check.stdout, check.stdout + check.stderr
