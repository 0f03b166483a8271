"""The typed contract between rewards, execution and audit.

Rewards hands execution a ``ChunkRequest`` (items of one verifier version, whole groups) and
gets one ``RewardResult`` per item back. ``RecordedVerdict`` holds the fields a verdict has once
it is logged; the API result (``RewardResult``), the decision row and the audit view
(``DecisionOut``) all reuse them, so a field is defined once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from service.verifiers.base import Status
from service.verifiers.registry import VerifierVersionSpec


@dataclass(frozen=True, slots=True)
class ChunkItem:
    """One item to verify; ``index`` is its place in the request."""

    index: int
    id: str
    group_id: str | None
    prompt: str | None
    completion: str
    ground_truth: Any
    metadata: dict[str, Any]

    def __reduce__(self) -> tuple[type[ChunkItem], tuple[Any, ...]]:
        # Pickled to a pool process as its fields in order: the state methods that slots
        # dataclasses get call ``fields()`` per item on both sides, a tenth of the API's time.
        return ChunkItem, (
            self.index,
            self.id,
            self.group_id,
            self.prompt,
            self.completion,
            self.ground_truth,
            self.metadata,
        )


_ITEM_FIELDS = tuple(ChunkItem.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class ChunkRequest:
    """Items that one verifier version decides together: whole groups, never a part of one."""

    # The tenant whose request this is: its decisions and verdict cache entries are its own.
    tenant_id: str
    request_id: str
    run_id: str | None
    step: int | None
    verifier: VerifierVersionSpec
    # The bound of one verification, as the service that planned the chunk was configured.
    timeout_s: float
    items: tuple[ChunkItem, ...]
    # When the request was first accepted (ms since the epoch): its decision ids begin with it
    # (``execution.items.decision_id``). None: ids without a time, as before there was one.
    issued_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data, for a Celery message."""
        return {
            "tenant_id": self.tenant_id,
            "request_id": self.request_id,
            "run_id": self.run_id,
            "step": self.step,
            "verifier": self.verifier.to_payload(),
            "timeout_s": self.timeout_s,
            "items": [{name: getattr(item, name) for name in _ITEM_FIELDS} for item in self.items],
            "issued_ms": self.issued_ms,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChunkRequest:
        return cls(
            tenant_id=data["tenant_id"],
            request_id=data["request_id"],
            run_id=data["run_id"],
            step=data["step"],
            verifier=VerifierVersionSpec.from_payload(data["verifier"]),
            timeout_s=float(data["timeout_s"]),
            items=tuple(ChunkItem(**item) for item in data["items"]),
            # A message queued by a service from before ids held a time has none.
            issued_ms=data.get("issued_ms"),
        )


class RecordedVerdict(BaseModel):
    """A verdict as the decision log keeps it: what the verifier decided and how it got there."""

    reward: float | None
    status: Status
    components: dict[str, float]
    details: dict[str, Any]
    cached: bool
    duration_ms: float


class RewardResult(RecordedVerdict):
    """One item's result in POST /v1/rewards (and what execution returns per item)."""

    id: str
    verifier: str
    version: str
    decision_id: str
