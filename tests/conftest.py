"""Test-wide set-up: config.test_settings (pyproject) gives the ladder tests
the database DATABASE_URL names (PostgreSQL in CI, SQLite by default)."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_shared_cache():
    """Each test starts with an empty shared cache (a file cache under the
    test var directory, which worker processes started by a test share):
    the database is new for every test, so cached pages of an earlier one
    (same ids, other data) must not be served."""
    from django.core.cache import cache

    cache.clear()
    yield
