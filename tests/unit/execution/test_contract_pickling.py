"""A chunk goes to a local pool process pickled: every field arrives as sent, and items are
pickled by their fields in order, not by the state methods of slots dataclasses (which call
``dataclasses.fields`` for every item on both sides)."""

from __future__ import annotations

import dataclasses
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

from service.contract import ChunkItem, ChunkRequest
from service.verifiers.registry import build_version


def _chunk() -> ChunkRequest:
    items = (
        ChunkItem(0, "a", "g", "Prompt?", "The answer is \\boxed{2}", "2", {"k": [1, None]}),
        ChunkItem(3, "b\x00", None, None, "", {"instruction_id": ["x"], "kwargs": [{}]}, {}),
    )
    spec = build_version("math", "1.0.0", "math")
    return ChunkRequest("tenant", "request", "run", 4, spec, 5.0, items)


def test_a_chunk_arrives_as_sent() -> None:
    chunk = _chunk()
    arrived = pickle.loads(ForkingPickler.dumps(chunk))
    assert arrived == chunk
    assert [dataclasses.astuple(item) for item in arrived.items] == [
        dataclasses.astuple(item) for item in chunk.items
    ]


def test_items_are_pickled_without_walking_dataclass_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = _chunk().items
    state = ForkingPickler.dumps(items)

    def refuse(_: object) -> None:
        raise AssertionError("dataclasses.fields called while pickling an item")

    monkeypatch.setattr(dataclasses, "fields", refuse)
    assert pickle.loads(ForkingPickler.dumps(items)) == items
    assert pickle.loads(state) == items
