"""Replays: re-score logged decisions with other versions, as a background job.

The API checks the request and records the replay (its filter is evaluated against the log as
it is at that moment); the workers list its items and decide them chunk by chunk
(``execution/replay.py``); the report compares each target with the logged decisions (source =
control, target = treatment), and a table shows every source decision across the targets.
"""

from __future__ import annotations

import uuid
from typing import Protocol

from sqlalchemy.orm import Session

from service.auth.service import Principal
from service.catalog.builtin import UnknownVerifier
from service.catalog.service import CatalogService
from service.db.base import utcnow
from service.db.models import Replay
from service.errors import InvalidRequest, NotFound
from service.experiments.replay_repository import (
    ReplayRepository,
    ReplayResultRepository,
    source_conditions,
)
from service.experiments.report import ReportBuilder, decode_cursor
from service.experiments.schemas import (
    ReplayCell,
    ReplayIn,
    ReplayOut,
    ReplayProgress,
    ReplayRow,
    ReplayTable,
    ReplayTarget,
    Report,
)

# The table's cursor: the last source decision's position in the replay.
TABLE_CURSOR_PATTERN = r"^[0-9]{1,18}$"


class ReplayKicker(Protocol):
    """Whoever runs replays (the workers' queue, or the embedded background process)."""

    def kick_replay(self, replay_id: uuid.UUID) -> None: ...


def _progress(row: Replay) -> ReplayProgress:
    elapsed = ((row.finished_at or utcnow()) - row.created_at).total_seconds()
    rate = row.done / elapsed if row.done and elapsed > 0 else None
    left = max(0, row.total - row.done)
    eta = 0.0 if row.state == "done" else (left / rate if rate else None)
    return ReplayProgress(done=row.done, total=row.total, rate_per_s=rate, eta_s=eta)


def replay_out(row: Replay) -> ReplayOut:
    return ReplayOut(
        id=row.id,
        state=row.state,  # type: ignore[arg-type]
        filter=row.filter,
        targets=[ReplayTarget(**{k: t[k] for k in ReplayTarget.model_fields}) for t in row.targets],
        progress=_progress(row),
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


class ReplayService:
    def __init__(self, session: Session, tenant_id: str, operator_tenant: str) -> None:
        self.session = session
        self.tenant_id = tenant_id
        self.replays = ReplayRepository(session, tenant_id)
        self.results = ReplayResultRepository(session, tenant_id)
        self.catalog = CatalogService(session, operator_tenant)

    def create(self, body: ReplayIn, caller: Principal, max_decisions: int) -> ReplayOut:
        """Record a replay of the decisions the filter names now; 422 naming the field when a
        target does not exist or too many decisions match."""
        targets = []
        field = "target" if body.target and not body.targets else "targets"
        for index, reference in enumerate(body.references()):
            try:
                spec = self.catalog.resolve(reference)
            except UnknownVerifier as exc:
                where = field if field == "target" else f"targets[{index}]"
                raise InvalidRequest(f"{where}: {exc}", code="unknown_version") from exc
            targets.append(
                {
                    "reference": reference,
                    "name": spec.name,
                    "version": spec.version,
                    "version_hash": spec.version_hash,
                    "spec": spec.to_payload(),
                }
            )
        now = utcnow()
        wanted = body.filter.model_dump(mode="json", exclude_none=True)
        count = self.replays.count_sources(source_conditions(self.tenant_id, wanted, now))
        # No decision matching is not an error: the replay is done at once, with 0 items.
        if count > max_decisions:
            raise InvalidRequest(
                f"filter: {count} decisions match; a replay re-scores at most {max_decisions}",
                code="replay_too_large",
            )
        row = self.replays.add(
            Replay(
                id=uuid.uuid4(),
                tenant_id=self.tenant_id,
                filter=wanted,
                targets=targets,
                state="pending",
                total=count * len(targets),
                done=0,
                key_id=caller.key_id,
                created_at=now,
                updated_at=now,
            )
        )
        return replay_out(row)

    def _get(self, replay_id: uuid.UUID) -> Replay:
        row = self.replays.get(replay_id)
        if row is None:
            raise NotFound(f"no replay {replay_id}")
        return row

    def get(self, replay_id: uuid.UUID, limit: int) -> ReplayOut:
        """Progress; once done, each target's report and the first page of the table."""
        row = self._get(replay_id)
        out = replay_out(row)
        if row.state == "done":
            out.reports = [
                self._report(row, target, None, limit) for target in range(len(row.targets))
            ]
            out.table = self._table(row, None, limit)
        return out

    def find(self, limit: int) -> list[ReplayOut]:
        return [replay_out(row) for row in self.replays.find(limit)]

    def cancel(self, replay_id: uuid.UUID) -> ReplayOut:
        """Stop re-scoring (what was decided stays); a finished replay stays as it is."""
        self._get(replay_id)
        self.replays.end(replay_id, "cancelled")
        self.session.expire_all()
        return replay_out(self._get(replay_id))

    def report(self, replay_id: uuid.UUID, target: int, cursor: str | None, limit: int) -> Report:
        row = self._get(replay_id)
        if not 0 <= target < len(row.targets):
            raise NotFound(
                f"no target {target}: the replay has {len(row.targets)} target(s), numbered from 0",
                code="unknown_target",
            )
        return self._report(row, target, cursor, limit)

    def table(self, replay_id: uuid.UUID, cursor: str | None, limit: int) -> ReplayTable:
        return self._table(self._get(replay_id), cursor, limit)

    def _report(self, row: Replay, target: int, cursor: str | None, limit: int) -> Report:
        builder = ReportBuilder(self.session, self.tenant_id)
        source = row.filter.get("version") or "logged"
        versions = (str(source), str(row.targets[target]["version"]))
        pairs = builder.comparisons.replay_pairs(row.id, target)
        return builder.paired("replay", versions, pairs, decode_cursor(cursor), limit)

    def _table(self, row: Replay, cursor: str | None, limit: int) -> ReplayTable:
        after = int(cursor) if cursor is not None else None
        cells = self.results.table_page(row.id, after, limit, len(row.targets))
        rows: dict[int, ReplayRow] = {}
        for cell in cells:
            line = rows.get(cell.position)
            if line is None:
                line = rows[cell.position] = ReplayRow(
                    decision_id=cell.source_decision_id,
                    source=ReplayCell(status=cell.source_status, reward=cell.source_reward),
                    targets=[ReplayCell(status=None, reward=None) for _ in row.targets],
                )
            line.targets[cell.target] = ReplayCell(status=cell.status, reward=cell.reward)
        full = bool(cells) and len(cells) == limit * len(row.targets)
        return ReplayTable(
            columns=["source", *(str(t["reference"]) for t in row.targets)],
            rows=list(rows.values()),
            next_cursor=str(cells[-1].position) if full else None,
        )
