"""The solution's exceptions across the process boundary (``harness/errors.py``): described
where they are raised, made again in the driver as classes of its own that test code catches
as Python would have caught the solution's."""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest

from service.verifiers.code.harness import errors, plain


class _Handles:
    """The solution process's handles of its objects, as ``_Server.handle`` gives them."""

    def __init__(self) -> None:
        self.by_id: dict[int, int] = {}

    def __call__(self, obj: Any) -> int:
        return self.by_id.setdefault(id(obj), len(self.by_id) + 1)


def _crossed(exc: BaseException, made: errors.Made | None = None) -> BaseException:
    """``exc`` raised in the solution, as test code gets it (through JSON, as on the wire)."""
    described = json.loads(plain.dumps(errors.describe(exc, "", _Handles())))
    return (made or errors.Made()).error(described)


class AppError(Exception):
    pass


class BadInput(AppError, ValueError):
    def __str__(self) -> str:
        return f"bad input: {self.args[0]}"


class HttpError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}")
        self.code = code


def test_a_class_of_the_solutions_is_made_with_its_name_and_bases() -> None:
    error = _crossed(BadInput(-1))
    assert type(error) is not BadInput and type(error).__name__ == "BadInput"
    assert isinstance(error, ValueError) and type(error).__module__ == __name__
    assert [k.__name__ for k in type(error).__mro__][:3] == ["BadInput", "AppError", "ValueError"]
    # Its text is the one its own __str__ made there; its arguments are its own.
    assert str(error) == "bad input: -1" and error.args == (-1,)


def test_one_class_is_made_per_class_of_the_solution() -> None:
    handles, made = _Handles(), errors.Made()
    bound = made.kind(json.loads(plain.dumps(errors.describe_class(AppError, handles))))
    raised = made.error(json.loads(plain.dumps(errors.describe(BadInput(1), "", handles))))
    assert isinstance(raised, bound)  # ``except AppError`` in test code catches it
    assert made.handles[bound] == handles(AppError)


def test_attributes_and_keys_cross_as_plain_data() -> None:
    assert _crossed(HttpError(404)).code == 404  # type: ignore[attr-defined]
    key = _crossed(KeyError("missing"))
    assert type(key) is KeyError and str(key) == "'missing'" and key.args == ("missing",)


def test_the_standard_librarys_classes_are_test_codes_own() -> None:
    try:
        json.loads("{")
    except json.JSONDecodeError as exc:
        error = _crossed(exc)
    assert isinstance(error, json.JSONDecodeError) and error.pos == 1  # type: ignore[attr-defined]
    try:
        statistics.mean([])
    except statistics.StatisticsError as exc:
        assert isinstance(_crossed(exc), statistics.StatisticsError)


def test_a_class_of_the_solutions_brings_none_of_its_behaviour() -> None:
    class Meta(type):
        def __instancecheck__(cls, other: Any) -> bool:
            return True

        def __subclasscheck__(cls, other: Any) -> bool:
            return True

    class AnyError(Exception, metaclass=Meta):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = Exception.__hash__

    error = _crossed(AnyError("x"))
    assert type(type(error)) is type and not issubclass(ValueError, type(error))
    assert error != _crossed(AnyError("x")) and "__eq__" not in vars(type(error))


def test_a_test_runners_exception_is_not_the_test_runners() -> None:
    import unittest

    error = _crossed(unittest.SkipTest("skip me"))
    assert not isinstance(error, unittest.SkipTest) and isinstance(error, Exception)


@pytest.mark.parametrize(
    "described",
    [
        ["Exception", "x", "", None],
        ["NotAnError", "x", "", None, []],
        ["len", "x", "", None, []],
        [[1, "solution", "E"], "x", "", None, []],
        [[1, "solution", "E", ["Nope"]], "x", "", None, []],
        [[1, "solution", "E", [[2]]], "x", "", None, []],
    ],
)
def test_a_malformed_description_is_refused(described: Any) -> None:
    with pytest.raises(ValueError):
        errors.Made().error(described)
