"""The API's side of Celery results: wait for a request's chunks without holding a thread.

A blocking ``GroupResult.get`` holds one of the API's threads for as long as the workers take;
a few slow requests then held all of them and ``/readyz`` hung behind them. Here a request
waits on the result backend asynchronously: it subscribes to its tasks' result keys (Celery's
Redis backend publishes each result on its key), reads those that were stored before it
subscribed, and re-reads pending keys every second in case a publish was missed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from celery.backends.redis import RedisBackend

# Results the backend publishes that end a task; other states (started, retry) do not.
_DONE = "SUCCESS"
_FAILED = frozenset({"FAILURE", "REVOKED"})
RECHECK_S = 1.0


class TaskFailed(Exception):
    """A task raised in its worker (the database was down, a bug): its name is the message."""


class PublishOnlyRedisBackend(RedisBackend):
    """The API's result backend: publishing a task must not subscribe Celery's own result
    consumer to it, since nothing would read that subscription (ResultWaiter does the
    waiting), and unread messages fill the client's buffer in Redis until it is cut off."""

    def on_task_call(self, producer: Any, task_id: str) -> None:
        return None


# Celery takes a backend class before "+" in the backend URL.
PUBLISH_ONLY_BACKEND = f"{__name__}:PublishOnlyRedisBackend"


class ResultWaiter:
    """Waits for task results in the Redis result backend, on the event loop."""

    def __init__(self, url: str, backend: RedisBackend) -> None:
        import redis.asyncio

        self.backend = backend
        self.redis = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
        self._cleanups: set[asyncio.Task[None]] = set()

    async def wait(self, task_ids: Sequence[str], timeout_s: float) -> list[Any]:
        """Each task's return value, in order; raises the first failure, TimeoutError past
        ``timeout_s``, or redis' ConnectionError when the backend is gone."""
        keys = [self._key(task_id) for task_id in task_ids]
        found: dict[bytes, Any] = {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(*keys)
            recheck_at = loop.time()
            while len(found) < len(keys):
                now = loop.time()
                if now >= deadline:
                    raise TimeoutError(f"{len(keys) - len(found)} of {len(keys)} tasks pending")
                if now >= recheck_at:
                    pending = [key for key in keys if key not in found]
                    for key, payload in zip(pending, await self.redis.mget(pending), strict=True):
                        self._accept(found, key, payload)
                    recheck_at = now + RECHECK_S
                    continue
                message = await pubsub.get_message(timeout=min(recheck_at, deadline) - now)
                if message is not None and message.get("type") == "message":
                    self._accept(found, bytes(message["channel"]), message["data"])
        finally:
            # Off the request's path: unsubscribing and deleting the keys are two more round
            # trips to Redis that the caller need not wait for.
            cleanup = asyncio.create_task(self._clean_up(pubsub, keys))
            self._cleanups.add(cleanup)
            cleanup.add_done_callback(self._cleanups.discard)
        return [found[key] for key in keys]

    async def _clean_up(self, pubsub: Any, keys: list[bytes]) -> None:
        from redis.exceptions import RedisError

        with contextlib.suppress(RedisError, OSError):  # its connection is dropped with it
            await pubsub.aclose()
        await self._forget(keys)

    def _key(self, task_id: str) -> bytes:
        key = self.backend.get_key_for_task(task_id)
        return key if isinstance(key, bytes) else key.encode()

    def _accept(self, found: dict[bytes, Any], key: bytes, payload: Any) -> None:
        if payload is None or key in found:
            return
        meta = self.backend.decode_result(payload)
        status = meta.get("status")
        if status == _DONE:
            found[key] = meta["result"]
        elif status in _FAILED:
            error = meta.get("result")
            name = type(error).__name__ if isinstance(error, BaseException) else str(status)
            raise TaskFailed(name) from (error if isinstance(error, BaseException) else None)

    async def _forget(self, keys: list[bytes]) -> None:
        from redis.exceptions import RedisError

        # Left behind, they expire with result_expires anyway.
        with contextlib.suppress(RedisError, OSError):
            await self.redis.delete(*keys)

    async def aclose(self) -> None:
        if self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        await self.redis.aclose()
