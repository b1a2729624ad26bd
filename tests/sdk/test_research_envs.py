"""The research interfaces (issue 23): the wheel with its ``research`` extra,
installed into a venv of Debian's Python, passes PettingZoo's api_test and
seed_test for both games at 2, 3, 4 and 6 players, never shows a seat a
hidden card, maps every legal action to an index and back, its Gymnasium
wrapper passes check_env, its OpenSpiel games pass pyspiel's random
simulation test and carry OpenSpiel's ISMCTS bot, OpenSpiel's
generate_playthrough (public and private observers included) re-plays the
checked-in playthroughs tests/data/playthroughs/ exactly, and 1,000 random games
through PettingZoo and 1,000 through OpenSpiel agree with the engine and
verify. The checks are tests/sdk/research_conformance.py, run inside that
venv (pettingzoo and friends are not in the dev extra)."""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.web.conftest import ROOT
from tests.web.test_author_install import SYSTEM_PYTHON, _fresh_venv, _run, author_wheel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

CONFORMANCE = Path(__file__).with_name("research_conformance.py")
# scripts/test.sh gives the research checks' own run (beside the rest of the
# suite, whose trained-bot tests reinstall the wheel into theirs) a folder apart
VENVS = Path(os.environ.get("CARDROOM_RESEARCH_VENVS", ROOT / "var" / "research-venv"))
PLAYTHROUGHS = ROOT / "scripts" / "openspiel_playthroughs.py"
PLAYTHROUGH_DIR = ROOT / "tests" / "data" / "playthroughs"


def _requirements_key(wheel: Path) -> str:
    """What the venv's third-party packages depend on: the wheel's declared
    requirements and the interpreter (not cardroom's own code, which is
    reinstalled from the wheel on every run)."""
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [line for line in zf.read(meta).decode().splitlines() if line.startswith("Requires-Dist:")]
    python = _run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version)"]).stdout
    return hashlib.sha256("\n".join([python, *requires]).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def research_venv(author_wheel) -> Path:  # noqa: F811
    """A venv holding ``wheel[research]``, kept under var/ by the wheel's
    requirements: a fresh one is built when they change, and every run
    reinstalls the wheel itself into it (pip removes the old files)."""
    key = _requirements_key(author_wheel)
    home = VENVS / key
    if not (home / "ready").exists():
        shutil.rmtree(VENVS, ignore_errors=True)
        bin_dir = _fresh_venv(home / "venv")
        done = _run([bin_dir / "pip", "install", "--quiet", f"{author_wheel}[research]"], timeout=900)
        assert done.returncode == 0, done.stderr
        (home / "ready").write_text(author_wheel.name)
    bin_dir = home / "venv" / "bin"
    done = _run([bin_dir / "pip", "install", "--quiet", "--no-deps", "--force-reinstall", author_wheel], timeout=300)
    assert done.returncode == 0, done.stderr
    yield bin_dir


def _conformance(bin_dir: Path, *runs: list[str], timeout: int = 600) -> list[str]:
    """Runs ``research_conformance.py`` once per list of sections, all at
    once (the machine has two cores and the sections are independent);
    each must say "all passed" within ``timeout`` seconds of CPU. Returns
    their outputs."""

    # A limit on CPU time (the kernel's RLIMIT_CPU, SIGXCPU ends the run):
    # scripts/test.sh runs these beside the rest of the suite at nice 19, so
    # their wall time is the other parts' load; a run that waits without
    # computing is stopped after four times as long in wall time.
    def limit_cpu():
        resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 10))

    # run from /tmp so that the checkout's packages cannot stand in for the wheel's
    procs = [
        subprocess.Popen(
            [str(bin_dir / "python"), str(CONFORMANCE), *sections],
            cwd="/tmp", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit_cpu,
        )
        for sections in runs
    ]  # fmt: skip
    outputs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=4 * timeout)
            assert proc.returncode == 0, f"{out}\n{err}"
            assert "all passed" in out
            outputs.append(out)
    finally:
        for proc in procs:  # a failed or timed-out run leaves none of them behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs


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
    out, paths = _conformance(research_venv, ["pettingzoo_api"], ["wrapper_paths"])
    for game in ("allegory", "allegra"):
        for n in (2, 3, 4, 6):
            assert f"api_test and seed_test: {game} {n} players" in out
        assert f"wrapper paths: {game}, 24 games" in paths


def test_no_hidden_card_reaches_an_observation_and_actions_map_both_ways(research_venv):
    (out,) = _conformance(research_venv, ["no_hidden_cards", "action_mapping"])
    assert out.count("no hidden card:") == 8 and out.count("action mapping:") == 8
    assert out.count("no hidden card, openspiel:") == 8  # every kind of OpenSpiel observation, string and tensor


