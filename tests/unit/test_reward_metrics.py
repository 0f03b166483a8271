"""The reward counters count every item of a request, by verifier and status, and its cache
hits, however the items are grouped when counted."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from prometheus_client import REGISTRY

from service.metrics import observe_rewards


@dataclass(frozen=True)
class _Result:
    verifier: str
    status: str
    cached: bool


def _items(verifier: str, status: str) -> float:
    labels = {"verifier": verifier, "status": status}
    return REGISTRY.get_sample_value("rlvr_reward_items_total", labels) or 0.0


def _count(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def test_each_item_is_counted_once_by_verifier_and_status() -> None:
    math, code = f"math-{uuid.uuid4().hex[:8]}", f"code-{uuid.uuid4().hex[:8]}"
    results = [
        _Result(math, "correct", cached=False),
        _Result(code, "error", cached=False),
        _Result(math, "incorrect", cached=True),
        _Result(math, "correct", cached=True),
        _Result(math, "correct", cached=False),
    ]
    hits = _count("rlvr_reward_cache_hits_total")
    requests = _count("rlvr_reward_request_seconds_count")

    observe_rewards(iter(results), 0.02)  # any iterable, read once
    observe_rewards(results[:1], 0.03)

    assert _items(math, "correct") == 4
    assert _items(math, "incorrect") == 1
    assert _items(code, "error") == 1
    assert _items(code, "correct") == 0
    assert _count("rlvr_reward_cache_hits_total") == hits + 2
    assert _count("rlvr_reward_request_seconds_count") == requests + 2


def test_a_request_without_items_counts_its_time_only() -> None:
    hits = _count("rlvr_reward_cache_hits_total")
    requests = _count("rlvr_reward_request_seconds_count")
    observe_rewards([], 0.01)
    assert _count("rlvr_reward_cache_hits_total") == hits
    assert _count("rlvr_reward_request_seconds_count") == requests + 1
