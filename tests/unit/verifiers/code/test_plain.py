"""Plain data across the harness's process boundary: exact builtin types only, bounded."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, OrderedDict, defaultdict, deque
from fractions import Fraction
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
        bytearray(b"\x00\xff"),
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
        defaultdict(lambda: 0),
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


@pytest.mark.parametrize(
    "value",
    [
        OrderedDict([("b", 1), ("a", [2])]),
        Counter("abracadabra"),
        Counter({"zero": 0, "minus": -1}),
        defaultdict(list, k=[1]),
        defaultdict(None, k=1),
        deque([1, (2, 3)]),
        deque([1, 2], maxlen=3),
        # A maxlen is an int of the deque's, not a count of values: any the deque can have.
        deque([1, 2], maxlen=2_000_000),
        deque(maxlen=sys.maxsize),
        Fraction(-3, 4),
        Fraction(10**400 + 1, 10**400),
        [OrderedDict(a=Counter(x=1)), {"q": deque([Fraction(1, 3)])}],
    ],
)
def test_the_standard_librarys_containers_cross_as_themselves(value: Any) -> None:
    # Rebuilt by the receiver from its own classes: no code of the sender runs.
    back = _round_trip(value)
    assert back == value and type(back) is type(value)
    if isinstance(value, OrderedDict):
        assert list(back.items()) == list(value.items())
    if isinstance(value, defaultdict):
        assert back.default_factory is value.default_factory
    if isinstance(value, deque):
        assert back.maxlen == value.maxlen


def test_an_ordered_dict_keeps_its_own_order() -> None:
    value = OrderedDict(a=1, b=2)
    value.move_to_end("a")  # the dict beneath it keeps "a" first
    back = _round_trip(value)
    assert list(back) == ["b", "a"] and back != OrderedDict(a=1, b=2)


def test_a_defaultdict_keeps_its_default() -> None:
    back = _round_trip(defaultdict(int, a=1))
    assert back["missing"] == 0


def test_a_defaultdict_with_another_factory_is_an_answer_only() -> None:
    # Its items cross as a dict (MBPP's group_by returns one); as an argument the receiver
    # would miss its default.
    value = defaultdict(lambda: 0, a=2)
    back = plain.decode(plain.encode(value, answer=True))
    assert type(back) is dict and back == {"a": 2}
    with pytest.raises(plain.NotPlain):
        plain.encode(value)
    # A subclass of the standard classes is not plain, nor is a huge Fraction.
    with pytest.raises(plain.NotPlain):
        plain.encode(EqualCounter("a"), answer=True)
    with pytest.raises(plain.NotPlain):
        plain.encode(Fraction(1, 2**200_000 + 1))


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
        ["OD", 1],
        ["DD", "lambda", "a", 1],  # a factory no name stands for
        ["DD", None, "a"],
        ["DQ", -1, 1],
        ["DQ", 2**70],
        ["DQ", sys.maxsize + 1],
        ["DQ", True],
        ["DQ", 2.0],
        ["Q", 1, 0],
        ["Q", 1, -2],
        ["Q", 1.5, 2],
        ["Q", ["I", "1" + "0" * 30_000], 3],
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
    standard = [OrderedDict(b=1, a=2), Counter("ab"), defaultdict(int, x=1), deque([1])]
    assert plain.to_json(standard) == [{"b": 1, "a": 2}, {"a": 1, "b": 1}, {"x": 1}, [1]]
    for not_json in ({1}, b"x", 1j, {(1, 2): 0}, Fraction(1, 2)):
        with pytest.raises(plain.NotPlain):
            plain.to_json(not_json)


def test_both_sides_meet_the_mutable_containers_in_the_same_order() -> None:
    value = [{"k": [1]}, ([2], {3}), bytearray(b"x"), frozenset({4}), "s"]
    encoded: list[Any] = []
    decoded: list[Any] = []
    wire = plain.encode(value, track=encoded.append)
    plain.decode(plain.loads(plain.dumps(wire)), track=decoded.append)
    assert [type(c) for c in encoded] == [list, dict, list, set, bytearray, list]
    assert decoded == encoded and [type(c) for c in decoded] == [type(c) for c in encoded]
