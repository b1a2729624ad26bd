"""Django's Redis cache backend, with one client object per connection pool
instead of one per cache call.

Django's RedisCacheClient.get_client() builds a new ``redis.Redis`` for every
get, set or get_many, and redis-py builds each client's table of ~170
response callbacks afresh (redis-py issue #3624): about half of what a
cached public read cost the web app. A client over a connection pool is
safe to share between threads, so it is built once per pool; everything
else (pools, serializer, options, CACHE_URL) is Django's.

config/settings.py puts this backend in place of Django's wherever CACHE_URL
or LIMITS_CACHE_URL names Redis.
"""

from __future__ import annotations

from django.core.cache.backends import redis as django_redis


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}  # id(pool) -> its client (the pools live as long as we do)

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient
