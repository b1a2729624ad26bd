"""`make dist` builds the author's wheel without the development venv
(issue 38, item 6): from a clone with no .venv, only a small venv of its own
is made, and the wheel holds the author's toolkit and nothing of the server."""

from __future__ import annotations

import subprocess
import zipfile

import pytest

from tests.worktree import copy_sources

pytestmark = pytest.mark.slow


def test_make_dist_builds_the_wheel_without_the_development_venv(tmp_path):
    clone = tmp_path / "clone"
    # The working tree as it is (committed or not): what `make dist` would see here.
    copy_sources(clone)
    done = subprocess.run(["make", "-s", "dist"], cwd=clone, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (clone / ".venv").exists(), "make dist made the development venv"
    size = sum(p.stat().st_size for p in (clone / ".venv-dist").rglob("*") if p.is_file())
    assert size < 100 * 2**20, f"the build venv holds {size / 2**20:.0f} MiB"
    (wheel,) = (clone / "dist").glob("cardroom-*-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert {"engine", "cardroom_sdk", "cardroom", "bots"} <= top
    assert not top & {"ladder", "config", "tests"}, top
    assert "cardroom/sandbox/bot_exec.c" in names
