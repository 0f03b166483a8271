"""The task function: verify one chunk of items and record it in one write.

The same function runs in a Celery worker and in the embedded local pool. It is idempotent:
decision ids derive from (request, item, version), inserts skip rows that exist, and rows that
existed are returned as stored, so a redelivered chunk or a retried request logs nothing twice
and answers the same.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from service.contract import ChunkRequest, RecordedVerdict, RewardResult
from service.db.base import utcnow
from service.db.session import read_scope, session_scope
from service.decisions.log import DecisionLog
from service.decisions.repository import VERDICT_FIELDS
from service.execution.decide import Decided, decide, shape_groups
from service.execution.items import PreparedItem, prepare_items
from service.settings import Settings
from service.validation import without_nul


def run_chunk(chunk: ChunkRequest, settings: Settings) -> list[RewardResult]:
    """Verify a chunk (one verifier version), record every decision, return results in order."""
    items = prepare_items(chunk)
    with read_scope(settings) as session:
        # Every item's key: items stored already are nearly always none, and asking for their
        # verdicts too saves a second round trip.
        stored, cached = DecisionLog(session).lookup(
            (prepared.decision_id for prepared in items),
            (prepared.cache_key for prepared in items),
        )
    pending = [prepared for prepared in items if prepared.decision_id not in stored]

    spec = chunk.verifier
    decided = decide(pending, cached, spec, chunk.timeout_s, settings.verify_memory_mb)
    now = utcnow()
    # The cache keeps the verdict before shaping: shaping depends on the rest of the group.
    new_cache = cache_entries(chunk, pending, decided, now)
    final = shape_groups(spec, pending, decided)
    # Each new decision's result holds the verdict as it is logged: the row is made from it.
    fresh = {
        prepared.decision_id: _result(chunk, prepared, _recorded_fields(outcome))
        for prepared, outcome in zip(pending, final, strict=True)
    }
    context = _RowContext(worker_id(), now, settings.stored_text_cap)
    rows = [
        _decision_row(chunk, prepared, fresh[prepared.decision_id], context) for prepared in pending
    ]
    with session_scope(settings) as session:
        DecisionLog(session).record(rows, new_cache)

    # Rows that existed (a redelivered chunk, a retried request) answer as they were stored.
    return [
        fresh[prepared.decision_id]
        if prepared.decision_id in fresh
        else _result(chunk, prepared, _stored_fields(stored[prepared.decision_id]))
        for prepared in items
    ]


def recorded_verdict(outcome: Decided) -> RecordedVerdict:
    return RecordedVerdict.model_construct(**_recorded_fields(outcome))


def _recorded_fields(outcome: Decided) -> dict[str, Any]:
    verdict = outcome.verdict
    return {
        "reward": verdict.reward,
        "status": verdict.status,
        "components": verdict.components,
        "details": without_nul(verdict.details),
        "cached": outcome.cached,
        "duration_ms": round(outcome.duration_ms, 3),
    }


def _stored_fields(verdict: RecordedVerdict) -> dict[str, Any]:
    return {name: getattr(verdict, name) for name in VERDICT_FIELDS}


def _result(chunk: ChunkRequest, prepared: PreparedItem, fields: dict[str, Any]) -> RewardResult:
    return RewardResult.model_construct(
        id=prepared.item.id,
        verifier=chunk.verifier.name,
        version=chunk.verifier.version,
        decision_id=str(prepared.decision_id),
        **fields,
    )


def cache_entries(
    chunk: ChunkRequest, items: Sequence[PreparedItem], decided: Sequence[Decided], now: datetime
) -> list[dict[str, Any]]:
    return [
        {
            "cache_key": prepared.cache_key,
            "version_hash": chunk.verifier.version_hash,
            "reward": outcome.verdict.reward,
            "status": outcome.verdict.status,
            "components": outcome.verdict.components,
            "details": without_nul(outcome.verdict.details),
            "created_at": now,
        }
        for prepared, outcome in zip(items, decided, strict=True)
        if outcome.cacheable
    ]


@dataclass(frozen=True, slots=True)
class _RowContext:
    worker_id: str
    created_at: datetime
    # Characters of prompt and completion stored; the hashes cover the full text.
    text_cap: int


def _decision_row(
    chunk: ChunkRequest, prepared: PreparedItem, verdict: RecordedVerdict, context: _RowContext
) -> dict[str, Any]:
    """The decision log's row: the item and its context, the version, and the verdict."""
    item, spec, cap = prepared.item, chunk.verifier, context.text_cap
    return {
        "id": prepared.decision_id,
        "tenant_id": chunk.tenant_id,
        "request_id": chunk.request_id,
        "item_index": item.index,
        "item_id": without_nul(item.id),
        "group_id": without_nul(item.group_id),
        "run_id": without_nul(chunk.run_id),
        "step": chunk.step,
        "verifier_name": spec.name,
        "verifier_version": spec.version,
        "version_hash": spec.version_hash,
        "prompt": _capped(item.prompt, cap),
        "prompt_hash": prepared.prompt_hash,
        "completion": _capped(item.completion, cap),
        "completion_hash": prepared.completion_hash,
        "completion_chars": len(item.completion),
        "ground_truth": without_nul(item.ground_truth),
        "ground_truth_hash": prepared.ground_truth_hash,
        "metadata": without_nul(item.metadata),
        **{name: getattr(verdict, name) for name in VERDICT_FIELDS},
        "flagged": bool(verdict.details.get("answer_leak") or verdict.details.get("flags")),
        "worker_id": context.worker_id,
        "created_at": context.created_at,
    }


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _capped(text: str | None, cap: int) -> str | None:
    return None if text is None else without_nul(text[:cap])
