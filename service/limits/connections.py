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
gone and writes nothing).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.metrics import SHED_REQUESTS

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: application/json\r\n"
    b"connection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)


def _timeout_body(message: str) -> bytes:
    body = b'{"error": {"code": "request_timeout", "message": "%s"}}' % message.encode()
    return _TIMED_OUT % (len(body), body)


class TimedRequestProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol, with a deadline on reading each request."""

    head_timeout_s = 10.0
    body_timeout_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

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

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a kept-alive connection's next request has begun
            self._arm(self.head_timeout_s, self._head_too_late)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._arm(self.body_timeout_s, self._body_too_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
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
        self.transport.write(_timeout_body(message))
        self.transport.close()

    def _body_too_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        SHED_REQUESTS.labels("request_body_timeout").inc()
        self.transport.close()
