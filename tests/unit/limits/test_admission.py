"""The admission gate: a work request the service would shed is answered 503 + Retry-After
before its body is read; everything else, and everything while there is room, passes."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from service.errors import RateLimited
from service.limits.admission import AdmissionGate, is_work_request
from service.limits.policy import KEY_PRESSURE_S, Limits
from service.limits.store import MemoryStore
from service.settings import Settings


def _limits(**overrides: object) -> Limits:
    return Limits(Settings(broker_url=None, **overrides), MemoryStore())  # type: ignore[arg-type]


class _Inner:
    """The application behind the gate: records that it was reached and answers 200."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls += 1
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _call(
    gate: AdmissionGate, method: str, path: str, key: str = ""
) -> tuple[list[dict[str, Any]], int]:
    """Send one request through the gate (``key`` in the header the tests' ``key_of`` reads);
    what it sent back, and how often the body was read."""
    sent: list[dict[str, Any]] = []
    reads = 0

    async def receive() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": b'{"items": []}', "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"authorization", key.encode())] if key else []
    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    asyncio.run(gate(scope, receive, send))
    return sent, reads


def _full(limits: Limits) -> Any:
    """Hold two items in flight under a limit of two: a one-item request would be shed (until
    the returned context is left; keep it referenced)."""
    admitted = limits.admit(2)
    admitted.__enter__()
    return admitted


def test_a_work_request_is_refused_before_its_body_is_read_when_the_service_is_full() -> None:
    limits = _limits(max_inflight_items=2)
    inner = _Inner()
    gate = AdmissionGate(inner, lambda: limits)
    held = _full(limits)
    for path in ("/v1/rewards", "/compat/openrlhf", "/v1/fine_tuning/alpha/graders/run"):
        sent, reads = _call(gate, "POST", path)
        assert reads == 0 and inner.calls == 0
        start, body = sent
        assert start["status"] == 503
        headers = dict(start["headers"])
        assert headers[b"retry-after"] == b"1"
        assert headers[b"content-type"] == b"application/json"
        assert "connection" not in {name for name, _ in start["headers"]}  # kept alive
        error = json.loads(body["body"])["error"]
        assert error["code"] == "overloaded"
        assert "RLVR_MAX_INFLIGHT_ITEMS" in error["message"]
        assert int(headers[b"content-length"]) == len(body["body"])
    held.__exit__(None, None, None)


def test_health_metrics_audit_and_other_routes_are_never_gated() -> None:
    limits = _limits(max_inflight_items=2)
    inner = _Inner()
    gate = AdmissionGate(inner, lambda: limits)
    held = _full(limits)
    routes = [
        ("GET", "/healthz"),
        ("GET", "/readyz"),
        ("GET", "/metrics"),
        ("GET", "/v1/decisions"),
        ("GET", "/v1/rewards"),
        ("POST", "/v1/fine_tuning/alpha/graders/validate"),
        ("POST", "/v1/labels"),
    ]
    for method, path in routes:
        sent, reads = _call(gate, method, path)
        assert sent[0]["status"] == 200 and reads == 1, (method, path)
    assert inner.calls == len(routes)
    held.__exit__(None, None, None)


def test_work_passes_while_there_is_room_and_before_the_service_has_started() -> None:
    limits = _limits(max_inflight_items=3)
    inner = _Inner()
    with limits.admit(2):  # two of three in flight: one more item fits
        sent, reads = _call(AdmissionGate(inner, lambda: limits), "POST", "/v1/rewards")
    assert sent[0]["status"] == 200 and reads == 1
    sent, _ = _call(AdmissionGate(inner, lambda: None), "POST", "/v1/rewards")
    assert sent[0]["status"] == 200


def test_the_gate_and_admit_give_the_same_answer() -> None:
    limits = _limits(max_inflight_items=5)
    with limits.admit(4):
        assert limits.refusal(1) is None
        refusal = limits.refusal(2)
        assert refusal is not None and refusal[0] == "inflight_items"
        with pytest.raises(type(refusal[1])) as shed:
            limits.admit(2).__enter__()
        assert shed.value.message == refusal[1].message
    assert limits.refusal(100) is None  # alone, any request is admitted


def test_a_burst_of_small_requests_at_a_healthy_pace_is_not_refused() -> None:
    now = [0.0]
    limits = Limits(Settings(broker_url=None), MemoryStore(), clock=lambda: now[0])
    # The service has been finishing 500 items a second.
    for _ in range(50):
        with limits.admit(10):
            now[0] += 0.02
    held = [limits.admit(1) for _ in range(800)]  # hundreds of one-item requests at once
    for admitted in held:
        admitted.__enter__()
    assert limits.refusal(1) is None


