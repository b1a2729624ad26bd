"""The compiled engine (mypyc, built by make setup) against its reference.

* The differential test: the same 1,500 seeded random games (both games,
  2-6 players) traced step by step in both forms, each in a process of its
  own, hash the same: every field of the state, legal actions, observations,
  random and default actions, chance events, sampled worlds, results, and the
  answer to bad input (tests/engine/differential.py). The reference's
  process runs beside this one's.
* ``make setup`` builds the compiled form where it can; ``CARDROOM_ENGINE``
  chooses; a build from other sources, or none, leaves the reference.

tests/engine/test_engine_equality.py holds whichever form is loaded to the
recorded digests of 7,500 more games; ``CARDROOM_ENGINE=reference`` runs it
on the reference.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import engine
from engine.form import COMPILED_MODULES, ENV
from tests.engine import differential

ROOT = Path(__file__).resolve().parents[2]
compiled = pytest.mark.skipif(
    engine.ENGINE_FORM != "compiled", reason=f"this process runs the reference ({engine.ENGINE_FORM_WHY})"
)


def python(code: str, form: str | None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if form is not None:
        env[ENV] = form
    env["PYTHONPATH"] = str(cwd)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


REPORT = (
    "import json, sys, engine, engine.allegra.game, engine.allegory.game, engine.arrays\n"
    f"files = [sys.modules[m].__file__ for m in {COMPILED_MODULES!r}]\n"
    "print(json.dumps([engine.ENGINE_FORM, engine.ENGINE_FORM_WHY, files]))"
)


def test_make_setup_builds_the_compiled_form_where_a_compiler_is():
    if os.environ.get(ENV) == "reference":
        pytest.skip(f"{ENV}=reference")
    headers = Path(sysconfig.get_paths()["include"], "Python.h").is_file()
    if not (shutil.which("cc") or shutil.which("gcc")) or not headers:
        pytest.skip("no C compiler or no Python headers here: the reference runs, as it should")
    assert engine.ENGINE_FORM == "compiled", engine.ENGINE_FORM_WHY


@compiled
def test_the_switch_chooses_the_form_and_refuses_a_bad_value():
    ref = python(REPORT, "reference")
    form, why, files = json.loads(ref.stdout)
    assert (form, why) == ("reference", f"{ENV}=reference")
    assert all(f.endswith(".py") for f in files), files
    comp = python(REPORT, "compiled")
    form, _why, files = json.loads(comp.stdout)
    assert form == "compiled" and all(".cpython-" in f and f.endswith(".so") for f in files), files
    assert ref.stderr == comp.stderr == ""
    bad = python(REPORT, "fast")
    assert bad.returncode != 0 and f"{ENV} must be 'reference', 'compiled' or 'auto', not 'fast'" in bad.stderr


@compiled
def test_a_build_of_other_sources_is_not_used(tmp_path):
    """Rules edited since the build: the reference runs, with a one-line
    note; no build at all: the reference, silently; CARDROOM_ENGINE=compiled
    then fails saying why."""
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    rules = tmp_path / "engine" / "allegra" / "game.py"
    rules.write_text(rules.read_text() + "\n# edited\n")
    out = python(REPORT, None, tmp_path)
    form, why, files = json.loads(out.stdout)
    assert form == "reference" and "other sources" in why and all(f.endswith(".py") for f in files)
    (note,) = out.stderr.splitlines()
    assert note.startswith("cardroom: the compiled engine was built from other sources") and "reference" in note
    strict = python(REPORT, "compiled", tmp_path)
    assert strict.returncode != 0 and "other sources" in strict.stderr.splitlines()[-1]
    for built in (tmp_path / "engine").rglob("*.so"):
        built.unlink()
    out = python(REPORT, None, tmp_path)
    assert json.loads(out.stdout)[0] == "reference" and out.stderr == ""


@compiled
def test_the_compiled_form_plays_every_game_as_the_reference_does():
    reference = subprocess.Popen(
        [sys.executable, "-m", "tests.engine.differential", "--digests"],
        cwd=ROOT, env=dict(os.environ, **{ENV: "reference"}), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        mine = differential.digests()
        out, _ = reference.communicate(timeout=600)
    finally:
        reference.kill()
        reference.wait()
    theirs = json.loads(out)
    assert theirs["form"] == "reference"
    assert sum(map(len, mine.values())) == len(differential.TABLES) * differential.GAMES_PER_TABLE == 1500
    for table, digests in mine.items():
        differing = [differential.FIRST_SEED + i for i, (a, b) in enumerate(zip(digests, theirs["digests"][table])) if a != b]
        game, n, options = table.split("/", 2)
        assert not differing, (
            f"{table}: {len(differing)} games differ between the forms; see one with CARDROOM_ENGINE=reference"
            f"|compiled python -m tests.engine.differential {game} {n} {differing[0]} '{options}'"
        )


@compiled
def test_a_build_that_does_not_load_leaves_the_reference(tmp_path):
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    (shared,) = (tmp_path / "engine").glob("compiled__mypyc.*")
    shared.write_bytes(b"not an ELF file")
    out = python(REPORT, None, tmp_path)
    form, why, files = json.loads(out.stdout)
    assert form == "reference" and "does not load here" in why and all(f.endswith(".py") for f in files)
    (note,) = out.stderr.splitlines()
    assert note.startswith("cardroom: the compiled engine does not load here") and note.endswith("reference engine")


# A state pickled at every step of seeded random games (both games, 2-6
# players), in the form the process runs, is printed as its fields and the
# rest of its game played from the copy; the same from the original.
PICKLE_GAMES = (
    "import json, pickle, random, sys, engine\n"
    "from tests.engine.differential import _fields\n"
    "out = {'form': engine.ENGINE_FORM, 'games': []}\n"
    "for game in ('allegory', 'allegra'):\n"
    "    for n in range(2, 7):\n"
    "        rng = random.Random(n)\n"
    "        state = engine.new_game(game, n).new_initial_state()\n"
    "        copies = []\n"
    "        while not state.is_terminal():\n"
    "            copy = pickle.loads(pickle.dumps(state))\n"
    "            assert _fields(copy) == _fields(state), (game, n)\n"
    "            assert copy.observation(0) == state.observation(0), (game, n)\n"
    "            copies.append(pickle.dumps(state))\n"
    "            if state.is_chance_node():\n"
    "                state.apply_chance(state.sample_chance(rng))\n"
    "            else:\n"
    "                seat = state.to_act()[0]\n"
    "                state.apply(seat, state.random_action(seat, rng))\n"
    "        # the copy from the middle plays on, with its own stream, to a result\n"
    "        middle = pickle.loads(copies[len(copies) // 2])\n"
    "        play = random.Random(0)\n"
    "        while not middle.is_terminal():\n"
    "            if middle.is_chance_node():\n"
    "                middle.apply_chance(middle.sample_chance(play))\n"
    "            else:\n"
    "                seat = middle.to_act()[0]\n"
    "                middle.apply(seat, middle.random_action(seat, play))\n"
    "        out['games'].append([game, n, len(copies), middle.result().ranks, copies[len(copies) // 2].hex()])\n"
    "print(json.dumps(out))\n"
)


def test_a_state_pickles_and_plays_on_in_both_forms():
    """OpenSpiel's serialization of a sampled world pickles the engine's
    state: mypyc's classes have no default pickling, so the engine gives
    its own, field by field; a pickle made in one form loads in the other."""
    runs = {}
    for form in ("reference", None):  # None: the form this checkout loads (compiled where built)
        done = python(PICKLE_GAMES, form)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[form or "compiled"] = json.loads(done.stdout)
    assert runs["reference"]["form"] == "reference"
    if runs["compiled"]["form"] != "compiled":
        pytest.skip("no compiled engine here: the reference's pickling is checked")
    assert [g[:4] for g in runs["compiled"]["games"]] == [g[:4] for g in runs["reference"]["games"]]
    # and across: the compiled form's middle state, loaded by the reference
    check = (
        "import json, pickle, sys\n"
        "from tests.engine.differential import _fields\n"
        "import engine\n"
        "for game, n, _, _, data in json.load(sys.stdin)['games']:\n"
        "    state = pickle.loads(bytes.fromhex(data))\n"
        "    assert state.num_players == n and state.game.id == game\n"
        "    state.legal_actions(0)\n"
        "print(engine.ENGINE_FORM)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env.update({ENV: "reference", "PYTHONPATH": str(ROOT)})
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=ROOT, env=env, input=json.dumps(runs["compiled"]),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "reference", done.stderr[-2000:]
