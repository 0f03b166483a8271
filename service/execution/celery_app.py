"""The one Celery app: Redis broker, a queue per workload, tasks that survive worker loss."""

from __future__ import annotations

from functools import cache

from celery import Celery
from kombu import Queue

from service.execution.bounded import wall_bound_s
from service.execution.results import PUBLISH_ONLY_BACKEND
from service.execution.routing import BACKGROUND_QUEUES, QUEUES, TASK_SLACK_S
from service.settings import Settings, get_settings


def make_celery(settings: Settings, *, publish_only: bool = False) -> Celery:
    """The app; ``publish_only`` for the API, which publishes tasks and waits for their
    results itself (``execution/results.py``) rather than through Celery's result consumer."""
    if settings.broker_url is None:
        raise RuntimeError("RLVR_BROKER_URL is not set: the embedded pool runs verifications")
    backend = settings.result_backend_url or settings.broker_url
    if publish_only:
        backend = f"{PUBLISH_ONLY_BACKEND}+{backend}"
    app = Celery(
        "rlvr",
        broker=settings.broker_url,
        backend=backend,
        include=["service.execution.tasks"],
    )
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        # A task is acknowledged only after it ran, and a worker that dies mid-task hands it
        # back: the chunk is verified again and its idempotent write logs nothing twice. A
        # pool process's death is seen by its worker; a worker's own death by the others'
        # heartbeat sweep (execution/liveness.py), long before the visibility timeout below.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_queues=[Queue(name) for name in (*QUEUES, *BACKGROUND_QUEUES)],
        task_default_queue="cpu",
        # Hard limit per chunk; each item is bounded separately by its killable child.
        task_time_limit=int(
            settings.chunk_size * wall_bound_s(settings.verify_timeout_s) + TASK_SLACK_S
        ),
        result_expires=3600,
        broker_connection_retry_on_startup=True,
        # When Redis is down the API must answer 503 in seconds, not retry for a minute.
        broker_connection_timeout=2,
        task_publish_retry_policy={
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.25,
            "interval_max": 0.5,
        },
        redis_socket_connect_timeout=2,
        result_backend_transport_options={
            "retry_policy": {
                "max_retries": 2,
                "interval_start": 0,
                "interval_step": 0.25,
                "interval_max": 0.5,
            }
        },
        broker_transport_options={"visibility_timeout": 3600},
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
    )
    return app


@cache
def get_celery() -> Celery:
    return make_celery(get_settings())
