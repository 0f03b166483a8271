"""The API's wait for Celery results: answers in order, then the result keys are cleaned up."""

from __future__ import annotations

import asyncio
import uuid

import redis

from service.execution.celery_app import make_celery
from service.execution.results import ResultWaiter, TaskFailed
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


def test_one_listener_serves_every_request_and_failures_raise(pg_settings: Settings) -> None:
    app = make_celery(pg_settings, publish_only=True)
    backend = app.backend
    url = pg_settings.broker_url or ""

    async def scenario() -> tuple[list[object], list[object], str]:
        waiter = ResultWaiter(url, backend)
        try:
            first, second = [uuid.uuid4().hex], [uuid.uuid4().hex, uuid.uuid4().hex]
            waiting = [
                asyncio.create_task(waiter.wait(ids, timeout_s=10.0)) for ids in (first, second)
            ]
            while waiter._subscribed.is_set() is False or len(waiter._waiting) < 3:
                await asyncio.sleep(0.01)  # both wait, through one subscription
            backend.mark_as_done(second[1], "d")
            backend.mark_as_done(first[0], "a")
            backend.mark_as_done(second[0], "c")
            answers = await asyncio.gather(*waiting)
            failing = uuid.uuid4().hex
            failed = asyncio.create_task(waiter.wait([failing], timeout_s=10.0))
            while failing.encode() not in b"".join(waiter._waiting):
                await asyncio.sleep(0.01)
            backend.mark_as_failure(failing, KeyError("boom"))
            try:
                await failed
            except TaskFailed as exc:
                failure = str(exc)
            else:
                failure = "none"
        finally:
            await waiter.aclose()
        return answers[0], answers[1], failure

    try:
        first, second, failure = asyncio.run(scenario())
        assert (first, second, failure) == (["a"], ["c", "d"], "KeyError")
    finally:
        app.close()
