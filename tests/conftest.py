"""Test-wide set-up: config.test_settings (pyproject) gives the ladder tests
the database DATABASE_URL names (PostgreSQL in CI, SQLite by default)."""
