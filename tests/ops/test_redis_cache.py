"""The shared cache on Redis (ladder.hosting.redis_cache): Django's backend,
with one Redis client per connection pool rather than one built for every
cache call (each build set up ~170 response callbacks: half the cost of a
cached public read)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import redis

from ladder.hosting.redis_cache import RedisCache
from tests.ops.procs import ROOT

REDIS_URL = os.environ.get("CELERY_BROKER_URL", "")

needs_redis = pytest.mark.skipif(not REDIS_URL.startswith("redis://"), reason="CELERY_BROKER_URL names no Redis")


@pytest.fixture
def store():
    cache = RedisCache(REDIS_URL, {"KEY_PREFIX": "test-redis-cache"})
    yield cache
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter("test-redis-cache:*"):
        client.delete(key)


@needs_redis
def test_every_call_shares_one_client_and_the_cache_still_behaves(store, monkeypatch):
    built = []
    original = redis.Redis.__init__

    def counting_init(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counting_init)
    store.set("a", {"page": b"x" * 100}, 30)
    assert store.get("a") == {"page": b"x" * 100}
    assert store.add("a", 1, 30) is False and store.add("n", 1, 30) is True
    assert store.incr("n") == 2
    store.set_many({"b": 2, "c": [3]}, 30)
    assert store.get_many(["a", "b", "c", "missing"]) == {"a": {"page": b"x" * 100}, "b": 2, "c": [3]}
    store.delete("a")
    assert store.get("a", "gone") == "gone"
    for _ in range(50):
        store.get("b")
    assert len(built) == 1  # (Django's own backend: one per call, 60 here)


def test_production_settings_use_it_for_both_caches():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "redis-cache-test-not-a-secret",
        "CACHE_URL": "redis://cache.invalid:6379/0",
        "LIMITS_CACHE_URL": "redis://limits.invalid:6379/1",
    }
    code = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'], settings.CACHES['limits']['BACKEND'])"
    out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ladder.hosting.redis_cache.RedisCache"] * 2
