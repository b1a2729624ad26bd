"""The operator's status page and its JSON (ladder.services.ops.status)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.cache import cache
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ladder.services import ops

# The public JSON is computed at most this often per web process: a public
# endpoint must not let anyone make the database count matches at will.
PUBLIC_CACHE_SECONDS = 5
_CACHE_KEY = "cardroom:ops:status:public"


def _public_status() -> dict:
    doc = cache.get(_CACHE_KEY)
    if doc is None:
        doc = ops.status()
        cache.set(_CACHE_KEY, doc, PUBLIC_CACHE_SECONDS)
    return doc


@require_GET
@never_cache
def status_json(request):
    """Counts only for everyone; a staff user also gets the workers' list
    (computed fresh)."""
    if request.user.is_authenticated and request.user.is_staff:
        doc = ops.status(with_workers=True)
    else:
        doc = _public_status()
    response = JsonResponse(doc)
    response["Access-Control-Allow-Origin"] = "*"  # counts only: any dashboard may read them
    return response


@require_GET
@never_cache
@staff_member_required
def status_page(request):
    doc = ops.status(with_workers=True)
    failures = [
        {"kind": kind, **numbers} for kind, numbers in doc["failures_last_24h"].items()
    ]
    return render(
        request,
        "ops/status.html",
        {"status": doc, "failures": failures, "workers": doc["workers"].get("list", []), "refresh": 10},
    )
