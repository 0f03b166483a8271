"""Plan a reward request: give each item its verifier version (a group always gets one) and
pack whole groups into chunks of one version each."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from service.contract import ChunkItem, ChunkRequest
from service.errors import InvalidRequest, PayloadTooLarge
from service.rewards.schemas import RewardsRequest
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec, get_kind


@dataclass(frozen=True, slots=True)
class Plan:
    tenant_id: str
    request_id: str
    specs: list[VerifierVersionSpec]  # per item
    groups: dict[str, list[int]]  # group id → item indices, in order of first appearance


def verifier_references(body: RewardsRequest) -> set[str]:
    """Every verifier reference the request names; an item without one is a 422."""
    references: set[str] = set()
    for item in body.items:
        reference = item.verifier or body.verifier
        if reference is None:
            raise InvalidRequest("no verifier: set 'verifier' on the request or on every item")
        references.add(reference)
    return references


def plan_request(
    body: RewardsRequest,
    tenant_id: str,
    request_id: str,
    specs: dict[str, VerifierVersionSpec],
    settings: Settings,
) -> Plan:
    """Check the batch and give each item its version; a group always gets one version."""
    item_specs: list[VerifierVersionSpec] = []
    seen_ids: set[str] = set()
    groups: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(body.items):
        oversized = item.oversized(settings)
        if oversized is not None:
            raise PayloadTooLarge(f"items[{index}].{oversized}")
        item_id = item.id if item.id is not None else str(index)
        if item_id in seen_ids:
            raise InvalidRequest(f"duplicate item id {item_id!r}", code="duplicate_item_id")
        seen_ids.add(item_id)
        item_specs.append(specs[item.verifier or body.verifier])  # type: ignore[index]
        if item.group_id is not None:
            groups[item.group_id].append(index)
    for group_id, members in groups.items():
        hashes = {item_specs[i].version_hash for i in members}
        if len(hashes) > 1:
            raise InvalidRequest(
                f"group {group_id!r} names more than one verifier version; "
                "a group is always verified by one version",
                code="group_mixed_verifiers",
            )
    return Plan(tenant_id=tenant_id, request_id=request_id, specs=item_specs, groups=dict(groups))


# The most items a chunk of cheap checks grows to, in chunk sizes.
LARGEST_CHUNK = 4


def chunk_limit(
    settings: Settings, spec: VerifierVersionSpec, items: int, processes: Mapping[str, int]
) -> int:
    """Items per chunk for ``items`` items of one version.

    ``chunk_size``; but a request of cheap checks (the "cpu" queue) larger than one chunk per
    worker process that consumes that queue (``processes``: the local pool, or the live Celery
    workers' pool processes as the registry last said) is cut into one chunk per process, up to
    ``LARGEST_CHUNK`` chunk sizes each. Every chunk costs some 2 ms of its own around its items
    (its lookup, its write's commit, its rollups, the round trips to a pool process and its
    bounded child; in the deployed mode also its publish, delivery and result), the price of
    ten such items; a lone request still keeps every process busy. Code (the sandbox queue),
    and a queue whose processes are not known yet, keep ``chunk_size``."""
    queue = get_kind(spec.kind).queue
    workers = processes.get(queue, 0) if queue == "cpu" else 0
    if items <= settings.chunk_size or workers < 1:
        return settings.chunk_size
    per_worker = -(-items // workers)
    return min(max(settings.chunk_size, per_worker), LARGEST_CHUNK * settings.chunk_size)


def pack_chunks(
    body: RewardsRequest, plan: Plan, settings: Settings, processes: Mapping[str, int]
) -> list[ChunkRequest]:
    """Pack whole groups (duplicates live inside groups) into chunks of one version each.

    A chunk holds at most ``chunk_limit`` items unless a single group is larger: such a group
    stays whole, because its duplicates and its group-level shaping need all of it in one place.
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

    chunks: list[ChunkRequest] = []
    for units in units_by_version.values():
        spec = plan.specs[units[0][0]]
        limit = chunk_limit(settings, spec, sum(map(len, units)), processes)
        current: list[int] = []
        for unit in units:
            if current and len(current) + len(unit) > limit:
                chunks.append(_chunk(body, plan, spec, current, settings))
                current = []
            current.extend(unit)
        if current:
            chunks.append(_chunk(body, plan, spec, current, settings))
    return chunks


def _chunk(
    body: RewardsRequest,
    plan: Plan,
    spec: VerifierVersionSpec,
    indices: list[int],
    settings: Settings,
) -> ChunkRequest:
    items = []
    for index in indices:
        item = body.items[index]
        items.append(
            ChunkItem(
                index=index,
                id=item.id if item.id is not None else str(index),
                group_id=item.group_id,
                prompt=item.prompt,
                completion=item.completion,
                ground_truth=item.ground_truth,
                metadata=item.metadata,
            )
        )
    return ChunkRequest(
        tenant_id=plan.tenant_id,
        request_id=plan.request_id,
        run_id=body.run_id,
        step=body.step,
        verifier=spec,
        timeout_s=settings.verify_timeout_s,
        items=tuple(items),
    )
