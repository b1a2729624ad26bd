"""research/train.py (issue 23, item 4), run as an author runs it: inside a
fresh venv holding the wheel with its ``research`` extra. A few seconds of
training per game export a bot package that plays full matches of its game
through ``cardroom play`` in the sandbox's ``python`` runtime (Debian's
numpy) with every move legal, whose replays verify; the
same seed trains the same weights; the bot asks its policy exactly as the
environment does; and SingleSeatEnv makes its opponents afresh for every
game. Whether the trained bot beats random is measured by
benchmarks/train_vs_random.py (minutes of training), not here."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.sdk.test_research_envs import research_venv  # noqa: F401 (a fixture)
from tests.web.conftest import ROOT
from tests.web.test_author_install import _open_dir, _run, author_wheel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

TRAIN = ROOT / "research" / "train.py"
CHECKS = Path(__file__).with_name("research_training.py")


def _train(bin_dir, game: str, out, seed: int = 3, episodes: int = 48) -> dict:
    # from /tmp, so that only the wheel's packages are importable
    done = _run([bin_dir / "python", TRAIN, game, "--out", out, "--episodes", episodes, "--seed", seed], cwd="/tmp")
    assert done.returncode == 0, done.stderr
    assert f"bot package in {out}" in done.stdout
    return json.loads((out / "training.json").read_text())


@pytest.mark.parametrize("game", ["allegory", "allegra"])
def test_a_short_training_run_exports_a_bot_that_plays_legal_full_matches(research_venv, game):  # noqa: F811
    home = _open_dir(f"cardroom-train-{game}-")
    bot = home / "bot"
    info = _train(research_venv, game, bot)
    manifest = tomllib.loads((bot / "cardroom.toml").read_text())
    assert manifest["runtime"] == "python" and manifest["entry"] == "main.py"
    assert (bot / "weights.npz").stat().st_size < 1_000_000
    for seed in (1, 2):  # the trained bot in seat 0, then seat 1
        players = [str(bot), "builtin:random"][:: 1 if seed == 1 else -1]
        replay = home / f"match-{seed}.json"
        played = _run(
            [research_venv / "cardroom", "play", game, *players, "--seed", seed, "--replay", replay],
            cwd=home,
        )
        assert played.returncode == 0, played.stderr
        assert "WITHOUT the sandbox" not in played.stderr  # the ladder's sandbox, its numpy Debian's
        doc = json.loads(replay.read_text())
        assert doc["result"]["forfeits"] == [], played.stdout  # every move legal, in time
        verified = _run([research_venv / "cardroom", "verify", replay], cwd=home)
        assert verified.returncode == 0 and ": OK:" in verified.stdout, verified.stdout + verified.stderr
    # the same seed trains the same network, another seed another one
    assert _train(research_venv, game, home / "again")["weights_sha256"] == info["weights_sha256"]
    assert _train(research_venv, game, home / "other", seed=4)["weights_sha256"] != info["weights_sha256"]


def _checks(bin_dir, *sections: str) -> str:
    done = _run([bin_dir / "python", CHECKS, *sections], cwd="/tmp")
    assert done.returncode == 0 and "all passed" in done.stdout, done.stdout + done.stderr
    return done.stdout


def test_the_bot_asks_its_policy_exactly_as_the_environment_does(research_venv):  # noqa: F811
    assert _checks(research_venv, "policy_action").count("policy_action plays as the environment:") == 4


def test_the_gymnasium_wrapper_makes_its_opponents_afresh_at_every_reset(research_venv):  # noqa: F811
    assert _checks(research_venv, "fresh_opponents").count("fresh opponents:") == 2


def test_bot_programs_play_as_opponents_and_leave_nothing(research_venv):  # noqa: F811
    done = _checks(research_venv, "program_opponents")
    assert done.count("program opponent: ") == 3
