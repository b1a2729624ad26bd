"""A bot's large files, copied once and hard-linked into each run folder
(cardroom/sandbox/filecache.py, decision 168), on the real sandbox: what
the bot sees, that it cannot write them, that a changed package is never
served stale, and that the cache empties itself without taking a file from
a running bot."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from cardroom.sandbox import filecache

from .conftest import RecordingLauncher, assert_host_clean
from .test_sandbox import finish, read_line, start

pytestmark = pytest.mark.sandbox

BIG = 100_000

# Reports its large file as it sees it, tries to write it, then waits for a
# line (so that two runs can be alive at once) and reports it again.
LOOKER = """
import hashlib, json, os, sys
def look():
    st = os.stat("big.bin")
    try:
        with open("big.bin", "r+b") as f:
            f.write(b"x")
        wrote = "wrote it"
    except OSError as exc:
        wrote = exc.strerror
    data = open("big.bin", "rb").read()
    return {"uid": st.st_uid, "mode": oct(st.st_mode & 0o777), "links": st.st_nlink, "size": len(data),
            "sha": hashlib.sha256(data).hexdigest(), "write": wrote}
print(json.dumps(look()), flush=True)
sys.stdin.readline()
print(json.dumps(look()), flush=True)
"""


@pytest.fixture
def cache(bwrap_launcher) -> Path:
    """The real cache, emptied of what earlier tests left (none of it in use
    by them any more)."""
    folder = filecache.cache_dir()
    for entry in folder.iterdir():
        if entry.stat().st_nlink == 1:
            entry.unlink()
    filecache.sweep()  # this process's count of the bytes held, afresh
    return folder


def _package(folder: Path, data: bytes) -> Path:
    """The folder ``start(launcher, folder, code)`` makes the bot's, with
    ``data`` in its big.bin."""
    root = folder / "bot"
    root.mkdir(parents=True, exist_ok=True)
    (root / "big.bin").write_bytes(data)
    return root


def _entries_of(folder: Path, source: Path) -> list[Path]:
    ino = os.stat(source).st_ino
    return [p for p in folder.iterdir() if p.name.split("-")[1] == f"{ino:x}"]


def test_two_runs_share_one_read_only_copy_of_a_large_file(bwrap_launcher, cache, tmp_path):
    data = os.urandom(BIG)
    _package(tmp_path, data)
    recording = RecordingLauncher(bwrap_launcher)
    first = start(recording, tmp_path, LOOKER)
    second = start(recording, tmp_path, LOOKER)
    try:
        seen = [json.loads(read_line(p.stdout_fd)) for p in (first, second)]
        [entry] = _entries_of(cache, tmp_path / "bot" / "big.bin")
        for view in seen:
            assert view["mode"] == "0o644" and view["size"] == BIG
            assert view["sha"] == hashlib.sha256(data).hexdigest()
            assert view["write"] in ("Read-only file system", "Permission denied")
        assert os.stat(entry).st_nlink == 3  # the cache's and the two run folders'
        assert (os.stat(entry).st_uid, oct(os.stat(entry).st_mode & 0o777)) == (0, "0o644")
        assert oct(os.stat(cache).st_mode & 0o777) == "0o700"  # only root enters: a bot reaches it only through its run folder
        for proc in (first, second):
            assert os.stat(proc.run_dir / "big.bin").st_ino == os.stat(entry).st_ino
            os.write(proc.stdin.fileno(), b"\n")
        out = [finish(p)[0].splitlines()[-1] for p in (first, second)]
        assert all(json.loads(line)["sha"] == seen[0]["sha"] for line in out)
    finally:
        first.kill()
        second.kill()
    assert os.stat(entry).st_nlink == 1  # the run folders are gone; the copy waits for the next run
    assert_host_clean(recording.procs)


def test_every_file_in_every_folder_is_linked(bwrap_launcher, cache, tmp_path):
    root = _package(tmp_path, b"x" * 100)
    (root / "data").mkdir()
    (root / "data" / "weights.txt").write_text("1 2 3")
    proc = start(bwrap_launcher, tmp_path, "print(open('data/weights.txt').read(), flush=True)\n" + LOOKER)
    try:
        assert read_line(proc.stdout_fd) == b"1 2 3\n"
        view = json.loads(read_line(proc.stdout_fd))
        assert view["links"] == 2 and view["size"] == 100
        for name in ("big.bin", "bot.py", "data/weights.txt"):
            [entry] = _entries_of(cache, root / name)
            assert os.stat(proc.run_dir / name).st_ino == os.stat(entry).st_ino
        assert oct(os.stat(entry).st_mode & 0o777) == "0o644"
    finally:
        proc.kill()


def test_a_changed_file_is_never_served_stale(bwrap_launcher, cache, tmp_path):
    """The same size, the same inode, written again: the next run sees the
    new bytes (the key holds the change time)."""
    big = _package(tmp_path, b"a" * BIG) / "big.bin"
    before = start(bwrap_launcher, tmp_path, LOOKER)
    try:
        assert json.loads(read_line(before.stdout_fd))["sha"] == hashlib.sha256(b"a" * BIG).hexdigest()
    finally:
        before.kill()
    time.sleep(0.01)
    with open(big, "r+b") as f:  # in place: the inode stays
        f.write(b"b" * BIG)
    after = start(bwrap_launcher, tmp_path, LOOKER)
    try:
        assert json.loads(read_line(after.stdout_fd))["sha"] == hashlib.sha256(b"b" * BIG).hexdigest()
    finally:
        after.kill()
    assert len(_entries_of(cache, big)) == 2


def test_a_file_changed_while_it_is_copied_is_not_cached(bwrap_launcher, cache, tmp_path, monkeypatch):
    big = _package(tmp_path, b"a" * BIG) / "big.bin"
    real_copy = shutil.copyfile

    def copy_then_change(source, target, **kwargs):
        result = real_copy(source, target, **kwargs)
        if Path(target).parent == cache and Path(source).name == "big.bin":
            with open(source, "ab") as f:  # the author's build writes on
                f.write(b"more")
        return result

    monkeypatch.setattr(filecache.shutil, "copyfile", copy_then_change)
    proc = start(bwrap_launcher, tmp_path, LOOKER)
    try:
        view = json.loads(read_line(proc.stdout_fd))
        assert view["links"] == 1  # a copy of its own
    finally:
        proc.kill()
    assert not _entries_of(cache, big)
    assert not [p for p in cache.iterdir() if p.name.startswith("tmp-")]


def test_the_sweep_removes_idle_entries_and_never_one_in_use(bwrap_launcher, cache, tmp_path, monkeypatch):
    idle_source = _package(tmp_path / "a", os.urandom(BIG))
    busy_source = _package(tmp_path / "b", os.urandom(BIG))
    for folder in (tmp_path / "a", tmp_path / "b"):
        finish(start(bwrap_launcher, folder, "print('ok')"))
    busy = start(bwrap_launcher, tmp_path / "b", LOOKER)  # still running at the sweep
    try:
        read_line(busy.stdout_fd)
        crashed = cache / "tmp-999999-1"  # what a worker killed mid-copy leaves
        crashed.write_bytes(b"x")
        assert _entries_of(cache, idle_source / "big.bin") and _entries_of(cache, busy_source / "big.bin")
        later = time.time() + filecache.IDLE_S + 1
        monkeypatch.setattr(filecache.time, "time", lambda: later)
        filecache.sweep()
        assert not _entries_of(cache, idle_source / "big.bin")
        assert not crashed.exists()
        [kept] = _entries_of(cache, busy_source / "big.bin")
        os.write(busy.stdin.fileno(), b"\n")
        assert json.loads(finish(busy)[0].splitlines()[-1])["size"] == BIG
    finally:
        busy.kill()
    assert kept.exists()


def test_a_full_cache_makes_room_or_copies(bwrap_launcher, cache, tmp_path, monkeypatch):
    """Over its size: an entry no run links goes first; entries in use
    stay, and the new run gets a copy of its own."""
    big = 700_000  # three of them (and the bots' small files) over 2 MiB, two under
    monkeypatch.setenv("CARDROOM_SANDBOX_FILE_CACHE_MIB", "2")
    sources = []
    for name in "abc":
        sources.append(_package(tmp_path / name, os.urandom(big)) / "big.bin")
    finish(start(bwrap_launcher, tmp_path / "a", "print('ok')"))  # cached, then unused
    running = [start(bwrap_launcher, tmp_path / name, LOOKER) for name in "bc"]
    try:
        assert [json.loads(read_line(p.stdout_fd))["links"] for p in running] == [2, 2]
        assert not _entries_of(cache, sources[0])  # made room for c
        third = start(bwrap_launcher, tmp_path / "a", LOOKER)  # full of entries in use
        try:
            view = json.loads(read_line(third.stdout_fd))
            assert view["links"] == 1 and view["size"] == big
        finally:
            third.kill()
        assert not _entries_of(cache, sources[0])
    finally:
        for proc in running:
            proc.kill()


def test_the_cache_turned_off_copies_and_a_bad_size_refuses(bwrap_launcher, cache, tmp_path, monkeypatch, reprobe):
    big = _package(tmp_path, os.urandom(BIG)) / "big.bin"
    monkeypatch.setenv("CARDROOM_SANDBOX_FILE_CACHE_MIB", "0")
    proc = start(bwrap_launcher, tmp_path, LOOKER)
    try:
        assert json.loads(read_line(proc.stdout_fd))["links"] == 1
    finally:
        proc.kill()
    assert not _entries_of(cache, big)
    monkeypatch.setenv("CARDROOM_SANDBOX_FILE_CACHE_MIB", "lots")
    report = reprobe()
    assert not report.ok
    assert report.error == "CARDROOM_SANDBOX_FILE_CACHE_MIB='lots': expected a whole number of MiB, such as 512 (0: no cache)"
