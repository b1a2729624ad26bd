"""The example bot of docs/sdk.md, written with ``cardroom_sdk.run`` and
``sample_world``, plays whole matches through the real runner
(``cardroom play``, unsandboxed) without a forfeit, and the replays verify."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def example_bot() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "sdk.md").read_text(), flags=re.S)
    (bot,) = [b for b in blocks if "cardroom_sdk.run(choose)" in b and "sample_world" in b]
    return bot


def cardroom(*args: str) -> subprocess.CompletedProcess:
    # the bot runs on this interpreter, where cardroom_sdk is installed
    env = {"PATH": "/usr/bin:/bin", "CARDROOM_SANDBOX": "none", "CARDROOM_BOT_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, "-m", "cardroom", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "game,opponents",
    [("allegory", ["builtin:greedy", "builtin:random"]), ("allegra", ["builtin:greedy", "builtin:random"])],
)
def test_the_example_sdk_bot_plays_a_full_match_and_its_replay_verifies(tmp_path, game, opponents):
    bot = tmp_path / "sdk_bot.py"
    bot.write_text(example_bot())
    replay, logs = tmp_path / "m.json", tmp_path / "logs"
    out = cardroom("play", game, str(bot), *opponents, "--seed", "3", "--replay", str(replay), "--logs", str(logs))
    assert out.returncode == 0, out.stderr
    doc = json.loads(replay.read_text())
    assert doc["result"]["forfeits"] == [], doc["result"]
    sdk_seat = next(p["seat"] for p in doc["players"] if p["name"] == "sdk_bot")
    decisions = [e for e in doc["events"] if e["by"] == sdk_seat]
    assert len(decisions) >= 10
    log = (logs / f"seat-{sdk_seat}.log").read_text()
    assert "Traceback" not in log, log[-2000:]
    check = cardroom("verify", str(replay))
    assert check.returncode == 0 and ": OK:" in check.stdout, check.stdout + check.stderr
