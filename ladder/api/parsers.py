"""Request parsers of the API: JSON with a size limit."""

from __future__ import annotations

from io import BytesIO

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from cardroom.players import BotFault, decode_reply


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class LimitedJSONParser(JSONParser):
    """JSONParser that takes at most CARDROOM_MAX_JSON_BYTES: a larger body
    is a 413 saying the limit, never parsed. (DRF hands JSON parsers the body
    read whole, up to DATA_UPLOAD_MAX_MEMORY_SIZE; past that, Django's
    RequestDataTooBig is a 413 too: ladder.api.errors.)"""

    def parse(self, stream, media_type=None, parser_context=None):
        return super().parse(BytesIO(self.read_limited(stream, parser_context)), media_type, parser_context)

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


class ReplyJSONParser(LimitedJSONParser):
    """The body of a human seat's answer (POST /api/play/{id}/action/): read
    by the bounded parse a bot's reply line meets (cardroom.players.
    decode_reply: bounded numbers and nesting, no NaN, no repeated keys)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = self.read_limited(stream, parser_context)
        try:
            return decode_reply(data)
        except BotFault as exc:
            raise ParseError(f"the body is not the JSON the API takes: {exc.detail}") from None
