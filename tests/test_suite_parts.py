"""scripts/test.sh runs the PostgreSQL pass as two processes (decision 289):
CARDROOM_TEST_PART must split the tests in two without losing or repeating
one, and refuse a part it does not know (a typo would silently run nothing)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A ladder file of each kind and one from outside tests/ladder.
FILES = ["tests/ladder/test_worker_kill.py", "tests/ladder/test_abuse_limits.py", "tests/luck/test_luck_draws.py"]


def collected(part: str | None) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "CARDROOM_TEST_PART"}
    if part is not None:
        env["CARDROOM_TEST_PART"] = part
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", *FILES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    return run.returncode, ids + ([run.stderr] if run.returncode not in (0, 5) else [])


def test_the_two_parts_split_the_tests_without_loss_or_overlap():
    code, everything = collected(None)
    assert code == 0, everything
    code, ladder = collected("ladder")
    assert code == 0, ladder
    code, rest = collected("rest")
    assert code == 0, rest
    assert sorted(ladder + rest) == sorted(everything)
    assert not set(ladder) & set(rest)
    # The ladder part is the SQLite pass's selection: tests/ladder, less any_database.
    assert ladder and all(t.startswith("tests/ladder/test_abuse_limits.py::") for t in ladder)
    assert any(t.startswith("tests/ladder/test_worker_kill.py::") for t in rest)
    assert any(t.startswith("tests/luck/") for t in rest)


def test_an_unknown_part_is_refused_by_name():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", FILES[1]],
        cwd=ROOT,
        env={**os.environ, "CARDROOM_TEST_PART": "ladders"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 4, run.stdout + run.stderr
    assert "CARDROOM_TEST_PART='ladders'" in run.stdout + run.stderr
