"""Failed key checks, throttled per API process.

A key id is public (the audit log and a verifier's history show it), and a wrong secret for it
costs the service a database read and a scrypt check (~45 ms of CPU on the API's threads): sent
as fast as a client likes, a CPU denial of service. So a key not yet known good here is refused
at once, with 429 + Retry-After and no check at all, while

- its key id is backing off: 1 s after a failed check, doubled on each failure in a row up to
  30 s. A mistyped key costs its owner a second; a sustained guess costs one scrypt per 30 s per
  id. 30 s stays well inside the trainer client's retry budget (120 s; it honours Retry-After up
  to 60 s), so a real client refused at the wrong moment still gets through once the attack
  stops.
- this process has had ``FAILED_CHECKS_PER_S`` failures in the last second or so, over all key
  ids: an attacker rotating over many public ids gets at most that many scrypts a second
  (5 × 45 ms: under a quarter of a core), whatever the number of ids.

The caller (``Authenticator``) never asks about a key that already matched here: an attacker
cannot lock out a key that is in use. Checks that run no scrypt (an unknown key id, a revoked
key) are not counted: they cost a database read, as any other request does.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import NoReturn

from service.errors import RateLimited
from service.metrics import SHED_REQUESTS

BASE_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
FAILED_CHECKS_PER_S = 5.0
# Key ids with a failure on record; the one that failed least recently is dropped past this.
MAX_TRACKED_IDS = 10_000
CODE = "too_many_failed_key_checks"


class FailedChecks:
    """Which key ids are backing off, and this process's budget of failed checks (a token
    bucket that may go into debt: checks that ran at once on several ids are paid back)."""

    def __init__(self, clock: Callable[[], float], per_second: float = FAILED_CHECKS_PER_S) -> None:
        self._clock = clock
        self._per_second = per_second
        self._lock = threading.Lock()
        # key id → (failures in a row, refused until), least recently failed first.
        self._ids: dict[str, tuple[int, float]] = {}
        self._budget = per_second
        self._budget_at = clock()

    def admit(self, key_id: str) -> None:
        """Raise a 429 if a key of ``key_id`` not known good may not be checked now."""
        now = self._clock()
        with self._lock:
            _, until = self._ids.get(key_id, (0, now))
            budget = self._refilled(now)
        if now < until:
            self._refuse(f"checks of API key {key_id!r} failed lately", until - now)
        if budget < 1:
            self._refuse("too many API key checks failed lately", (1 - budget) / self._per_second)

    def failed(self, key_id: str) -> None:
        """A key of ``key_id`` did not match its hash: back the id off, spend the budget."""
        now = self._clock()
        with self._lock:
            failures, until = self._ids.pop(key_id, (0, now))
            if now >= until + MAX_BACKOFF_S:  # quiet since its last back-off: start over
                failures = 0
            failures += 1
            self._ids[key_id] = (failures, now + backoff_s(failures))
            if len(self._ids) > MAX_TRACKED_IDS:
                del self._ids[next(iter(self._ids))]
            self._budget = self._refilled(now) - 1

    def _refilled(self, now: float) -> float:
        self._budget = min(
            self._per_second, self._budget + (now - self._budget_at) * self._per_second
        )
        self._budget_at = now
        return self._budget

    @staticmethod
    def _refuse(reason: str, wait_s: float) -> NoReturn:
        SHED_REQUESTS.labels("failed_key_checks").inc()
        retry_after_s = max(1, math.ceil(wait_s))  # as the Retry-After header will say
        raise RateLimited(
            f"{reason}: a key not verified yet is not checked for {retry_after_s} s; retry then",
            retry_after_s,
            code=CODE,
        )


def backoff_s(failures: int) -> float:
    """How long a key id is not checked after ``failures`` failed checks in a row."""
    doublings = min(failures - 1, math.ceil(math.log2(MAX_BACKOFF_S / BASE_BACKOFF_S)))
    return min(MAX_BACKOFF_S, BASE_BACKOFF_S * 2**doublings)
