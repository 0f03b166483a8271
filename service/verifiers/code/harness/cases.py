"""One test's code, run by the driver against the solution's proxies; its report.

- ``function``: the solution's entry point with the test's JSON arguments; the value as
  strict JSON data (``plain.to_json``) in plain data's wire form (ints of any size as hex:
  JSON writers refuse ints past 4300 digits), compared with the expected value on the host.
- ``values``: the operands of a lifted assert line (an iterator the solution returned as its
  items, ``proxies.operand``); the host finishes the comparison.
- ``exec``: a whole test (loops, helpers, several statements) in a fresh namespace whose
  names of the solution are proxies; it passes only if it runs to its end, and then only if
  the ``unittest.TestCase`` classes it defines pass when run (BigCodeBench states its tests
  as such a class and never runs it: left alone, any answer would pass), and the pytest-style
  ``test*`` functions it defines pass when run as pytest would (KodCode's form). A whole test
  that never reached the solution judged nothing: a harness limit (the ground truth's).
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

from . import nodes, plain, pytest_stand_in
from .proxies import HarnessLimit, Session, operand


def names(codes: list[types.CodeType]) -> set[str]:
    """Every global name the code (and the functions it defines) may read."""
    found: set[str] = set()
    for code in codes:
        found.update(code.co_names)
        found |= names([c for c in code.co_consts if isinstance(c, types.CodeType)])
    return found


def compiled(spec: dict[str, Any]) -> list[types.CodeType]:
    """The test's code: its operands (``values``), its source (``exec``), or nothing."""
    if spec["kind"] == "values":
        return [compile(operand, "<test>", "eval") for operand in spec["operands"]]
    if spec["kind"] == "exec":
        return [compile(spec["source"], "<test>", "exec")]
    return []


def namespace(
    session: Session, codes: list[types.CodeType], namespaces: list[str]
) -> dict[str, Any]:
    """A fresh module namespace for test code holding the solution's names it uses (a name
    the test reads attributes of and that names a standard module is that module), and
    LeetCode's ``ListNode`` and ``TreeNode`` unless the test defines its own."""
    scope: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins, **nodes.STANDARD}
    scope.update(session.bind(names(codes), set(namespaces)))
    session.scope = scope
    return scope


def run_function(session: Session, spec: dict[str, Any], fn_name: str) -> dict[str, Any]:
    value = session.entry(fn_name, spec["args"])
    try:
        return {"value": plain.encode(plain.to_json(value))}
    except plain.NotPlain as exc:  # an answer, but not JSON data: wrong, not a crash
        return {"invalid_result": str(exc)}


def run_values(
    session: Session, codes: list[types.CodeType], namespaces: list[str]
) -> dict[str, Any]:
    scope = namespace(session, codes, namespaces)
    values = [eval(code, scope) for code in codes]
    try:
        return {"values": [operand(value) for value in values]}
    except plain.NotPlain as exc:
        return {"invalid_result": str(exc)}


def run_exec(
    session: Session, codes: list[types.CodeType], namespaces: list[str]
) -> dict[str, Any]:
    scope = namespace(session, codes, namespaces)
    exec(codes[0], scope)
    classes = test_case_classes(scope)
    if classes:
        run_test_cases(classes, scope)
    pytest_stand_in.run_tests(scope, codes[0])
    if not session.touched:
        # Any answer would pass it: the ground truth's fault (a HumanEval ``check`` defined
        # and never called), which no verdict may hide behind a reward.
        raise HarnessLimit(
            "the test never reached the solution (it called none of its functions and read "
            "none of its data), so it passes any answer: a check it defines and never calls?"
        )
    return {"done": True}


def test_case_classes(scope: dict[str, Any]) -> list[type]:
    """The ``unittest.TestCase`` classes the test code defined (not ones it imported)."""
    unittest = sys.modules.get("unittest")
    if unittest is None:  # the test did not import it: it defined none
        return []
    return [
        value
        for value in list(scope.values())
        if isinstance(value, type)
        and issubclass(value, unittest.TestCase)
        and value.__module__ == scope["__name__"]
    ]


def run_test_cases(classes: list[type], scope: dict[str, Any]) -> None:
    """Run the classes' tests as unittest would; the first failure or error fails the test
    (``AssertionError`` with its report). What the harness raises to end a test (its clocks,
    the solution gone, an answer that is not plain data: BaseExceptions) is caught by
    unittest like any error; it is raised again here, so the test ends as it would have."""
    import unittest

    class Result(unittest.TestResult):
        halt: BaseException | None = None

        def _keep(self, err: Any) -> None:
            if err is not None and self.halt is None and not issubclass(err[0], Exception):
                self.halt = err[1]
                self.stop()

        def addError(self, test: Any, err: Any) -> None:
            self._keep(err)
            super().addError(test, err)

        def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
            self._keep(err)
            super().addSubTest(test, subtest, err)

        def addExpectedFailure(self, test: Any, err: Any) -> None:
            self._keep(err)
            super().addExpectedFailure(test, err)

    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(cls) for cls in classes)
    result = Result()
    # unittest finds setUpModule / tearDownModule in the classes' module, by its name.
    module = types.ModuleType(scope["__name__"])
    module.__dict__.update(scope)
    sys.modules[module.__name__] = module
    try:
        suite.run(result)
    finally:
        sys.modules.pop(module.__name__, None)
    if result.halt is not None:
        raise result.halt
    if not result.wasSuccessful():
        failed = [*result.failures, *result.errors]
        if not failed:
            raise AssertionError("a test marked as an expected failure passed")
        test, report = failed[0]
        raise AssertionError(f"{test.id()} did not pass:\n{report[-2000:]}")
