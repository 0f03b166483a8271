"""The API's side of Celery results: wait for a request's chunks without holding a thread.

A blocking ``GroupResult.get`` holds one of the API's threads for as long as the workers take;
a few slow requests then held all of them and ``/readyz`` hung behind them. Here a request
waits on the result backend asynchronously: one listener per process is subscribed to every
result key (Celery's Redis backend publishes each result on its key) and hands results to the
requests waiting for them; a request reads those that were stored before it waited, and re-reads
pending keys every second in case a publish was missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from celery.backends.redis import RedisBackend

log = logging.getLogger(__name__)
# Results the backend publishes that end a task; other states (started, retry) do not.
_DONE = "SUCCESS"
_FAILED = frozenset({"FAILURE", "REVOKED"})
RECHECK_S = 1.0
# How long the first request waits for the listener's subscription, how often the listener
# looks up from an idle connection, and how long it waits before subscribing again.
SUBSCRIBE_WAIT_S = 2.0
LISTEN_POLL_S = 5.0
RECONNECT_S = 0.5


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
    """Waits for task results in the Redis result backend, on the event loop.

    One subscription serves every request of this process: a listener subscribed once to the
    pattern of every result key hands each published result to the request waiting for it.
    A subscription per request cost a new connection (a pub/sub connection is closed, not
    pooled, when it ends), its handshake and a SUBSCRIBE: three or four round trips to Redis
    per request, now one (the read of results stored before the request was waiting).
    """

    def __init__(self, url: str, backend: RedisBackend) -> None:
        import redis.asyncio

        self.backend = backend
        self.redis = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
        self._cleanups: set[asyncio.Task[None]] = set()
        self._waiting: dict[bytes, asyncio.Future[Any]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()

    async def wait(self, task_ids: Sequence[str], timeout_s: float) -> list[Any]:
        """Each task's return value, in order; raises the first failure, TimeoutError past
        ``timeout_s``, or redis' ConnectionError when the backend is gone."""
        keys = [self._key(task_id) for task_id in task_ids]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        futures = {key: loop.create_future() for key in keys}
        self._waiting.update(futures)
        try:
            await self._listening()
            while True:
                # Results stored before this request waited (or while the listener was
                # reconnecting) were published to nobody: read them; then every second, in
                # case a publish was missed.
                unsettled = [key for key, future in futures.items() if not future.done()]
                if unsettled:
                    payloads = await self.redis.mget(unsettled)
                    for key, payload in zip(unsettled, payloads, strict=True):
                        self._accept(key, payload)
                for future in futures.values():
                    if future.done() and future.exception() is not None:
                        raise future.exception()  # type: ignore[misc]
                pending = [future for future in futures.values() if not future.done()]
                if not pending:
                    break
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise TimeoutError(f"{len(pending)} of {len(keys)} tasks pending")
                await asyncio.wait(
                    pending,
                    timeout=min(RECHECK_S, remaining),
                    return_when=asyncio.FIRST_EXCEPTION,
                )
            answers = [future.result() for future in futures.values()]
        finally:
            for key, future in futures.items():
                self._waiting.pop(key, None)
                if future.done() and not future.cancelled():
                    future.exception()  # seen: a failure not raised here is not logged as lost
            # Off the request's path: deleting the keys is one more round trip to Redis that
            # the caller need not wait for.
            cleanup = asyncio.create_task(self._forget(keys))
            self._cleanups.add(cleanup)
            cleanup.add_done_callback(self._cleanups.discard)
        return answers

    async def _listening(self) -> None:
        """The listener runs; the first request waits (briefly) for it to subscribe."""
        if self._listener is None or self._listener.done():
            self._subscribed.clear()
            self._listener = asyncio.create_task(self._listen())
        if not self._subscribed.is_set():
            with contextlib.suppress(TimeoutError):
                # If Redis does not answer, the read that follows says so.
                await asyncio.wait_for(self._subscribed.wait(), timeout=SUBSCRIBE_WAIT_S)

    async def _listen(self) -> None:
        from redis.exceptions import RedisError

        prefix = self.backend.task_keyprefix
        pattern = (prefix if isinstance(prefix, bytes) else prefix.encode()) + b"*"
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(pattern)
                self._subscribed.set()
                while True:
                    message = await pubsub.get_message(timeout=LISTEN_POLL_S)
                    if message is not None and message.get("type") == "pmessage":
                        self._heard(bytes(message["channel"]), message["data"])
            except (RedisError, OSError):
                # Redis went away: requests see it in their own reads; retry until it is back.
                self._subscribed.clear()
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()
            await asyncio.sleep(RECONNECT_S)

    def _key(self, task_id: str) -> bytes:
        key = self.backend.get_key_for_task(task_id)
        return key if isinstance(key, bytes) else key.encode()

    def _heard(self, key: bytes, payload: Any) -> None:
        try:
            self._accept(key, payload)
        except Exception:  # a payload it cannot decode must not end the listener
            log.exception("could not read the published result %r", key)

    def _accept(self, key: bytes, payload: Any) -> None:
        """A result for a key: settles its request's future, if one waits for it."""
        future = self._waiting.get(key)
        if payload is None or future is None or future.done():
            return
        meta = self.backend.decode_result(payload)
        status = meta.get("status")
        if status == _DONE:
            future.set_result(meta["result"])
        elif status in _FAILED:
            error = meta.get("result")
            name = type(error).__name__ if isinstance(error, BaseException) else str(status)
            failure = TaskFailed(name)
            if isinstance(error, BaseException):
                failure.__cause__ = error
            future.set_exception(failure)

    async def _forget(self, keys: list[bytes]) -> None:
        from redis.exceptions import RedisError

        # Left behind, they expire with result_expires anyway.
        with contextlib.suppress(RedisError, OSError):
            await self.redis.delete(*keys)

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        if self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        await self.redis.aclose()
