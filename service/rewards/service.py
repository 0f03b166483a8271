"""The reward pipeline: validate → plan (resolve versions, chunk groups) → execute → respond.

Recording happens inside execution, one write per chunk, so a result the caller receives is
always a result that was logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool

from service.catalog.resolver import VerifierResolver
from service.db.base import utcnow
from service.db.session import session_scope
from service.decisions.repository import RewardRequestRepository
from service.errors import BadRequest, Conflict, DependencyUnavailable, PayloadTooLarge
from service.execution.executors import Chunk, Executor
from service.metrics import observe_rewards
from service.rewards.advantages import group_stats
from service.rewards.schemas import RewardsRequest
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec, canonical_json, get_kind


@dataclass(slots=True)
class _Plan:
    request_id: str
    specs: list[VerifierVersionSpec]  # per item
    groups: dict[str, list[int]] = field(default_factory=dict)


def _queue_for(spec: VerifierVersionSpec) -> str:
    return get_kind(spec.kind).queue


class RewardService:
    def __init__(self, settings: Settings, executor: Executor) -> None:
        self.settings = settings
        self.executor = executor
        self.resolver = VerifierResolver(settings)

    def resolve(self, body: RewardsRequest) -> dict[str, VerifierVersionSpec]:
        """Resolve every verifier the request names, once per request (a DB read, cached)."""
        references: set[str] = set()
        for item in body.items:
            reference = item.verifier or body.verifier
            if reference is None:
                raise BadRequest("no verifier: set 'verifier' on the request or on every item")
            references.add(reference)
        return self.resolver.resolve_many(references)

    def plan(
        self, body: RewardsRequest, request_id: str, specs: dict[str, VerifierVersionSpec]
    ) -> _Plan:
        """Check the batch and give each item its version; a group always gets one version."""
        items = body.items
        item_specs: list[VerifierVersionSpec] = []
        seen_ids: set[str] = set()
        groups: dict[str, list[int]] = defaultdict(list)
        for index, item in enumerate(items):
            if len(item.completion) > self.settings.max_completion_chars:
                raise PayloadTooLarge(
                    f"items[{index}].completion has {len(item.completion)} characters; "
                    f"at most {self.settings.max_completion_chars}"
                )
            item_id = item.id if item.id is not None else str(index)
            if item_id in seen_ids:
                raise BadRequest(f"duplicate item id {item_id!r}", code="duplicate_item_id")
            seen_ids.add(item_id)
            item_specs.append(specs[item.verifier or body.verifier])  # type: ignore[index]
            if item.group_id is not None:
                groups[item.group_id].append(index)
        for group_id, members in groups.items():
            hashes = {item_specs[i].version_hash for i in members}
            if len(hashes) > 1:
                raise BadRequest(
                    f"group {group_id!r} names more than one verifier version; "
                    "a group is always verified by one version",
                    code="group_mixed_verifiers",
                )
        return _Plan(request_id=request_id, specs=item_specs, groups=dict(groups))

    def chunk(self, body: RewardsRequest, plan: _Plan) -> list[Chunk]:
        """Pack whole groups (duplicates live inside groups) into chunks of one version each.

        A chunk holds at most ``chunk_size`` items unless a single group is larger.
        """
        units_by_version: dict[str, list[list[int]]] = defaultdict(list)
        placed: set[int] = set()
        for index, spec in enumerate(plan.specs):
            if index in placed:
                continue
            group_id = body.items[index].group_id
            unit = plan.groups[group_id] if group_id is not None else [index]
            placed.update(unit)
            units_by_version[spec.version_hash].append(unit)

        size = self.settings.chunk_size
        chunks: list[Chunk] = []
        for units in units_by_version.values():
            spec = plan.specs[units[0][0]]
            current: list[int] = []
            for unit in units:
                if current and len(current) + len(unit) > size:
                    chunks.append(self._chunk_payload(body, plan, spec, current))
                    current = []
                # A group larger than a chunk stays whole: its duplicates and its group-level
                # shaping need all of it in one place.
                current.extend(unit)
            if current:
                chunks.append(self._chunk_payload(body, plan, spec, current))
        return chunks

    def _chunk_payload(
        self, body: RewardsRequest, plan: _Plan, spec: VerifierVersionSpec, indices: list[int]
    ) -> Chunk:
        items = []
        kind_budget = get_kind(spec.kind).budget_s
        timeout_s = self.settings.verify_timeout_s
        budget_s = 0.0
        for index in indices:
            item = body.items[index]
            own = kind_budget(item.ground_truth) if kind_budget is not None else 0.0
            budget_s += max(timeout_s, own)
            items.append(
                {
                    "index": index,
                    "id": item.id if item.id is not None else str(index),
                    "group_id": item.group_id,
                    "prompt": item.prompt,
                    "completion": item.completion,
                    "ground_truth": item.ground_truth,
                    "metadata": item.metadata,
                }
            )
        return {
            "request_id": plan.request_id,
            "run_id": body.run_id,
            "step": body.step,
            "verifier": spec.to_payload(),
            "queue": _queue_for(spec),
            "timeout_s": timeout_s,
            # What the whole chunk may take: a task is stopped only past it (plus slack).
            "budget_s": budget_s,
            "items": items,
        }

    def _claim_request_id(self, body: RewardsRequest, request_id: str) -> None:
        payload = body.model_dump(mode="json", exclude={"request_id"})
        body_hash = hashlib.sha256(canonical_json(payload).encode()).hexdigest()
        try:
            with session_scope(self.settings) as session:
                existing = RewardRequestRepository(session).claim(
                    {
                        "request_id": request_id,
                        "body_hash": body_hash,
                        "item_count": len(body.items),
                        "run_id": body.run_id,
                        "created_at": utcnow(),
                    }
                )
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc
        if existing is not None and existing.body_hash != body_hash:
            raise Conflict(
                f"request id {request_id!r} was already used for a different request body",
                code="idempotency_key_reused",
            )

    async def compute(self, body: RewardsRequest, idempotency_key: str | None) -> dict[str, Any]:
        started = time.perf_counter()
        key = idempotency_key or body.request_id
        request_id = key or uuid.uuid4().hex
        if len(body.items) > self.settings.max_items_per_request:
            limit = self.settings.max_items_per_request
            raise PayloadTooLarge(f"{len(body.items)} items; at most {limit} per request")
        specs = await run_in_threadpool(self.resolve, body)
        plan = self.plan(body, request_id, specs)
        if key is not None:
            # A retry with the same key re-runs the same idempotent pipeline: stored decisions
            # are returned as they were and nothing is logged twice.
            await run_in_threadpool(self._claim_request_id, body, request_id)
        chunks = self.chunk(body, plan)
        try:
            chunk_results = await asyncio.wait_for(
                self.executor.run_chunks(chunks), timeout=self.settings.request_timeout_s
            )
        except TimeoutError as exc:
            raise DependencyUnavailable("workers", "the request did not finish in time") from exc

        results: list[dict[str, Any] | None] = [None] * len(body.items)
        for chunk_result in chunk_results:
            for result in chunk_result:
                results[result.pop("index")] = result
        if any(result is None for result in results):
            raise DependencyUnavailable("workers", "a chunk came back incomplete")
        groups = []
        for group_id, members in plan.groups.items():
            stats = group_stats([results[i]["reward"] for i in members], body.advantage)  # type: ignore[index]
            groups.append(
                {
                    "group_id": group_id,
                    "size": stats.size,
                    "mean": stats.mean,
                    "std": stats.std,
                    "all_same": stats.all_same,
                    "advantages": stats.advantages,
                }
            )
        observe_rewards(results, time.perf_counter() - started)  # type: ignore[arg-type]
        return {"request_id": request_id, "results": results, "groups": groups}
