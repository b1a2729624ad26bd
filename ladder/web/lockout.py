"""The answer to a login attempt while django-axes has the account or the
address locked out (AXES_LOCKOUT_CALLABLE): a JSON error on the API, the
login page with the message on the web; 429 with Retry-After on both."""

from __future__ import annotations

import math

from axes.helpers import get_cool_off
from django.contrib.auth.forms import AuthenticationForm
from django.http import JsonResponse
from django.shortcuts import render


def lockout_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return (
        "Too many failed logins for this account or from this address: "
        f"logins are refused for {minutes} minute{'s' if minutes != 1 else ''}."
    )


def lockout_response(request, original_response=None, credentials=None):
    cool_off = get_cool_off(request)
    seconds = int(cool_off.total_seconds()) if cool_off else 3600
    message = lockout_message(seconds)
    if request.path.startswith("/api/"):
        response = JsonResponse({"error": message}, status=429)
    else:
        form = AuthenticationForm(request)
        response = render(request, "cardroom/login.html", {"form": form, "limit_error": message}, status=429)
    response["Retry-After"] = str(seconds)
    return response
