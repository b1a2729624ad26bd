"""Rate limits, one set for the API and the web forms: DRF's throttles,
counting in the shared "limits" cache (Redis in production, a database table
in the embedded default), keyed by the signed-in user or else by
ladder.client_address.client_address. A web form and its API endpoint
share a scope, so alternating between them buys nothing.

Scopes (rates in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]): register (sign
up), login (token and login form), upload (bot versions), bot (new bots),
reset (password resets, per client), mail-address (e-mails to one address,
keyed by that address rather than by who asks)."""

from __future__ import annotations

import math
from types import SimpleNamespace

from django.core.cache import caches
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class ScopedThrottle(ScopedRateThrottle):
    """DRF's ScopedRateThrottle on the shared store, with our client address,
    reading the rates when used (a settings override takes effect)."""

    @property
    def cache(self):
        return caches["limits"]

    def get_rate(self):
        self.THROTTLE_RATES = api_settings.DEFAULT_THROTTLE_RATES
        return super().get_rate()

    def get_ident(self, request):
        from ladder.client_address import client_address

        return client_address(request) or "unknown"


class Refusal:
    """A request over its limit: what to tell the user, and when to come back."""

    def __init__(self, seconds: int):
        self.retry_after = seconds
        self.message = too_many_message(seconds)


class KeyedThrottle(ScopedThrottle):
    """A scope counted per ``key`` (a target, not the client)."""

    def __init__(self, key: str):
        self.key = key

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.key}


def refusal(request, scope: str, key: str | None = None) -> Refusal | None:
    """Count a web-form request against ``scope`` (per ``key`` when given):
    None when it may go on."""
    throttle = ScopedThrottle() if key is None else KeyedThrottle(key)
    if throttle.allow_request(request, SimpleNamespace(throttle_scope=scope)):
        return None
    return Refusal(retry_after(throttle))


def retry_after(throttle) -> int:
    wait = throttle.wait()
    return max(1, math.ceil(wait)) if wait is not None else 1


def too_many_message(seconds: int) -> str:
    when = f"{seconds} seconds" if seconds < 120 else f"{math.ceil(seconds / 60)} minutes"
    return f"Too many requests: this limit is reached. Try again in {when}."
