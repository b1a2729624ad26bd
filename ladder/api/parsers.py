"""Request parsers of the API: one bounded JSON parser for every body."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.parsers import JSONParser

from cardroom.players import BotFault, decode_reply


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


def nul_field(value: Any, path: str = "") -> str | None:
    """Where the first string of a parsed body holding a NUL is (as a
    field path, ``opponents[0]``, ``options.x``), or None. PostgreSQL takes
    no NUL in text or jsonb: passed on to a query, one was a 500."""
    if isinstance(value, str):
        return (path or "(the body)") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if "\x00" in key:
                return where.replace("\x00", "\\0")
            found = nul_field(item, where)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = nul_field(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


class LimitedJSONParser(JSONParser):
    """Every JSON body of the API, a seat's answer as much as a sign-in:
    at most CARDROOM_MAX_JSON_BYTES (a larger body is a 413 saying the
    limit, never parsed), read by the bounded parse a bot's reply line
    meets (cardroom.players.decode_reply: bounded numbers and nesting, no
    NaN, no repeated keys; a body nested 1,000 deep was a RecursionError
    and a 500), and holding no NUL in any string (a 400 naming the field).
    (DRF hands JSON parsers the body read whole, up to
    DATA_UPLOAD_MAX_MEMORY_SIZE; past that, Django's RequestDataTooBig is a
    413 too: ladder.api.errors.)"""

    def parse(self, stream, media_type=None, parser_context=None):
        data = self.read_limited(stream, parser_context)
        try:
            value = decode_reply(data, "body")
        except BotFault as exc:
            raise ParseError(f"the body is not the JSON the API takes: {exc.detail}") from None
        field = nul_field(value)
        if field is not None:
            raise ValidationError({field: ["holds a NUL character (\\u0000), which no field takes"]})
        return value

    @staticmethod
    def read_limited(stream, parser_context) -> bytes:
        limit = settings.CARDROOM_MAX_JSON_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(f"the JSON body is {int(declared)} bytes; the limit is {limit} bytes")
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise BodyTooLarge(f"the JSON body is more than {limit} bytes; the limit is {limit} bytes")
        return data
