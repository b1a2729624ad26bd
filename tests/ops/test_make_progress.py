"""A cold `make demo` says what it is doing before each long, quiet step
(issue 36: it was silent for about two minutes, pip and then the compile).
`make -n -B` prints every step of a cold run without running one."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.ops.procs import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def test_a_cold_make_demo_announces_pip_and_the_compile_before_they_run():
    steps = subprocess.run(["make", "-n", "-B", "--no-print-directory", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert steps.returncode == 0, steps.stderr
    lines = steps.stdout.splitlines()

    def first(fragment: str) -> int:
        return next(i for i, line in enumerate(lines) if fragment in line)

    pip = first("pip install --quiet -e")
    compile_ = first("scripts/build_engine.py")
    assert "[1/3]" in lines[pip - 1] and "installing cardroom and its dependencies" in lines[pip - 1]
    assert "[2/3] compiling the game rules with mypyc" in lines[compile_ - 1] and "about a minute" in lines[compile_ - 1]
    assert first("[1/3] creating") < first("-m venv") and first("[3/3]") < first("manage.py demo")
