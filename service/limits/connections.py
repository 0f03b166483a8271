"""Connections that never finish sending a request are closed.

uvicorn times a connection out only while it is idle after a response. A connection that sends
nothing, or the start of a request head a byte at a time, or a body slower than any real client,
is kept open for ever; each holds a file descriptor and counts against ``limit_concurrency``
(``RLVR_MAX_CONNECTIONS``), past which uvicorn answers every request 503. A few thousand such
connections (a "slowloris") therefore stopped the service for everyone while costing the
attacker nothing.

Here every request must arrive in time: its head within ``RLVR_REQUEST_HEAD_TIMEOUT_S`` of the
connection opening (or of the previous request's end, on a kept-alive connection: there the
keep-alive timeout governs the idle time before its first byte), and its body within
``RLVR_REQUEST_BODY_TIMEOUT_S`` of its head. A late head is answered 408 and the connection
closed; a late body closes the connection (the application, already running, sees the client
gone and writes nothing). A head is also at most ``MAX_HEAD_BYTES``: uvicorn's httptools
protocol gathers the URL by concatenation, so a megabytes-long request line cost it quadratic
time on the event loop every request shares (431 and closed past the limit).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.metrics import SHED_REQUESTS

# A request line and headers together; far above any client's (nginx allows 8 KB per line).
MAX_HEAD_BYTES = 64 * 1024

_REFUSAL = (
    b"HTTP/1.1 %s\r\n"
    b"content-type: application/json\r\n"
    b"connection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)


def _refusal(status: bytes, code: str, message: str) -> bytes:
    body = b'{"error": {"code": "%s", "message": "%s"}}' % (code.encode(), message.encode())
    return _REFUSAL % (status, len(body), body)


class TimedRequestProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol, with a deadline on reading each request."""

    head_timeout_s = 10.0
    body_timeout_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        # Bytes of the request head being read; None once it is whole (until the next one).
        self._head_bytes: int | None = 0

    @classmethod
    def configured(cls, head_timeout_s: float, body_timeout_s: float) -> type[TimedRequestProtocol]:
        """This protocol with the given deadlines (uvicorn takes a class, not an instance)."""
        return type(
            cls.__name__,
            (cls,),
            {"head_timeout_s": head_timeout_s, "body_timeout_s": body_timeout_s},
        )

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.head_timeout_s, self._head_too_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        # Counted before the parser sees it: a chunk that completes the head (and may carry a
        # body) leaves the count None, and one that ends a body starts the next head at 0.
        if self._head_bytes is not None:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._head_bytes is None or self._head_bytes <= MAX_HEAD_BYTES:
            return
        if not self.transport.is_closing():
            SHED_REQUESTS.labels("request_head_too_large").inc()
            message = f"the request line and headers are over {MAX_HEAD_BYTES} bytes"
            self._refuse(b"431 Request Header Fields Too Large", "request_head_too_large", message)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a kept-alive connection's next request has begun
            self._arm(self.head_timeout_s, self._head_too_late)

    def on_headers_complete(self) -> None:
        self._head_bytes = None
        self._disarm()
        self._arm(self.body_timeout_s, self._body_too_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._head_bytes = 0  # what comes next on this connection is the next request's head
        self._disarm()
        super().on_message_complete()

    def _arm(self, seconds: float, handler: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, handler)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _head_too_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        SHED_REQUESTS.labels("request_head_timeout").inc()
        message = f"the request head did not arrive within {self.head_timeout_s:g} s"
        self._refuse(b"408 Request Timeout", "request_timeout", message)

    def _refuse(self, status: bytes, code: str, message: str) -> None:
        self._disarm()
        self.transport.write(_refusal(status, code, message))
        self.transport.close()

    def _body_too_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        SHED_REQUESTS.labels("request_body_timeout").inc()
        self.transport.close()
