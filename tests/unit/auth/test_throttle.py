"""Failed key checks back a key id off (1 s, doubling to 30 s, forgotten after a quiet spell)
and spend this process's budget of failed checks; every refusal is a 429 with Retry-After."""

from __future__ import annotations

import pytest

from service.auth.throttle import (
    CODE,
    FAILED_CHECKS_PER_S,
    MAX_BACKOFF_S,
    FailedChecks,
    backoff_s,
)
from service.errors import RateLimited


@pytest.fixture
def now() -> list[float]:
    return [1000.0]


@pytest.fixture
def checks(now: list[float]) -> FailedChecks:
    return FailedChecks(lambda: now[0])


def _refusal(checks: FailedChecks, key_id: str) -> RateLimited:
    with pytest.raises(RateLimited) as refused:
        checks.admit(key_id)
    assert refused.value.status_code == 429 and refused.value.code == CODE
    return refused.value


def test_the_back_off_doubles_up_to_its_cap() -> None:
    assert [backoff_s(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff_s(10**6) == MAX_BACKOFF_S


def test_a_failed_id_is_refused_until_its_back_off_lapses(
    checks: FailedChecks, now: list[float]
) -> None:
    checks.admit("abc")
    checks.failed("abc")
    refusal = _refusal(checks, "abc")
    assert refusal.headers() == {"Retry-After": "1"}
    checks.admit("other")  # other ids are not held back
    now[0] += 1.0
    checks.admit("abc")
    checks.failed("abc")
    assert _refusal(checks, "abc").retry_after_s == 2


def test_after_a_quiet_spell_an_id_starts_over_at_the_shortest_back_off(
    checks: FailedChecks, now: list[float]
) -> None:
    for failures in range(1, 5):
        checks.failed("abc")
        now[0] += backoff_s(failures)
    checks.failed("abc")
    assert _refusal(checks, "abc").retry_after_s == 16
    now[0] += 16 + MAX_BACKOFF_S
    checks.failed("abc")
    assert _refusal(checks, "abc").retry_after_s == 1


def test_failures_over_all_ids_are_capped_per_second(
    checks: FailedChecks, now: list[float]
) -> None:
    budget = int(FAILED_CHECKS_PER_S)
    for n in range(budget):
        checks.admit(f"id{n}")
        checks.failed(f"id{n}")
    refusal = _refusal(checks, "fresh")
    assert refusal.retry_after_s == 1 and "failed lately" in refusal.message
    now[0] += 1.0 / FAILED_CHECKS_PER_S
    checks.admit("fresh")


def test_checks_that_ran_together_are_paid_back(checks: FailedChecks, now: list[float]) -> None:
    budget = int(FAILED_CHECKS_PER_S)
    for n in range(2 * budget):  # admitted together, before any of them failed
        checks.failed(f"id{n}")
    now[0] += 1.0
    assert _refusal(checks, "fresh").retry_after_s == 1
    now[0] += 1.0
    checks.admit("fresh")
