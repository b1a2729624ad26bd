"""The copy the wheel and `make dist` tests build from (tests/worktree.py)."""

from __future__ import annotations

import subprocess

from tests.worktree import copy_sources


def _git(repo, *argv):
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)


def test_the_copy_holds_the_sources_as_they_stand_and_no_cache(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / ".gitignore").write_text(".hypothesis/\nvar/\n")
    (repo / "pkg" / "kept.py").write_text("committed\n")
    (repo / "pkg" / "gone.py").write_text("deleted before the copy\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start")
    (repo / "pkg" / "kept.py").write_text("changed, not committed\n")
    (repo / "pkg" / "gone.py").unlink()
    (repo / "pkg" / "new.py").write_text("untracked\n")
    # what another part of the suite writes meanwhile: never walked
    (repo / ".hypothesis" / "constants").mkdir(parents=True)
    (repo / ".hypothesis" / "constants" / ".tmp-x").write_text("")
    (repo / "var").mkdir()
    (repo / "var" / "db.sqlite3").write_text("")

    copy = copy_sources(tmp_path / "copy", root=repo)

    files = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
    assert files == [".gitignore", "pkg/kept.py", "pkg/new.py"]
    assert (copy / "pkg" / "kept.py").read_text() == "changed, not committed\n"


def test_without_git_the_copy_still_leaves_the_caches_out(tmp_path):
    tree = tmp_path / "tarball"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("a\n")
    (tree / ".hypothesis").mkdir()
    (tree / ".hypothesis" / "x").write_text("")
    (tree / ".venv").mkdir()

    copy = copy_sources(tmp_path / "copy", root=tree)

    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == ["pkg", "pkg/a.py"]
