"""The limits a reward request passes, in the order it meets them.

- per key (``per_key``): requests per second and requests in flight, 429 past either; for a
  while after it refused a key, the admission gate asks the same (``key_refusal``) before
  reading that key's next bodies;
- load shedding (``admit``): items in flight in this API process, the lag of its event loop,
  and the wait the items mean at the pace this process has been finishing items lately, 503
  past any of them; the admission gate (``admission.py``) asks the same question for one item
  before a work request's body is read, so a refusal costs next to nothing;
- sandbox budget (``check_sandbox_request``, ``sandbox_budget``): a request's worst-case
  sandbox seconds (413 past the per-request limit) and the tenant's seconds per minute (429).

Every answer past a limit comes at once with ``Retry-After``; nothing waits in a queue.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from service.errors import PayloadTooLarge, RateLimited
from service.limits.errors import Overloaded
from service.limits.store import LimitStore, make_store
from service.metrics import INFLIGHT_ITEMS, SHED_REQUESTS
from service.settings import Settings

# A request's slot outlives it by this much at most if its API process dies holding it.
SLOT_LEASE_SLACK_S = 60.0
# The pace of the service is measured over the requests that finished in this window, once
# at least this many have.
PACE_WINDOW_S = 10.0
PACE_MIN_REQUESTS = 5
# How often the event loop's lag is measured (Limits.watch_loop).
LOOP_TICK_S = 0.1
# For this long after a key's request was refused by its rate or concurrency limit, the
# admission gate looks that key's limits up before reading its next requests' bodies.
KEY_PRESSURE_S = 2.0

# The ticket of the work request being handled, from the admission gate to ``admit``.
_ARRIVAL: contextvars.ContextVar[int | None] = contextvars.ContextVar("rlvr_arrival", default=None)


@dataclass(slots=True)
class SandboxReservation:
    """Sandbox seconds reserved for a request; ``used_s`` is set when it has run."""

    reserved_s: float
    used_s: float | None = None


@dataclass(frozen=True, slots=True)
class SandboxDemand:
    """A request's worst case in the sandbox, and its item that asks for the most."""

    total_s: float
    largest_item: int | None = None
    largest_s: float = 0.0


