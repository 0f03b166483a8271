"""Work off the hot path: shadow decisions of experiments and replay steps.

A reward request hands its shadow work over and returns: ``Background.offer_shadow`` only puts
jobs in a bounded buffer (a full buffer drops them), and a thread of its own publishes them to
the "shadow" Celery queue, or (embedded mode) submits them to a niced background process. When
that queue's backlog is past ``RLVR_SHADOW_MAX_BACKLOG`` chunks, shadow work is dropped instead,
and counted: on the experiment's row (flushed by the same thread) and in
``rlvr_shadow_items_total{outcome="dropped"}``. Nothing here can delay or fail a reward.

Shadow work also waits its turn: the thread publishes a job once no reward request has been in
flight in this API process for ``RLVR_SHADOW_QUIET_S`` (training sends rewards in bursts, one per
step, so the treatment decides in the gaps between them), and at the latest
``RLVR_SHADOW_DEFER_S`` after the job was offered (so a service that is never quiet still runs
its experiments, beside the rewards).

Replays are advanced one chunk at a time (``execution/replay.py``); each step hands the next
one to the same queue (Celery) or pool (embedded), so shadow work and replays take turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import queue
import signal
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Protocol

from service.db.session import session_scope
from service.execution.priority import lower_priority
from service.execution.replay import StepOutcome, advance_replay
from service.execution.routing import (
    ADVANCE_REPLAY_TASK,
    REPLAY_QUEUE,
    SHADOW_CHUNK_TASK,
    SHADOW_QUEUE,
    route_chunk,
)
from service.execution.shadow import ShadowJob, run_shadow_job
from service.experiments.replay_repository import ReplayRepository
from service.experiments.repository import ExperimentRepository
from service.metrics import observe_shadow
from service.settings import Settings

log = logging.getLogger(__name__)
# How often the shadow thread writes its counts to the experiments' rows.
FLUSH_S = 0.5
# Blocks until the rewards have been quiet for a while (seconds) or a deadline (monotonic)
# passes; True when quiet (``Limits.wait_quiet``).
QuietProbe = Callable[[float, float], bool]


class _Sink(Protocol):
    def backlog_full(self) -> bool: ...

    def send_shadow(self, job: ShadowJob) -> None: ...

    def kick_replay(self, replay_id: uuid.UUID) -> None: ...

    def close(self) -> None: ...


# -- the embedded mode: one niced process of its own


def _init_background_process(settings: Settings) -> None:
    from service.execution.bounded import get_runner
    from service.execution.sandbox_setup import configure_sandbox_from

    # Lower priority than the reward pools: on a busy machine rewards get the CPU first.
    lower_priority(settings.background_nice, settings.background_idle)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    configure_sandbox_from(settings)
    get_runner(settings.verify_timeout_s, settings.verify_memory_mb)


def _shadow_in_pool(job: ShadowJob, settings: Settings) -> int:
    return run_shadow_job(job, settings)


def _replay_in_pool(replay_id: uuid.UUID, owner: str, settings: Settings) -> StepOutcome:
    return advance_replay(replay_id, owner, settings)


class LocalSink:
    """A background process started at the first piece of work (most services never need
    one), shared by shadow jobs and replay steps in the order they come."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._outstanding = 0
        self._closed = False

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.settings.background_workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_init_background_process,
                    initargs=(self.settings,),
                )
            return self._pool

    def _submit(self, fn: Any, *args: Any) -> Future[Any] | None:
        if self._closed:
            return None
        pool = self._get_pool()
        try:
            return pool.submit(fn, *args)
        except RuntimeError:  # broken or shut down: start a new process next time
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            log.warning("the background process broke; starting a new one", exc_info=True)
            return self._get_pool().submit(fn, *args) if not self._closed else None

    def backlog_full(self) -> bool:
        return self._outstanding >= self.settings.shadow_max_backlog

    def send_shadow(self, job: ShadowJob) -> None:
        future = self._submit(_shadow_in_pool, job, self.settings)
        if future is None:
            return
        with self._lock:
            self._outstanding += 1
        future.add_done_callback(self._shadow_done)

    def _shadow_done(self, future: Future[int]) -> None:
        with self._lock:
            self._outstanding -= 1
        if not future.cancelled() and future.exception() is not None:
            log.warning("a shadow job failed: %r", future.exception())

    def kick_replay(self, replay_id: uuid.UUID) -> None:
        self._step(replay_id, f"local-{uuid.uuid4().hex}")

    def _step(self, replay_id: uuid.UUID, owner: str) -> None:
        future = self._submit(_replay_in_pool, replay_id, owner, self.settings)
        if future is None:
            return

        def next_step(done: Future[StepOutcome]) -> None:
            if done.cancelled():
                return
            error = done.exception()
            if error is not None:
                # The API's supervisor kicks a stalled replay again.
                log.warning("a replay step of %s failed: %r", replay_id, error)
            elif done.result() == "more":
                self._step(replay_id, owner)

        future.add_done_callback(next_step)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


