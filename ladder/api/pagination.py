import re

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination

from ladder.converters import MAX_ID


class StrictPageSize:
    """``page_size`` is a whole number from 1 (a larger one gets the
    maximum); anything else is a 400, not silently the default."""

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw in (None, ""):
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if size < 1:
            raise ValidationError(
                {self.page_size_query_param: [f"page_size must be a whole number from 1 to {self.max_page_size}, not {raw!r}"]}
            )
        return min(size, self.max_page_size)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1}
        return parameters


class Pagination(StrictPageSize, PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    last_page_strings = ()  # the schema says page is a number: no "last"

    def get_page_number(self, request, paginator):
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if re.fullmatch(r"[0-9]+", raw):
            return raw  # a number past the end is a 404 ("Invalid page.")
        raise ValidationError({self.page_query_param: [f"page must be a whole number from 1, not {raw!r}"]})

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1}
        return parameters


class StandingsPagination(Pagination):
    """A ladder's standings: the page, and beside it ``adjusted_ranking``
    (the view puts it in the answer; its schema is here)."""

    def get_paginated_response_schema(self, schema):
        out = super().get_paginated_response_schema(schema)
        out["properties"]["adjusted_ranking"] = {
            "type": "object",
            "nullable": True,
            "description": "the luck-adjusted ranking's model and inputs (docs/ladder.md, \"The adjusted rating on the ladder\"); "
            "null before its first computation",
            "properties": {
                "model": {"type": "string"},
                "value_functions": {"type": "array", "items": {"type": "string"}},
                "matches": {"type": "integer"},
                "adjusted_matches": {"type": "integer"},
                "settle_matches": {"type": "integer", "nullable": True},
                "computed": {"type": "string", "format": "date-time"},
            },
        }
        return out


class MatchCursorPagination(StrictPageSize, CursorPagination):
    """Matches page by cursor: no COUNT over millions of rows, stable while
    new matches arrive."""

    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def decode_cursor(self, request):
        # A bad cursor is bad input: a 400 naming it (DRF says 404). DRF
        # checks the cursor's encoding but not the position inside it
        # (?cursor=cD1hYmM= is "p=abc"), which would reach the query as
        # id < 'abc', a 500: the position must be an id.
        bad = ValidationError({self.cursor_query_param: ["invalid cursor: use the next/previous links of a page as they are"]})
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise bad from None
        if cursor is not None and cursor.position is not None:
            position = str(cursor.position)
            if not re.fullmatch(r"[0-9]{1,19}", position) or int(position) > MAX_ID:
                raise bad
        return cursor
