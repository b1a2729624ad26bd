"""What the tests of the PyTorch recipes (research/train_torch.py,
research/imitate_torch.py) share: loading a research script as a module,
and a match of the package it wrote, with its replay verified."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def research_script(name: str):
    """research/NAME.py as a module (research/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "research" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_plays_a_verified_match(package: Path, game: str, tmp_path: Path) -> None:
    """``package`` plays a whole match against builtin:random without a
    forfeit, and `cardroom verify` accepts the replay."""
    from cardroom.runner import run_match
    from cardroom.sandbox import local_launcher

    match = run_match(game, [str(package), "builtin:random"], seed=5, launcher=local_launcher)
    assert match.forfeits == [], match.logs[0]
    assert sum(1 for e in match.replay["events"] if e["by"] == 0) >= 5
    replay = tmp_path / "match.json"
    replay.write_text(json.dumps(match.replay))
    check = subprocess.run(
        [sys.executable, "-m", "cardroom", "verify", str(replay)], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0 and ": OK:" in check.stdout, check.stdout + check.stderr
