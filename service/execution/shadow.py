"""Shadow work: the treatment of a shadow experiment decides items the control decided, off the
hot path, and each verdict is logged linked to the control's decision.

The same function runs on the "shadow" Celery queue and in the embedded background pool. It is
idempotent like the chunk runner: a shadow decision's id derives from (experiment, control
decision), and inserts skip rows that exist.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from service.contract import ChunkRequest
from service.db.base import utcnow
from service.db.session import session_scope
from service.execution.chunk import recorded_verdict, worker_id
from service.execution.decide import decide, shape_groups
from service.execution.items import prepare_items
from service.experiments.repository import ShadowDecisionRepository
from service.settings import Settings
from service.validation import without_nul

SHADOW_NAMESPACE = uuid.UUID("b5d0f1b4-2f57-4b0e-9a51-3c7d0f6e8a21")


class ControlVerdict(NamedTuple):
    """What the control decided for an item, as logged (what the trainer got)."""

    status: str
    reward: float | None
    duration_ms: float
    cached: bool


@dataclass(frozen=True, slots=True)
class ShadowJob:
    """The control's items of one chunk (whole groups), for the treatment's version."""

    experiment_id: str
    chunk: ChunkRequest
    # The control's decision of each item, in the chunk's order, and its verdict.
    control_ids: tuple[str, ...]
    controls: tuple[ControlVerdict, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "experiment_id": self.experiment_id,
            "chunk": self.chunk.to_json(),
            "control_ids": list(self.control_ids),
            "controls": [list(control) for control in self.controls],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShadowJob:
        return cls(
            experiment_id=str(data["experiment_id"]),
            chunk=ChunkRequest.from_json(data["chunk"]),
            control_ids=tuple(str(value) for value in data["control_ids"]),
            controls=tuple(ControlVerdict(*control) for control in data["controls"]),
        )


def shadow_decision_id(experiment_id: uuid.UUID, control_id: uuid.UUID) -> uuid.UUID:
    return uuid.uuid5(SHADOW_NAMESPACE, f"{experiment_id}\x00{control_id}")


def run_shadow_job(job: ShadowJob, settings: Settings) -> int:
    """Decide the job's items with the treatment and log them; returns how many it decided."""
    chunk, spec = job.chunk, job.chunk.verifier
    experiment_id = uuid.UUID(job.experiment_id)
    controls = {
        item.index: (uuid.UUID(control_id), control)
        for item, control_id, control in zip(
            chunk.items, job.control_ids, job.controls, strict=True
        )
    }
    pending = prepare_items(chunk)
    # No lookup first (done shadow rows, the verdict cache) and no cache entries after: the
    # verification runs at idle priority, the database does not, and one insert per job is the
    # least a shadow costs the rewards it runs beside. A redelivered job decides again and
    # inserts nothing twice.
    decided = decide(pending, {}, spec, chunk.timeout_s, settings.verify_memory_mb)
    now = utcnow()
    final = shape_groups(spec, pending, decided)
    worker = worker_id()
    rows = []
    for prepared, outcome in zip(pending, final, strict=True):
        control_id, control = controls[prepared.item.index]
        rows.append(
            {
                "id": shadow_decision_id(experiment_id, control_id),
                "experiment_id": experiment_id,
                "tenant_id": chunk.tenant_id,
                "control_decision_id": control_id,
                "request_id": chunk.request_id,
                "group_id": without_nul(prepared.item.group_id),
                "control_status": control.status,
                "control_reward": control.reward,
                "control_duration_ms": control.duration_ms,
                "control_cached": control.cached,
                "verifier_name": spec.name,
                "verifier_version": spec.version,
                "version_hash": spec.version_hash,
                **recorded_verdict(outcome).model_dump(),
                "worker_id": worker,
                "created_at": now,
            }
        )
    with session_scope(settings) as session:
        ShadowDecisionRepository(session).insert_many(rows)
    return len(rows)
