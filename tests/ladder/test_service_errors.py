"""Services refuse by kind (ladder.services.errors), and only the edges
turn a kind into an HTTP status (ladder.api.errors.status_of, the web
views): no service passes a status (issue 39)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ladder.api.errors import status_of
from ladder.services import errors

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "ladder" / "services"
HTTP_CODE = re.compile(r"^[1-5]\d\d$")
REFUSALS = ("Error", "Exceeded", "Found", "Forbidden", "Conflict", "Input", "Large")


HTTP_MODULES = ("rest_framework.status", "rest_framework.response", "rest_framework.exceptions", "django.http", "http")


def _is_code(node: ast.AST) -> bool:
    """A three-digit number, or a named one (``status.HTTP_404_NOT_FOUND``, ``HTTPStatus.CONFLICT``)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int and bool(HTTP_CODE.match(str(node.value)))
    return isinstance(node, ast.Attribute) and (node.attr.startswith("HTTP_") or ast.unparse(node.value).endswith("HTTPStatus"))


def http_statuses(source: str) -> list[int]:
    """Lines that pass an HTTP status: a ``status=`` given a code, a code
    as an argument of a refusal (``…Error(…, 404)``, ``QuotaExceeded(…,
    429)``), a named code anywhere, or an import of HTTP's statuses,
    responses or exceptions. (``status=`` of a query is a model field.)"""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            if any(kw.arg in ("status", "status_code") and _is_code(kw.value) for kw in node.keywords):
                lines.append(node.lineno)
            elif any(_is_code(a) for a in node.args) and ast.unparse(node.func).endswith(REFUSALS):
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and _is_code(node):
            lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.startswith(HTTP_MODULES) for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            names = [f"{node.module}.{a.name}" for a in node.names]
            if any(n.startswith(HTTP_MODULES) for n in [node.module or "", *names]):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_no_service_passes_an_http_status():
    found = []
    for path in sorted(SERVICES.rglob("*.py")):
        found += [f"{path.relative_to(ROOT)}:{line}" for line in http_statuses(path.read_text())]
    assert found == [], "raise a kind of ServiceError (ladder.services.errors); the edge maps it to a status"


@pytest.mark.parametrize(
    "source",
    [
        'raise ServiceError("no", None, 404)',
        'raise QuotaExceeded("uploads", 3, "wait", 429)',
        'return Response({}, status=400)',
        "from rest_framework import status",
        "code = status.HTTP_409_CONFLICT",
        "raise Conflict('not now', status=HTTPStatus.CONFLICT)",
        "from http import HTTPStatus",
    ],
)
def test_the_check_sees_a_planted_status(source):
    assert http_statuses(source) == [1]


def test_each_kind_of_refusal_has_its_status_at_the_edge():
    assert status_of(errors.InvalidInput("bad", "name")) == 400
    assert status_of(errors.TooLarge("big", "file")) == 413
    assert status_of(errors.NotFound("none")) == 404
    assert status_of(errors.Forbidden("not yours")) == 403
    assert status_of(errors.Conflict("not now")) == 409
    assert status_of(errors.QuotaExceeded("uploads", 3, "wait an hour", retry_later=True)) == 429
    assert status_of(errors.QuotaExceeded("bots", 0, "none allowed", retry_later=False)) == 403


def test_an_invalid_input_names_its_field():
    exc = errors.InvalidInput("seat must be a seat number from 0 to 2", "seat")
    assert (exc.field, exc.message, str(exc)) == ("seat", "seat must be a seat number from 0 to 2", exc.message)
