"""A local SMTP server that keeps what it is sent, and may answer slowly
(aiosmtpd, a dev dependency): for the e-mail tests and
benchmarks/reset_timing.py. Not used by the running platform.

    with SmtpSink(delay=0.6) as sink:     # EMAIL_URL=smtp://127.0.0.1:{sink.port}
        ...
        sink.wait_for(1)                  # the messages, as email.message.Message
"""

from __future__ import annotations

import asyncio
import email
import threading
import time

from ladder.hosting.proxy import _free_port


class _Handler:
    def __init__(self, delay: float):
        self.delay = delay
        self.messages: list[email.message.Message] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        # A slow server (a remote relay, greylisting): every message costs this much.
        await asyncio.sleep(self.delay)
        with self.lock:
            self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"


class SmtpSink:
    def __init__(self, delay: float = 0.0, port: int | None = None):
        from aiosmtpd.controller import Controller

        self.port = port or _free_port()
        self.handler = _Handler(delay)
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port)

    @property
    def messages(self) -> list[email.message.Message]:
        with self.handler.lock:
            return list(self.handler.messages)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[email.message.Message]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.messages) >= count:
                return self.messages
            time.sleep(0.05)
        raise AssertionError(f"the SMTP sink got {len(self.messages)} messages in {timeout} s, not {count}")

    def __enter__(self) -> SmtpSink:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()
