"""The deployed shape's limits: counts in Redis, shared by every API process."""

from __future__ import annotations

import asyncio
import uuid

from service.limits.store import RedisStore


def test_api_processes_share_one_bucket(redis_url: str) -> None:
    bucket = f"rate:{uuid.uuid4()}"

    async def scenario() -> list[float]:
        # Two stores stand for two API processes: the burst of 3 is theirs together.
        first, second = RedisStore(redis_url), RedisStore(redis_url)
        try:
            waits = [await store.take(bucket, 3.0, 0.1, 1.0) for store in (first, second) * 2]
            await second.give_back(bucket, 3.0, 0.1, 1.0)
            waits.append(await first.take(bucket, 3.0, 0.1, 1.0))
            return waits
        finally:
            await first.aclose()
            await second.aclose()

    waits = asyncio.run(scenario())
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert 5.0 < waits[3] <= 10.0  # the fourth waits for a token at 0.1 per second
    assert waits[4] == 0.0  # the token given back was taken


def test_slots_are_shared_released_and_lapse(redis_url: str) -> None:
    name = f"concurrency:{uuid.uuid4()}"

    async def scenario() -> None:
        first, second = RedisStore(redis_url), RedisStore(redis_url)
        try:
            lease = await first.acquire_slot(name, 2, 60.0)
            assert lease is not None
            assert await second.acquire_slot(name, 2, 60.0) is not None
            assert await first.acquire_slot(name, 2, 60.0) is None
            await first.release_slot(name, lease)
            assert await second.acquire_slot(name, 2, 60.0) is not None
            # A lease of a process that died holding it lapses on its own.
            other = f"{name}:lapsing"
            assert await first.acquire_slot(other, 1, 0.2) is not None
            assert await second.acquire_slot(other, 1, 60.0) is None
            deadline = asyncio.get_running_loop().time() + 5
            while await second.acquire_slot(other, 1, 60.0) is None:
                assert asyncio.get_running_loop().time() < deadline, "the lease never lapsed"
                await asyncio.sleep(0.05)
        finally:
            await first.aclose()
            await second.aclose()

    asyncio.run(scenario())


def test_a_peek_sees_what_other_processes_hold_and_counts_nothing(redis_url: str) -> None:
    bucket, slots = f"rate:{uuid.uuid4()}", f"concurrency:{uuid.uuid4()}"

    async def scenario() -> None:
        first, second = RedisStore(redis_url), RedisStore(redis_url)
        try:
            assert await second.peek(bucket, 2.0, 0.1, slots) == (0.0, 0)  # nothing used yet
            for _ in range(2):
                assert await first.take(bucket, 2.0, 0.1, 1.0) == 0.0
            lease = await first.acquire_slot(slots, 2, 60.0)
            assert lease is not None
            wait, held = await second.peek(bucket, 2.0, 0.1, slots)
            assert 5.0 < wait <= 10.0 and held == 1
            # Looking took nothing: the other slot is still there, the bucket no emptier.
            assert await second.acquire_slot(slots, 2, 60.0) is not None
            assert (await second.peek(bucket, 2.0, 0.1, slots))[1] == 2
            await first.release_slot(slots, lease)
            assert (await first.peek(bucket, 2.0, 0.1, slots))[1] == 1
            assert 5.0 < await first.take(bucket, 2.0, 0.1, 1.0) <= 10.0
        finally:
            await first.aclose()
            await second.aclose()

    asyncio.run(scenario())


def test_a_redis_that_does_not_answer_lets_requests_through(unused_port: int) -> None:
    async def scenario() -> None:
        store = RedisStore(f"redis://127.0.0.1:{unused_port}/0")
        try:
            assert await store.take("rate:k", 1.0, 1.0, 1.0) == 0.0
            lease = await store.acquire_slot("concurrency:k", 1, 60.0)
            assert lease is not None
            await store.release_slot("concurrency:k", lease)
            assert await store.peek("rate:k", 1.0, 1.0, "concurrency:k") == (0.0, 0)
        finally:
            await store.aclose()

    asyncio.run(scenario())