# -- the deployment: the "shadow" and "replay" Celery queues


class CelerySink:
    def __init__(self, settings: Settings) -> None:
        import redis

        from service.execution.celery_app import make_celery

        assert settings.broker_url is not None
        self.settings = settings
        self.app = make_celery(settings, publish_only=True)
        self.redis = redis.Redis.from_url(
            settings.broker_url, socket_timeout=2, socket_connect_timeout=2
        )

    def backlog_full(self) -> bool:
        # Kombu's Redis transport keeps a queue's waiting messages in a list of its name.
        return int(self.redis.llen(SHADOW_QUEUE)) >= self.settings.shadow_max_backlog

    def send_shadow(self, job: ShadowJob) -> None:
        self.app.send_task(
            SHADOW_CHUNK_TASK,
            args=(job.to_json(),),
            queue=SHADOW_QUEUE,
            time_limit=route_chunk(job.chunk).time_limit_s,
            ignore_result=True,
            # Celery would otherwise repr() the whole job (every completion) for its headers.
            argsrepr=f"(shadow of {len(job.chunk.items)} items for {job.experiment_id},)",
            kwargsrepr="{}",
        )

    def kick_replay(self, replay_id: uuid.UUID) -> None:
        self.app.send_task(
            ADVANCE_REPLAY_TASK, args=(str(replay_id),), queue=REPLAY_QUEUE, ignore_result=True
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.redis.close()
        self.app.close()


# -- the shadow thread


class ShadowDispatcher:
    """Publishes shadow jobs from a bounded buffer on a thread of its own; counts what it
    sends and drops, per experiment, and writes the counts to the experiments' rows."""

    def __init__(self, settings: Settings, sink: _Sink) -> None:
        self.settings = settings
        self.sink = sink
        # Each job with the time it was offered (monotonic).
        self._jobs: queue.Queue[tuple[ShadowJob, str, float]] = queue.Queue(settings.shadow_buffer)
        self._counts: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0])
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._quiet: QuietProbe | None = None

    def yield_to(self, probe: QuietProbe) -> None:
        """Publish only when ``probe`` says the rewards are quiet (or a job's deferral is up)."""
        self._quiet = probe

    def offer(self, jobs: list[ShadowJob], verifier: str) -> None:
        """Never blocks: a job that does not fit in the buffer is dropped and counted."""
        if self._thread is None:
            self._start()
        offered = time.monotonic()
        for job in jobs:
            try:
                self._jobs.put_nowait((job, verifier, offered))
            except queue.Full:
                self._count(job, verifier, sent=False)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rlvr-shadow", daemon=True)
                self._thread.start()

    def _count(self, job: ShadowJob, verifier: str, *, sent: bool) -> None:
        items = len(job.chunk.items)
        with self._lock:
            self._counts[uuid.UUID(job.experiment_id)][0 if sent else 1] += items
        observe_shadow(verifier, items if sent else 0, 0 if sent else items)

    def _run(self) -> None:
        flushed = time.monotonic()
        while True:
            try:
                entry = self._jobs.get(timeout=FLUSH_S)
            except queue.Empty:
                entry = None
            if entry is not None:
                job, verifier, offered = entry
                self._wait_turn(offered)
                self._send(job, verifier)
            if time.monotonic() - flushed >= FLUSH_S or entry is None:
                self.flush()
                flushed = time.monotonic()
            if self._stopping and self._jobs.empty():
                return

    def _wait_turn(self, offered: float) -> None:
        probe = self._quiet
        if probe is None or self._stopping:
            return
        deadline = offered + self.settings.shadow_defer_s
        try:
            probe(self.settings.shadow_quiet_s, deadline)
        except Exception:  # waiting is a courtesy: the job goes out either way
            log.warning("could not wait for a quiet moment", exc_info=True)

    def _send(self, job: ShadowJob, verifier: str) -> None:
        try:
            if self.sink.backlog_full():
                self._count(job, verifier, sent=False)
                return
            self.sink.send_shadow(job)
        except Exception:  # the broker is down: the shadow work is lost, the rewards are not
            log.warning("could not hand a shadow job over; dropped", exc_info=True)
            self._count(job, verifier, sent=False)
            return
        self._count(job, verifier, sent=True)

    def flush(self) -> None:
        """Write the counts gathered since the last flush (kept for the next one on failure)."""
        with self._lock:
            counts = {key: (sent, dropped) for key, (sent, dropped) in self._counts.items()}
            self._counts.clear()
        if not counts:
            return
        try:
            with session_scope(self.settings) as session:
                ExperimentRepository(session).add_shadow_counts(counts)
        except Exception:
            log.warning("could not record shadow counts; kept for later", exc_info=True)
            with self._lock:
                for key, (sent, dropped) in counts.items():
                    self._counts[key][0] += sent
                    self._counts[key][1] += dropped

    def close(self, timeout_s: float = 5.0) -> None:
        self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout_s)
        self.flush()


