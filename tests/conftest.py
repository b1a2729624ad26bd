"""Test-wide set-up: config.test_settings (pyproject) gives the ladder tests
the database DATABASE_URL names (PostgreSQL in CI, SQLite by default)."""

import os
from pathlib import Path

import pytest

# scripts/test.sh runs the PostgreSQL pass as two processes side by side
# (decision 289): CARDROOM_TEST_PART=ladder keeps the ladder tests that do
# not depend on processes, the sandbox or the broker's queues (those the
# SQLite pass runs too, and so already run beside the rest), =rest keeps
# every other test. Unset, nothing is set aside.
TEST_PARTS = ("ladder", "rest")
LADDER_TESTS = Path(__file__).resolve().parent / "ladder"


def _in_ladder_part(item) -> bool:
    return item.path.is_relative_to(LADDER_TESTS) and item.get_closest_marker("any_database") is None


def pytest_collection_modifyitems(config, items):
    part = os.environ.get("CARDROOM_TEST_PART", "")
    if not part:
        return
    if part not in TEST_PARTS:
        raise pytest.UsageError(f"CARDROOM_TEST_PART={part!r}: expected one of {', '.join(TEST_PARTS)}, or unset")
    keep, set_aside = [], []
    for item in items:
        (keep if _in_ladder_part(item) == (part == "ladder") else set_aside).append(item)
    if set_aside:
        config.hook.pytest_deselected(items=set_aside)
        items[:] = keep


@pytest.fixture(autouse=True)
def _fresh_shared_cache():
    """Each test starts with an empty shared cache (a file cache under the
    test var directory, which worker processes started by a test share):
    the database is new for every test, so cached pages of an earlier one
    (same ids, other data) must not be served."""
    from django.core.cache import cache

    cache.clear()
    yield


def _built_starter(tmp_path_factory, name: str):
    """bots/starters/NAME copied (less its .gitignore's build products) and
    built there with its own Makefile, as its README tells an author to."""
    import shutil
    import subprocess
    from pathlib import Path

    folder = tmp_path_factory.mktemp("starter") / name
    source = Path(__file__).resolve().parents[1] / "bots" / "starters" / name
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("bot", "target", "Cargo.lock"))
    subprocess.run(["make", "-s"], cwd=folder, check=True, capture_output=True, timeout=120)
    return folder


@pytest.fixture(scope="session")
def cpp_starter(tmp_path_factory):
    """bots/starters/cpp copied and built with its own Makefile, as its
    README tells an author to (never built inside the repository): the
    folder, with the static binary `bot` in it. Built once per session."""
    return _built_starter(tmp_path_factory, "cpp")


@pytest.fixture(scope="session")
def rust_starter(tmp_path_factory):
    """bots/starters/rust copied and built with its own Makefile (rustc
    alone, no cargo), as cpp_starter: the folder, with the static binary
    `bot` in it. Built once per session."""
    return _built_starter(tmp_path_factory, "rust")
