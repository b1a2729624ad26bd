"""Path converters: an id in a URL is a 64-bit row id (1 to 2**63 - 1); a
seat and a version number are small numbers. Anything else does not match the path, so it is a
404 like any unknown path, never a database error (a number past bigint
overflows PostgreSQL's and SQLite's integers)."""

from __future__ import annotations

from django.urls import register_converter

MAX_ID = 2**63 - 1


class _BoundedIntConverter:
    """A whole number from ``low`` to ``high`` (``regex`` bounds its digits,
    so ``int`` never sees a huge string)."""

    regex: str
    low: int
    high: int
    what: str

    def to_python(self, value: str) -> int:
        number = int(value)
        if not self.low <= number <= self.high:
            raise ValueError(f"{value} is not a {self.what}")
        return number

    def to_url(self, value) -> str:
        return str(value)


class IdConverter(_BoundedIntConverter):
    regex, low, high, what = "[0-9]{1,19}", 1, MAX_ID, "row id"


class SeatConverter(_BoundedIntConverter):
    regex, low, high, what = "[0-9]{1,4}", 0, 9999, "seat"


class VersionNumberConverter(_BoundedIntConverter):
    """A bot's version number (a 32-bit column): 1 to 999,999,999."""

    regex, low, high, what = "[0-9]{1,9}", 1, 999_999_999, "version number"


class EventActionConverter:
    """What staff may do to a tournament from its page (any other word: a 404)."""

    regex = "pause|resume|cancel"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


register_converter(IdConverter, "id")
register_converter(SeatConverter, "seat")
register_converter(VersionNumberConverter, "version")
register_converter(EventActionConverter, "event_action")
