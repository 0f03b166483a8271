"""Limits in the embedded mode's in-process store: each answers at once, with Retry-After."""

from __future__ import annotations

import asyncio

import pytest

from service.errors import PayloadTooLarge, RateLimited
from service.limits.errors import Overloaded
from service.limits.policy import Limits, SandboxDemand
from service.limits.store import MemoryStore
from service.settings import Settings


def _limits(**overrides: object) -> Limits:
    return Limits(Settings(broker_url=None, **overrides), MemoryStore())  # type: ignore[arg-type]


async def _enter(limits: Limits, key_id: str) -> None:
    async with limits.per_key(key_id):
        pass


def test_a_key_past_its_rate_is_told_when_to_come_back() -> None:
    limits = _limits(rate_limit_rps=0.1, rate_limit_burst=2, max_concurrent_requests_per_key=0)
    asyncio.run(_enter(limits, "k1"))
    asyncio.run(_enter(limits, "k1"))
    with pytest.raises(RateLimited) as refused:
        asyncio.run(_enter(limits, "k1"))
    assert refused.value.status_code == 429
    # One token comes back every 10 s at 0.1 per second.
    assert 5 <= int(refused.value.headers()["Retry-After"]) <= 10
    asyncio.run(_enter(limits, "k2"))  # another key has its own bucket


def test_a_key_past_its_requests_in_flight_is_refused_until_one_ends() -> None:
    limits = _limits(rate_limit_rps=0, max_concurrent_requests_per_key=2)

    async def scenario() -> None:
        async with limits.per_key("k"), limits.per_key("k"):
            with pytest.raises(RateLimited) as refused:
                await _enter(limits, "k")
            assert refused.value.code == "too_many_concurrent_requests"
            assert refused.value.headers() == {"Retry-After": "1"}
        await _enter(limits, "k")  # both ended: slots are free again

    asyncio.run(scenario())


def test_items_past_the_inflight_limit_are_shed_at_once() -> None:
    limits = _limits(max_inflight_items=10)
    with limits.admit(6):
        with pytest.raises(Overloaded) as shed:
            limits.admit(5).__enter__()
        assert shed.value.status_code == 503 and shed.value.headers()["Retry-After"] == "1"
        assert "RLVR_MAX_INFLIGHT_ITEMS" in shed.value.message
        with limits.admit(4):
            assert limits.inflight_items == 10
    assert limits.inflight_items == 0
    # A request larger than the limit is served when it finds nothing in flight.
    with limits.admit(50):
        assert limits.inflight_items == 50


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _paced(clock: Clock, limits: Limits, requests: int, items: int, every_s: float) -> None:
    """``requests`` requests of ``items`` that finish ``every_s`` apart."""
    for _ in range(requests):
        with limits.admit(items):
            clock.now += every_s


def test_a_request_that_would_wait_too_long_behind_the_work_in_flight_is_shed() -> None:
    clock = Clock()
    limits = Limits(Settings(broker_url=None, max_queue_wait_s=2.0), MemoryStore(), clock)
    _paced(clock, limits, 11, 100, 0.5)  # 200 items/s lately
    with limits.admit(300):  # 1.5 s of work in flight
        with limits.admit(50):  # 350 items: 1.75 s, admitted
            pass
        with pytest.raises(Overloaded) as shed:
            limits.admit(150).__enter__()  # 450 items: 2.25 s
        assert shed.value.status_code == 503
        assert "RLVR_MAX_QUEUE_WAIT_S" in shed.value.message
        assert shed.value.headers()["Retry-After"] == "2"  # the 1.5 s in flight, whole seconds
        assert limits.inflight_items == 300
    # Nothing in flight: a request of any size is admitted, whatever the pace.
    with limits.admit(5000):
        assert limits.inflight_items == 5000


