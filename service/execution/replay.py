"""One step of a replay: hold it, decide its next chunk with the target version, log the chunk.

A step holds the replay (a lease on its row) while it works, so one driver advances it at a
time; it reads what is left from the log itself (rows whose status is still null), and writes
a chunk's verdicts, the replay's progress and the lease's release in one transaction. A worker
killed mid-step leaves nothing half-written: the step's message goes back to the queue (the
same task, so the same lease owner) and the chunk is decided once, by the next attempt. A step
whose message was lost is replaced when the API sees the replay stalled.

Completions and ground truths come from the logged decisions. A completion stored truncated
(longer than ``RLVR_STORED_TEXT_CAP``) cannot be judged again: its row is an ``error`` with the
reason, never a 0.0.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from service.contract import ChunkItem, ChunkRequest, RecordedVerdict
from service.db.base import utcnow
from service.db.models import Decision
from service.db.session import session_scope
from service.decisions.log import DecisionLog
from service.execution.chunk import cache_entries, recorded_verdict, worker_id
from service.execution.decide import decide, shape_groups
from service.execution.items import prepare_items
from service.execution.routing import TASK_SLACK_S, route_chunk
from service.experiments.replay_repository import (
    PendingItem,
    ReplayRepository,
    ReplayResultRepository,
    source_conditions,
)
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec

StepOutcome = Literal["more", "done", "busy"]


def lease_s(settings: Settings) -> float:
    """How long a step may hold a replay before another driver may take it over."""
    return settings.chunk_size * settings.verify_timeout_s + TASK_SLACK_S


def _truncated(decision: Decision) -> bool:
    return len(decision.completion) < decision.completion_chars


def _chunk(
    tenant_id: str,
    replay_id: uuid.UUID,
    spec: VerifierVersionSpec,
    work: list[PendingItem],
    sources: dict[uuid.UUID, Decision],
    settings: Settings,
) -> ChunkRequest:
    items = []
    for pending in work:
        decision = sources[pending.source_id]
        group = decision.group_id
        items.append(
            ChunkItem(
                index=pending.position,
                id=str(decision.id),
                # Groups are per request in the log: two requests' "g1" are two groups.
                group_id=None if group is None else f"{decision.request_id}\x00{group}",
                prompt=decision.prompt,
                completion=decision.completion,
                ground_truth=decision.ground_truth,
                metadata=dict(decision.item_metadata or {}),
            )
        )
    return ChunkRequest(
        tenant_id=tenant_id,
        request_id=f"replay:{replay_id}",
        run_id=None,
        step=None,
        verifier=spec,
        timeout_s=settings.verify_timeout_s,
        items=tuple(items),
    )


def _unreplayable(decision: Decision) -> RecordedVerdict:
    reason = (
        f"the log keeps {len(decision.completion)} of the completion's "
        f"{decision.completion_chars} characters; it cannot be judged again"
    )
    return RecordedVerdict.model_construct(
        reward=None,
        status="error",
        components={},
        details={"reason": reason},
        cached=False,
        duration_ms=0.0,
    )


def advance_replay(replay_id: uuid.UUID, owner: str, settings: Settings) -> StepOutcome:
    """One step: list the items (first step), or decide and log the next chunk. "more" when a
    next step is due, "done" when nothing is left, "busy" when another driver holds the
    replay or it is no longer active."""
    with session_scope(settings) as session:
        replays = ReplayRepository(session)
        replay = replays.claim(replay_id, owner, lease_s(settings))
        if replay is None:
            return "busy"
        results = ReplayResultRepository(session)
        if replay.state == "pending":
            conditions = source_conditions(replay.tenant_id, replay.filter, replay.created_at)
            total = results.list_items(replay, conditions)
            replays.started(replay_id, total)
            replays.progressed(replay_id, owner, 0)
            return "more"
        work = results.next_chunk(replay_id, settings.chunk_size)
        if not work:
            replays.end(replay_id, "done")
            return "done"
        sources = results.sources([pending.source_id for pending in work])
        spec = VerifierVersionSpec.from_payload(replay.targets[work[0].target]["spec"])
        replayable = [p for p in work if not _truncated(sources[p.source_id])]
        chunk = _chunk(replay.tenant_id, replay_id, spec, replayable, sources, settings)
        replays.extend(replay_id, owner, route_chunk(chunk).time_limit_s + TASK_SLACK_S)

    items = prepare_items(chunk)
    with session_scope(settings) as session:
        cached = DecisionLog(session).cached_verdicts(prepared.cache_key for prepared in items)
    decided = decide(items, cached, spec, chunk.timeout_s, settings.verify_memory_mb)
    now = utcnow()
    new_cache = cache_entries(chunk, items, decided, now)
    verdicts: dict[int, RecordedVerdict] = {
        prepared.item.index: recorded_verdict(outcome)
        for prepared, outcome in zip(items, shape_groups(spec, items, decided), strict=True)
    }
    worker = worker_id()
    rows: list[dict[str, Any]] = []
    for pending in work:
        verdict = verdicts.get(pending.position) or _unreplayable(sources[pending.source_id])
        rows.append(
            {
                "result_id": pending.result_id,
                **{f"b_{name}": value for name, value in verdict.model_dump().items()},
                "b_worker_id": worker,
                "b_decided_at": now,
            }
        )
    with session_scope(settings) as session:
        replays = ReplayRepository(session)
        if not replays.holds(replay_id, owner):  # cancelled, or taken over after a long stall
            return "busy"
        decided_count = ReplayResultRepository(session).record(rows)
        DecisionLog(session).record([], new_cache)
        replays.progressed(replay_id, owner, decided_count)
    return "more"
