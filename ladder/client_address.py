"""Who is asking: the client's address behind CARDROOM_TRUSTED_PROXIES
reverse proxies, and the account a login attempt is for. The rate limits
(DRF and the web forms) and django-axes all ask these two functions."""

from __future__ import annotations

import ipaddress
import unicodedata

from django.conf import settings


def client_address(request) -> str | None:
    """The address of the client that sent ``request`` (None when there is
    none at all: a request made in-process, such as the test client's login).

    With no trusted proxy, X-Forwarded-For is ignored: anyone can write it.
    With N proxies, each appends the address it saw, so the N-th entry from
    the right was written by the outermost proxy we trust; what lies left of
    it came from the client and proves nothing."""
    remote = request.META.get("REMOTE_ADDR") or ""
    proxies = settings.CARDROOM_TRUSTED_PROXIES
    if proxies > 0:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if forwarded:
            candidate = forwarded[-min(proxies, len(forwarded))]
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                pass  # not an address: the proxy's own peer address it is
    return remote or None


def fold_username(name: str) -> str:
    """A username as uniqueness and lockouts compare it: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", name or "").casefold()


def login_username(request, credentials: dict | None) -> str | None:
    """The account a login attempt is for (django-axes' AXES_USERNAME_CALLABLE):
    "ALICE" and "alice" count against one lockout."""
    name = (credentials or {}).get("username")
    if name is None and request is not None and request.method == "POST":
        name = request.POST.get("username")
    return fold_username(name) if name else None
