"""The admission gate: a work request the service would shed is refused before it costs anything.

Shedding at ``Limits.admit`` comes after the body is read and parsed, the key checked (a
database read when not cached), and the key's limits counted in Redis: at twice the capacity
those refusals took as much of the API's one event loop as the work it kept, every request (the
audit reads too) waited ~10 s before it was seen, and the refusals themselves came after
seconds. The gate answers 503 + ``Retry-After`` from the request line alone whenever
``Limits.refusal`` says a one-item request would be shed right now: the same thresholds, asked
earlier. What passes meets every limit as before. Likewise, a request whose key its own
limits refused lately (``per_key``: requests per second, requests in flight) is answered its 429
here while they would still refuse it, without reading the body or checking the key again: at
twice the capacity most refusals are these, and each used to wait behind the work it was
refused to protect.

It also sees the queue that is the API's own: a request read whole waits for its key's check,
the key's limits and one of the API's threads before it reaches ``admit``, and at twice the
capacity that wait, not the workers, grew without bound. The gate times each work request from
its body's last byte to its admission; while the oldest has waited longer than
``RLVR_MAX_ADMISSION_WAIT_S``, new work is refused at once.

The body is never read: the response is a complete keep-alive answer, and the server discards
the rest of the body as it arrives (uvicorn does), so the client reads the 503 rather than a
connection reset under its request.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from service.errors import ServiceError
from service.limits.policy import Limits
from service.metrics import SHED_REQUESTS
from service.validation import ASGIApp, Message, Receive, Scope, Send

# The routes that compute rewards: each holds items in flight until its chunks come back.
WORK_PATHS = frozenset({"/v1/rewards", "/v1/fine_tuning/alpha/graders/run"})
WORK_PREFIXES = ("/compat/",)


def is_work_request(scope: Scope) -> bool:
    """A request that would be admitted (or shed) by ``Limits.admit``: health, metrics, audit
    reads and the dashboard never are, so they are never gated."""
    if scope.get("method") != "POST":
        return False
    path: str = scope.get("path", "")
    return path in WORK_PATHS or path.startswith(WORK_PREFIXES)


class AdmissionGate:
    """ASGI middleware: a work request that would be shed gets its 503 before its body is read,
    and a request whose key is past its own limits its 429.

    ``limits`` returns the reward service's ``Limits`` once the application has started (None
    before: then every request passes, and ``admit`` still holds the line). ``key_of`` returns
    the id of the request's key when that key has been verified before (None otherwise: an
    unverified key is never counted against, nor refused for, the key it names).
    """

    def __init__(
        self,
        app: ASGIApp,
        limits: Callable[[], Limits | None],
        key_of: Callable[[Scope], str | None] | None = None,
    ) -> None:
        self.app = app
        self.limits = limits
        self.key_of = key_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limits = self.limits() if scope["type"] == "http" and is_work_request(scope) else None
        if limits is None:
            await self.app(scope, receive, send)
            return
        refusal: tuple[str, ServiceError] | None = limits.refusal(1)
        key_id = self.key_of(scope) if refusal is None and self.key_of is not None else None
        if key_id is not None:
            refusal = await limits.key_refusal(key_id)
        if refusal is not None:
            reason, error = refusal
            SHED_REQUESTS.labels(f"gate_{reason}").inc()
            await _respond(send, error.status_code, error.code, error.message, error.headers())
            return
        with limits.arriving() as body_read:

            async def receive_timed() -> Message:
                message = await receive()
                if message["type"] == "http.request" and not message.get("more_body", False):
                    # Read whole: from here the request waits only for this process.
                    body_read()
                return message

            await self.app(scope, receive_timed, send)


async def _respond(
    send: Send, status: int, code: str, message: str, headers: dict[str, str]
) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *((name.lower().encode(), value.encode()) for name, value in headers.items()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
