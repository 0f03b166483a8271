"""The API's wait for Celery results: answers in order, then the result keys are cleaned up."""

from __future__ import annotations

import asyncio
import uuid

import redis

from service.execution.celery_app import make_celery
from service.execution.results import ResultWaiter
from service.settings import Settings


def test_wait_returns_results_in_order_and_deletes_their_keys(pg_settings: Settings) -> None:
    app = make_celery(pg_settings, publish_only=True)
    backend = app.backend
    task_ids = [uuid.uuid4().hex for _ in range(3)]
    url = pg_settings.broker_url or ""

    async def scenario() -> list[object]:
        waiter = ResultWaiter(url, backend)
        try:
            waiting = asyncio.create_task(waiter.wait(task_ids, timeout_s=10.0))
            # One result stored before the wait subscribes, the others published while it waits.
            backend.mark_as_done(task_ids[1], ["second"])
            await asyncio.sleep(0)
            backend.mark_as_done(task_ids[2], ["third"])
            backend.mark_as_done(task_ids[0], ["first"])
            answers = await waiting
        finally:
            await waiter.aclose()  # waits for the cleanup left to run after the answer
        return answers

    try:
        assert asyncio.run(scenario()) == [["first"], ["second"], ["third"]]
        client = redis.Redis.from_url(url)
        try:
            keys = [backend.get_key_for_task(task_id) for task_id in task_ids]
            assert client.exists(*keys) == 0
        finally:
            client.close()
    finally:
        app.close()
