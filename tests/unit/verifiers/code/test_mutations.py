"""What a call did to the test's own lists, dicts, sets and bytearrays (``harness/mutations.py``),
from the driver's encoding of the arguments through the solution process and back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from service.verifiers.code.harness import mutations, nodes, plain


def _call(args: list[Any], body: Callable[..., Any]) -> list[Any]:
    """``body`` run on the solution side's copies of ``args``; the originals afterwards."""
    sent: list[Any] = []
    wire = json.loads(plain.dumps([plain.encode(a, track=sent.append) for a in args]))
    received = mutations.Received()
    copies = [plain.decode(item, track=received.track) for item in wire]
    received.seal()
    body(*copies)
    reply = json.loads(plain.dumps(received.changes()))
    if "mut" in reply:
        mutations.apply(sent, reply["mut"], lambda kind: nodes.STANDARD[kind])
    return args


def test_the_originals_change_in_place_and_keep_their_identity() -> None:
    grid = [[3, 1], [2, 0]]
    row, counts, seen, buf = grid[0], {"a": 1}, {1}, bytearray(b"ab")

    def work(grid: Any, counts: Any, seen: Any, buf: Any) -> None:
        grid[0].sort()
        grid.reverse()
        counts["b"] = 2
        seen.add(2)
        buf[:] = buf.upper()

    _call([grid, counts, seen, buf], work)
    assert grid == [[2, 0], [1, 3]] and grid[1] is row and row == [1, 3]
    assert counts == {"a": 1, "b": 2} and seen == {1, 2} and buf == b"AB"


def test_what_did_not_change_is_not_sent() -> None:
    received = mutations.Received()
    data = plain.decode(plain.encode([[1], {2: 3}, {4}]), track=received.track)
    received.seal()
    data[1][2] = 3  # the same value, the same objects: no change
    data[2].discard(4)
    data[2].add(4)
    assert received.changes() == {}


def test_aliasing_between_the_arguments_survives() -> None:
    a, b = [1], [2]
    _call([a, b], lambda x, y: x.append(y))
    assert a == [1, [2]] and a[1] is b


def test_a_change_plain_data_cannot_carry_is_said_so() -> None:
    received = mutations.Received()
    xs = plain.decode(plain.encode([1]), track=received.track)
    received.seal()
    xs.append(object())
    assert "mut_np" in received.changes()


@pytest.mark.parametrize(
    "wire",
    [
        ["L", ["L", 5, ["T", 1]]],  # no such argument
        ["L", ["L", 0, ["L", 1]]],  # a list where its items' tuple belongs
        ["L", ["L", 0]],
        ["L", ["L", 1, ["T", ["L"]]]],  # an unhashable item of a set
        ["L", ["L", 0, ["T", 9]], ["L", 1, ["L", 1]]],  # one malformed: none applied
        "L",
    ],
)
def test_a_malformed_change_leaves_every_argument_alone(wire: Any) -> None:
    xs, ys = [1], {1}
    with pytest.raises(ValueError):
        mutations.apply([xs, ys], wire, lambda kind: nodes.STANDARD[kind])
    assert xs == [1] and ys == {1}


def test_objects_sent_as_handles_come_back_as_the_tests_own() -> None:
    # The test's proxies of the solution's objects travel as handles; a list of them that the
    # solution changes (a work queue it empties, a sort) holds the test's proxies again.
    first, second = object(), object()
    handles = {id(first): 1, id(second): 2}
    objects = {1: object(), 2: object()}  # what the handles stand for there
    queue = [first, second]
    sent: list[Any] = []
    wire = json.loads(
        plain.dumps(plain.encode(queue, lambda v: handles.get(id(v)), track=sent.append))
    )
    received = mutations.Received()
    copy = plain.decode(wire, objects.__getitem__, track=received.track)
    received.seal()
    copy.reverse()
    reply = json.loads(plain.dumps(received.changes()))
    mutations.apply(sent, reply["mut"], lambda kind: nodes.STANDARD[kind])
    assert queue[0] is second and queue[1] is first
    with pytest.raises(ValueError):  # an object is no container to change
        mutations.apply(sent, ["L", ["L", 0, ["T"]]], lambda kind: nodes.STANDARD[kind])
