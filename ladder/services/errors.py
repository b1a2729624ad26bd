"""The refusals the services raise, by kind. A service says what went
wrong, never how it is answered over HTTP: the API turns a refusal into a
JSON error (ladder.api.errors.status_of gives the status) and the web pages
into a message on the form or a page of its own.

* ``InvalidInput``: the input is wrong; ``field`` names it.
* ``TooLarge``: an upload over its limit (an ``InvalidInput`` of its own).
* ``NotFound``: the thing named does not exist (for this person).
* ``Forbidden``: it exists, but this person may not do that to it.
* ``Conflict``: the request is fine, but the state of things forbids it now
  (an event that is not running, a decision answered already).
* ``QuotaExceeded``: a per-user limit would be passed; ``retry_later`` says
  whether waiting helps (a rate) or not (a cap).
"""

from __future__ import annotations


class ServiceError(Exception):
    """A request the service refuses; ``field`` names the input at fault,
    where one is. Raise one of the kinds below."""

    def __init__(self, message: str, field: str | None = None):
        self.message = message
        self.field = field
        super().__init__(message)


class InvalidInput(ServiceError):
    """Bad input: ``field`` names it (and the message says what is wanted)."""


class TooLarge(InvalidInput):
    """An upload larger than its limit."""


class NotFound(ServiceError):
    """No such thing (or none this person may see)."""


class Forbidden(ServiceError):
    """The thing exists, but this person may not do this to it."""


class Conflict(ServiceError):
    """The state of things forbids the request now."""


class QuotaExceeded(ServiceError):
    """A per-user quota (ladder.services.quotas) would be exceeded: ``quota``
    names it, ``limit`` is its setting's value; the message says what to do.
    ``retry_later``: waiting frees the quota (a rate, open matches), as
    opposed to a cap that waiting does not lift."""

    def __init__(self, quota: str, limit: int, message: str, retry_later: bool):
        super().__init__(message, None)
        self.quota = quota
        self.limit = limit
        self.retry_later = retry_later
