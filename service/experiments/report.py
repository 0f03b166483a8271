"""Build a comparison's report from the aggregates the database computes."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from sqlalchemy.orm import Session
from sqlalchemy.sql import Subquery

from service.errors import InvalidRequest
from service.experiments.assignment import ARMS
from service.experiments.report_repository import ComparisonRepository
from service.experiments.schemas import (
    ArmReport,
    ArmSignal,
    Disagreement,
    GrpoEffectOut,
    Latency,
    Report,
    RewardDelta,
)
from service.experiments.stats import Moments, grpo_effect, paired_delta, welch_delta

# A disagreement cursor: the last control decision id of the page, as 32 hex digits.
CURSOR_PATTERN = r"^[0-9a-f]{32}$"
EXTRACTED_CHARS = 200


def decode_cursor(cursor: str | None) -> uuid.UUID | None:
    if cursor is None:
        return None
    try:
        return uuid.UUID(hex=cursor)
    except ValueError as exc:  # only a cursor past the pattern gets here
        raise InvalidRequest("malformed cursor", code="invalid_cursor") from exc


def _total(moments: Iterable[Moments]) -> Moments:
    n = total = squares = 0.0
    for item in moments:
        n, total, squares = n + item.n, total + item.total, squares + item.squares
    return Moments(int(n), total, squares)


def _arm(version: str, statuses: Counter[str], rewards: Moments, latency: list[Any]) -> ArmReport:
    items = sum(statuses.values())

    def rate(status: str) -> float | None:
        return statuses.get(status, 0) / items if items else None

    p50, p95, p99 = [*latency, None, None, None][:3]
    return ArmReport(
        version=version,
        items=items,
        statuses=dict(sorted(statuses.items())),
        mean_reward=rewards.mean,
        timeout_rate=rate("timeout"),
        error_rate=rate("error"),
        latency_ms=Latency(p50=p50, p95=p95, p99=p99),
    )


def _capped(value: Any) -> Any:
    if isinstance(value, str) and len(value) > EXTRACTED_CHARS:
        return value[:EXTRACTED_CHARS] + "…"
    return value


class ReportBuilder:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.comparisons = ComparisonRepository(session, tenant_id)
        self.comparisons.allow_large_sorts()

    def paired(
        self,
        kind: Literal["shadow", "replay"],
        versions: tuple[str, str],
        pairs: Subquery,
        after: uuid.UUID | None,
        limit: int,
    ) -> Report:
        """Both versions decided the same items: the control's decision and the treatment's."""
        repo = self.comparisons
        cells = repo.status_cells(pairs)
        control_latency, treatment_latency = repo.paired_latency(pairs)
        groups = repo.paired_groups(pairs)
        control_statuses: Counter[str] = Counter()
        treatment_statuses: Counter[str] = Counter()
        confusion: dict[str, dict[str, int]] = {}
        for cell in cells:
            control_statuses[cell.control_status] += cell.items
            treatment_statuses[cell.treatment_status] += cell.items
            confusion.setdefault(cell.control_status, {})[cell.treatment_status] = cell.items
        items = sum(cell.items for cell in cells)
        agreed = sum(cell.items for cell in cells if cell.control_status == cell.treatment_status)
        delta = paired_delta(_total(cell.delta for cell in cells))
        rows = repo.disagreements(pairs, after, limit + 1)
        page = rows[:limit]
        return Report(
            kind=kind,
            paired=True,
            control=_arm(
                versions[0],
                control_statuses,
                _total(cell.control for cell in cells),
                control_latency,
            ),
            treatment=_arm(
                versions[1],
                treatment_statuses,
                _total(cell.treatment for cell in cells),
                treatment_latency,
            ),
            agreement_rate=agreed / items if items else None,
            confusion=confusion,
            reward_delta=RewardDelta.model_validate(delta.as_dict()) if delta else None,
            grpo=GrpoEffectOut.model_validate(grpo_effect(groups).as_dict()),
            grpo_by_arm=None,
            disagreements=[
                Disagreement(
                    **{
                        **row,
                        "control_extracted": _capped(row["control_extracted"]),
                        "treatment_extracted": _capped(row["treatment_extracted"]),
                        "completion_excerpt": row["completion_excerpt"] or "",
                    }
                )
                for row in page
            ],
            next_cursor=page[-1]["decision_id"].hex if len(rows) > limit else None,
        )

    def split(self, experiment_id: uuid.UUID, versions: tuple[str, str]) -> Report:
        """Each arm decided its own groups: unpaired statistics, arm by arm."""
        repo = self.comparisons
        statuses: dict[str, Counter[str]] = {arm: Counter() for arm in ARMS}
        rewards: dict[str, list[Moments]] = {arm: [] for arm in ARMS}
        cells = repo.arm_cells(experiment_id)
        latency = repo.arm_latency(experiment_id)
        groups = repo.arm_groups(experiment_id)
        for cell in cells:
            statuses.setdefault(cell.arm, Counter())[cell.status] += cell.items
            rewards.setdefault(cell.arm, []).append(cell.rewards)
        arms = {
            arm: _arm(version, statuses[arm], _total(rewards[arm]), latency.get(arm, []))
            for arm, version in zip(ARMS, versions, strict=True)
        }
        delta = welch_delta(_total(rewards["control"]), _total(rewards["treatment"]))
        signal: dict[str, ArmSignal] = {}
        for arm in ARMS:
            count, same = groups.get(arm, (0, 0))
            signal[arm] = ArmSignal(
                groups=count, all_same=same, all_same_fraction=same / count if count else None
            )
        return Report(
            kind="split",
            paired=False,
            control=arms["control"],
            treatment=arms["treatment"],
            agreement_rate=None,
            confusion=None,
            reward_delta=RewardDelta.model_validate(delta.as_dict()) if delta else None,
            grpo=None,
            grpo_by_arm=signal,
            disagreements=[],
            next_cursor=None,
        )
