"""Plain data across the harness's process boundary: exact builtin types only, bounded."""

from __future__ import annotations

import json
import math
from collections import Counter, OrderedDict, defaultdict
from typing import Any

import pytest

from service.verifiers.code.harness import plain


def _round_trip(value: Any) -> Any:
    return plain.decode(plain.loads(plain.dumps(plain.encode(value))))


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -(10**40),
        2**62,
        1.5,
        -0.0,
        "text",
        b"\x00\xff",
        3 + 4j,
        [1, [2, (3, "4")]],
        (1,),
        {1, 2},
        frozenset({"a"}),
        {"k": [1, 2], 3: (4.0, None), (1, 2): frozenset({1})},
    ],
)
def test_plain_data_survives_the_trip_with_its_exact_types(value: Any) -> None:
    back = _round_trip(value)
    assert back == value
    assert type(back) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_special_floats_survive() -> None:
    assert math.isnan(_round_trip(float("nan")))
    assert _round_trip(float("-inf")) == float("-inf")


def test_true_stays_a_bool_and_one_an_int() -> None:
    assert [type(v) for v in _round_trip([True, 1, 1.0])] == [bool, int, float]


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class Int(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class Str(str):
    pass


class List(list[Any]):
    pass


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(),
        Int(3),
        Str("x"),
        List([1]),
        [1, Int(2)],
        {"k": AlwaysEqual()},
        {Str("k"): 1},
        OrderedDict(a=1),
        defaultdict(int),
        len,
        type,
        iter([1]),
        range(3),
    ],
)
def test_anything_else_is_not_plain(value: Any) -> None:
    with pytest.raises(plain.NotPlain):
        plain.encode(value)


class EqualCounter(Counter[Any]):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def test_an_answer_may_be_a_standard_dict_and_crosses_as_its_items() -> None:
    # MBPP's freq_count returns a Counter, checked against a dict literal.
    for value in (Counter("aab"), OrderedDict(a=2, b=1), defaultdict(int, a=2, b=1)):
        back = plain.decode(plain.encode(value, answer=True))
        assert type(back) is dict and back == {"a": 2, "b": 1}
    nested = plain.decode(plain.encode([defaultdict(list, k=[Counter(x=1)])], answer=True))
    assert nested == [{"k": [{"x": 1}]}] and type(nested[0]["k"][0]) is dict
    # A subclass of them is not plain, nor are they as arguments (the receiver would get a dict).
    with pytest.raises(plain.NotPlain):
        plain.encode(EqualCounter("a"), answer=True)
    with pytest.raises(plain.NotPlain):
        plain.encode(Counter("a"))


def test_depth_and_size_are_bounded() -> None:
    deep: list[Any] = []
    for _ in range(plain.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(plain.NotPlain, match="deep"):
        plain.encode(deep)
    with pytest.raises(plain.NotPlain, match="values"):
        plain.encode([0] * (plain.MAX_NODES + 1))
    with pytest.raises(ValueError):
        plain.decode(json.loads("[" * 200 + "]" * 200))


@pytest.mark.parametrize(
    "data",
    [
        {"int": "0x3"},  # an object: no wire form is one
        [],
        ["X", 1],
        ["I", 3],
        ["B", "not base64!"],
        ["C", "1", 2],
        ["S", ["L", 1]],  # a list is not hashable
        ["D", 1],
        ["R", 1],  # a handle, where none is expected
        [1, 2],
    ],
)
def test_malformed_wire_forms_are_refused(data: Any) -> None:
    with pytest.raises(ValueError):
        plain.decode(data)


def test_handles_resolve_only_through_the_given_table() -> None:
    objects = {7: "the object"}
    assert plain.decode(["L", ["R", 7]], objects.__getitem__) == ["the object"]
    marker = object()
    assert plain.encode([marker], lambda v: 9 if v is marker else None) == ["L", ["R", 9]]


def test_to_json_is_what_json_dumps_writes() -> None:
    value = {1: (1, 2), "a": [None, True, 1.5], 2.5: "x", None: 0}
    assert plain.to_json(value) == json.loads(json.dumps(value))
    for not_json in ({1}, b"x", 1j, {(1, 2): 0}):
        with pytest.raises(plain.NotPlain):
            plain.to_json(not_json)
