"""Where a chunk runs and how long it may take: execution's decision, made from the kind.

Cheap CPU work (math, instruction, format) and sandboxed code never share a queue; a code
chunk's hard limit is the sum of its items' own budgets (compile plus every test at its wall
clock), so slow but legal programs are never cut short.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.contract import ChunkRequest
from service.execution.bounded import wall_bound_s
from service.verifiers.registry import get_kind

QUEUES = ("cpu", "sandbox")
VERIFY_CHUNK_TASK = "rlvr.verify_chunk"
# Work off the hot path (experiments and replays): queues of their own, consumed by one niced
# background consumer, so reward queues never wait on them.
SHADOW_QUEUE = "shadow"
REPLAY_QUEUE = "replay"
BACKGROUND_QUEUES = (SHADOW_QUEUE, REPLAY_QUEUE)
SHADOW_CHUNK_TASK = "rlvr.shadow_chunk"
ADVANCE_REPLAY_TASK = "rlvr.advance_replay"
# Slack on top of a chunk's budget for the database writes and a cold start.
TASK_SLACK_S = 120


@dataclass(frozen=True, slots=True)
class Route:
    queue: str
    time_limit_s: int


def item_budgets_s(chunk: ChunkRequest) -> list[float]:
    """Seconds each item may take: its kind's own budget, at least the wall clock's bound on a
    call with the per-item (CPU) timeout."""
    kind = get_kind(chunk.verifier.kind)
    budgets = []
    for item in chunk.items:
        own = kind.budget_s(item.ground_truth) if kind.budget_s is not None else 0.0
        budgets.append(max(wall_bound_s(chunk.timeout_s), own))
    return budgets


def queue_of(chunk: ChunkRequest) -> str:
    """The queue of the chunk's kind: "cpu" for cheap checks, "sandbox" for code."""
    return get_kind(chunk.verifier.kind).queue


def route_chunk(chunk: ChunkRequest) -> Route:
    """The Celery queue of the chunk's kind and the chunk's hard time limit."""
    return Route(queue=queue_of(chunk), time_limit_s=int(sum(item_budgets_s(chunk)) + TASK_SLACK_S))
