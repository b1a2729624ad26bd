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


def test_the_export_writes_negligible_weights_as_zero(tmp_path):
    """Weight decay leaves weights near 1e-38 on inputs that are always 0;
    their products are subnormal floats, which ONNX Runtime computes many
    times slower, so the export writes them as 0, and leaves the trained
    module as it was."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    from cardroom_sdk.envs import allegra_codec

    net = torch.nn.Linear(allegra_codec.OBS_SIZE, allegra_codec.NUM_ACTIONS)
    with torch.no_grad():
        net.weight[:, 600:900] = 1e-42  # subnormal
        net.weight[:, 900:] = 1e-33  # normal, but its products with the inputs are not
    research_script("train_torch").export_logits(net, "allegra", tmp_path / "allegra.onnx")
    weight = next(
        numpy_helper.to_array(t)
        for t in onnx.load(tmp_path / "allegra.onnx").graph.initializer
        if t.dims == list(net.weight.shape)
    )
    assert (weight[:, 600:] == 0).all() and (weight[:, :600] == net.weight[:, :600].detach().numpy()).all()
    assert float(net.weight[0, 600]) == np.float32(1e-42) and float(net.weight[0, 900]) == np.float32(1e-33)