def test_the_pace_counts_only_the_time_work_was_in_flight() -> None:
    # A GRPO step: a burst of reward requests, then seconds of generation with nothing in flight,
    # then the next burst. The quiet seconds are no slowness of the service: the pace it has
    # been finishing at while busy is what a new request waits behind.
    clock = Clock()
    limits = Limits(Settings(broker_url=None, max_queue_wait_s=2.0), MemoryStore(), clock)
    _paced(clock, limits, 11, 100, 0.5)  # 200 items/s while busy
    clock.now += 4.0  # generating; inside the pace window
    with limits.admit(300):  # 1.5 s of work in flight at 200 items/s
        with limits.admit(50):  # 1.75 s: admitted (counting the quiet 4 s, it would be 3.2 s)
            assert limits.inflight_items == 350
        with pytest.raises(Overloaded):
            limits.admit(150).__enter__()  # 2.25 s at the busy pace


def test_without_a_recent_pace_only_the_item_limit_sheds() -> None:
    clock = Clock()
    limits = Limits(Settings(broker_url=None, max_queue_wait_s=2.0), MemoryStore(), clock)
    _paced(clock, limits, 4, 100, 0.5)  # too few requests to tell a pace
    with limits.admit(300), limits.admit(5000):
        assert limits.inflight_items == 5300
    _paced(clock, limits, 11, 100, 0.5)
    clock.now += 60  # a quiet minute: the pace measured before it is forgotten
    with limits.admit(300), limits.admit(5000):
        assert limits.inflight_items == 5300


def test_the_queue_wait_limit_can_be_turned_off() -> None:
    clock = Clock()
    limits = Limits(Settings(broker_url=None, max_queue_wait_s=0), MemoryStore(), clock)
    _paced(clock, limits, 11, 100, 0.5)
    with limits.admit(300), limits.admit(5000):
        assert limits.inflight_items == 5300


def test_a_request_over_its_sandbox_budget_names_the_item_and_the_setting() -> None:
    limits = _limits(max_sandbox_s_per_request=100)
    limits.check_sandbox_request(SandboxDemand(100.0, 0, 100.0))
    with pytest.raises(PayloadTooLarge) as refused:
        limits.check_sandbox_request(SandboxDemand(30_005.0, 3, 30_000.0))
    message = refused.value.message
    assert refused.value.status_code == 413 and refused.value.code == "sandbox_budget_exceeded"
    assert "items[3].ground_truth" in message and "RLVR_MAX_SANDBOX_S_PER_REQUEST" in message


def test_a_tenants_sandbox_minute_is_reserved_and_what_was_not_used_comes_back() -> None:
    limits = _limits(max_sandbox_s_per_tenant_per_minute=120)

    async def scenario() -> None:
        async with limits.sandbox_budget("team-a", SandboxDemand(100.0)) as reservation:
            # While it runs, the tenant has 20 s left: another 100 s request must wait.
            with pytest.raises(RateLimited) as refused:
                async with limits.sandbox_budget("team-a", SandboxDemand(100.0)):
                    pass
            assert refused.value.code == "sandbox_budget_exhausted"
            assert 30 <= int(refused.value.headers()["Retry-After"]) <= 41  # 80 s at 2 s/s
            async with limits.sandbox_budget("team-b", SandboxDemand(100.0)):
                pass  # another tenant's minute is its own
            reservation.used_s = 1.0
        # It used 1 s of its 100: the rest came back, so the same request fits again.
        async with limits.sandbox_budget("team-a", SandboxDemand(100.0)):
            pass
        with pytest.raises(PayloadTooLarge):  # more than a minute's budget never fits
            async with limits.sandbox_budget("team-a", SandboxDemand(121.0)):
                pass

    asyncio.run(scenario())


def test_zero_turns_a_limit_off() -> None:
    limits = _limits(
        rate_limit_rps=0,
        max_concurrent_requests_per_key=0,
        max_inflight_items=0,
        max_sandbox_s_per_request=0,
        max_sandbox_s_per_tenant_per_minute=0,
    )

    async def scenario() -> None:
        for _ in range(1000):
            await _enter(limits, "k")
        async with limits.sandbox_budget("t", SandboxDemand(1e9)):
            pass

    asyncio.run(scenario())
    limits.check_sandbox_request(SandboxDemand(1e9, 0, 1e9))
    with limits.admit(10**6), limits.admit(10**6):
        pass
