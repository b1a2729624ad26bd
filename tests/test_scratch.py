"""cardroom.scratch: a folder stays while the process that made it lives,
however long, and goes with the next sweep once that process is SIGKILLed;
nothing else under the scratch folder is touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cardroom.scratch import owned_folder, sweep

ROOT = Path(__file__).resolve().parents[1]

HOLDER = """
import sys, time
from pathlib import Path
from cardroom.scratch import owned_folder
with owned_folder(Path(sys.argv[1]), "cardroom-m7-") as folder:
    (folder / "bot.py").write_text("print('a copy of a bot')")
    print(folder, flush=True)
    time.sleep(120)
"""


def start_holder(root: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    assert line, "the holder did not make its folder"
    return proc, Path(line)


def test_a_live_owners_folder_stays_and_a_killed_ones_is_swept(tmp_path):
    root = tmp_path / "scratch"
    live, live_folder = start_holder(root)
    doomed, doomed_folder = start_holder(root)
    try:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=10)
        assert (doomed_folder / "bot.py").exists()  # the kill left it behind

        assert sweep(root) == [str(doomed_folder)]
        assert not doomed_folder.exists()
        assert (live_folder / "bot.py").exists()  # its owner lives: untouched
        assert sweep(root) == []
    finally:
        live.kill()
        live.wait(timeout=10)
    assert sweep(root) == [str(live_folder)]
    assert list(root.iterdir()) == []


def test_a_folder_goes_when_its_block_ends_normally_or_not(tmp_path):
    root = tmp_path / "scratch"
    with owned_folder(root, "cardroom-m1-") as folder:
        (folder / "seat-0").mkdir()
        assert sweep(root) == []  # this process owns it
        assert folder.is_dir()
    assert not folder.exists()
    with pytest.raises(RuntimeError), owned_folder(root, "cardroom-m2-") as folder:
        raise RuntimeError("the match failed")
    assert not folder.exists()
    assert os.listdir(root) == []


def test_the_sweep_follows_no_link_and_removes_no_file(tmp_path):
    root = tmp_path / "scratch"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("not a worker's")
    (root / "cardroom-m3-link").symlink_to(elsewhere)
    (root / "cardroom-m4-file").write_text("a file, not a match folder")
    assert sweep(root) == []
    assert (elsewhere / "precious").exists() and (root / "cardroom-m4-file").exists()
    assert sweep(tmp_path / "missing") == []  # no scratch folder yet: nothing to do
