"""The refusals the services raise (the API turns them into JSON errors,
the web forms into a message on the form)."""

from __future__ import annotations


class ServiceError(Exception):
    """A request the service refuses; ``field`` names the input at fault."""

    def __init__(self, message: str, field: str | None = None, status: int = 400):
        self.message = message
        self.field = field
        self.status = status
        super().__init__(message)


class QuotaExceeded(ServiceError):
    """A per-user quota (ladder.services.quotas) would be exceeded: ``quota``
    names it, ``limit`` is its setting's value; the message says what to do."""

    def __init__(self, quota: str, limit: int, message: str, status: int):
        super().__init__(message, None, status)
        self.quota = quota
        self.limit = limit
