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

import json

import pytest

from tests.trained_bots import assert_plays_a_verified_match, research_script

for _module in ("torch", "sb3_contrib", "onnx", "onnxruntime"):
    pytest.importorskip(_module)


def test_an_imitated_policy_exports_plays_a_verified_match_and_repeats(tmp_path):
    trainer = research_script("imitate_torch")
    options = ["--games", "2", "--rounds", "2", "--epochs", "2", "--hidden", "16", "--cache", str(tmp_path / "cache")]
    first, second = tmp_path / "first", tmp_path / "second"
    assert trainer.main(["allegra", "--out", str(first), *options]) == 0
    assert {p.name for p in first.iterdir()} == {"bot.py", "cardroom.toml", "allegra.onnx", "training.json"}
    record = json.loads((first / "training.json").read_text())["allegra"]
    assert [r["round"] for r in record["rounds"]] == [0, 1]
    assert record["rounds"][1]["positions"] > record["rounds"][0]["positions"] > 0
    assert all(r["games_cpu_seconds"] > 0 for r in record["rounds"])  # what the games cost, kept with them
    cached = sorted(p.suffix for p in (tmp_path / "cache").iterdir())
    assert cached == [".npz", ".npz", ".pt", ".pt"]  # a round's positions and its trained weights

    assert_plays_a_verified_match(first, "allegra", tmp_path)

    # same options: the positions come from the cache and the model is the same
    assert trainer.main(["allegra", "--out", str(second), *options]) == 0
    again = json.loads((second / "training.json").read_text())["allegra"]
    assert again["model_sha256"] == record["model_sha256"]
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == cached
