"""Checks every request passes before any view sees it, so that no view can
forget them:

* a NUL byte in a query parameter (its name or its value) is a 400 naming
  the parameter: PostgreSQL refuses NUL in text, and a filter passed on to
  a query was a 500 (``?owner=%00``);
* an ``Authorization`` header must carry a working API token (``Token
  <key>``): another scheme, or a key no active account holds, is a 401.
  Answered anonymously instead, such a request skipped both caches (the
  proxy's and ladder.caching's skip every request with credentials) while
  costing what a visitor's does: anyone could send every request past them.
  The two endpoints that issue tokens take no credentials, and ignore a
  stale one (``cardroom login`` may still hold it).

JSON under /api/ (the API's error shape), a page elsewhere.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

# url names of the views that take no credentials (ladder.api.views).
CREDENTIAL_FREE = frozenset({"api-register", "api-token"})


def _refuse(request: HttpRequest, status: int, message: str, field: str | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        body = {"error": message, **({"field": field} if field else {})}
        response = JsonResponse(body, status=status)
    else:
        title = "Not signed in" if status == 401 else "Bad request"
        response = render(request, "cardroom/bad_request.html", {"message": message, "title": title}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = "Token"
    return response


def nul_parameter(request: HttpRequest) -> str | None:
    """The first query parameter holding a NUL byte (its name), if any."""
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in v for v in values):
            return name
    return None


def authorization_problem(request: HttpRequest) -> str | None:
    """What is wrong with the request's Authorization header (None: nothing,
    or no header at all)."""
    header = request.META.get("HTTP_AUTHORIZATION")
    if header is None:
        return None
    parts = header.split()
    if len(parts) != 2 or parts[0].lower() != "token":
        shown = (parts[0][:20] + " …") if parts else "(empty)"
        return f"the Authorization header takes 'Token <key>' (the API token of your account page), not {shown!r}"
    try:
        TokenAuthentication().authenticate_credentials(parts[1])
    except AuthenticationFailed:
        return "invalid token: it is not (or no longer) an account's API token; take the current one from your account page"
    return None


class RequestChecksMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        name = nul_parameter(request)
        if name is not None:
            shown = name.replace("\x00", "\\0")[:40]
            return _refuse(request, 400, f"the query parameter {shown!r} holds a NUL byte, which no parameter takes", shown)
        problem = authorization_problem(request)
        if problem is not None and not self._credential_free(request):
            return _refuse(request, 401, problem)
        return self.get_response(request)

    @staticmethod
    def _credential_free(request: HttpRequest) -> bool:
        try:
            return resolve(request.path_info).url_name in CREDENTIAL_FREE
        except Resolver404:
            return False
