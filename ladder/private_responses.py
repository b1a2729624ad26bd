"""``Cache-Control: private, no-store`` on every response that may hold
private data, decided in one place so that no view can forget it (issue 36,
item 7; decision 193): the account page shows the API token, a casual
seat's JSON shows a hidden hand, a bot's logs are its owner's.

A response is private when it answers a signed-in request (a session or an
API token: ladder.request_checks lets only a working token through), when
it sets a cookie (a session, a CSRF token), or when it is one of the
answers that hand an anonymous client a secret (``PRIVATE_URL_NAMES``: a
new token, a password-reset form). A view that says its response is
public (``Cache-Control: public``: a replay, a match's frames, a download,
static files) keeps its own header: what it serves is the same for
everyone. Anything else is left as it was (the public reads'
``public, max-age=0, must-revalidate``, ladder.caching).
"""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import Resolver404, resolve
from django.utils.cache import patch_cache_control

PRIVATE_CACHE_CONTROL = "private, no-store"
# Anonymous requests whose answers hold a secret: a new API token, a
# password-reset form (its link is the credential), an e-mail check.
PRIVATE_URL_NAMES = frozenset({"api-token", "api-register", "web-password-reset-confirm", "web-verify-email"})


def signed_in(request: HttpRequest) -> bool:
    if "HTTP_AUTHORIZATION" in request.META:
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def _private_url(request: HttpRequest) -> bool:
    try:
        return resolve(request.path_info).url_name in PRIVATE_URL_NAMES
    except Resolver404:
        return False


def is_private(request: HttpRequest, response) -> bool:
    if "public" in response.get("Cache-Control", ""):
        return False
    return bool(response.cookies) or signed_in(request) or _private_url(request)


class PrivateResponseMiddleware:
    """Just inside the public-read cache (which stores no response marked
    private): sees every response the inner middleware and views built,
    cookies included."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        response = self.get_response(request)
        if is_private(request, response):
            # Replaces any max-age or no-cache a view set: no copy is kept anywhere.
            if response.has_header("Cache-Control"):
                del response["Cache-Control"]
            patch_cache_control(response, private=True, no_store=True)
        return response
