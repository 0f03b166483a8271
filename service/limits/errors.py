"""The service's answer when it is full: 503 (a caller over its share gets
``service.errors.RateLimited``, 429)."""

from __future__ import annotations

from service.errors import ServiceError, retry_after_header


class Overloaded(ServiceError):
    """The service holds as much work as it is configured to: shed now rather than queue."""

    status_code = 503
    code = "overloaded"

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return retry_after_header(self.retry_after_s)
