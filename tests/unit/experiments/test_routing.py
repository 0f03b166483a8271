"""Which items a running experiment takes and which arm decides them: the reward path's
routing is a pure function of the request and the experiments."""

from __future__ import annotations

import uuid
from typing import Any

from service.catalog.builtin import resolve_builtin
from service.catalog.resolver import VerifierResolver
from service.execution.worker import consumers
from service.rewards.experiments import ActiveExperiment, ExperimentRouter
from service.rewards.planning import plan_request
from service.rewards.schemas import RewardsRequest
from service.settings import Settings
from service.verifiers.registry import build_version

CONTROL = resolve_builtin("math@1.0.0")
TREATMENT = build_version("math", "1.1.0", "math", {"rel_tol": 0.01})


def experiment(mode: str, run_id: str | None = None, split: float = 0.5) -> ActiveExperiment:
    return ActiveExperiment(
        id=uuid.uuid4(),
        verifier="math",
        mode=mode,
        split=split if mode == "split" else None,
        run_id=run_id,
        control_hash=CONTROL.version_hash,
        treatment=TREATMENT,
    )


def route(body: dict[str, Any], active: list[ActiveExperiment]) -> Any:
    settings = Settings()
    request = RewardsRequest.model_validate(body)
    references = {item.verifier or request.verifier for item in request.items}
    specs = {reference: CONTROL for reference in references if reference}
    plan = plan_request(request, "team", "request-1", specs, settings)
    router = ExperimentRouter(settings, VerifierResolver(settings))
    return router.route(request, plan, active)


def items(groups: int, size: int = 4, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"group_id": f"g{g}", "completion": f"\\boxed{{{i}}}", "ground_truth": "1", **extra}
        for g in range(groups)
        for i in range(size)
    ]


def test_split_moves_whole_groups_to_the_treatment() -> None:
    split = experiment("split")
    routing = route({"verifier": "math", "items": items(40)}, [split])
    versions: dict[int, set[str]] = {}
    for index, spec in enumerate(routing.plan.specs):
        versions.setdefault(index // 4, set()).add(spec.version)
    assert all(len(group) == 1 for group in versions.values())
    treated = {g for g, group in versions.items() if group == {"1.1.0"}}
    assert 0 < len(treated) < 40
    arms = {index: arm for _, index, arm in routing.assignments}
    assert len(arms) == 160
    assert {index // 4 for index, arm in arms.items() if arm == "treatment"} == treated


def test_items_without_a_group_are_assigned_one_by_one() -> None:
    body = {"verifier": "math", "items": [{"completion": "1", "ground_truth": "1"}] * 200}
    routing = route(body, [experiment("split", split=0.5)])
    treated = sum(spec.version == "1.1.0" for spec in routing.plan.specs)
    assert 50 < treated < 150


def test_a_pinned_version_or_another_run_is_left_alone() -> None:
    split = experiment("split", run_id="run-a", split=0.99)
    pinned = route({"verifier": "math@1.0.0", "run_id": "run-a", "items": items(20)}, [split])
    other_run = route({"verifier": "math", "run_id": "run-b", "items": items(20)}, [split])
    for routing in (pinned, other_run):
        assert {spec.version for spec in routing.plan.specs} == {"1.0.0"}
        assert routing.assignments == [] and routing.shadows == {}
    # One pinned item keeps its whole group out of the experiment.
    mixed = items(1) + items(1, verifier="math@1.0.0")
    mixed[4:] = [{**item, "group_id": "g0"} for item in mixed[4:]]
    together = route({"verifier": "math", "run_id": "run-a", "items": mixed}, [split])
    assert together.assignments == []


def test_shadow_changes_no_version_and_notes_the_items() -> None:
    shadow = experiment("shadow")
    routing = route({"verifier": "math", "items": items(3)}, [shadow])
    assert {spec.version for spec in routing.plan.specs} == {"1.0.0"}
    ((noted, indices),) = routing.shadows.values()
    assert noted.id == shadow.id and indices == set(range(12))


def test_the_oldest_experiment_takes_the_traffic() -> None:
    older, newer = experiment("shadow"), experiment("split", split=0.99)
    routing = route({"verifier": "math", "items": items(5)}, [older, newer])
    assert list(routing.shadows) == [older.id] and routing.assignments == []


def test_the_background_queues_share_one_consumer() -> None:
    assert consumers(["cpu", "sandbox", "shadow", "replay"]) == {
        "cpu": ["cpu"],
        "sandbox": ["sandbox"],
        "background": ["shadow", "replay"],
    }
    assert consumers(["replay"]) == {"background": ["replay"]}
