"""The upload guard every multipart request goes through (FILE_UPLOAD_HANDLERS):
a file over CARDROOM_MAX_UPLOAD_BYTES is dropped at the limit, so no upload,
however large, is written in full to memory or to /tmp."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile

from cardroom.sizes import format_size


class UploadLimit(FileUploadHandler):
    """Drops an uploaded file once it is over the limit (the rest of it is
    read and thrown away; the other form fields are still read)."""

    def __init__(self, request=None, limit: int | None = None):
        super().__init__(request)
        self.limit = settings.CARDROOM_MAX_UPLOAD_BYTES if limit is None else limit
        self.too_large: str | None = None  # the name of the file that was

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            self.too_large = self.file_name or "the file"
            raise SkipFile
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handler keeps the file


def too_large_upload(request) -> str | None:
    """After the body was parsed: the message for a file the guard dropped, or None."""
    for handler in getattr(request, "upload_handlers", []):
        if isinstance(handler, UploadLimit) and handler.too_large:
            # Only its first bytes were read: how much larger it was is not known.
            return f"{handler.too_large}: the package is over the size limit for an uploaded package; the limit is {format_size(handler.limit)}"
    return None
