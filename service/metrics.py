"""Prometheus metrics of the API process, served on /metrics."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Protocol

from prometheus_client import Counter, Gauge, Histogram

REWARD_ITEMS = Counter(
    "rlvr_reward_items_total", "Verified items by verifier and status", ["verifier", "status"]
)
CACHE_HITS = Counter("rlvr_reward_cache_hits_total", "Items answered from the verdict cache")
REQUEST_SECONDS = Histogram(
    "rlvr_reward_request_seconds",
    "Time to answer POST /v1/rewards",
    buckets=(0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
INFLIGHT_ITEMS = Gauge("rlvr_inflight_items", "Items of reward requests in flight in this process")
SHED_REQUESTS = Counter(
    "rlvr_limited_requests_total",
    "Requests refused at once by a limit (429, 413 or 503), by limit",
    ["limit"],
)


class _Observed(Protocol):
    @property
    def verifier(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def cached(self) -> bool: ...


def observe_rewards(results: Iterable[_Observed], seconds: float) -> None:
    """Count a request's items: one increment per (verifier, status) it holds, not one per
    item (``labels`` takes a lock and looks the series up each time it is called)."""
    items: dict[tuple[str, str], int] = {}
    cached = 0
    for result in results:
        labels = (result.verifier, result.status)
        items[labels] = items.get(labels, 0) + 1
        cached += result.cached
    for (verifier, status), count in items.items():
        REWARD_ITEMS.labels(verifier, status).inc(count)
    if cached:
        CACHE_HITS.inc(cached)
    REQUEST_SECONDS.observe(seconds)


SHADOW_ITEMS = Counter(
    "rlvr_shadow_items_total",
    "Items of shadow experiments handed to the shadow queue (sent) or dropped because its "
    "backlog was full (dropped), by verifier",
    ["verifier", "outcome"],
)


def observe_shadow(verifier: str, sent: int, dropped: int) -> None:
    if sent:
        SHADOW_ITEMS.labels(verifier, "sent").inc(sent)
    if dropped:
        SHADOW_ITEMS.labels(verifier, "dropped").inc(dropped)


RUN_HEALTH_KINDS = (
    "timeout_rate",
    "error_rate",
    "all_same_groups",
    "length_without_reward",
    "version_changed",
    "flagged_rate",
    "possibly_correct_rejected",
)
RUN_HEALTH = Gauge(
    "rlvr_run_health_warning",
    "1 while a run's last health check raised this warning, else 0",
    ["tenant", "run_id", "kind"],
)


# The runs whose series RUN_HEALTH holds, least recently checked first. Every check of a new
# run adds a series per kind, and a series stays until it is removed: without this bound
# /metrics grew with every run ever checked. One lock: several threads answer health reads.
_GAUGED_RUNS: OrderedDict[tuple[str, str], None] = OrderedDict()
_GAUGED_RUNS_LOCK = threading.Lock()


def observe_run_health(tenant: str, run_id: str, kinds: Iterable[str], keep_runs: int) -> None:
    """Set a run's gauges from its last check; only the ``keep_runs`` runs checked last keep
    their series, the others' are removed (a run no one checks any more is not watched)."""
    raised = set(kinds)
    with _GAUGED_RUNS_LOCK:
        _GAUGED_RUNS[(tenant, run_id)] = None
        _GAUGED_RUNS.move_to_end((tenant, run_id))
        for kind in RUN_HEALTH_KINDS:
            RUN_HEALTH.labels(tenant, run_id, kind).set(1.0 if kind in raised else 0.0)
        while len(_GAUGED_RUNS) > keep_runs:
            (old_tenant, old_run_id), _ = _GAUGED_RUNS.popitem(last=False)
            for kind in RUN_HEALTH_KINDS:
                RUN_HEALTH.remove(old_tenant, old_run_id, kind)
