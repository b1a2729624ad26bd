"""Errors are JSON with a clear message (and the field at fault); never a 500
page, never a traceback."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler

from cardroom.sizes import format_size
from ladder.api.serializers import ErrorOutput
from ladder.services.errors import Conflict, Forbidden, InvalidInput, NotFound, QuotaExceeded, ServiceError, TooLarge

log = logging.getLogger("cardroom.api")

ERRORS = {
    400: OpenApiResponse(ErrorOutput, description="bad input"),
    401: OpenApiResponse(ErrorOutput, description="not signed in"),
    403: OpenApiResponse(ErrorOutput, description="not allowed"),
    404: OpenApiResponse(ErrorOutput, description="no such thing"),
    409: OpenApiResponse(ErrorOutput, description="conflict"),
    413: OpenApiResponse(ErrorOutput, description="too large"),
    415: OpenApiResponse(ErrorOutput, description="a body type the operation does not take"),
    429: OpenApiResponse(ErrorOutput, description="too many requests"),
}


class FilterError(Exception):
    """A bad query parameter: a 400 naming it (raised by the views, turned
    into the response here)."""

    def __init__(self, message, field):
        self.message, self.field = message, field


def errors(*codes: int) -> dict:
    """The documented error responses of an operation (401: a bad token is
    refused on every operation that reads one)."""
    return {code: ERRORS[code] for code in codes}


def error_response(message: str, field: str | None, code: int, headers=None) -> Response:
    body = {"error": message}
    if field:
        body["field"] = field
    return Response(body, status=code, headers=headers)


def _first_message(detail, path: str = "") -> tuple[str, str | None]:
    """Flatten DRF's nested validation errors into (message, field)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            sub = f"{path}.{name}" if path and name else (name or path)
            message, field = _first_message(value, sub)
            return message, field
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    text = str(detail)
    return (f"{path}: {text}" if path else text), (path or None)


# The status of each kind of refusal (ladder.services.errors): the one place
# a service's refusal becomes an HTTP status (the web views use it too).
STATUS_OF_REFUSAL: tuple[tuple[type[ServiceError], int], ...] = (
    (TooLarge, 413),
    (InvalidInput, 400),
    (NotFound, 404),
    (Forbidden, 403),
    (Conflict, 409),
)


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a service's refusal: a quota that waiting frees is
    a 429 (try later), one that it does not a 403 (decision 29)."""
    if isinstance(exc, QuotaExceeded):
        return 429 if exc.retry_later else 403
    return next((status for kind, status in STATUS_OF_REFUSAL if isinstance(exc, kind)), 400)


def exception_handler(exc, context):
    if isinstance(exc, QuotaExceeded):
        response = error_response(exc.message, exc.field, status_of(exc))
        response.data.update({"quota": exc.quota, "limit": exc.limit})
        return response
    if isinstance(exc, ServiceError):
        return error_response(exc.message, exc.field, status_of(exc))
    if isinstance(exc, FilterError):
        return error_response(exc.message, exc.field, 400)
    if isinstance(exc, Http404):
        return error_response("not found: check the id in the path (GET /api/ lists the resources)", None, 404)
    if isinstance(exc, RequestDataTooBig):  # Django's DATA_UPLOAD_MAX_MEMORY_SIZE, before any parser
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_response(f"the request body is too large: the limit is {format_size(limit)}", None, 413)
    if isinstance(exc, PermissionDenied):
        return error_response("not allowed for this account", None, 403)
    response = drf_handler(exc, context)
    if response is None:
        log.exception("unhandled API error", exc_info=exc)
        return error_response("internal error: the problem was logged; try again later", None, status.HTTP_500_INTERNAL_SERVER_ERROR)
    # DRF's own headers stay: WWW-Authenticate on a 401, Retry-After on a 429.
    headers = {k: response[k] for k in ("WWW-Authenticate", "Retry-After") if response.has_header(k)}
    if isinstance(exc, exceptions.ValidationError):
        message, field = _first_message(exc.detail)
        return error_response(message, field, response.status_code, headers)
    detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
    return error_response(str(detail), None, response.status_code, headers)
