"""The research interfaces (issue 23): the wheel with its ``research`` extra,
installed into a fresh venv of Debian's Python, passes PettingZoo's api_test
and seed_test for both games at 2, 3, 4 and 6 players, never shows a seat a
hidden card, maps every legal action to an index and back, agrees with the
engine over 1,000 random games whose replays verify, and its Gymnasium
wrapper passes check_env. The checks are tests/sdk/research_conformance.py,
run inside that venv (pettingzoo and friends are not in the dev extra)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.web.test_author_install import _fresh_venv, _open_dir, _run, author_wheel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

CONFORMANCE = Path(__file__).with_name("research_conformance.py")


@pytest.fixture(scope="module")
def research_venv(author_wheel) -> Path:  # noqa: F811
    home = _open_dir("cardroom-research-")
    bin_dir = _fresh_venv(home / "venv")
    done = _run([bin_dir / "pip", "install", "--quiet", f"{author_wheel}[research]"], timeout=900)
    assert done.returncode == 0, done.stderr
    yield bin_dir
    shutil.rmtree(home, ignore_errors=True)


def _conformance(bin_dir: Path, *sections: str, timeout: int = 600):
    # run from /tmp so that the checkout's packages cannot stand in for the wheel's
    done = _run([bin_dir / "python", CONFORMANCE, *sections], cwd="/tmp", timeout=timeout)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "all passed" in done.stdout
    return done.stdout


def test_the_platform_does_not_need_the_research_extra(author_wheel, tmp_path):  # noqa: F811
    bin_dir = _fresh_venv(tmp_path / "venv")
    assert _run([bin_dir / "pip", "install", "--quiet", author_wheel], timeout=300).returncode == 0
    done = _run(
        [bin_dir / "python", "-c", "import cardroom_sdk, cardroom_sdk.envs, cardroom_sdk.envs.allegra_codec"],
        cwd="/tmp",
    )
    assert "No module named 'numpy'" in done.stderr  # the codecs need the extra; the SDK itself does not
    done = _run([bin_dir / "python", "-c", "import cardroom_sdk, cardroom_sdk.envs, cardroom.cli"], cwd="/tmp")
    assert done.returncode == 0, done.stderr


def test_pettingzoo_api_and_seed_tests_pass_for_both_games(research_venv):
    out = _conformance(research_venv, "pettingzoo_api")
    for game in ("allegory", "allegra"):
        for n in (2, 3, 4, 6):
            assert f"api_test and seed_test: {game} {n} players" in out


def test_no_hidden_card_reaches_an_observation_and_actions_map_both_ways(research_venv):
    out = _conformance(research_venv, "no_hidden_cards", "action_mapping")
    assert out.count("no hidden card:") == 8 and out.count("action mapping:") == 8


def test_a_thousand_pettingzoo_games_agree_with_the_engine_and_verify(research_venv):
    assert "agreement: 1000 games" in _conformance(research_venv, "agreement", timeout=1800)


def test_the_gymnasium_wrapper_passes_check_env(research_venv):
    assert _conformance(research_venv, "gymnasium_wrapper").count("gymnasium check_env:") == 6


def test_a_failing_check_inside_the_venv_fails_the_test(research_venv):
    with pytest.raises(AssertionError):
        _conformance(research_venv, "no_such_section")
