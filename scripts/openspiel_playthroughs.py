"""Writes (or, with --check, compares) the OpenSpiel playthroughs of both
games: OpenSpiel's own ``generate_playthrough`` over ``python_allegory`` and
``python_allegra`` at 2 players, its random choices drawn from a fixed seed,
into tests/data/playthroughs/. Run it with a Python that has the wheel's
``research`` extra (open_spiel), from the checkout:

    PYTHONPATH=. var/research-venv/*/venv/bin/python scripts/openspiel_playthroughs.py

after a change that alters what a game shows OpenSpiel (then review the
diff and commit it); tests/sdk/test_research_envs.py re-plays the files as
OpenSpiel's integration test does and fails on any difference.

The check formats only the tensors of the states the text shows (see
``_formatting_shown_states_only``); writing runs OpenSpiel's code untouched,
so a check that came out otherwise than OpenSpiel would fail."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from absl import flags
from open_spiel.python.algorithms import generate_playthrough

import cardroom_sdk.envs.openspiel  # noqa: F401 (registers the games)

GAMES = ("python_allegory", "python_allegra")
SEED = 38  # the playthrough's uniformly random actions, chance included, come from this seed
DIRECTORY = Path(__file__).resolve().parent.parent / "tests" / "data" / "playthroughs"


@contextmanager
def _formatting_shown_states_only():
    """generate_playthrough formats every tensor of every state and then
    keeps the lines of the states its ShouldDisplayStateTracker picks (a
    seat's first three and every tenth, chance's first two): 19 of
    Allegory's 156 states, 25 of Allegra's 527. Formatting has no effect but its lines (a pure function of the
    tensor), so the text is the same when the others are not formatted; the
    observers still fill every tensor of every state. With the
    perfect-recall tensor (half a million floats in Allegra) formatting was
    nearly all of the check's time."""
    module = generate_playthrough
    tracker_class, format_tensor = module.ShouldDisplayStateTracker, module._format_tensor
    shown = [True]

    class Tracker(tracker_class):
        def __call__(self, state) -> bool:
            shown[0] = super().__call__(state)
            return shown[0]

    def format_shown(tensor, tensor_name, *args, **kwargs):
        return format_tensor(tensor, tensor_name, *args, **kwargs) if shown[0] else []

    module.ShouldDisplayStateTracker, module._format_tensor = Tracker, format_shown
    try:
        yield
    finally:
        module.ShouldDisplayStateTracker, module._format_tensor = tracker_class, format_tensor


def differences(path: Path) -> str | None:
    """None if re-playing ``path``'s actions gives the file again, else the first differing line."""
    with _formatting_shown_states_only():
        original, again = generate_playthrough.replay(str(path))
    if original == again:
        return None
    old, new = original.splitlines(), again.splitlines()
    for k, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return f"{path.name} line {k + 1}:\n  file:  {a[:300]}\n  again: {b[:300]}"
    return f"{path.name}: {len(old)} lines in the file, {len(new)} again"


def main(argv: list[str]) -> int:
    flags.FLAGS.mark_as_parsed()  # generate_playthrough reads an absl flag (action ids, its default)
    directory = Path(next((a.split("=", 1)[1] for a in argv if a.startswith("--dir=")), DIRECTORY))
    if "--check" in argv:
        found = [differences(directory / f"{game}.txt") for game in GAMES]
        for problem in filter(None, found):
            print(problem)
        return 1 if any(found) else 0
    directory.mkdir(parents=True, exist_ok=True)
    for game in GAMES:
        text = generate_playthrough.playthrough(game, action_sequence=None, seed=SEED)
        (directory / f"{game}.txt").write_text(text, encoding="utf-8")
        print(f"wrote {directory / f'{game}.txt'} ({len(text):,} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
