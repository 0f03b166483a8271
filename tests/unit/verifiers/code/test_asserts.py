"""Assert tests: what the host judges, what stays in the sandbox."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import pytest

from service.verifiers.base import InvalidGroundTruth
from service.verifiers.code.asserts import (
    HostCheckError,
    Iterated,
    decode_operand,
    evaluate,
    plan_assert,
)


def test_comparison_with_a_literal_keeps_the_expected_value_out() -> None:
    plan = plan_assert("assert add(1, 2) == 3")
    assert plan.operands == ("add(1, 2)",)
    assert plan.check is not None
    assert evaluate(plan.check, [3], None) and not evaluate(plan.check, [4], None)
    assert "3" not in "".join(plan.operands).replace("add(1, 2)", "")


@pytest.mark.parametrize(
    ("source", "operands", "value", "holds"),
    [
        ("assert f(x) != [1, 2]", ("f(x)",), [1, 2], False),
        ("assert 0 < f(3) <= 10", ("f(3)",), 10, True),
        ("assert not f('a')", ("f('a')",), [], True),
        ("assert f(2)", ("f(2)",), 0, False),
        ("assert f(2) is None", ("f(2)",), None, True),
        ("assert 'x' in f()", ("f()",), "xyz", True),
        ("assert abs(f(1) - 0.5) < 1e-9", ("f(1)",), 0.5, True),
        ("assert math.isclose(f(1), 0.5, rel_tol=1e-6)", ("f(1)",), 0.5000001, True),
        ("assert f(1) == (1, 2)", ("f(1)",), [1, 2], False),  # tuple is not list, as in Python
        ("assert sorted(f(1)) == [1, 2]", ("sorted(f(1))",), [1, 2], True),
    ],
)
def test_lifted_forms(source: str, operands: tuple[str, ...], value: object, holds: bool) -> None:
    plan = plan_assert(source)
    assert plan.operands == operands and plan.check is not None
    assert evaluate(plan.check, [value], None) is holds


def test_both_sides_computed_are_still_compared_on_the_host() -> None:
    plan = plan_assert("assert f(1) == g(1)")
    assert plan.operands == ("f(1)", "g(1)")
    assert plan.check is not None and evaluate(plan.check, [[1], [1]], None)


@pytest.mark.parametrize(
    "source",
    [
        "assert all(f(i) == i for i in range(3))",  # the comparison would happen in the sandbox
        "assert f(1) == 1 and f(2) == 2",
        "def check(c):\n    assert c(1) == 1\ncheck(f)",
        "f(1)",
    ],
)
def test_other_tests_run_whole_in_the_sandbox(source: str) -> None:
    plan = plan_assert(source)
    assert plan.operands is None and plan.check is None


@pytest.mark.parametrize(
    ("source", "values", "holds"),
    [
        # A Fraction is a number to math.isclose, abs, + and -, as in Python.
        ("assert math.isclose(half(), 0.5)", [Fraction(1, 2)], True),
        ("assert math.isclose(half(), 0.5, rel_tol=1e-9)", [Fraction(1, 3)], False),
        ("assert abs(half() - 0.5) < 1e-9", [Fraction(1, 2)], True),
        ("assert -half() == -0.5", [Fraction(1, 2)], True),
        # Counters add and subtract as Counters (counts under one dropped), lists concatenate.
        ("assert c('aab') + c('b') == {'a': 2, 'b': 2}", [Counter("aab"), Counter("b")], True),
        ("assert c('ab') - c('b') == c('a')", [Counter("ab"), Counter("b"), Counter("a")], True),
        ("assert c('a') - c('aa') == {}", [Counter("a"), Counter("aa")], True),
        ("assert +c('a') == {'a': 1}", [Counter({"a": 1, "b": -1})], True),
        ("assert f(1) + [3] == [1, 2, 3]", [[1, 2]], True),
        ("assert f(1) - {2} == {1}", [{1, 2}], True),
    ],
)
def test_host_arithmetic_is_pythons_on_the_values_rebuilt(
    source: str, values: list[Any], holds: bool
) -> None:
    plan = plan_assert(source)
    assert plan.check is not None and plan.operands is not None
    assert len(plan.operands) == len(values)
    assert evaluate(plan.check, values, None) is holds


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("assert f(1) + 1 == 2", [1]),
        ("assert -f(1) == 1", "a"),
        ("assert abs(f(1)) == 1", Counter("a")),
        ("assert abs(f(1), abs_tol=1) == 1", 1),
        ("assert math.isclose(f(1), 1)", 1j),
        ("assert math.isclose(f(1), 1)", Counter("a")),
    ],
)
def test_what_python_refuses_is_a_runtime_error(source: str, value: Any) -> None:
    plan = plan_assert(source)
    assert plan.check is not None
    with pytest.raises(HostCheckError):
        evaluate(plan.check, [value], None)


def test_type_errors_on_the_host_are_runtime_errors() -> None:
    plan = plan_assert("assert f(1) < 3")
    assert plan.check is not None
    with pytest.raises(HostCheckError):
        evaluate(plan.check, ["a string"], None)


def test_tests_that_are_not_python_are_invalid() -> None:
    with pytest.raises(InvalidGroundTruth, match="does not parse"):
        plan_assert("assert f(1) ==")


def test_names_whose_attributes_the_test_reads_are_listed() -> None:
    # Where such a name is a standard module's, the sandbox binds that module, never the
    # solution's value of it.
    lifted = plan_assert("assert math.floor(area(1)) == 3")
    assert lifted.operands == ("math.floor(area(1))",)
    assert lifted.namespaces == ("math",)
    whole = plan_assert("for r in [1]:\n    assert math.isclose(area(r), 3.14)\n    s.add(r)")
    assert whole.operands is None and whole.namespaces == ("math", "s")
    assert plan_assert("assert add(1, 2) == 3").namespaces == ()


def test_names_the_test_takes_from_the_solution_are_listed() -> None:
    # What the program must define: not the test's own names, builtins or standard modules.
    assert plan_assert("assert math.isclose(area(2), 12.56, rel_tol=0.01)").reads == ("area",)
    check = (
        "METADATA = {}\n\ndef check(candidate):\n    assert candidate([1], 2) == [1]\n"
        "\ncheck(truncate)"
    )
    assert plan_assert(check).reads == ("truncate",)
    setup = "import math\nfor x in [1, 2]:\n    assert sorted(f(x)) == [x]\nassert N == 1"
    assert plan_assert(setup).reads == ("N", "f")


def _iterator(kind: str, items: list[Any], ending: str = "end", message: str = "") -> Any:
    # As the sandbox reports a returned iterator (``harness.proxies.operand``).
    return decode_operand(["IT", kind, ending, message, ["L", *items]])


def _holds(source: str, *values: Any) -> bool:
    plan = plan_assert(source)
    assert plan.check is not None and plan.operands is not None
    return evaluate(plan.check, list(values), None)


def test_a_returned_generator_is_an_operand_as_in_python() -> None:
    # ``x in gen`` consumes it up to x; a generator is true and equals only itself.
    evens = [0, 2, 4, 6, 8]
    assert _holds("assert 4 in evens(10)", _iterator("once", evens))
    assert _holds("assert 5 not in evens(10)", _iterator("once", evens))
    assert _holds("assert evens(10)", _iterator("once", []))
    assert not _holds("assert not evens(10)", _iterator("once", evens))
    assert not _holds("assert evens(10) == [0, 2, 4, 6, 8]", _iterator("once", evens))
    assert _holds("assert evens(10) is not None", _iterator("once", evens))
    with pytest.raises(HostCheckError):
        _holds("assert evens(10) < [1]", _iterator("once", evens))
    consumed = Iterated([0, 2, 4], "end", "")
    assert 2 in consumed and 4 in consumed and 0 not in consumed and 4 not in consumed


def test_what_a_generator_raised_comes_only_past_the_item_found() -> None:
    # It yielded 0 and 2, then raised: Python finds 2 and never sees the exception.
    raised = ["once", [0, 2], "raised", "ValueError: boom"]
    assert _holds("assert 2 in g()", _iterator(*raised))  # type: ignore[arg-type]
    with pytest.raises(HostCheckError, match="ValueError: boom"):
        _holds("assert 4 in g()", _iterator(*raised))  # type: ignore[arg-type]
    # An endless one read as far as the sandbox reads it: an item past that cannot be found.
    assert _holds("assert 4 in g()", _iterator("once", [0, 2, 4, 6], "cut"))
    with pytest.raises(HostCheckError, match="first 4 items"):
        _holds("assert 5 not in g()", _iterator("once", [0, 2, 4, 6], "cut"))


def test_a_range_or_a_dict_view_is_rebuilt_as_itself() -> None:
    assert _holds("assert 4 in span(10)", _iterator("range", [0, 2, 4, 6, 8]))
    assert decode_operand(["IT", "range", "end", "", ["L", 9, 6, 3]]) == range(9, 0, -3)
    assert decode_operand(["IT", "range", "end", "", ["L"]]) == range(0)
    assert _holds("assert keys(d) == {'a', 'b'}", _iterator("keys", ["a", "b"]))
    assert _holds("assert ('a', 1) in items(d)", _iterator("items", [["T", "a", 1]]))
    assert _holds("assert 1 in values(d)", _iterator("values", [1]))
    assert not _holds("assert values(d) == [1]", _iterator("values", [1]))
    assert not _holds("assert span(3) == [0, 1, 2]", _iterator("range", [0, 1, 2]))


@pytest.mark.parametrize(
    "data",
    [
        ["IT", "range", "end", "", ["L", 0, 5, 7]],  # not a range's items
        ["IT", "range", "end", "", ["L", 1, 1]],
        ["IT", "range", "end", "", ["L", 0.5]],
        ["IT", "keys", "end", "", ["L", ["L"]]],  # unhashable
        ["IT", "keys", "end", "", ["L", 1, 1]],  # twice the same key
        ["IT", "items", "end", "", ["L", ["T", 1, 2, 3]]],
        ["IT", "range", "cut", "", ["L", 0]],  # a view is read whole
        ["IT", "once", "later", "", ["L"]],
        ["IT", "class", "end", "", ["L"]],
        ["IT", "once", "end", "", "x"],
        ["IT", "once", "end", ["L"]],
    ],
)
def test_malformed_iterator_operands_are_refused(data: Any) -> None:
    with pytest.raises(ValueError):
        decode_operand(data)
