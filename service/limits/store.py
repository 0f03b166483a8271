"""Where limits keep their counts: token buckets and leased slots, in Redis or in this process.

Redis is what API processes share in the deployed shape; each operation is one Lua script, so
two processes never both take the last token or the last slot. The embedded mode has one API
process and keeps the same counts in memory.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from service.settings import Settings

log = logging.getLogger(__name__)
KEY_PREFIX = "rlvr:limits:"
# Connections to Redis per API process for the limits' scripts.
REDIS_CONNECTIONS = 32


class LimitStore(Protocol):
    async def take(self, bucket: str, capacity: float, per_s: float, cost: float) -> float:
        """Take ``cost`` tokens from a bucket holding at most ``capacity``, refilled at ``per_s``
        tokens a second; 0.0 when taken, else the seconds until they would be (nothing taken)."""
        ...

    async def give_back(self, bucket: str, capacity: float, per_s: float, amount: float) -> None:
        """Return unused tokens (never above ``capacity``)."""
        ...

    async def acquire_slot(self, name: str, limit: int, lease_s: float) -> str | None:
        """One of ``limit`` slots, leased for at most ``lease_s``; None when all are taken."""
        ...

    async def release_slot(self, name: str, lease: str) -> None: ...

    async def peek(
        self, bucket: str, capacity: float, per_s: float, slots: str
    ) -> tuple[float, int]:
        """Counting nothing: the seconds until one token of ``bucket`` would be there (0.0 if
        it is), and how many of ``slots``' leases are held."""
        ...

    async def aclose(self) -> None: ...


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class MemoryStore:
    """The embedded mode's counts: one API process, so a lock is all they need."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[str, _Bucket] = {}
        self._slots: dict[str, dict[str, float]] = {}

    def _refilled(self, bucket: str, capacity: float, per_s: float, now: float) -> _Bucket:
        state = self._buckets.get(bucket)
        if state is None:
            state = self._buckets[bucket] = _Bucket(capacity, now)
        state.tokens = min(capacity, state.tokens + max(0.0, now - state.updated) * per_s)
        state.updated = now
        return state

    async def take(self, bucket: str, capacity: float, per_s: float, cost: float) -> float:
        with self._lock:
            state = self._refilled(bucket, capacity, per_s, time.monotonic())
            if cost <= state.tokens:
                state.tokens -= cost
                return 0.0
            return (cost - state.tokens) / per_s

    async def give_back(self, bucket: str, capacity: float, per_s: float, amount: float) -> None:
        with self._lock:
            state = self._refilled(bucket, capacity, per_s, time.monotonic())
            state.tokens = min(capacity, state.tokens + amount)

    async def acquire_slot(self, name: str, limit: int, lease_s: float) -> str | None:
        now = time.monotonic()
        with self._lock:
            leases = self._slots.setdefault(name, {})
            for lease, until in list(leases.items()):
                if until <= now:
                    del leases[lease]
            if len(leases) >= limit:
                return None
            lease = uuid.uuid4().hex
            leases[lease] = now + lease_s
            return lease

    async def release_slot(self, name: str, lease: str) -> None:
        with self._lock:
            self._slots.get(name, {}).pop(lease, None)

    async def peek(
        self, bucket: str, capacity: float, per_s: float, slots: str
    ) -> tuple[float, int]:
        now = time.monotonic()
        with self._lock:
            state = self._refilled(bucket, capacity, per_s, now) if per_s > 0 else None
            wait = 0.0 if state is None or state.tokens >= 1.0 else (1.0 - state.tokens) / per_s
            held = sum(1 for until in self._slots.get(slots, {}).values() if until > now)
            return wait, held

    async def aclose(self) -> None:
        return None


# Tokens and the time they were counted at, by the server's clock (API processes' clocks
# differ); a refund is a negative cost. Floats go back as strings: Lua numbers become integers.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local capacity, per_s, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1]) or capacity
local updated = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - updated) * per_s)
local wait = 0
if cost <= tokens then
  tokens = math.min(capacity, tokens - cost)
else
  wait = (cost - tokens) / per_s
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / per_s * 1000) + 1000)
return tostring(wait)
"""

# A slot is a lease in a sorted set scored by when it lapses: an API process that dies
# holding one cannot keep it past its lease.
_ACQUIRE = """
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""


# What a request would meet, counting nothing: the wait for one token and the live leases.
_PEEK = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local capacity, per_s = tonumber(ARGV[1]), tonumber(ARGV[2])
local wait = 0
if per_s > 0 then
  local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
  local tokens = tonumber(state[1]) or capacity
  local updated = tonumber(state[2]) or now
  tokens = math.min(capacity, tokens + math.max(0, now - updated) * per_s)
  if tokens < 1 then
    wait = (1 - tokens) / per_s
  end
end
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {tostring(wait), redis.call('ZCOUNT', KEYS[2], '(' .. now_ms, '+inf')}
"""


class RedisStore:
    """The deployed shape's counts, shared by every API process through Redis.

    A Redis that does not answer lets requests through (logged): the broker is the same
    Redis, so such a request is answered 503 by the executor anyway, and a limit must not
    turn a short outage into refusals that outlive it.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._client: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            import redis.asyncio

            # A burst waits its turn for one of a bounded set of connections (each script is
            # a fraction of a millisecond); the default pool raised "Too many connections"
            # past 100 at once, and every request of the burst then passed unlimited.
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                self.url,
                max_connections=REDIS_CONNECTIONS,
                timeout=1.0,
                socket_timeout=1.0,
                socket_connect_timeout=1.0,
            )
            self._client = redis.asyncio.Redis(connection_pool=pool)
        return self._client

    async def _script(self, script: str, key: str, *args: Any, keys: tuple[str, ...] = ()) -> Any:
        from redis.exceptions import RedisError

        names = [KEY_PREFIX + name for name in (key, *keys)]
        try:
            return await self._redis().eval(script, len(names), *names, *args)
        except (RedisError, OSError) as exc:
            log.warning("limits: Redis did not answer (%s); letting the request through", exc)
            return None

    async def take(self, bucket: str, capacity: float, per_s: float, cost: float) -> float:
        wait = await self._script(_TAKE, bucket, repr(capacity), repr(per_s), repr(cost))
        return 0.0 if wait is None else float(wait)

    async def give_back(self, bucket: str, capacity: float, per_s: float, amount: float) -> None:
        await self._script(_TAKE, bucket, repr(capacity), repr(per_s), repr(-amount))

    async def acquire_slot(self, name: str, limit: int, lease_s: float) -> str | None:
        lease = uuid.uuid4().hex
        taken = await self._script(_ACQUIRE, name, str(limit), lease, str(int(lease_s * 1000)))
        return lease if taken is None or int(taken) == 1 else None

    async def peek(
        self, bucket: str, capacity: float, per_s: float, slots: str
    ) -> tuple[float, int]:
        found = await self._script(_PEEK, bucket, repr(capacity), repr(per_s), keys=(slots,))
        if found is None:  # Redis did not answer: let the request meet the limits themselves
            return 0.0, 0
        wait, held = found
        return float(wait), int(held)

    async def release_slot(self, name: str, lease: str) -> None:
        from redis.exceptions import RedisError

        try:
            await self._redis().zrem(KEY_PREFIX + name, lease)
        except (RedisError, OSError):
            log.warning("limits: could not release a slot of %s; its lease lapses", name)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose(close_connection_pool=True)


def make_store(settings: Settings) -> LimitStore:
    if settings.broker_url is None:
        return MemoryStore()
    return RedisStore(settings.broker_url)
