"""Experiments on the reward path: which items a running experiment takes, which arm decides
them (split), and the shadow work each request leaves behind (shadow).

An experiment takes the items of its verifier that resolve to its control version through the
name or an alias ("math", "math@stable"), in requests its filter matches; an item that pins an
exact version ("math@1.0.0") asked for that version and is left alone (so is the promotion
gate's traffic). Membership is decided per group, so a group is never split. When several
running experiments could take an item (they are refused at creation, but a filter's run is
only known per request), the oldest one takes it.

Running experiments are read once a second per tenant and API process, like resolutions.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sqlalchemy.exc import OperationalError

from service.catalog.builtin import parse_reference
from service.catalog.resolver import VerifierResolver
from service.contract import ChunkRequest, RewardResult
from service.db.session import session_scope
from service.errors import DependencyUnavailable, InvalidRequest
from service.execution.shadow import ControlVerdict, ShadowJob
from service.experiments.assignment import arm_for, filter_matches, unit_key
from service.experiments.repository import AssignmentRepository, ExperimentRepository
from service.rewards.planning import Plan
from service.rewards.schemas import RewardsRequest
from service.settings import Settings
from service.validation import VERSION_PATTERN, without_nul
from service.verifiers.registry import VerifierVersionSpec

log = logging.getLogger(__name__)
_EXACT_VERSION = re.compile(VERSION_PATTERN)


@dataclass(frozen=True, slots=True)
class ActiveExperiment:
    id: uuid.UUID
    verifier: str
    mode: str
    split: float | None
    run_id: str | None
    control_hash: str
    treatment: VerifierVersionSpec


@dataclass(slots=True)
class Routing:
    """A plan after experiments: split items moved to the treatment, the assignment rows to
    log, and per shadow experiment the items whose control decisions it shadows."""

    plan: Plan
    # (experiment, item index, arm) of split items.
    assignments: list[tuple[uuid.UUID, int, str]] = field(default_factory=list)
    shadows: dict[uuid.UUID, tuple[ActiveExperiment, set[int]]] = field(default_factory=dict)


def _pins_a_version(reference: str) -> bool:
    _, wanted = parse_reference(reference)
    return _EXACT_VERSION.fullmatch(wanted) is not None


class ExperimentRouter:
    def __init__(self, settings: Settings, resolver: VerifierResolver, ttl_s: float = 1.0) -> None:
        self.settings = settings
        self.resolver = resolver
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, list[ActiveExperiment]]] = {}
        self._lock = threading.Lock()

    def cached(self, tenant_id: str) -> list[ActiveExperiment] | None:
        """The tenant's running experiments if read within the last second, else None."""
        hit = self._cache.get(tenant_id)
        if hit is not None and time.monotonic() - hit[0] < self.ttl_s:
            return hit[1]
        return None

    def forget(self, tenant_id: str) -> None:
        with self._lock:
            self._cache.pop(tenant_id, None)

    def load(self, tenant_id: str) -> list[ActiveExperiment]:
        """Read the tenant's running experiments (a blocking call: run it in a thread)."""
        now = time.monotonic()
        try:
            with session_scope(self.settings) as session:
                rows = ExperimentRepository(session, tenant_id).running()
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc
        active = []
        for row in rows:
            reference = f"{row.verifier_name}@{row.treatment_version}"
            try:
                treatment = self.resolver.resolve_many([reference])[reference]
            except InvalidRequest:
                log.warning("experiment %s: %s no longer resolves; skipped", row.id, reference)
                continue
            if treatment.version_hash != row.treatment_hash:
                log.warning("experiment %s: %s changed; skipped", row.id, reference)
                continue
            active.append(
                ActiveExperiment(
                    id=row.id,
                    verifier=row.verifier_name,
                    mode=row.mode,
                    split=row.split,
                    run_id=row.run_id,
                    control_hash=row.control_hash,
                    treatment=treatment,
                )
            )
        with self._lock:
            self._cache[tenant_id] = (now, active)
        return active

    def route(
        self, body: RewardsRequest, plan: Plan, active: Sequence[ActiveExperiment]
    ) -> Routing:
        """Give split items their arm's version and note shadow items; a pure function of the
        request and the experiments."""
        routing = Routing(plan)
        candidates = [e for e in active if filter_matches(e.run_id, body.run_id)]
        if not candidates:
            return routing
        by_control: dict[str, ActiveExperiment] = {}
        for candidate in candidates:  # oldest first: the oldest takes precedence
            by_control.setdefault(candidate.control_hash, candidate)
        pinned = {
            reference: _pins_a_version(reference)
            for reference in {item.verifier or body.verifier for item in body.items}
            if reference is not None
        }
        specs = list(plan.specs)
        for unit in _units(body, plan):
            first = unit[0]
            experiment = by_control.get(plan.specs[first].version_hash)
            if experiment is None or experiment.verifier != plan.specs[first].name:
                continue
            if any(pinned[body.items[i].verifier or body.verifier] for i in unit):  # type: ignore[index]
                continue
            if experiment.mode == "shadow":
                routing.shadows.setdefault(experiment.id, (experiment, set()))[1].update(unit)
                continue
            key = unit_key(plan.request_id, body.items[first].group_id, first)
            arm = arm_for(str(experiment.id), key, experiment.split or 0.5)
            for index in unit:
                if arm == "treatment":
                    specs[index] = experiment.treatment
                routing.assignments.append((experiment.id, index, arm))
        routing.plan = replace(plan, specs=specs)
        return routing

    def record_assignments(
        self,
        routing: Routing,
        body: RewardsRequest,
        results: Sequence[RewardResult],
    ) -> None:
        """Log which arm decided which decision, with the decision's group and verdict (what
        the report reads); blocking: run it in a thread."""
        rows = []
        for experiment_id, index, arm in routing.assignments:
            result = results[index]
            rows.append(
                {
                    "experiment_id": experiment_id,
                    "decision_id": uuid.UUID(result.decision_id),
                    "tenant_id": routing.plan.tenant_id,
                    "arm": arm,
                    "request_id": routing.plan.request_id,
                    "group_id": without_nul(body.items[index].group_id),
                    "reward": result.reward,
                    "status": result.status,
                    "cached": result.cached,
                    "duration_ms": result.duration_ms,
                }
            )
        try:
            with session_scope(self.settings) as session:
                AssignmentRepository(session).insert_many(rows)
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc


