"""Reading what is left of a request body the view did not read.

A view that answers before reading the body (a 401 for an upload without a
token, a 429, a 400 on the form's other fields) leaves it unread in the
socket. gunicorn then closes a connection that still holds unread data,
which makes the kernel send a reset instead of a plain close, and nginx,
still writing the body upstream or about to read the answer, may get the
reset first: the client sees the proxy's 502 instead of our 401
(benoitc/gunicorn#872). Reading the rest (bounded by the largest body
the proxy lets through) lets the connection close cleanly.
"""

from __future__ import annotations

from django.conf import settings

CHUNK_BYTES = 64 * 1024


class DrainUnreadBodyMiddleware:
    """First in MIDDLEWARE: after the response is built, reads and drops the
    rest of the request body, up to ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (what the
    proxy lets through; a larger body is not worth reading: the connection
    is reset, as before)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        drain_request_body(request)
        return response


def drain_request_body(request) -> int:
    """Read what is left of ``request``'s body; the bytes read."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if length <= 0 or (limit is not None and length > limit):
        return 0
    drained = 0
    try:
        # Django's stream stops at CONTENT_LENGTH. Once a form or its files
        # were parsed nothing is left; after request.body it is read again
        # from memory (a bounded, cheap copy).
        while chunk := request.read(CHUNK_BYTES):
            drained += len(chunk)
    except Exception:  # noqa: BLE001 - a client gone mid-body: nothing to keep clean
        pass
    return drained
