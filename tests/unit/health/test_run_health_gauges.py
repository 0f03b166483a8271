"""The run-health gauges keep the runs checked last only: /metrics no longer grows with every
run ever checked."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

from prometheus_client import REGISTRY, generate_latest

from service.metrics import RUN_HEALTH_KINDS, observe_run_health


def _gauged_runs(tenant: str) -> dict[str, set[str]]:
    """The runs of ``tenant`` with a series in the registry, and the kinds each has."""
    runs: dict[str, set[str]] = {}
    for metric in REGISTRY.collect():
        if metric.name != "rlvr_run_health_warning":
            continue
        for sample in metric.samples:
            if sample.labels["tenant"] == tenant:
                runs.setdefault(sample.labels["run_id"], set()).add(sample.labels["kind"])
    return runs


def _tenant() -> str:
    return f"gauges-{uuid.uuid4().hex[:8]}"


def test_only_the_runs_checked_last_keep_their_series() -> None:
    tenant = _tenant()
    for n in range(7):
        observe_run_health(tenant, f"run-{n}", ["error_rate"] if n % 2 else [], keep_runs=4)

    runs = _gauged_runs(tenant)
    assert set(runs) == {"run-3", "run-4", "run-5", "run-6"}
    assert all(kinds == set(RUN_HEALTH_KINDS) for kinds in runs.values())
    exposed = generate_latest().decode()
    assert f'run_id="run-2",tenant="{tenant}"' not in exposed
    assert f'kind="error_rate",run_id="run-5",tenant="{tenant}"}} 1.0' in exposed


def test_checking_a_run_again_keeps_it() -> None:
    tenant = _tenant()
    for n in range(3):
        observe_run_health(tenant, f"run-{n}", [], keep_runs=3)
    observe_run_health(tenant, "run-0", ["timeout_rate"], keep_runs=3)
    observe_run_health(tenant, "run-3", [], keep_runs=3)

    assert set(_gauged_runs(tenant)) == {"run-0", "run-2", "run-3"}


def test_the_same_run_id_of_two_tenants_is_two_runs() -> None:
    first, second = _tenant(), _tenant()
    observe_run_health(first, "shared", [], keep_runs=2)
    observe_run_health(second, "shared", [], keep_runs=2)
    observe_run_health(second, "other", [], keep_runs=2)

    assert _gauged_runs(first) == {}
    assert set(_gauged_runs(second)) == {"shared", "other"}


def test_concurrent_checks_leave_the_bound_exact() -> None:
    tenant = _tenant()

    def check(n: int) -> None:
        observe_run_health(tenant, f"run-{n}", ["flagged_rate"], keep_runs=10)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(check, range(500)))

    runs = _gauged_runs(tenant)
    assert len(runs) == 10
    assert all(kinds == set(RUN_HEALTH_KINDS) for kinds in runs.values())