def _units(body: RewardsRequest, plan: Plan) -> list[list[int]]:
    """The request's groups, and each item without a group alone, in order."""
    units: list[list[int]] = []
    seen: set[str] = set()
    for index, item in enumerate(body.items):
        if item.group_id is None:
            units.append([index])
        elif item.group_id not in seen:
            seen.add(item.group_id)
            units.append(plan.groups[item.group_id])
    return units


def shadow_jobs(
    routing: Routing, chunks: Sequence[ChunkRequest], results: Sequence[RewardResult]
) -> list[tuple[ShadowJob, str]]:
    """The shadow work of a request whose results are in: the control's chunks again, with the
    treatment's version, only the experiment's items, linked to the control's decisions."""
    jobs = []
    for experiment, indices in routing.shadows.values():
        for chunk in chunks:
            if chunk.verifier.version_hash != experiment.control_hash:
                continue
            items = tuple(item for item in chunk.items if item.index in indices)
            if not items:
                continue
            job = ShadowJob(
                experiment_id=str(experiment.id),
                chunk=replace(chunk, verifier=experiment.treatment, items=items),
                control_ids=tuple(results[item.index].decision_id for item in items),
                controls=tuple(_control(results[item.index]) for item in items),
            )
            jobs.append((job, experiment.verifier))
    return jobs


def _control(result: RewardResult) -> ControlVerdict:
    return ControlVerdict(result.status, result.reward, result.duration_ms, result.cached)
