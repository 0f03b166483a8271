"""Execution decides where a chunk runs and how long it may take."""

from __future__ import annotations

from typing import Any

from service.catalog.builtin import resolve_builtin
from service.contract import ChunkItem, ChunkRequest
from service.execution.routing import route_chunk
from service.verifiers.code import budget_s


def _chunk(reference: str, ground_truths: list[Any]) -> ChunkRequest:
    items = tuple(
        ChunkItem(i, str(i), None, None, "print(1)", truth, {})
        for i, truth in enumerate(ground_truths)
    )
    return ChunkRequest("default", "r", None, None, resolve_builtin(reference), 5.0, items)


def test_an_items_budget_covers_every_tests_wall_clock() -> None:
    slow = {"language": "python", "time_limit_s": 2, "tests": [{"stdin": "", "stdout": ""}] * 10}
    # Ten tests that each run to their wall clock (2 x 2 s + 1 s) fit, with overhead per run.
    assert 50 < budget_s(slow) <= 70
    cpp = {**slow, "language": "cpp"}
    assert budget_s(cpp) > budget_s(slow) + 15  # the compile step's own wall clock
    assert budget_s({"language": "cobol"}) == 0.0  # invalid: the default timeout applies
    # A chunk of 16 such items is given all of it, not 16 x the default 5 s.
    route = route_chunk(_chunk("code", [slow] * 16))
    assert route.queue == "sandbox"
    assert route.time_limit_s >= 16 * 50


def test_cheap_kinds_share_the_cpu_queue_and_the_per_item_timeout() -> None:
    route = route_chunk(_chunk("math", ["1"] * 4))
    assert route.queue == "cpu"
    # A 5 s CPU-time limit lets a call run to the wall clock's 2 x 5 s + 1 s.
    assert 4 * 11.0 <= route.time_limit_s <= 4 * 11.0 + 120