def test_a_lag_held_over_two_ticks_sheds_work_and_a_single_late_tick_does_not() -> None:
    limits = _limits(max_loop_lag_s=1.0)
    with limits.admit(1):
        limits.record_loop_tick(3.0)  # one long step: a burst parsed at once
        assert limits.refusal(1) is None
        limits.record_loop_tick(2.0)
        refusal = limits.refusal(1)
        assert refusal is not None and refusal[0] == "loop_lag"
        assert refusal[1].headers() == {"Retry-After": "2"}
        limits.record_loop_tick(0.0)
        assert limits.refusal(1) is None
    limits.record_loop_tick(5.0)
    limits.record_loop_tick(5.0)
    assert limits.refusal(1) is None  # nothing in flight: admitted, as by admit


def test_work_read_whole_and_not_admitted_for_too_long_sheds_new_work_until_it_is() -> None:
    now = [0.0]
    limits = Limits(
        Settings(broker_url=None, max_admission_wait_s=1.0), MemoryStore(), clock=lambda: now[0]
    )
    # A request whose body is still arriving is not waiting for the service: no count.
    with limits.arriving():
        now[0] += 5.0
        assert limits.refusal(1) is None
    with limits.arriving() as body_read:
        body_read()
        now[0] += 0.9
        assert limits.refusal(1) is None
        now[0] += 0.3  # read 1.2 s ago and still not admitted (waiting for a thread, say)
        refusal = limits.refusal(1)
        assert refusal is not None and refusal[0] == "admission_wait"
        assert refusal[1].status_code == 503 and refusal[1].headers() == {"Retry-After": "2"}
        with limits.admit(1):  # admitted: it waits no more
            assert limits.refusal(1) is None
    with limits.arriving() as body_read:
        body_read()
        now[0] += 2.0
        assert limits.refusal(1) is not None
    # It ended without being admitted (a 401, say): it waits no more either.
    assert limits.refusal(1) is None


def test_the_gate_times_a_work_request_from_its_last_body_byte_to_its_admission() -> None:
    now = [0.0]
    limits = Limits(
        Settings(broker_url=None, max_admission_wait_s=1.0), MemoryStore(), clock=lambda: now[0]
    )
    seen: list[object] = []

    class _Stalled:
        """Reads the body, then waits 3 s (for a thread, say) and looks before admitting."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await receive()
            now[0] += 3.0
            seen.append(limits.refusal(1))
            with limits.admit(1):
                seen.append(limits.refusal(1))
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    sent, _ = _call(AdmissionGate(_Stalled(), lambda: limits), "POST", "/v1/rewards")
    assert sent[0]["status"] == 200
    assert seen[0] is not None and seen[0][0] == "admission_wait"  # type: ignore[index]
    assert seen[1] is None


def test_while_one_request_waits_too_long_for_admission_the_next_is_refused_unread() -> None:
    now = [0.0]
    limits = Limits(
        Settings(broker_url=None, max_admission_wait_s=1.0), MemoryStore(), clock=lambda: now[0]
    )

    async def scenario() -> tuple[list[dict[str, Any]], int, list[dict[str, Any]]]:
        stalled = asyncio.Event()
        release = asyncio.Event()

        class _WaitsForAThread:
            async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
                await receive()
                stalled.set()
                await release.wait()
                with limits.admit(1):
                    await send({"type": "http.response.start", "status": 200, "headers": []})
                    await send({"type": "http.response.body", "body": b"ok"})

        gate = AdmissionGate(_WaitsForAThread(), lambda: limits)
        first_sent: list[dict[str, Any]] = []
        second_sent: list[dict[str, Any]] = []
        second_reads = 0

        async def body() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def second_body() -> dict[str, Any]:
            nonlocal second_reads
            second_reads += 1
            return await body()

        async def record(into: list[dict[str, Any]], message: dict[str, Any]) -> None:
            into.append(message)

        scope = {"type": "http", "method": "POST", "path": "/v1/rewards", "headers": []}
        first = asyncio.create_task(gate(dict(scope), body, lambda m: record(first_sent, m)))
        await stalled.wait()
        now[0] += 1.5
        await gate(dict(scope), second_body, lambda m: record(second_sent, m))
        release.set()
        await first
        return second_sent, second_reads, first_sent

    second_sent, second_reads, first_sent = asyncio.run(scenario())
    assert second_sent[0]["status"] == 503 and second_reads == 0
    assert json.loads(second_sent[1]["body"])["error"]["code"] == "overloaded"
    assert first_sent[0]["status"] == 200
    assert limits.refusal(1) is None  # the first was admitted and ended


def test_watch_loop_sees_a_loop_that_is_kept_busy() -> None:
    limits = _limits()

    async def scenario() -> None:
        watcher = asyncio.create_task(limits.watch_loop(interval_s=0.01))
        deadline = time.monotonic() + 30
        try:
            while limits.loop_lag_s < 0.05 and time.monotonic() < deadline:
                time.sleep(0.1)  # blocks the loop: the watcher's ticks come late
                await asyncio.sleep(0)
        finally:
            watcher.cancel()
        assert limits.loop_lag_s >= 0.05

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("method", "path", "work"),
    [
        ("POST", "/v1/rewards", True),
        ("POST", "/compat/nemo-gym/math/verify", True),
        ("POST", "/v1/fine_tuning/alpha/graders/run", True),
        ("POST", "/v1/rewards/extra", False),
        ("GET", "/compat/openrlhf", False),
        ("POST", "/v1/experiments", False),
    ],
)
def test_which_requests_are_work(method: str, path: str, work: bool) -> None:
    assert is_work_request({"type": "http", "method": method, "path": path}) is work


class _CountingStore(MemoryStore):
    """The embedded store, counting how often the gate looks a key's limits up."""

    def __init__(self) -> None:
        super().__init__()
        self.peeks = 0

    async def peek(
        self, bucket: str, capacity: float, per_s: float, slots: str
    ) -> tuple[float, int]:
        self.peeks += 1
        return await super().peek(bucket, capacity, per_s, slots)


