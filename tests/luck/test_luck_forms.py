"""The luck estimator's compiled kernel (cardroom/luck/kernel.py, decision 270)
against its reference, and the value functions' numbers of record.

* Every versioned value function gives, on the tests' replays, exactly the
  luck it gave before the kernel existed (tests/data/luck-of-record.json,
  written by the estimator as it was then): a version's numbers never move.
* Both forms (``CARDROOM_ENGINE=reference`` runs the kernel's ``.py``) give
  the same luck bit for bit on many matches of both games, 2-6 players,
  with every value function; a build of another kernel source is not used.
* Allegory's worth of a hand with a Pool card, tallied once per seat, is
  the float of the whole hand tallied with the card in it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cardroom.luck
import engine
from cardroom.luck import luck_of
from cardroom.luck.allegory import AllegoryAdapter, AllegoryValue
from cardroom.luck.allegra import (
    AllegraAdapter,
    EnderAllegraValue,
    FittedAllegraValue,
    NetAllegraValue,
    OutcomeAllegraValue,
)
from cardroom.luck.estimator import luck_with
from cardroom.luck.kernel import CHIP, EMPTY_TALE, PAIR, W_SECOND, W_THIRD, Tales
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from engine.allegory.game import CARD_TALE, CARD_THEME, CARD_VALUE
from engine.form import ENV

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "data" / "luck-of-record.json"
compiled = pytest.mark.skipif(
    cardroom.luck.KERNEL_FORM != "compiled", reason=f"the kernel runs its reference ({cardroom.luck.KERNEL_FORM_WHY})"
)

# every value function of every game, as (game, make the adapter) — allegra-net@2 and allegory-net@1 by luck_of
ALLEGRA_OTHERS = (FittedAllegraValue, OutcomeAllegraValue, EnderAllegraValue, NetAllegraValue)
ALLEGORY_OTHERS = (AllegoryValue,)


def all_luck(doc: dict) -> list[tuple[str, list[float]]]:
    """(value function, each seat's luck) of a replay with every value function of its game."""
    reports = [luck_of(doc)]
    if doc["game"] == "allegra":
        reports += [luck_with(doc, lambda _g, make=make: AllegraAdapter(make())) for make in ALLEGRA_OTHERS]
    else:
        reports += [luck_with(doc, lambda _g, make=make: AllegoryAdapter(make())) for make in ALLEGORY_OTHERS]
    return [(r.value_function, [s.luck for s in r.seats]) for r in reports]


def test_the_value_functions_give_their_numbers_of_record():
    rows = json.loads(RECORD.read_text(encoding="utf-8"))
    assert len(rows) == 33  # 4 Allegory replays by 2 value functions, 5 Allegra ones by 5
    for row in rows:
        doc = json.loads((ROOT / "tests" / "data" / "replays" / row["replay"]).read_text(encoding="utf-8"))
        got = dict(all_luck(doc))
        assert got[row["value_function"]] == row["luck"], (row["replay"], row["value_function"])


def test_the_kernel_is_compiled_where_the_engine_is():
    if engine.ENGINE_FORM != "compiled":
        assert cardroom.luck.KERNEL_FORM == "reference"
        pytest.skip(f"the engine runs its reference ({engine.ENGINE_FORM_WHY})")
    assert cardroom.luck.KERNEL_FORM == "compiled", cardroom.luck.KERNEL_FORM_WHY
    assert cardroom.luck.kernel.__file__.endswith(".so")


def matches() -> list[dict]:
    """Random and greedy matches of both games at every table size."""
    from bots import builtin_chooser

    docs = []
    for game in ("allegory", "allegra"):
        for n in range(2, 7):
            for i in range(4):
                greedy = i % 2 == 1
                players = [
                    InProcessPlayer("greedy", builtin_chooser("greedy", game))
                    if greedy
                    else InProcessPlayer("random", None)
                    for _ in range(n)
                ]
                docs.append(run_match(game, players, seed=270_000 + 100 * n + i).replay)
    return docs


def doc_lines(doc: dict) -> list[str]:
    """One line per value function of a replay, its floats as repr writes them (exactly)."""
    return [
        f"{doc['game']} {doc['num_players']}p seed {doc['seed']} {vf}: {' '.join(map(repr, luck))}"
        for vf, luck in all_luck(doc)
    ]


def luck_lines(docs: list[dict]) -> list[str]:
    return [line for doc in docs for line in doc_lines(doc)]


REFERENCE_LUCK = """
import json, sys
import cardroom.luck
from tests.luck.test_luck_forms import doc_lines
assert cardroom.luck.KERNEL_FORM == "reference", cardroom.luck.KERNEL_FORM_WHY
print(json.dumps([doc_lines(doc) for doc in json.load(open(sys.argv[1]))]))
"""


@compiled
def test_both_forms_give_the_same_luck_bit_for_bit(tmp_path):
    docs = matches() + [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "data" / "replays").glob("*.json"))]
    env = dict(os.environ, **{ENV: "reference"}, PYTHONPATH=str(ROOT))
    # The reference form is the slow one: two processes, each half of the
    # replays, while this one computes the compiled form's lines.
    halves = (docs[0::2], docs[1::2])
    procs = []
    for i, half in enumerate(halves):
        path = tmp_path / f"docs-{i}.json"
        path.write_text(json.dumps(half))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", REFERENCE_LUCK, str(path)], cwd=ROOT, env=env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
        )  # fmt: skip
    mine = luck_lines(docs)
    per_doc = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        per_doc.append(json.loads(out))
    # Back in the replays' order: the even ones from the first process, the odd from the second.
    reference = [line for i in range(len(docs)) for line in per_doc[i % 2][i // 2]]
    assert len(mine) == len(reference) == 20 * 2 + 20 * 5 + 4 * 2 + 5 * 5
    differing = [(a, b) for a, b in zip(mine, reference) if a != b]
    assert not differing, f"{len(differing)} differ; the first, compiled then reference: {differing[0]}"


REPORT = (
    "import json, engine, cardroom.luck, cardroom.luck.kernel as k\n"
    "print(json.dumps([engine.ENGINE_FORM, cardroom.luck.KERNEL_FORM, cardroom.luck.KERNEL_FORM_WHY, k.__file__]))"
)


@compiled
def test_a_kernel_built_from_other_source_is_not_used(tmp_path):
    """The kernel edited since the build: its .py runs, with a one-line
    note, the engine still compiled; no kernel build at all: its .py,
    silently."""
    for folder in ("engine", "cardroom"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    kernel = tmp_path / "cardroom" / "luck" / "kernel.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = str(tmp_path)

    def report() -> tuple[list, str]:
        out = subprocess.run([sys.executable, "-c", REPORT], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout), out.stderr

    (engine_form, form, why, path), err = report()
    assert (engine_form, form) == ("compiled", "reference") and "another kernel.py" in why and path.endswith(".py")
    (note,) = err.splitlines()
    assert note.startswith("cardroom: cardroom.luck.kernel was built from another kernel.py") and "pure-Python" in note
    for built in (tmp_path / "cardroom" / "luck").glob("*.so"):
        built.unlink()
    (engine_form, form, why, path), err = report()
    assert (engine_form, form, err) == ("compiled", "reference", "") and "not built" in why and path.endswith(".py")


def whole_hand_worth(state, seat: int, extra: int = -1, chips: int = 0) -> float:
    """allegory-tales@1's worth as it was first written: the whole hand
    tallied with the card in it, every time."""
    tales = state.tales[seat]
    totals, sizes = [0, 0, 0], [0, 0, 0]
    themes: dict[int, int] = {}
    moral, moral_tales = state.morals[seat], 0
    for t in range(3):
        has_moral = False
        for c in [*tales[t], *([extra] if extra >= 0 and CARD_TALE[extra] == t else [])]:
            totals[t] += CARD_VALUE[c]
            sizes[t] += 1
            themes[CARD_THEME[c]] = themes.get(CARD_THEME[c], 0) + 1
            has_moral = has_moral or CARD_THEME[c] == moral
        moral_tales += has_moral
    a, b, c = sorted(totals)
    score = a + W_SECOND * b + W_THIRD * c - EMPTY_TALE * sizes.count(0)
    for count in themes.values():
        score += 2 * (count // 3) + (PAIR if count % 3 == 2 else 0.0)
    return score + moral_tales + CHIP * (state.chips[seat] + chips)


def test_a_seats_worth_with_a_card_is_its_whole_hand_tallied():
    rng = random.Random(270)
    checked = 0
    for n in (2, 3, 4, 6):
        for _game in range(6):
            game = engine.new_game("allegory", n)
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_chance(state.sample_chance(rng))
                    continue
                for seat in range(n):
                    tales = Tales(state, seat)
                    for card in [-1, *game.cards_in_play[rng.randrange(4) :: 4]]:
                        chips = rng.randrange(4)
                        assert tales.worth(card, chips) == whole_hand_worth(state, seat, card, chips)
                        checked += 1
                seat = state.to_act()[0]
                state.apply(seat, state.random_action(seat, rng))
    assert checked > 10_000