class Background:
    """What the API hands work off the hot path to: shadow jobs and replay kicks."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sink: _Sink = LocalSink(settings) if settings.embedded else CelerySink(settings)
        self.shadow = ShadowDispatcher(settings, self.sink)

    def offer_shadow(self, jobs: list[ShadowJob], verifier: str) -> None:
        self.shadow.offer(jobs, verifier)

    def yield_to(self, probe: QuietProbe) -> None:
        """Shadow work waits for the reward requests ``probe`` watches to be quiet."""
        self.shadow.yield_to(probe)

    def kick_replay(self, replay_id: uuid.UUID) -> None:
        self.sink.kick_replay(replay_id)

    def close(self) -> None:
        self.shadow.close()
        self.sink.close()


def kick_stalled_replays(background: Background) -> int:
    """Re-dispatch every active replay that made no progress for ``RLVR_REPLAY_STALL_S`` and
    that nobody holds (its step's message was lost, or the embedded service restarted)."""
    settings = background.settings
    with session_scope(settings) as session:
        replays = ReplayRepository(session)
        stalled = replays.stalled(settings.replay_stall_s)
        for replay_id in stalled:
            replays.touch(replay_id)
    for replay_id in stalled:
        log.warning("replay %s stalled; dispatching its next step again", replay_id)
        background.kick_replay(replay_id)
    return len(stalled)


async def supervise_replays(background: Background) -> None:
    """The API's watch over replays, for as long as it runs."""
    period = max(1.0, background.settings.replay_stall_s / 2)
    while True:
        await asyncio.sleep(period)
        try:
            await asyncio.to_thread(kick_stalled_replays, background)
        except Exception:  # the database or the broker is down: try again next period
            log.warning("could not check replays for stalls", exc_info=True)
