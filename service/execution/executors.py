"""Where chunks run: Celery workers (deployment) or local process pools (embedded mode).

Both call the same ``run_chunk``; the API does not know which one it talks to. Neither holds
one of the API's threads while a chunk runs: the local pools' futures and the Celery results
are awaited on the event loop, so slow requests cannot starve ``/readyz`` or each other.
Sandboxed code has capacity of its own in both (a pool, or a consumer), so it never delays
cheap checks.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import signal
import sys
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Protocol

from service.contract import ChunkRequest, RewardResult
from service.errors import DependencyUnavailable
from service.execution.routing import QUEUES, VERIFY_CHUNK_TASK, queue_of, route_chunk
from service.settings import Settings

if TYPE_CHECKING:
    from service.execution.liveness import QueueConsumers

log = logging.getLogger(__name__)


class Executor(Protocol):
    async def start(self) -> None:
        """Returns at once: the API listens while the executor gets ready, and /readyz (its
        ``ready``) says when it is."""
        ...

    async def run_chunks(self, chunks: list[ChunkRequest]) -> list[list[RewardResult]]: ...

    def processes(self) -> dict[str, int]:
        """Worker processes per queue, as far as this executor knows them (none yet: {})."""
        ...

    async def ready(self) -> dict[str, str | None]:
        """Each check of this executor → None when it passes, else what is wrong."""
        ...

    async def aclose(self) -> None: ...

    def close(self) -> None: ...


def _init_pool_process(settings: Settings, queue: str) -> None:
    # The chunk runner is imported here, at the start, not by the first request.
    import service.execution.chunk  # noqa: F401
    from service.execution.bounded import get_runner
    from service.execution.sandbox_setup import configure_sandbox_from
    from service.execution.warmup import check_verifiers_import
    from service.sandbox import start_worker_sandbox

    # Stopping the service terminates pool processes: exit through Python so that atexit
    # stops this process's sandbox (its fork server, or its containers) as well.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    configure_sandbox_from(settings)
    if queue == "sandbox":
        # The kinds first: the code kind offers its harness as warm code, which the sandbox's
        # server then imports before its first fork (a server started earlier is replaced).
        check_verifiers_import()
        start_worker_sandbox()
    else:
        get_runner(settings.verify_timeout_s, settings.verify_memory_mb)  # warms up, then forks
    # What start-up made (modules, parser tables: ~400k objects) is never garbage: left out of
    # the collector, which otherwise walks it again in the collections a chunk's work sets off.
    gc.freeze()


def _run_in_pool(chunk: ChunkRequest, settings: Settings) -> list[RewardResult]:
    from service.execution.chunk import run_chunk

    return run_chunk(chunk, settings)


def _ping() -> bool:
    return True


# How long a request waits for its local pool to start and warm up before it runs anyway.
POOL_START_TIMEOUT_S = 120.0


class _LocalPool:
    """Worker processes for one queue's work, started (and warmed) at once."""

    def __init__(self, queue: str, size: int, settings: Settings) -> None:
        self.queue = queue
        self.size = size
        self.settings = settings
        self.pool, self._started = self._new_pool()

    def _new_pool(self) -> tuple[ProcessPoolExecutor, list[Future[bool]]]:
        # spawn, not fork: the API process runs threads, and forking a threaded process can
        # deadlock the child on a lock some thread held.
        pool = ProcessPoolExecutor(
            max_workers=self.size,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_pool_process,
            initargs=(self.settings, self.queue),
        )
        # The pool starts a process only when no idle one exists; submitting one call per
        # process at once starts (and warms) all of them now, not in the middle of a request.
        started = [pool.submit(_ping) for _ in range(self.size)]
        return pool, started

    def renew(self, broken: ProcessPoolExecutor) -> None:
        if self.pool is broken:
            log.error("local %s worker pool broke; starting a new one", self.queue)
            self.pool, self._started = self._new_pool()

    async def started(self, timeout_s: float) -> None:
        if all(future.done() for future in self._started):
            return
        await asyncio.wait(
            [asyncio.wrap_future(future) for future in self._started], timeout=timeout_s
        )

    def problem(self) -> str | None:
        """None once every process has started and warmed up."""
        if not all(future.done() for future in self._started):
            return f"the {self.queue} pool is starting"
        if any(future.exception() is not None for future in self._started):
            return f"a process of the {self.queue} pool failed to start"
        return None

    def close(self) -> None:
        # shutdown() alone leaves a busy pool process running after the API exits (an item
        # near its time limit); stop them all so nothing outlives the service.
        processes = list(getattr(self.pool, "_processes", {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


class LocalPoolExecutor:
    """The embedded mode: worker processes on this machine, no broker needed; a pool per
    queue, so code programs never hold the processes that cheap checks need."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        sandbox_size = settings.sandbox_workers or settings.pool_size
        self._sizes = {"cpu": settings.pool_size, "sandbox": sandbox_size}
        self._pools = {queue: _LocalPool(queue, self._sizes[queue], settings) for queue in QUEUES}

    def processes(self) -> dict[str, int]:
        return dict(self._sizes)

    async def start(self) -> None:
        # The pools warm up while the API already listens: /readyz answers 503 with
        # Retry-After at once until they are warm, and a reward request that arrives meanwhile
        # waits for its pool (below) instead of meeting a cold process or a closed port.
        return None

    async def run_chunks(self, chunks: list[ChunkRequest]) -> list[list[RewardResult]]:
        loop = asyncio.get_running_loop()
        pools = [self._pools[queue_of(chunk)] for chunk in chunks]
        await asyncio.gather(*(pool.started(POOL_START_TIMEOUT_S) for pool in set(pools)))
        executors = [pool.pool for pool in pools]
        try:
            futures = [
                loop.run_in_executor(executor, _run_in_pool, chunk, self.settings)
                for executor, chunk in zip(executors, chunks, strict=True)
            ]
            return list(await asyncio.gather(*futures))
        except BrokenProcessPool as exc:
            for pool, executor in zip(pools, executors, strict=True):
                pool.renew(executor)
            raise DependencyUnavailable("worker pool", "a worker process died") from exc

    async def ready(self) -> dict[str, str | None]:
        return {f"{queue} pool": pool.problem() for queue, pool in self._pools.items()}

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()


# Publishing is a short blocking call into kombu; a few threads of its own keep it off the
# event loop without touching the threads other work needs.
PUBLISH_THREADS = 4
# How long a read of the worker registry answers whether a queue has a live consumer.
CONSUMERS_TTL_S = 1.0
CONSUMERS_POLL_S = 0.5


class CeleryExecutor:
    """The deployment: chunks go to Celery queues over Redis, results come back by the backend."""

    def __init__(self, settings: Settings) -> None:
        from service.execution.celery_app import make_celery

        self.settings = settings
        self.app = make_celery(settings, publish_only=True)
        self._publisher = ThreadPoolExecutor(PUBLISH_THREADS, thread_name_prefix="rlvr-publish")
        self._waiter: Any = None
        self._broker: Any = None
        # Live workers per queue as last read from the registry, and when (loop time).
        self._consumers: dict[str, QueueConsumers] = {}
        self._consumers_read_at = -CONSUMERS_TTL_S

    def processes(self) -> dict[str, int]:
        """The live workers' pool processes per queue, from the last read of the registry
        (at most a second old while requests come)."""
        return {queue: consumers.processes for queue, consumers in self._consumers.items()}

    async def start(self) -> None:
        return None  # workers come and go on their own; /readyz says which queues have one

    def _broker_url(self) -> str:
        assert self.settings.broker_url is not None  # make_celery refuses to start without
        return self.settings.broker_url

    def _publish(self, chunks: list[ChunkRequest]) -> list[str]:
        task_ids = []
        with self.app.producer_or_acquire() as producer:
            for chunk in chunks:
                route = route_chunk(chunk)
                result = self.app.send_task(
                    VERIFY_CHUNK_TASK,
                    args=(chunk.to_json(),),
                    # What the worker's log shows of the arguments; left to Celery, it is a
                    # repr of the items, ~0.7 ms of the API's time per 16-item chunk.
                    argsrepr=f"(<chunk of {len(chunk.items)} items of {chunk.request_id}>,)",
                    kwargsrepr="{}",
                    queue=route.queue,
                    time_limit=route.time_limit_s,
                    producer=producer,
                )
                task_ids.append(result.id)
        return task_ids

    def _results(self) -> Any:
        if self._waiter is None:
            from service.execution.results import ResultWaiter

            url = self.settings.result_backend_url or self._broker_url()
            self._waiter = ResultWaiter(url, self.app.backend)
        return self._waiter

    async def run_chunks(self, chunks: list[ChunkRequest]) -> list[list[RewardResult]]:
        from kombu.exceptions import OperationalError
        from redis.exceptions import RedisError

        from service.execution.results import TaskFailed

        loop = asyncio.get_running_loop()
        try:
            await self._wait_for_consumers({route_chunk(chunk).queue for chunk in chunks})
            task_ids = await loop.run_in_executor(self._publisher, self._publish, chunks)
            answers = await self._results().wait(task_ids, self.settings.request_timeout_s)
        except TimeoutError as exc:
            raise DependencyUnavailable(
                "workers", "no worker finished the request in time"
            ) from exc
        except TaskFailed as exc:  # a task failed in the worker (database down, a bug)
            log.error("a verification task failed: %s", exc)
            raise DependencyUnavailable("workers", f"a task failed: {exc}") from exc
        except (OperationalError, RedisError, ConnectionError) as exc:
            log.warning("broker unavailable: %r", exc)
            self._reset()
            raise DependencyUnavailable("broker", type(exc).__name__) from exc
        except RuntimeError as exc:
            log.warning("broker connection lost: %r", exc)
            # Celery's Redis connections give up after their reconnect budget and ask for "the
            # application to be restarted": a fresh app recovers once Redis is back.
            self._reset()
            raise DependencyUnavailable("broker", "connection lost") from exc
        return [[RewardResult.model_validate(item) for item in answer] for answer in answers]

    async def _wait_for_consumers(self, queues: set[str]) -> None:
        """Publish only to queues a live worker consumes. A queue without one is waited for up
        to ``RLVR_WORKER_WAIT_S`` (a worker restarting), then the request is answered 503 +
        Retry-After: published, its tasks would have waited the request's whole timeout
        (600 s) for nobody. The registry is read at most once a second while every queue has
        a consumer, twice a second while one has none."""
        from service.execution.liveness import queue_consumers

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.worker_wait_s
        fresh = False
        while True:
            if fresh or loop.time() - self._consumers_read_at > CONSUMERS_TTL_S:
                self._consumers = await queue_consumers(self._broker_client())
                self._consumers_read_at = loop.time()
            missing = sorted(queue for queue in queues if not self._consumers.get(queue))
            if not missing:
                return
            if fresh and loop.time() >= deadline:
                raise DependencyUnavailable(
                    "workers", f"no worker consumes the {', '.join(missing)} queue"
                )
            if fresh:
                await asyncio.sleep(min(CONSUMERS_POLL_S, max(0.0, deadline - loop.time())))
            fresh = True

    def _broker_client(self) -> Any:
        if self._broker is None:
            import redis.asyncio

            self._broker = redis.asyncio.Redis.from_url(
                self._broker_url(), socket_timeout=1, socket_connect_timeout=1
            )
        return self._broker

    def _reset(self) -> None:
        from service.execution.celery_app import make_celery

        old, self.app = self.app, make_celery(self.settings, publish_only=True)
        if self._waiter is not None:
            self._waiter.backend = self.app.backend
        try:
            old.close()
        except Exception:  # closing a broken connection pool may itself fail
            log.debug("closing the previous Celery app failed", exc_info=True)

    async def ready(self) -> dict[str, str | None]:
        """The broker answers, and a live worker consumes each queue (two reads of the worker
        registry in Redis, cheap enough to need no cache)."""
        from redis.exceptions import RedisError

        from service.execution.liveness import queue_consumers

        broker = self._broker_client()
        checks: dict[str, str | None]
        try:
            await broker.ping()
            consumers = await queue_consumers(broker)
        except (RedisError, OSError) as exc:
            checks = {"broker": f"the broker does not answer ({type(exc).__name__})"}
        else:
            checks = {"broker": None}
            for queue in QUEUES:
                missing = None if consumers.get(queue) else f"no worker consumes the {queue} queue"
                checks[f"{queue} queue"] = missing
        return checks

    async def aclose(self) -> None:
        for client in (self._waiter, self._broker):
            if client is not None:
                try:
                    await client.aclose()
                except Exception:
                    log.debug("closing a Redis client failed", exc_info=True)
        self.close()

    def close(self) -> None:
        self._publisher.shutdown(wait=False, cancel_futures=True)
        self.app.close()


def make_executor(settings: Settings) -> Executor:
    if settings.embedded:
        return LocalPoolExecutor(settings)
    return CeleryExecutor(settings)
