"""Fixtures shared by the ladder tests."""

from __future__ import annotations

import pytest

from tests.ladder import factories as f


@pytest.fixture
def fresh_limits(settings):
    """Fast password hashes, and every cache empty (the rate limits' too)."""
    f.fast_passwords(settings)
    f.clear_caches()
    yield
    f.clear_caches()
