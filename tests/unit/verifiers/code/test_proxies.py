"""How the solution's exceptions reach test code (``harness/proxies.py``)."""

from __future__ import annotations

import pytest

from service.verifiers.code.harness.proxies import SolutionError, _exception


def test_builtin_exceptions_cross_as_themselves() -> None:
    error = _exception(["builtins", "ValueError", "negative", "solution.py line 3, in root"])
    assert type(error) is ValueError and str(error) == "negative"


@pytest.mark.parametrize("name", ["StopIteration", "StopAsyncIteration"])
def test_exceptions_that_end_iteration_do_not_cross_as_themselves(name: str) -> None:
    # As itself, a StopIteration raised by the solution would end ``map``/``filter`` in the
    # test's loop and skip its asserts.
    error = _exception(["builtins", name, "", ""])
    assert type(error) is SolutionError
    assert not isinstance(error, (StopIteration, StopAsyncIteration))
    assert name in str(error)


def test_exceptions_of_other_classes_are_solution_errors() -> None:
    assert type(_exception(["solution", "Custom", "x", ""])) is SolutionError
    assert type(_exception(["builtins", "SystemExit", "0", ""])) is SolutionError