class Limits:
    def __init__(
        self,
        settings: Settings,
        store: LimitStore | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.store = store if store is not None else make_store(settings)
        self._clock = clock
        self._inflight = 0
        self._lock = threading.Lock()
        # Requests that finished lately: (when, items, the busy clock then), oldest first, and
        # their items. The busy clock runs only while something is in flight: a trainer's
        # generation phase between two reward bursts is no slowness of the service.
        self._finished: deque[tuple[float, int, float]] = deque()
        self._finished_items = 0
        self._busy_s = 0.0  # busy seconds before the current busy stretch
        self._busy_from = clock()  # when the current busy stretch began
        # When the last request in flight finished (monotonic), for work that waits its turn.
        self._idle_since = clock()
        self._quiet = threading.Condition(self._lock)
        # How late the event loop has been running what is due, held over two ticks.
        self._loop_lag = 0.0
        self._last_tick_late = 0.0
        # Work requests read whole and not admitted yet (the key's check, the key's limits and
        # the API's threads stand between): ticket -> when the last byte of the body came, in
        # the order they came, so the first is the one that has waited longest.
        self._waiting: dict[int, float] = {}
        self._tickets = itertools.count()
        # Keys per_key refused lately: key id -> when (monotonic).
        self._pressed: dict[str, float] = {}

    @property
    def inflight_items(self) -> int:
        return self._inflight

    @asynccontextmanager
    async def per_key(self, key_id: str) -> AsyncIterator[None]:
        """Hold one of the key's in-flight requests, if its rate and concurrency allow it."""
        settings = self.settings
        if settings.rate_limit_rps > 0:
            wait = await self.store.take(
                f"rate:{key_id}", float(settings.rate_limit_burst), settings.rate_limit_rps, 1.0
            )
            if wait > 0:
                raise self._key_refused(key_id, "key_rate", wait)
        lease = None
        limit = settings.max_concurrent_requests_per_key
        if limit > 0:
            lease_s = settings.request_timeout_s + SLOT_LEASE_SLACK_S
            lease = await self.store.acquire_slot(f"concurrency:{key_id}", limit, lease_s)
            if lease is None:
                raise self._key_refused(key_id, "key_concurrency")
        try:
            yield
        finally:
            if lease is not None:
                await self.store.release_slot(f"concurrency:{key_id}", lease)

    async def key_refusal(self, key_id: str) -> tuple[str, RateLimited] | None:
        """What ``per_key`` would answer a new request of this key right now, counting
        nothing: the admission gate asks it before reading a body. Only a key ``per_key``
        refused within ``KEY_PRESSURE_S`` is looked up in the store; any other key passes
        without a round trip, so the gate costs nothing while keys stay within their limits."""
        with self._lock:
            refused_at = self._pressed.get(key_id)
        if refused_at is None or self._clock() - refused_at > KEY_PRESSURE_S:
            return None
        settings = self.settings
        wait, in_use = await self.store.peek(
            f"rate:{key_id}",
            float(settings.rate_limit_burst),
            settings.rate_limit_rps,
            f"concurrency:{key_id}",
        )
        if settings.rate_limit_rps > 0 and wait > 0:
            return "key_rate", self._key_limit_error("key_rate", wait)
        limit = settings.max_concurrent_requests_per_key
        if limit > 0 and in_use >= limit:
            return "key_concurrency", self._key_limit_error("key_concurrency")
        return None

    def _key_refused(self, key_id: str, reason: str, wait: float = 1.0) -> RateLimited:
        """Count ``per_key``'s refusal and remember it: for ``KEY_PRESSURE_S`` the gate looks
        this key's limits up before reading its requests' bodies."""
        SHED_REQUESTS.labels(reason).inc()
        with self._lock:
            if len(self._pressed) > 10_000:
                self._pressed.clear()
            self._pressed[key_id] = self._clock()
        return self._key_limit_error(reason, wait)

    def _key_limit_error(self, reason: str, wait: float = 1.0) -> RateLimited:
        settings = self.settings
        if reason == "key_rate":
            return RateLimited(
                f"this API key sent more than {settings.rate_limit_rps:g} requests per "
                f"second (burst {settings.rate_limit_burst}); retry later",
                wait,
            )
        return RateLimited(
            f"this API key has {settings.max_concurrent_requests_per_key} requests in flight "
            "already; retry when one ends",
            1.0,
            code="too_many_concurrent_requests",
        )

    @contextmanager
    def admit(self, items: int) -> Iterator[None]:
        """Count a request's items in flight, or shed it (503) when they would not fit.

        A request that finds nothing in flight is always admitted, so a batch larger than the
        limit is served on its own instead of never.
        """
        ticket = _ARRIVAL.get()
        with self._lock:
            if ticket is not None:
                self._waiting.pop(ticket, None)
            refusal = self._refusal(items)
            if refusal is not None:
                reason, error = refusal
                SHED_REQUESTS.labels(reason).inc()
                raise error
            if self._inflight == 0:
                self._busy_from = self._clock()
            self._inflight += items
            INFLIGHT_ITEMS.inc(items)
        try:
            yield
        finally:
            with self._lock:
                now = self._clock()
                busy = self._busy_clock(now)
                self._inflight -= items
                INFLIGHT_ITEMS.dec(items)
                self._finished.append((now, items, busy))
                self._finished_items += items
                if self._inflight == 0:
                    self._busy_s = busy
                    self._idle_since = now
                    self._quiet.notify_all()

    def refusal(self, items: int = 1) -> tuple[str, Overloaded] | None:
        """What a new work request of ``items`` would be answered right now, counting
        nothing: None when it would be let in, else the limit's name and its 503. The admission
        gate asks this for one item before it reads a body, so a request the service cannot
        take costs next to nothing. Besides ``admit``'s limits, a new request is refused while
        one read before it has waited longer than ``RLVR_MAX_ADMISSION_WAIT_S`` to be admitted:
        the API's own queue, which the items in flight do not show."""
        with self._lock:
            max_wait = self.settings.max_admission_wait_s
            if max_wait > 0 and self._waiting:
                waited = self._clock() - next(iter(self._waiting.values()))
                if waited > max_wait:
                    return "admission_wait", Overloaded(
                        f"requests read {waited:.1f} s ago are still waiting for this API "
                        f"process to take them (past {max_wait:g} s, "
                        "RLVR_MAX_ADMISSION_WAIT_S): retry shortly",
                        retry_after_s=waited,
                    )
            return self._refusal(items)

    @contextmanager
    def arriving(self) -> Iterator[Callable[[], None]]:
        """A work request from the admission gate to its end. Call what it yields when the
        request's body has been read whole: from then until ``admit`` (or the request's end,
        whichever comes first) it counts as waiting for admission."""
        ticket = next(self._tickets)
        token = _ARRIVAL.set(ticket)
        read = False

        def body_read() -> None:
            nonlocal read
            if not read:
                read = True
                with self._lock:
                    self._waiting[ticket] = self._clock()

        try:
            yield body_read
        finally:
            _ARRIVAL.reset(token)
            with self._lock:
                self._waiting.pop(ticket, None)

    def _refusal(self, items: int) -> tuple[str, Overloaded] | None:
        # Called with the lock held; the one place admit's thresholds are applied.
        busy = self._inflight
        if busy <= 0:
            return None
        limit = self.settings.max_inflight_items
        if limit > 0 and busy + items > limit:
            return "inflight_items", Overloaded(
                f"{busy} items are in flight here and this request adds {items}; the limit "
                f"is {limit} (RLVR_MAX_INFLIGHT_ITEMS): retry shortly"
            )
        max_lag = self.settings.max_loop_lag_s
        if max_lag > 0 and self._loop_lag > max_lag:
            # The API process itself is the bottleneck: its requests wait this long before any
            # code of theirs runs, so the pace of finished items does not see the queue.
            return "loop_lag", Overloaded(
                f"this API process is {self._loop_lag:.1f} s behind on the requests it has "
                f"(past {max_lag:g} s, RLVR_MAX_LOOP_LAG_S): retry shortly",
                retry_after_s=self._loop_lag,
            )
        max_wait = self.settings.max_queue_wait_s
        pace = self._pace() if max_wait > 0 else None
        if pace is not None and (busy + items) / pace > max_wait:
            return "queue_wait", Overloaded(
                f"{busy} items are in flight here, about {busy / pace:.1f} s of work at the "
                f"{pace:.0f} items/s this service has been finishing; with this request's "
                f"{items} it would wait past {max_wait:g} s (RLVR_MAX_QUEUE_WAIT_S)",
                retry_after_s=busy / pace,
            )
        return None

    @property
    def loop_lag_s(self) -> float:
        return self._loop_lag

    async def watch_loop(self, interval_s: float = LOOP_TICK_S) -> None:
        """Measure, until cancelled, how late this event loop runs what is due: the time every
        request waits before its first line runs. Only a lag held over two ticks in a row
        counts, so one long step (a burst of requests parsed at once) sheds nothing."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + interval_s
            await asyncio.sleep(interval_s)
            self.record_loop_tick(max(0.0, loop.time() - due))

    def record_loop_tick(self, late_s: float) -> None:
        """One tick of ``watch_loop``: it ran ``late_s`` after it was due. The lag is the
        smaller of the last two ticks' lateness."""
        with self._lock:
            self._loop_lag = min(late_s, self._last_tick_late)
            self._last_tick_late = late_s

    def _busy_clock(self, now: float) -> float:
        """Seconds this process has had work in flight, up to ``now``. Lock held."""
        return self._busy_s + (now - self._busy_from if self._inflight > 0 else 0.0)

    def _pace(self) -> float | None:
        """Items per second this process has finished over the last ``PACE_WINDOW_S``, counting
        only the time it had work in flight, or None when too few requests finished lately to
        tell (then only the item limit holds). Called with the lock held."""
        now = self._clock()
        finished = self._finished
        while finished and now - finished[0][0] > PACE_WINDOW_S:
            self._finished_items -= finished.popleft()[1]
        if len(finished) < PACE_MIN_REQUESTS:
            return None
        # The items finished since the oldest one in the window, over the busy time since then.
        span = max(self._busy_clock(now) - finished[0][2], 0.5)
        return max(self._finished_items - finished[0][1], 1) / span

    def wait_quiet(self, quiet_s: float, deadline: float) -> bool:
        """Block until no reward request has been in flight here for ``quiet_s``, or until
        ``deadline`` (monotonic); True when it is quiet. What defers to rewards waits here."""
        with self._quiet:
            while True:
                now = self._clock()
                if self._inflight == 0 and now - self._idle_since >= quiet_s:
                    return True
                if now >= deadline:
                    return False
                wait = deadline - now
                if self._inflight == 0:
                    wait = min(wait, quiet_s - (now - self._idle_since))
                self._quiet.wait(wait)

    def check_sandbox_request(self, demand: SandboxDemand) -> None:
        """A request whose sandbox budget is over the per-request limit is refused (413)."""
        limit = self.settings.max_sandbox_s_per_request
        if limit <= 0 or demand.total_s <= limit:
            return
        SHED_REQUESTS.labels("sandbox_request_budget").inc()
        raise PayloadTooLarge(
            f"this request may use {demand.total_s:.0f} sandbox seconds (compile plus every "
            f"test at its wall clock, per item), over the limit of {limit:g} per request "
            f"(RLVR_MAX_SANDBOX_S_PER_REQUEST); items[{demand.largest_item}].ground_truth alone "
            f"asks for {demand.largest_s:.0f} s: send fewer or smaller code items",
            code="sandbox_budget_exceeded",
        )

    @asynccontextmanager
    async def sandbox_budget(
        self, tenant_id: str, demand: SandboxDemand
    ) -> AsyncIterator[SandboxReservation]:
        """Reserve the request's sandbox seconds from its tenant's minute (429 if they are not
        there); when it completes, what it did not use goes back. A request that fails keeps
        its reservation: its chunks may still be running."""
        reservation = SandboxReservation(demand.total_s)
        capacity = self.settings.max_sandbox_s_per_tenant_per_minute
        if capacity <= 0 or demand.total_s <= 0:
            yield reservation
            return
        if demand.total_s > capacity:
            SHED_REQUESTS.labels("sandbox_tenant_budget").inc()
            raise PayloadTooLarge(
                f"this request may use {demand.total_s:.0f} sandbox seconds, more than its "
                f"tenant may use in a minute ({capacity:g}, "
                "RLVR_MAX_SANDBOX_S_PER_TENANT_PER_MINUTE): send fewer or smaller code items",
                code="sandbox_budget_exceeded",
            )
        bucket, per_s = f"sandbox:{tenant_id}", capacity / 60.0
        wait = await self.store.take(bucket, capacity, per_s, demand.total_s)
        if wait > 0:
            SHED_REQUESTS.labels("sandbox_tenant_budget").inc()
            raise RateLimited(
                f"tenant {tenant_id!r} has used its sandbox budget of {capacity:g} seconds per "
                f"minute; this request needs {demand.total_s:.0f} s",
                wait,
                code="sandbox_budget_exhausted",
            )
        yield reservation
        if reservation.used_s is not None and reservation.used_s < reservation.reserved_s:
            await self.store.give_back(
                bucket, capacity, per_s, reservation.reserved_s - reservation.used_s
            )

    async def aclose(self) -> None:
        await self.store.aclose()
