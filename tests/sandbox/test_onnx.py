"""ONNX Runtime in the python runtime, through the REAL sandbox (decision
220): a session with ONNX Runtime's default options loads and runs under the
seccomp filter and the image's /proc and /sys; a model whose output asks for
4 GiB is stopped by the memory limit, inside the bot (ONNX Runtime's own
error, a crash forfeit); the starter kit with a malformed model file says so
in its log and forfeits at start, the sandbox unharmed. The models are
tests/sandbox/hostile/onnx/*.onnx (made by make_models.py beside them). The
kit's whole matches: test_starters_sandbox.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cardroom.runner import TimeControl

from .conftest import HOSTILE, REPO, RecordingLauncher, assert_host_clean
from .test_hostile_bots import OPPONENTS, check_forfeit, play

pytestmark = pytest.mark.sandbox

MODELS = HOSTILE / "onnx"
KIT = REPO / "bots" / "starters" / "python-onnx"
# ONNX Runtime's import and a session take a few hundred ms on an idle
# machine, seconds on a loaded one: start-up and move time enough for that.
SLOW = TimeControl(startup_ms=20_000, per_move_ms=5_000, overage_ms=0, total_ms=60_000, end_grace_ms=300)


@pytest.fixture
def clean_host(recording: RecordingLauncher):
    """The real sandbox; after the test, nothing of the bot left on the host."""
    yield recording
    assert_host_clean(recording.procs)


def onnx_bot(tmp_path: Path, program: str, model: str) -> Path:
    folder = tmp_path / Path(program).stem
    folder.mkdir()
    shutil.copyfile(HOSTILE / program, folder / "main.py")
    shutil.copyfile(MODELS / model, folder / model)
    (folder / "cardroom.toml").write_text(f'entry = "main.py"\nprotocol = 1\nname = "{Path(program).stem}"\n')
    return folder


def test_a_session_with_default_options_runs_under_the_sandbox(clean_host, tmp_path):
    record = play(clean_host, [onnx_bot(tmp_path, "onnx_default_threads.py", "tiny.onnx"), *OPPONENTS], time=SLOW)
    log = record.logs[0]
    assert record.replay["result"]["forfeits"] == [], log[-2000:]
    # x = [1, 1, 1, 1]: the column sums of W (arange(12)/10 as 4 x 3) plus b
    assert "onnx ran: [2.3, 1.7, 2.6]" in log and "onnx bot done" in log, log[-2000:]
    assert "Error" not in log and "error" not in log, log[-2000:]
    # the version scripts/install-bot-packages.sh pins, with its CPU provider
    script = (REPO / "scripts" / "install-bot-packages.sh").read_text()
    pinned = script.split("ONNXRUNTIME_VERSION=", 1)[1].split()[0]
    assert f"onnxruntime {pinned} [" in log and "'CPUExecutionProvider'" in log, log[-2000:]


def test_a_model_asking_for_4_gib_is_stopped_by_the_memory_limit(clean_host, tmp_path):
    record = play(clean_host, [onnx_bot(tmp_path, "onnx_hog.py", "hog.onnx"), *OPPONENTS], time=SLOW)
    log = check_forfeit(record, 0, "crash")
    assert "onnx hog loaded" in log and "HOGGED" not in log, log[-2000:]
    assert "onnx hog stopped" in log and "Failed to allocate memory" in log, log[-2000:]


@pytest.mark.parametrize("content", [b"", b"not a model at all\n", (MODELS / "tiny.onnx").read_bytes()[:-40]],
                         ids=["empty", "text", "truncated"])  # fmt: skip
def test_the_kit_with_a_malformed_model_says_so_and_forfeits_at_start(clean_host, tmp_path, content):
    kit = tmp_path / "python-onnx"
    shutil.copytree(KIT, kit)
    (kit / "allegra.onnx").write_bytes(content)
    record = play(clean_host, [kit, *OPPONENTS], time=SLOW)
    log = check_forfeit(record, 0, "crash")
    own = [e for e in record.replay["events"] if e["by"] == 0]
    assert own and all(e.get("forfeit") for e in own), "forfeited before its first move"
    assert "onnx-starter: cannot load allegra.onnx" in log, log[-2000:]
    assert "Traceback" not in log and "sandbox" not in log.lower(), log[-2000:]


def test_the_kit_with_another_games_model_says_which(clean_host, tmp_path):
    kit = tmp_path / "python-onnx"
    shutil.copytree(KIT, kit)
    shutil.copyfile(MODELS / "tiny.onnx", kit / "allegra.onnx")  # 4 inputs, not Allegra's observation
    record = play(clean_host, [kit, *OPPONENTS], time=SLOW)
    log = check_forfeit(record, 0, "crash")
    assert "cannot load allegra.onnx: allegra.onnx takes 4 inputs" in log, log[-2000:]
