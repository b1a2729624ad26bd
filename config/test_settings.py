"""Settings for the test suite: the real settings, with a fixed test secret
and the test var directory. DATABASE_URL and CELERY_BROKER_URL still come
from the environment (PostgreSQL and Redis in CI)."""

import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret")
os.environ.setdefault("CARDROOM_VAR_DIR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from config.settings import *  # noqa: E402,F403

# Tests create many users: a fast hasher (never used outside tests).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The quick built-ins only: the suites' time limits and match counts are
# set for bots that answer at once (tests/sdk/test_ismcts.py plays the search bot).
CARDROOM_BUILTIN_BOTS = ["greedy", "random"]

# Static files straight from the apps (no collectstatic before tests).
WHITENOISE_USE_FINDERS = True

# Single ladder matches unless a test asks for duplicate sets
# (tests/ladder/test_duplicate_sets.py): the suites count queued matches
# against the queue's target, which a set may pass by up to k - 1.
CARDROOM_DUPLICATE_SETS: list[str] = []
