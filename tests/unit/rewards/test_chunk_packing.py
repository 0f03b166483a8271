"""How a request's items are packed into chunks: whole groups, one version a chunk, and bigger
chunks of cheap checks when a request has more than a chunk per worker process."""

from __future__ import annotations

from typing import Any

import pytest

from service.catalog.builtin import resolve_builtin
from service.contract import ChunkRequest
from service.rewards.planning import LARGEST_CHUNK, pack_chunks, plan_request
from service.rewards.schemas import RewardsRequest
from service.settings import Settings


def _settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {"local_workers": 2, "chunk_size": 64, **overrides}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def _pack(
    settings: Settings,
    items: list[dict[str, Any]],
    verifier: str,
    processes: dict[str, int] | None = None,
) -> list[ChunkRequest]:
    body = RewardsRequest.model_validate({"verifier": verifier, "items": items})
    spec = resolve_builtin(verifier)
    plan = plan_request(body, "default", "request", {verifier: spec}, settings)
    if processes is None:  # the embedded mode's local pools
        processes = {"cpu": settings.pool_size, "sandbox": settings.pool_size}
    return pack_chunks(body, plan, settings, processes)


def _math(n: int, group_size: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "completion": f"\\boxed{{{i}}}",
            "ground_truth": str(i),
            **({"group_id": f"g{i // group_size}"} if group_size else {}),
        }
        for i in range(n)
    ]


def _sizes(chunks: list[ChunkRequest]) -> list[int]:
    return [len(chunk.items) for chunk in chunks]


@pytest.mark.parametrize(
    ("items", "sizes"),
    [
        (40, [40]),  # within one chunk
        (100, [64, 36]),  # up to two chunks' worth: chunk_size as before
        (128, [64, 64]),
        (256, [128, 128]),  # one chunk per worker
        (300, [150, 150]),
        (2048, [256] * 8),  # at most LARGEST_CHUNK chunk sizes a chunk
    ],
)
def test_embedded_cheap_checks_get_one_chunk_per_worker_when_they_fill_more(
    items: int, sizes: list[int]
) -> None:
    chunks = _pack(_settings(), _math(items), "math")
    assert _sizes(chunks) == sizes
    assert max(sizes) <= LARGEST_CHUNK * 64
    # Every item once, in order.
    assert [item.index for chunk in chunks for item in chunk.items] == list(range(items))


def test_groups_stay_whole_in_bigger_chunks() -> None:
    chunks = _pack(_settings(), _math(1024, group_size=16), "math")
    assert _sizes(chunks) == [256] * 4
    for chunk in chunks:
        groups = {item.group_id for item in chunk.items}
        assert all(sum(i.group_id == g for i in chunk.items) == 16 for g in groups)


def test_more_workers_mean_more_chunks() -> None:
    assert _sizes(_pack(_settings(local_workers=4), _math(512), "math")) == [128] * 4


def test_the_deployed_mode_cuts_by_the_live_workers_processes() -> None:
    settings = _settings(broker_url="redis://127.0.0.1:6379/0")
    # Three live processes on the cpu queue, as the worker registry says.
    assert _sizes(_pack(settings, _math(600), "math", {"cpu": 3})) == [200] * 3
    # Before the API has read the registry (or with no cpu worker), the chunk size.
    assert _sizes(_pack(settings, _math(256), "math", {})) == [64] * 4
    assert _sizes(_pack(settings, _math(256), "math", {"sandbox": 2})) == [64] * 4


def test_code_keeps_the_chunk_size() -> None:
    tests = {"language": "python", "tests": [{"type": "assert", "code": "assert f() == 1"}]}
    items = [{"completion": "def f():\n    return 1", "ground_truth": tests} for _ in range(256)]
    assert _sizes(_pack(_settings(), items, "code")) == [64] * 4
