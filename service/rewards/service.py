"""The reward pipeline: validate → plan (resolve versions, chunk groups) → execute → respond.

Recording happens inside execution, one write per chunk, so a result the caller receives is
always a result that was logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool

from service.catalog.resolver import VerifierResolver
from service.contract import ChunkRequest, RewardResult
from service.db.session import session_scope
from service.errors import Conflict, DependencyUnavailable, PayloadTooLarge
from service.execution.background import Background
from service.execution.executors import Executor
from service.execution.routing import item_budgets_s, queue_of
from service.limits.policy import Limits, SandboxDemand
from service.metrics import observe_rewards
from service.rewards.advantages import group_stats
from service.rewards.experiments import ExperimentRouter, Routing, shadow_jobs
from service.rewards.planning import Plan, pack_chunks, plan_request, verifier_references
from service.rewards.repository import RewardRequestRepository
from service.rewards.schemas import GroupResult, RewardsRequest, RewardsResponse
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec, canonical_json


class RewardService:
    def __init__(
        self, settings: Settings, executor: Executor, background: Background | None = None
    ) -> None:
        self.settings = settings
        self.executor = executor
        # Shadow work goes here (None: experiments are not served by this service).
        self.background = background
        self.resolver = VerifierResolver(settings)
        self.experiments = ExperimentRouter(settings, self.resolver)
        self.limits = Limits(settings)

    async def compute(
        self,
        body: RewardsRequest,
        idempotency_key: str | None,
        tenant_id: str,
        adhoc_versions: Mapping[str, VerifierVersionSpec] | None = None,
    ) -> RewardsResponse:
        """Rewards for every item, logged under the caller's tenant. ``adhoc_versions``: versions
        a route built itself (an OpenAI grader), by the reference the request names."""
        started = time.perf_counter()
        key = idempotency_key or body.request_id
        request_id = key or uuid.uuid4().hex
        issued_ms = time.time_ns() // 1_000_000
        if len(body.items) > self.settings.max_items_per_request:
            limit = self.settings.max_items_per_request
            raise PayloadTooLarge(f"{len(body.items)} items; at most {limit} per request")
        # Past the items this process may hold in flight, shed now (503) instead of queueing.
        with self.limits.admit(len(body.items)):
            # Each distinct reference is resolved once per request (a DB read, cached briefly:
            # a hit is answered in the event loop, a miss in a thread).
            references = verifier_references(body)
            specs = self.resolver.cached_many(references, adhoc_versions)
            if specs is None:
                specs = await run_in_threadpool(
                    self.resolver.resolve_many, references, adhoc_versions
                )
            plan = plan_request(body, tenant_id, request_id, specs, self.settings)
            routing = await self._route(body, plan, adhoc_versions)
            plan = routing.plan
            chunks = pack_chunks(body, plan, self.settings, self.executor.processes())
            demand = sandbox_demand(chunks)
            self.limits.check_sandbox_request(demand)
            ids_ms: int | None = issued_ms
            if key is not None:
                # A retry with the same key re-runs the same idempotent pipeline: stored
                # decisions are returned as they were and nothing is logged twice. Its decision
                # ids begin with the first attempt's time.
                ids_ms = await run_in_threadpool(
                    self._claim_request_id, body, tenant_id, request_id, issued_ms
                )
            chunks = [replace(chunk, issued_ms=ids_ms) for chunk in chunks]
            async with self.limits.sandbox_budget(tenant_id, demand) as reservation:
                results = await self._execute(body, chunks)
                if routing.assignments:
                    # Which arm decided what, before the trainer hears of it.
                    await run_in_threadpool(
                        self.experiments.record_assignments, routing, body, results
                    )
                reservation.used_s = sandbox_seconds_used(chunks, results)
        response = RewardsResponse.model_construct(
            request_id=request_id, results=results, groups=self._groups(body, plan, results)
        )
        if routing.shadows and self.background is not None:
            # Handed over, not awaited: a full shadow queue drops the work, never the reward.
            for job, verifier in shadow_jobs(routing, chunks, results):
                self.background.offer_shadow([job], verifier)
        observe_rewards(results, time.perf_counter() - started)
        return response

    async def _route(
        self,
        body: RewardsRequest,
        plan: Plan,
        adhoc_versions: Mapping[str, VerifierVersionSpec] | None,
    ) -> Routing:
        """The running experiments' say on the plan (a graders run takes part in none)."""
        if adhoc_versions:
            return Routing(plan)
        active = self.experiments.cached(plan.tenant_id)
        if active is None:
            active = await run_in_threadpool(self.experiments.load, plan.tenant_id)
        return self.experiments.route(body, plan, active)

    async def _execute(
        self, body: RewardsRequest, chunks: list[ChunkRequest]
    ) -> list[RewardResult]:
        try:
            answers = await asyncio.wait_for(
                self.executor.run_chunks(chunks), timeout=self.settings.request_timeout_s
            )
        except TimeoutError as exc:
            raise DependencyUnavailable("workers", "the request did not finish in time") from exc
        results: list[RewardResult | None] = [None] * len(body.items)
        for chunk, answer in zip(chunks, answers, strict=True):
            if len(answer) != len(chunk.items):
                raise DependencyUnavailable("workers", "a chunk came back incomplete")
            for item, result in zip(chunk.items, answer, strict=True):
                results[item.index] = result
        complete = [result for result in results if result is not None]
        if len(complete) != len(results):
            raise DependencyUnavailable("workers", "a chunk came back incomplete")
        return complete

    async def aclose(self) -> None:
        await self.limits.aclose()

    @staticmethod
    def _groups(body: RewardsRequest, plan: Plan, results: list[RewardResult]) -> list[GroupResult]:
        groups = []
        for group_id, members in plan.groups.items():
            stats = group_stats([results[i].reward for i in members], body.advantage)
            groups.append(
                GroupResult.model_construct(
                    group_id=group_id,
                    size=stats.size,
                    mean=stats.mean,
                    std=stats.std,
                    all_same=stats.all_same,
                    advantages=stats.advantages,
                )
            )
        return groups

    def _claim_request_id(
        self, body: RewardsRequest, tenant_id: str, request_id: str, issued_ms: int
    ) -> int | None:
        """Claim the request id; returns the time its decision ids begin with: ``issued_ms``
        for a new claim, the first attempt's for a retry (None: claimed before ids held one)."""
        payload = body.model_dump(mode="json", exclude={"request_id"})
        body_hash = hashlib.sha256(canonical_json(payload).encode()).hexdigest()
        try:
            with session_scope(self.settings) as session:
                existing = RewardRequestRepository(session, tenant_id).claim(
                    {
                        "tenant_id": tenant_id,
                        "request_id": request_id,
                        "body_hash": body_hash,
                        "item_count": len(body.items),
                        "run_id": body.run_id,
                        "issued_ms": issued_ms,
                    }
                )
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc
        if existing is not None and existing.body_hash != body_hash:
            raise Conflict(
                f"request id {request_id!r} was already used for a different request body",
                code="idempotency_key_reused",
            )
        return issued_ms if existing is None else existing.issued_ms


def sandbox_demand(chunks: list[ChunkRequest]) -> SandboxDemand:
    """The request's worst case in the sandbox: every code item's budget (compile plus every
    test at its wall clock), and the item that asks for the most."""
    total, largest_item, largest_s = 0.0, None, 0.0
    for chunk in chunks:
        if queue_of(chunk) != "sandbox":
            continue
        for item, budget_s in zip(chunk.items, item_budgets_s(chunk), strict=True):
            total += budget_s
            if budget_s > largest_s:
                largest_item, largest_s = item.index, budget_s
    return SandboxDemand(total, largest_item, largest_s)


def sandbox_seconds_used(chunks: list[ChunkRequest], results: list[RewardResult]) -> float:
    """What the request's code items took (a verdict from the cache took nothing)."""
    used_ms = sum(
        results[item.index].duration_ms
        for chunk in chunks
        if queue_of(chunk) == "sandbox"
        for item in chunk.items
        if not results[item.index].cached
    )
    return used_ms / 1000.0
