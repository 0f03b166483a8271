"""Celery tasks: thin wrappers around the chunk runner, with explicit names."""

from __future__ import annotations

import gc
import logging
import os
import uuid
from typing import Any

from celery.signals import (
    task_received,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from service.contract import ChunkRequest
from service.db.session import dispose_engines
from service.execution.bounded import get_runner
from service.execution.celery_app import get_celery
from service.execution.chunk import run_chunk
from service.execution.liveness import WorkerPresence, new_incarnation
from service.execution.replay import advance_replay
from service.execution.routing import (
    ADVANCE_REPLAY_TASK,
    REPLAY_QUEUE,
    SHADOW_CHUNK_TASK,
    VERIFY_CHUNK_TASK,
)
from service.execution.sandbox_setup import configure_sandbox_from
from service.execution.shadow import ShadowJob, run_shadow_job
from service.execution.warmup import check_verifiers_import, warm_up_verifiers
from service.sandbox import close_backend, start_worker_sandbox
from service.settings import get_settings

log = logging.getLogger(__name__)
app = get_celery()


# Celery writes a repr of every return value for its success log line, even when that line is
# not logged: at its default size, 0.8 ms of a 16-item chunk's results.
@app.task(name=VERIFY_CHUNK_TASK, resultrepr_maxsize=100)
def verify_chunk(payload: dict[str, Any]) -> list[dict[str, Any]]:
    results = run_chunk(ChunkRequest.from_json(payload), get_settings())
    return [result.model_dump() for result in results]


@app.task(name=SHADOW_CHUNK_TASK, ignore_result=True)
def shadow_chunk(payload: dict[str, Any]) -> int:
    return run_shadow_job(ShadowJob.from_json(payload), get_settings())


@app.task(name=ADVANCE_REPLAY_TASK, bind=True, ignore_result=True)
def advance_replay_step(self: Any, replay_id: str) -> str:
    # The task's id owns the replay's lease: a redelivered message (its worker died) carries
    # the same id and takes the work up again at once.
    outcome = advance_replay(uuid.UUID(replay_id), self.request.id, get_settings())
    if outcome == "more":
        app.send_task(ADVANCE_REPLAY_TASK, args=(replay_id,), queue=REPLAY_QUEUE)
    return outcome


@worker_init.connect
def _import_verifiers(**_: Any) -> None:
    # Imported once in the parent, so every forked pool process starts warm; a verifier that
    # cannot be imported stops the worker here instead of failing every task. The sandbox's
    # config comes first: the code kind's versions depend on it.
    configure_sandbox_from(get_settings())
    check_verifiers_import()
    warm_up_verifiers()


def _serves_sandbox_queue() -> bool:
    consumed = getattr(app.amqp.queues, "consume_from", None) or {}
    return "sandbox" in consumed


@worker_process_init.connect
def _start_bounded_child(**_: Any) -> None:
    settings = get_settings()
    dispose_engines()
    configure_sandbox_from(settings)
    get_runner(settings.verify_timeout_s, settings.verify_memory_mb)
    if _serves_sandbox_queue():
        start_worker_sandbox()
    # What start-up made (modules, parser tables: ~400k objects) is never garbage: left out of
    # the collector, which otherwise walks it again in the collections a chunk's work sets off.
    gc.freeze()


@worker_process_shutdown.connect
def _stop_bounded_child(**_: Any) -> None:
    settings = get_settings()
    get_runner(settings.verify_timeout_s, settings.verify_memory_mb).close()
    close_backend()


_presence: WorkerPresence | None = None


def _reserved_tags() -> set[str] | None:
    """Delivery tags of the messages this worker holds (the main process's own state)."""
    from celery.worker import state

    for _ in range(5):
        try:  # the main thread may change the sets while this (heartbeat) thread reads them
            requests = [*state.reserved_requests, *state.active_requests]
        except RuntimeError:
            continue
        return {str(request.message.delivery_tag) for request in requests}
    return None


def _restorer() -> Any:
    """Puts a message held by a dead worker back on its queue (the heartbeat thread's own
    broker connection; kombu moves it out of the unacknowledged set in one transaction)."""
    connection: Any = None

    def restore(delivery_tag: str) -> None:
        nonlocal connection
        if connection is None:
            connection = app.connection_for_write()
        try:
            connection.default_channel.qos.restore_by_tag(delivery_tag)
        except Exception:
            connection.release()
            connection = None
            raise

    return restore


def _pool_processes(consumer: Any, app: Any) -> int:
    concurrency = getattr(getattr(consumer, "controller", None), "concurrency", None)
    if not isinstance(concurrency, int) or concurrency < 1:
        concurrency = app.conf.worker_concurrency or os.cpu_count() or 1
    return int(concurrency)


@worker_ready.connect
def _start_presence(sender: Any = None, **_: Any) -> None:
    import redis

    global _presence
    settings = get_settings()
    url = settings.broker_url or ""  # a worker does not start without one (service/cli.py)
    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
    queues = list(getattr(app.amqp.queues, "consume_from", None) or {})
    _presence = WorkerPresence(
        client,
        new_incarnation(),
        getattr(sender, "hostname", "") or "",
        queues,
        settings.worker_heartbeat_s,
        _restorer(),
        _reserved_tags,
        # Its pool processes: the API cuts a large request into a chunk for each.
        processes=_pool_processes(sender, app),
    )
    _presence.start()


@task_received.connect
def _note_held(request: Any = None, **_: Any) -> None:
    if _presence is None or request is None:
        return
    try:
        _presence.hold(str(request.message.delivery_tag), request.id)
    except Exception:  # the broker is the same Redis: this task is in trouble anyway
        log.warning("could not note task %s as held", request.id, exc_info=True)


@worker_shutdown.connect
def _stop_presence(**_: Any) -> None:
    global _presence
    if _presence is not None:
        try:
            _presence.stop()
        except Exception:
            log.warning("could not unregister this worker", exc_info=True)
        _presence = None
