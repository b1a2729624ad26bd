"""The imitation recipe (research/imitate_torch.py, docs/train.md) end to
end in seconds: two DAgger rounds of a few games labelled by builtin:ismcts,
a small network trained with PyTorch, exported to ONNX (checked against
torch by the trainer itself); the package plays a whole match with a replay
`cardroom verify` accepts, and a second run with the same options trains
the same model from the cached positions.

Needs the training extra (torch, onnx, onnxruntime, sb3-contrib for the
shared exporter), which the platform's test environment does not have:
skipped there. What the suite always runs of this path: the starter kit's
models in the sandbox (tests/sandbox/test_starters_sandbox.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

for _module in ("torch", "sb3_contrib", "onnx", "onnxruntime"):
    pytest.importorskip(_module)

ROOT = Path(__file__).resolve().parents[1]


def _trainer():
    spec = importlib.util.spec_from_file_location("imitate_torch", ROOT / "research" / "imitate_torch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_imitated_policy_exports_plays_a_verified_match_and_repeats(tmp_path):
    from cardroom.runner import run_match
    from cardroom.sandbox import local_launcher

    trainer = _trainer()
    options = ["--games", "2", "--rounds", "2", "--epochs", "2", "--hidden", "16", "--cache", str(tmp_path / "cache")]
    first, second = tmp_path / "first", tmp_path / "second"
    assert trainer.main(["allegra", "--out", str(first), *options]) == 0
    assert {p.name for p in first.iterdir()} == {"bot.py", "cardroom.toml", "allegra.onnx", "training.json"}
    record = json.loads((first / "training.json").read_text())["allegra"]
    assert [r["round"] for r in record["rounds"]] == [0, 1]
    assert record["rounds"][1]["positions"] > record["rounds"][0]["positions"] > 0
    assert len(list((tmp_path / "cache").iterdir())) == 2  # one file a round

    match = run_match("allegra", [str(first), "builtin:random"], seed=5, launcher=local_launcher)
    assert match.forfeits == [], match.logs[0]
    assert sum(1 for e in match.replay["events"] if e["by"] == 0) >= 5
    replay = tmp_path / "match.json"
    replay.write_text(json.dumps(match.replay))
    check = subprocess.run(
        [sys.executable, "-m", "cardroom", "verify", str(replay)], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0 and ": OK:" in check.stdout, check.stdout + check.stderr

    # same options: the positions come from the cache and the model is the same
    assert trainer.main(["allegra", "--out", str(second), *options]) == 0
    again = json.loads((second / "training.json").read_text())["allegra"]
    assert again["model_sha256"] == record["model_sha256"]
    assert len(list((tmp_path / "cache").iterdir())) == 2
