"""A copy of the checkout's sources as they stand, committed or not.

Tests that build the wheel or run `make dist` work on a copy, never in the
checkout: the suite's other parts run beside them there. The copy holds
what git would commit (tracked files plus untracked ones not ignored), so
the caches another part is writing at that moment (.hypothesis,
.pytest_cache, var/) are never walked: a copytree of the whole folder once
failed on a temporary file Hypothesis removed while it was being copied.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# without git (a source tarball), what the copy leaves out
_NOT_SOURCES = shutil.ignore_patterns(
    ".venv*",
    "var",
    "dist",
    "build",
    ".git",
    "*.so",
    "*.egg-info",
    "node_modules",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
)


def source_files(root: Path = ROOT) -> list[str] | None:
    """The paths git would commit from `root`, or None where git cannot say."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [name for name in done.stdout.decode().split("\0") if name]


def copy_sources(destination: Path, root: Path = ROOT) -> Path:
    """Copy the checkout's sources into `destination` (which must not exist)."""
    names = source_files(root)
    if names is None:
        shutil.copytree(root, destination, ignore=_NOT_SOURCES)
        return destination
    destination.mkdir(parents=True)
    for name in names:
        source = root / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree and not yet committed
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return destination
