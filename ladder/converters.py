"""Path converters: an id in a URL is a 64-bit row id (1 to 2**63 - 1); a
seat is a small number. Anything else does not match the path, so it is a
404 like any unknown path, never a database error (a number past bigint
overflows PostgreSQL's and SQLite's integers)."""

from __future__ import annotations

from django.urls import register_converter

MAX_ID = 2**63 - 1


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= MAX_ID:
            raise ValueError(f"{value} is not a row id")
        return number

    def to_url(self, value) -> str:
        return str(value)


class SeatConverter:
    regex = "[0-9]{1,4}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)


register_converter(IdConverter, "id")
register_converter(SeatConverter, "seat")