def _key_of(scope: Any) -> str | None:
    return dict(scope["headers"]).get(b"authorization", b"").decode() or None


def _per_key_refused(limits: Limits, key_id: str) -> None:
    async def attempt() -> None:
        async with limits.per_key(key_id):
            pass

    with pytest.raises(RateLimited):
        asyncio.run(attempt())


def _hold_slot(limits: Limits, key_id: str) -> tuple[Any, asyncio.AbstractEventLoop]:
    """One of ``key_id``'s requests in flight, until the returned context is left."""
    loop = asyncio.new_event_loop()
    held = limits.per_key(key_id)
    loop.run_until_complete(held.__aenter__())
    return held, loop


def test_a_key_past_its_concurrency_is_refused_by_the_gate_unread_until_a_slot_frees() -> None:
    now = [0.0]
    store = _CountingStore()
    settings = Settings(broker_url=None, max_concurrent_requests_per_key=1)  # type: ignore[call-arg]
    limits = Limits(settings, store, clock=lambda: now[0])
    inner = _Inner()
    gate = AdmissionGate(inner, lambda: limits, key_of=_key_of)

    # Within its limits, a key passes the gate without a look at the store.
    sent, reads = _call(gate, "POST", "/v1/rewards", "busy")
    assert sent[0]["status"] == 200 and reads == 1 and store.peeks == 0

    held, loop = _hold_slot(limits, "busy")
    _per_key_refused(limits, "busy")  # per_key refused it once: the gate now looks it up
    sent, reads = _call(gate, "POST", "/v1/rewards", "busy")
    assert reads == 0 and store.peeks == 1
    start, body = sent
    assert start["status"] == 429
    assert dict(start["headers"])[b"retry-after"] == b"1"
    assert json.loads(body["body"])["error"]["code"] == "too_many_concurrent_requests"

    # Another key, and a request whose key is not known, are not held back by it.
    for key in ("other", ""):
        sent, reads = _call(gate, "POST", "/v1/rewards", key)
        assert sent[0]["status"] == 200 and reads == 1

    loop.run_until_complete(held.__aexit__(None, None, None))
    loop.close()
    sent, reads = _call(gate, "POST", "/v1/rewards", "busy")  # its slot is free again
    assert sent[0]["status"] == 200 and reads == 1

    # Once the refusal is older than the pressure window the store is not asked any more.
    peeks = store.peeks
    now[0] += KEY_PRESSURE_S + 0.1
    sent, _ = _call(gate, "POST", "/v1/rewards", "busy")
    assert sent[0]["status"] == 200 and store.peeks == peeks


def test_a_key_past_its_rate_is_refused_by_the_gate_with_the_wait_until_its_next_token() -> None:
    settings = Settings(broker_url=None, rate_limit_rps=0.5, rate_limit_burst=1)  # type: ignore[call-arg]
    limits = Limits(settings, MemoryStore())
    gate = AdmissionGate(_Inner(), lambda: limits, key_of=_key_of)

    async def one() -> None:
        async with limits.per_key("fast"):
            pass

    asyncio.run(one())  # the burst of one is spent
    _per_key_refused(limits, "fast")
    sent, reads = _call(gate, "POST", "/v1/rewards", "fast")
    assert reads == 0
    start, body = sent
    assert start["status"] == 429
    assert json.loads(body["body"])["error"]["code"] == "rate_limited"
    assert 1 <= int(dict(start["headers"])[b"retry-after"]) <= 2
    refusal = asyncio.run(limits.key_refusal("fast"))
    assert refusal is not None and refusal[0] == "key_rate"