def _playthroughs(bin_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """scripts/openspiel_playthroughs.py run by the venv's Python from /tmp
    (so the wheel's games are the ones played, not the checkout's)."""
    # the check formats only the tensors of the states the files show (the
    # script says why): about 20 s of CPU, where formatting them all took minutes
    return _run([bin_dir / "python", PLAYTHROUGHS, *args], cwd="/tmp", timeout=900)


def test_openspiel_generate_playthrough_matches_the_checked_in_files(research_venv, tmp_path):
    """OpenSpiel's own generate_playthrough, with its public and private
    observers, re-plays each file's actions and must write the file again.
    One run checks both files and the checker itself: in a copy, the last
    line of Allegory's file is changed, so the check must fail naming that
    line and nothing else (the checker names a file's first difference:
    every line before it, and all of Allegra's file, came out the same)."""
    files = sorted(p.name for p in PLAYTHROUGH_DIR.glob("*.txt"))
    assert files == ["python_allegory.txt", "python_allegra.txt"]
    for name in files:
        text = (PLAYTHROUGH_DIR / name).read_text()
        assert "PublicObservationString()" in text and "PrivateObservationString(1)" in text
        assert "InformationStateTensorShape() = observation: [" in text and ", steps: [" in text
        shutil.copy(PLAYTHROUGH_DIR / name, tmp_path / name)
    changed = tmp_path / "python_allegory.txt"
    lines = changed.read_text().split("\n")
    k = max(i for i, line in enumerate(lines) if line.strip())
    lines[k] += " (changed)"
    changed.write_text("\n".join(lines))
    done = _playthroughs(research_venv, "--check", f"--dir={tmp_path}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(f"python_allegory.txt line {k + 1}:") and "python_allegra.txt" not in done.stdout, done.stdout + done.stderr


def test_the_fast_forms_and_the_batched_environment_give_the_reference_arrays(research_venv):
    codecs, batched = _conformance(research_venv, ["fast_codecs"], ["batched_envs"])
    assert codecs.count("fast codecs:") == 2 and "every seat equal to the reference" in codecs
    assert batched.count("batched:") == 8


def test_the_gymnasium_wrapper_passes_check_env(research_venv):
    (out,) = _conformance(research_venv, ["gymnasium_wrapper"])
    assert out.count("gymnasium check_env:") == 6


def test_registered_ids_vectorise_and_action_masks_agree_with_the_legal_actions(research_venv):
    vectors, masks = _conformance(research_venv, ["gymnasium_vectors"], ["gymnasium_action_masks"])
    assert vectors.count("gymnasium make_vec:") == 2
    assert "gymnasium action_masks: 100 games" in masks


def test_gymnasium_opponents_played_whole_and_make_vec_answer_as_the_reference(research_venv):
    opponents, vectors = _conformance(research_venv, ["gymnasium_opponents"], ["gymnasium_vector_equal"])
    assert "gymnasium opponents at once: 30 episodes" in opponents and "equal to index by index" in opponents
    assert vectors.count("equal to SyncVectorEnv's") == 8


def test_openspiel_checks_pass_and_its_ismcts_bot_plays_both_games(research_venv):
    games, search = _conformance(research_venv, ["openspiel_games"], ["openspiel_resample", "openspiel_bots"])
    assert games.count("openspiel random_sim_test:") == 8 and "openspiel parameters: checked" in games
    assert search.count("openspiel resample_from_infostate:") == 8
    for game in ("allegory", "allegra"):
        assert f"openspiel ismcts: {game} 2 players" in search
        assert f"openspiel evaluate_bots: {game} 2 players" in search
    assert "openspiel rl_environment: allegory, " in search and "info_state of 137671" in search
    assert "openspiel rl_environment: allegra, " in search and "info_state of 577914" in search


def test_the_information_state_is_perfect_recall_and_shows_no_hidden_card(research_venv):
    """Each seat's action-observation history and its information state
    (tensor and string) determine each other, over random games and
    branches off them, among them branches that differ only in cards the
    seat has not seen (decision 260)."""
    (out,) = _conformance(research_venv, ["openspiel_perfect_recall"], timeout=1800)
    for game in ("allegory", "allegra"):
        for n in (2, 3, 4):
            assert f"perfect recall, openspiel: {game} {n} players (" in out


def test_a_thousand_games_through_each_interface_agree_with_the_engine_and_verify(research_venv, tmp_path):
    replays = tmp_path / "replays"
    replays.mkdir()
    pettingzoo, openspiel = _conformance(
        research_venv, ["agreement"], ["openspiel_agreement", f"--replays={replays}"], timeout=1800
    )
    assert "agreement: 1000 games" in pettingzoo and "openspiel agreement: 1000 games" in openspiel
    # and `cardroom verify`, the command a user runs, accepts the OpenSpiel games' replays
    files = sorted(replays.glob("openspiel-*.json"))
    assert len(files) == 8
    for path in files:
        done = _run([research_venv / "cardroom", "verify", path], cwd="/tmp")
        assert done.returncode == 0 and "ok" in done.stdout.lower(), done.stdout + done.stderr


def test_a_failing_check_inside_the_venv_fails_the_test(research_venv):
    with pytest.raises(AssertionError):
        _conformance(research_venv, ["no_such_section"])


def test_the_checks_run_the_installed_wheel_not_the_checkout(research_venv):
    done = _run([research_venv / "python", "-c", "import cardroom_sdk; print(cardroom_sdk.__file__)"], cwd="/tmp")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(research_venv.parent / "lib"), done.stdout  # not the checkout's
