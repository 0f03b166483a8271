"""Service errors carry their HTTP status; one handler (in the app) maps them to the JSON error
shape ``{"error": {"code", "message"}}``, which every router documents with ERROR_RESPONSES."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel


class ServiceError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.extra = extra

    def headers(self) -> dict[str, str]:
        return {}


class InvalidRequest(ServiceError):
    """Input that parses but cannot be served (unknown verifier, duplicate ids, bad config)."""

    status_code = 422
    code = "invalid_request"


class Unauthorized(ServiceError):
    """No key, or a key that is unknown, revoked or expired."""

    status_code = 401
    code = "unauthorized"

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}


class Forbidden(ServiceError):
    """A valid key without the scope (or the ownership) the operation needs."""

    status_code = 403
    code = "forbidden"


class NotFound(ServiceError):
    status_code = 404
    code = "not_found"


class Conflict(ServiceError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(ServiceError):
    status_code = 413
    code = "payload_too_large"


def retry_after_header(seconds: float) -> dict[str, str]:
    # Whole seconds, at least one: a client that retries at once would only be refused again.
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


class RateLimited(ServiceError):
    """The caller (its key or its tenant) is past one of its limits: retry after a while. A
    429 rather than a 401 even where a key check is throttled, so a client retries."""

    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after_s: float, *, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return retry_after_header(self.retry_after_s)


class DependencyUnavailable(ServiceError):
    """A database, broker or worker pool does not answer: retry later, nothing was decided."""

    status_code = 503
    code = "dependency_unavailable"

    def __init__(self, dependency: str, detail: str, retry_after_s: int = 2) -> None:
        super().__init__(f"{dependency} unavailable: {detail}", dependency=dependency)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody


def _described(status: int) -> dict[str, str]:
    description = _ERROR_DESCRIPTIONS.get(status)
    return {"description": description} if description else {}


_ERROR_DESCRIPTIONS = {
    400: "bad_request: the body is not JSON at all (syntax, encoding, nesting, a number that "
    "cannot be read).",
    413: "payload_too_large: the body is over RLVR_MAX_BODY_BYTES, an item field over its cap, "
    "or too many items; the message names which.",
    429: "rate_limited (or a more precise code): this key or tenant is past one of its limits, "
    "or its key's checks failed lately; retry after Retry-After seconds.",
    422: "JSON of the wrong shape or values, or a query or path parameter out of its bounds: "
    "the message names the field. Not worth retrying unchanged.",
}
# The error statuses a route may answer, for its OpenAPI description.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, **_described(status)}
    for status in (400, 401, 403, 404, 409, 413, 422, 429, 503)
}
