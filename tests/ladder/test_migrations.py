"""The ladder's migrations are one clean sequence (issue 25, the house):
no two migrations share a number, none is a merge, each depends on the one
before, and the models need no migration the sequence lacks."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader


def _ladder_migrations():
    loader = MigrationLoader(None, ignore_no_migrations=True)  # the files only
    return {name: m for (app, name), m in loader.disk_migrations.items() if app == "ladder"}


def test_the_ladder_migrations_are_one_linear_sequence():
    migrations = _ladder_migrations()
    names = sorted(migrations)
    numbers = [name.split("_", 1)[0] for name in names]
    assert len(set(numbers)) == len(numbers), f"two migrations share a number: {names}"
    assert numbers == [f"{i:04d}" for i in range(1, len(names) + 1)], names
    for previous, name in zip([None, *names], names):
        ladder_parents = [dep for app, dep in migrations[name].dependencies if app == "ladder"]
        assert ladder_parents == ([previous] if previous else []), f"{name} depends on {ladder_parents}"


@pytest.mark.django_db
def test_the_models_need_no_migration_the_sequence_lacks():
    out = io.StringIO()
    call_command("makemigrations", "ladder", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
