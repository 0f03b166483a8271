"""Every query on replays (``replays``) and their results (``replay_results``).

A replay's items are listed once, when its first step runs: one row per (source decision,
target), in an order that keeps each group's items together, with a null status. A step then
takes the next chunk of rows still null (a partial index holds exactly those), decides them and
fills them in, in one transaction: what is logged is what is done, so a step that dies leaves
its rows to the next one, and a row is never decided twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    Uuid,
    bindparam,
    case,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    union_all,
    update,
)

from service.db.base import utcnow
from service.db.models import Decision, Replay, ReplayResult
from service.db.repository import Repository

ACTIVE_STATES = ("pending", "running")


@dataclass(frozen=True, slots=True)
class PendingItem:
    result_id: int
    target: int
    position: int
    group_no: int
    source_id: uuid.UUID


def source_conditions(tenant_id: str, wanted: dict[str, Any], snapshot: datetime) -> list[Any]:
    """The decisions a replay's filter names (validated before it got here), as they were when
    the replay was created."""
    conditions: list[Any] = [Decision.tenant_id == tenant_id, Decision.created_at <= snapshot]
    equal = {
        "run_id": Decision.run_id,
        "verifier": Decision.verifier_name,
        "version": Decision.verifier_version,
        "status": Decision.status,
    }
    for key, column in equal.items():
        if wanted.get(key) is not None:
            conditions.append(column == wanted[key])
    if wanted.get("step_from") is not None:
        conditions.append(Decision.step >= wanted["step_from"])
    if wanted.get("step_to") is not None:
        conditions.append(Decision.step <= wanted["step_to"])
    if wanted.get("since") is not None:
        conditions.append(Decision.created_at >= _time(wanted["since"]))
    if wanted.get("until") is not None:
        conditions.append(Decision.created_at < _time(wanted["until"]))
    return conditions


def _time(value: datetime | str) -> datetime:
    # Stored in the replay's row as JSON: RFC 3339 text, in UTC.
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


class ReplayRepository(Repository):
    def add(self, replay: Replay) -> Replay:
        self.session.add(replay)
        self.session.flush()
        return replay

    def get(self, replay_id: uuid.UUID) -> Replay | None:
        return self.session.scalars(self._select(Replay).where(Replay.id == replay_id)).first()

    def find(self, limit: int) -> list[Replay]:
        query = self._select(Replay).order_by(Replay.created_at.desc(), Replay.id.desc())
        return list(self.session.scalars(query.limit(limit)))

    def count_sources(self, conditions: list[Any]) -> int:
        query = self._select(Decision).with_only_columns(func.count()).where(*conditions)
        return int(self.session.scalar(query) or 0)

    def claim(self, replay_id: uuid.UUID, owner: str, lease_s: float) -> Replay | None:
        """Hold an active replay for ``lease_s`` (unless another live driver holds it)."""
        now = utcnow()
        claimed = self.session.execute(
            update(Replay)
            .where(
                Replay.id == replay_id,
                Replay.state.in_(ACTIVE_STATES),
                or_(
                    Replay.lease_until.is_(None),
                    Replay.lease_until < now,
                    Replay.lease_owner == owner,
                ),
            )
            .values(lease_owner=owner, lease_until=now + timedelta(seconds=lease_s))
        )
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return self.session.get(Replay, replay_id, populate_existing=True)

    def extend(self, replay_id: uuid.UUID, owner: str, lease_s: float) -> None:
        self.session.execute(
            update(Replay)
            .where(Replay.id == replay_id, Replay.lease_owner == owner)
            .values(lease_until=utcnow() + timedelta(seconds=lease_s))
        )

    def holds(self, replay_id: uuid.UUID, owner: str) -> bool:
        """Still this driver's, and still active (a cancel ends it)."""
        query = (
            select(Replay.id)
            .where(
                Replay.id == replay_id,
                Replay.lease_owner == owner,
                Replay.state.in_(ACTIVE_STATES),
            )
            .with_for_update()
        )
        return self.session.scalar(query) is not None

    def started(self, replay_id: uuid.UUID, total: int) -> None:
        self.session.execute(
            update(Replay)
            .where(Replay.id == replay_id, Replay.state == "pending")
            .values(state="running", total=total, updated_at=utcnow())
        )

    def progressed(self, replay_id: uuid.UUID, owner: str, done: int) -> None:
        """Add what a step decided, and let go of the replay for the next step."""
        self.session.execute(
            update(Replay)
            .where(Replay.id == replay_id, Replay.lease_owner == owner)
            .values(
                done=Replay.done + done, updated_at=utcnow(), lease_owner=None, lease_until=None
            )
        )

    def end(self, replay_id: uuid.UUID, state: str, error: str | None = None) -> None:
        now = utcnow()
        self.session.execute(
            update(Replay)
            .where(Replay.id == replay_id, Replay.state.in_(ACTIVE_STATES))
            .values(
                state=state,
                error=error,
                finished_at=now,
                updated_at=now,
                lease_owner=None,
                lease_until=None,
            )
        )

    def stalled(self, stall_s: float, limit: int = 100) -> list[uuid.UUID]:
        """Active replays (of every tenant) without progress for ``stall_s`` and not held."""
        now = utcnow()
        query = (
            select(Replay.id)
            .where(
                Replay.state.in_(ACTIVE_STATES),
                Replay.updated_at < now - timedelta(seconds=stall_s),
                or_(Replay.lease_until.is_(None), Replay.lease_until < now),
            )
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def touch(self, replay_id: uuid.UUID) -> None:
        """A re-kick was sent: wait another stall period before the next one."""
        self.session.execute(
            update(Replay).where(Replay.id == replay_id).values(updated_at=utcnow())
        )


class ReplayResultRepository(Repository):
    def list_items(self, replay: Replay, conditions: list[Any]) -> int:
        """One row per (source decision, target), in one statement (one snapshot): positions
        follow (request, group, item), so a group's items are adjacent; returns the rows."""
        targets = union_all(
            *(
                select(literal(index, Integer).label("target"))
                for index in range(len(replay.targets))
            )
        ).subquery("t")
        grouped = Decision.group_id.is_(None)
        group_key = (
            Decision.request_id,
            func.coalesce(Decision.group_id, ""),
            case((grouped, Decision.item_index), else_=-1),
        )
        source = (
            select(
                literal(replay.id, Uuid),
                literal(replay.tenant_id, String),
                Decision.id,
                targets.c.target,
                func.row_number().over(
                    partition_by=targets.c.target,
                    order_by=(*group_key, Decision.item_index, Decision.id),
                ),
                func.dense_rank().over(partition_by=targets.c.target, order_by=group_key),
                Decision.request_id,
                Decision.group_id,
                Decision.reward,
                Decision.status,
                Decision.cached,
                Decision.duration_ms,
            )
            .select_from(Decision)
            .join(targets, true())
            .where(*conditions)
        )
        columns = [
            "replay_id",
            "tenant_id",
            "source_decision_id",
            "target",
            "position",
            "group_no",
            "request_id",
            "group_id",
            "source_reward",
            "source_status",
            "source_cached",
            "source_duration_ms",
        ]
        self.session.execute(insert(ReplayResult).from_select(columns, source))
        query = self._select(ReplayResult).with_only_columns(func.count())
        return int(self.session.scalar(query.where(ReplayResult.replay_id == replay.id)) or 0)

    def next_chunk(self, replay_id: uuid.UUID, size: int) -> list[PendingItem]:
        """The next ``size`` undecided rows of one target, extended to the end of their last
        group (a chunk holds whole groups)."""
        columns = (
            ReplayResult.id,
            ReplayResult.target,
            ReplayResult.position,
            ReplayResult.group_no,
            ReplayResult.source_decision_id,
        )
        pending = (
            self._select(ReplayResult)
            .with_only_columns(*columns)
            .where(ReplayResult.replay_id == replay_id, ReplayResult.status.is_(None))
        )
        rows = [
            PendingItem(*row)
            for row in self.session.execute(
                pending.order_by(ReplayResult.target, ReplayResult.position).limit(size)
            )
        ]
        if not rows:
            return []
        target = rows[0].target
        rows = [row for row in rows if row.target == target]
        last = rows[-1]
        rest = pending.where(
            ReplayResult.target == target,
            ReplayResult.group_no == last.group_no,
            ReplayResult.position > last.position,
        ).order_by(ReplayResult.position)
        rows.extend(PendingItem(*row) for row in self.session.execute(rest))
        return rows

    def sources(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Decision]:
        query = self._select(Decision).where(Decision.id.in_(list(ids)))
        return {row.id: row for row in self.session.scalars(query)}

    def record(self, decided: Sequence[dict[str, Any]]) -> int:
        """Fill in rows still undecided (locked meanwhile); returns how many."""
        ids = [row["result_id"] for row in decided]
        query = (
            select(ReplayResult.id)
            .where(ReplayResult.id.in_(ids), ReplayResult.status.is_(None))
            .with_for_update()
        )
        open_ids = set(self.session.scalars(query))
        rows = [row for row in decided if row["result_id"] in open_ids]
        if rows:
            statement = (
                update(ReplayResult)
                .where(ReplayResult.id == bindparam("result_id"))
                .values(
                    reward=bindparam("b_reward"),
                    status=bindparam("b_status"),
                    components=bindparam("b_components"),
                    details=bindparam("b_details"),
                    cached=bindparam("b_cached"),
                    duration_ms=bindparam("b_duration_ms"),
                    worker_id=bindparam("b_worker_id"),
                    decided_at=bindparam("b_decided_at"),
                )
            )
            self.session.connection().execute(statement, rows)
        return len(rows)

    def table_page(
        self, replay_id: uuid.UUID, after: int | None, limit: int, targets: int
    ) -> list[ReplayResult]:
        """Rows of ``limit`` source decisions (every target), by position, after the cursor."""
        query = self._select(ReplayResult).where(ReplayResult.replay_id == replay_id)
        if after is not None:
            query = query.where(ReplayResult.position > after)
        query = query.order_by(ReplayResult.position, ReplayResult.target).limit(limit * targets)
        return list(self.session.scalars(query))

    def target_counts(self, replay_id: uuid.UUID) -> dict[int, int]:
        """Decided rows per target."""
        query = (
            self._select(ReplayResult)
            .with_only_columns(ReplayResult.target, func.count())
            .where(ReplayResult.replay_id == replay_id, ReplayResult.status.is_not(None))
            .group_by(ReplayResult.target)
        )
        return {int(target): int(count) for target, count in self.session.execute(query)}
