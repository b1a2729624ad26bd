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

import json

import pytest

from tests.trained_bots import assert_plays_a_verified_match, research_script

for _module in ("torch", "sb3_contrib", "onnx", "gymnasium", "onnxruntime"):
    pytest.importorskip(_module)


def test_a_briefly_trained_policy_exports_and_plays_a_verified_match(tmp_path):
    out = tmp_path / "bot"
    assert (
        research_script("train_torch").main(
            ["allegra", "--out", str(out), "--timesteps", "2048", "--minutes", "2", "--hidden", "16"]
        )
        == 0
    )
    assert {p.name for p in out.iterdir()} == {"bot.py", "cardroom.toml", "allegra.onnx", "training.json"}
    record = json.loads((out / "training.json").read_text())["allegra"]
    assert record["steps"] >= 2048 and record["algorithm"] == "sb3-contrib MaskablePPO"
    assert_plays_a_verified_match(out, "allegra", tmp_path)
