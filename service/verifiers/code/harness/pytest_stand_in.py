"""``pytest`` for test code where the sandbox's Python has none, and the running of a test's
pytest-style functions.

KodCode states every problem's tests as a pytest module: ``from solution import f``, then
``def test_...():`` functions that pytest collects and runs (``pytest.raises``,
``pytest.approx``, ``@pytest.mark.parametrize``, a few fixtures of the module's own). Run as an
assert test, such a module only defined its functions, and every answer passed. ``run_tests``
runs what pytest would collect from it; this module answers ``import pytest`` with the names
those tests use. Anything else of pytest (its built-in fixtures: ``capsys``, ``tmp_path``,
``monkeypatch``...) is the ground truth's limit (``HarnessLimit``: the item is an error), never a
wrong answer. Only test code sees it: it is found after every real finder, and the solution's
process never imports it.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

from .numpy_stand_in import StandInFinder
from .proxies import HarnessLimit

NAME = "pytest"


class Skipped(Exception):
    """``pytest.skip()``: the test does not count."""


class Failed(AssertionError):
    """``pytest.fail()``: the test fails, as an assertion does."""


def fail(reason: str = "", pytrace: bool = True) -> None:
    raise Failed(reason)


def skip(reason: str = "", allow_module_level: bool = False) -> None:
    raise Skipped(reason)


def importorskip(modname: str, minversion: str | None = None, reason: str | None = None) -> Any:
    try:
        return __import__(modname)
    except ImportError:
        raise HarnessLimit(
            f"the test needs {modname!r}, which the sandbox's Python lacks"
        ) from None


class ExceptionInfo:
    """What ``with pytest.raises(...) as info`` gives: the exception, once it was raised."""

    def __init__(self) -> None:
        self.value: BaseException | None = None
        self.type: type[BaseException] | None = None

    def match(self, pattern: str) -> bool:
        if not re.search(pattern, str(self.value)):
            raise AssertionError(f"{str(self.value)!r} does not match {pattern!r}")
        return True


class _Raises:
    def __init__(self, expected: Any, match: str | None) -> None:
        self.expected, self.pattern, self.info = expected, match, ExceptionInfo()

    def __enter__(self) -> ExceptionInfo:
        return self.info

    def __exit__(self, kind: Any, value: Any, tb: Any) -> bool:
        if kind is None:
            raise Failed(f"DID NOT RAISE {self.expected!r}")
        if not issubclass(kind, Exception) or not issubclass(kind, self.expected):
            return False  # not the expected exception (or the harness's own end): it goes on
        self.info.value, self.info.type = value, kind
        if self.pattern is not None:
            self.info.match(self.pattern)
        return True


def raises(expected: Any, *args: Any, match: str | None = None, **kwargs: Any) -> Any:
    context = _Raises(expected, match)
    if not args:
        return context
    with context:
        args[0](*args[1:], **kwargs)
    return context.info


class approx:
    """``got == approx(want)``: numbers within ``rel`` (1e-6) or ``abs`` (1e-12) of each
    other, elementwise through lists, tuples and dicts of the same shape."""

    def __init__(
        self,
        expected: Any,
        rel: float | None = None,
        abs: float | None = None,
        nan_ok: bool = False,
    ) -> None:
        self.expected, self.rel, self.abs, self.nan_ok = expected, rel, abs, nan_ok

    def __repr__(self) -> str:
        return f"approx({self.expected!r})"

    def __eq__(self, other: Any) -> bool:
        return self._equal(other, self.expected)

    def __ne__(self, other: Any) -> bool:
        return not self._equal(other, self.expected)

    __hash__ = None  # type: ignore[assignment]

    def _equal(self, got: Any, want: Any) -> bool:
        if isinstance(want, dict):
            return (
                isinstance(got, dict)
                and got.keys() == want.keys()
                and all(self._equal(got[k], want[k]) for k in want)
            )
        if isinstance(want, list | tuple):
            return (
                isinstance(got, list | tuple)
                and len(got) == len(want)
                and all(self._equal(g, w) for g, w in zip(got, want, strict=True))
            )
        if isinstance(want, bool) or isinstance(got, bool) or not _number(want):
            return bool(got == want)
        if not _number(got):
            return False
        if isinstance(want, complex) or isinstance(got, complex):
            if want != want or got != got:  # a NaN part
                return self.nan_ok and want != want and got != got
        elif math.isnan(want) or math.isnan(got):
            return self.nan_ok and math.isnan(want) and math.isnan(got)
        elif math.isinf(want) or math.isinf(got):
            return bool(got == want)
        rel = 1e-6 if self.rel is None else self.rel
        absolute = 1e-12 if self.abs is None else self.abs
        if self.rel is None and self.abs is not None:
            rel = 0.0
        return bool(builtin_abs(got - want) <= max(rel * builtin_abs(want), absolute))


def _number(value: Any) -> bool:
    """A number pytest's approx compares with a tolerance: int, float, complex, Fraction,
    Decimal (the standard library's, as the values crossing from the solution are)."""
    return isinstance(value, numbers.Number)


builtin_abs = abs


class _Mark:
    """``@pytest.mark.<name>(...)``: kept on the function for the runner; marks it does not
    know (``timeout``, ``slow``) change nothing."""

    def __init__(self, name: str, args: tuple[Any, ...] = (), kwargs: Any = None) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs or {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]) and not self.args:
            return _marked(args[0], self)
        mark = _Mark(self.name, args, kwargs)
        return lambda target: _marked(target, mark)


def _marked(target: Any, mark: _Mark) -> Any:
    marks = list(getattr(target, "pytestmark", []))
    target.pytestmark = [*marks, mark]
    return target


class _MarkGenerator:
    def __getattr__(self, name: str) -> _Mark:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Mark(name)


mark = _MarkGenerator()


class param:  # pytest's name
    def __init__(self, *values: Any, marks: Any = (), id: str | None = None) -> None:
        self.values = values
        self.marks = list(marks) if isinstance(marks, list | tuple) else [marks]


def fixture(*args: Any, name: str | None = None, autouse: bool = False, **kwargs: Any) -> Any:
    """A fixture of the test module's own (or of a test class): the runner calls it for a test
    that names it (by ``name`` when given), or for every test when ``autouse``."""

    def decorate(function: Any) -> Any:
        if kwargs.get("params") is not None:
            raise HarnessLimit("the test's fixture takes params, which the stand-in lacks")
        function._rlvr_fixture = name or function.__name__
        function._rlvr_autouse = autouse
        return function

    if len(args) == 1 and callable(args[0]):
        return decorate(args[0])
    return decorate


# --------------------------------------------------------------------------------------------
# Running what pytest would collect


class _Test:
    """One test pytest would collect: a function, or a method of a ``Test*`` class (plain,
    static or class method)."""

    __slots__ = ("binding", "function", "owner")

    def __init__(self, function: Any, owner: type | None, binding: str) -> None:
        self.function, self.owner, self.binding = function, owner, binding


def collected(scope: dict[str, Any]) -> list[_Test]:
    """The tests pytest would collect from the module, in its order: functions named
    ``test*`` it defined, and ``test*`` methods of classes named ``Test*`` it defined, their
    bases' and their nested ``Test*`` classes' too (unittest's classes run as unittest runs
    them, not here). Fixtures are not tests."""
    found: list[_Test] = []
    for name, value in list(scope.items()):
        if name.startswith("test") and isinstance(value, types.FunctionType):
            if value.__globals__ is scope and not hasattr(value, "_rlvr_fixture"):
                found.append(_Test(value, None, "function"))
        elif (
            name.startswith("Test")
            and isinstance(value, type)
            and value.__module__ == scope["__name__"]
        ):
            found.extend(_class_tests(value))
    return found


def _class_tests(cls: type) -> list[_Test]:
    unittest = sys.modules.get("unittest")
    if unittest is not None and issubclass(cls, unittest.TestCase):
        return []
    seen: set[str] = set()
    per_class: list[list[_Test]] = []
    for klass in cls.__mro__[:-1]:  # the class first; its bases' tests come first in order
        tests: list[_Test] = []
        for name, value in list(vars(klass).items()):
            if name in seen:
                continue
            seen.add(name)
            if name.startswith("test"):
                test = _method_test(cls, value)
                if test is not None:
                    tests.append(test)
            elif name.startswith("Test") and isinstance(value, type):
                tests.extend(_class_tests(value))
        per_class.append(tests)
    return [test for tests in reversed(per_class) for test in tests]


def _method_test(cls: type, value: Any) -> _Test | None:
    if isinstance(value, staticmethod):
        return _Test(value.__func__, cls, "static")
    if isinstance(value, classmethod):
        return _Test(value.__func__, cls, "class")
    if isinstance(value, types.FunctionType) and not hasattr(value, "_rlvr_fixture"):
        return _Test(value, cls, "method")
    return None


def _marks(target: Any) -> list[_Mark]:
    return [m for m in getattr(target, "pytestmark", []) if isinstance(m, _Mark)]


def _condition(mark: _Mark, scope: dict[str, Any]) -> bool:
    """A ``skipif`` / ``xfail`` condition (positional or ``condition=``): a value, or a string
    pytest evaluates with ``os``, ``sys`` and ``platform`` and the module's names (a string
    that fails to evaluate does not hold: the test runs). No condition holds."""
    if mark.args:
        condition = mark.args[0]
    elif "condition" in mark.kwargs:
        condition = mark.kwargs["condition"]
    else:
        return True
    if isinstance(condition, str):
        import os
        import platform

        try:
            condition = eval(condition, {"os": os, "sys": sys, "platform": platform, **scope})
        except Exception:
            return False
    return bool(condition)


def _grid(mark: _Mark) -> list[tuple[dict[str, Any], list[_Mark]]]:
    """Each case of a ``parametrize``: its values by name, and its own marks."""
    names, rows = [*mark.args, None, None][:2]
    names = mark.kwargs.get("argnames", names)
    rows = mark.kwargs.get("argvalues", rows) or []
    if mark.kwargs.get("indirect"):
        raise HarnessLimit("the test parametrizes a fixture (indirect), which the stand-in lacks")
    # As pytest parses it: one name given as a string takes each value whole.
    whole = isinstance(names, str) and len([n for n in names.split(",") if n.strip()]) == 1
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    grid = []
    for row in rows:
        marks: list[_Mark] = []
        if isinstance(row, param):
            marks = [m for m in row.marks if isinstance(m, _Mark)]
            row = row.values[0] if whole and len(row.values) == 1 else row.values
        values = [row] if whole else list(row)
        if len(values) != len(names):
            raise HarnessLimit(f"parametrize gives {len(values)} values for {len(names)} names")
        grid.append((dict(zip(names, values, strict=True)), marks))
    return grid


# pytest's own fixtures, named in the reason when a test asks for one.
_BUILTIN_FIXTURES = frozenset(
    {
        "capsys",
        "capfd",
        "capsysbinary",
        "capfdbinary",
        "capteesys",
        "caplog",
        "tmp_path",
        "tmpdir",
        "tmp_path_factory",
        "tmpdir_factory",
        "monkeypatch",
        "request",
        "recwarn",
        "pytestconfig",
        "record_property",
        "record_testsuite_property",
        "subtests",
        "cache",
    }
)


class _Unresolved(Exception):
    """A test's argument is neither parametrized nor a fixture of the module's."""


class _Runner:
    """The module's tests, with pytest's setup and teardown around them."""

    def __init__(self, scope: dict[str, Any], code: types.CodeType | None) -> None:
        self.scope, self.code = scope, code
        self.module_fixtures = _fixtures([scope])
        self.loaded: set[str] | None = None
        self.classes_set_up: list[type] = []

    def run(self, tests: list[_Test]) -> None:
        module = types.ModuleType(self.scope["__name__"])
        module.__dict__.update(self.scope)
        _hook(self.scope.get("setup_module"), module)
        try:
            for test in tests:
                self.run_test(test)
        finally:
            for cls in reversed(self.classes_set_up):
                _hook(vars(cls).get("teardown_class"), cls)
            _hook(self.scope.get("teardown_module"), module)

    def run_test(self, test: _Test) -> None:
        marks = _marks(test.function)
        if test.owner is not None:
            for klass in test.owner.__mro__[:-1]:
                marks += _marks(klass)
        cases: list[tuple[dict[str, Any], list[_Mark]]] = [({}, [])]
        for mark in marks:
            if mark.name == "parametrize":
                cases = [
                    ({**given, **more}, [*case_marks, *more_marks])
                    for given, case_marks in cases
                    for more, more_marks in _grid(mark)
                ]
        for given, case_marks in cases:
            self.run_case(test, given, marks + case_marks)

    def run_case(self, test: _Test, given: dict[str, Any], marks: list[_Mark]) -> None:
        if any(
            m.name == "skip" or (m.name == "skipif" and _condition(m, self.scope)) for m in marks
        ):
            return
        xfails = [m for m in marks if m.name == "xfail" and _condition(m, self.scope)]
        instance = self._instance(test)
        fixtures = {**self.module_fixtures, **_fixtures(_class_dicts(test.owner), instance)}
        finish: list[Iterator[Any]] = []
        cache: dict[str, Any] = {}
        try:
            for name, function in fixtures.items():
                if getattr(function, "_rlvr_autouse", False):
                    self._fixture(name, fixtures, cache, finish)
            for mark in marks:
                if mark.name == "usefixtures":
                    for name in mark.args:
                        self._fixture(name, fixtures, cache, finish)
            call, arguments = self._call(test, instance, given, fixtures, cache, finish)
        except _Unresolved as exc:
            self._finish(finish)
            name = str(exc)
            if self._helper(test.function):
                return  # the test code's own helper, which it calls itself
            what = "pytest's fixture" if name in _BUILTIN_FIXTURES else "the fixture"
            raise HarnessLimit(
                f"the test asks for {what} {name!r}, which the sandbox lacks"
            ) from None
        try:
            self._around(test, instance, call, arguments)
        except Exception as exc:
            if isinstance(exc, Skipped):
                return
            if any(_forgives(m, exc) for m in xfails):
                return
            raise
        else:
            if any(m.kwargs.get("strict") for m in xfails):
                raise Failed("[XPASS(strict)] a test expected to fail passed")
        finally:
            self._finish(finish)

    def _instance(self, test: _Test) -> Any:
        owner = test.owner
        if owner is None:
            return None
        if owner not in self.classes_set_up:
            self.classes_set_up.append(owner)
            _hook(vars(owner).get("setup_class"), owner)
        return owner()

    def _call(
        self,
        test: _Test,
        instance: Any,
        given: dict[str, Any],
        fixtures: dict[str, Any],
        cache: dict[str, Any],
        finish: list[Iterator[Any]],
    ) -> tuple[Any, dict[str, Any]]:
        function = test.function
        if test.binding == "method":
            call = function.__get__(instance, test.owner)
        elif test.binding == "class":
            call = function.__get__(test.owner, type(test.owner))
        else:
            call = function
        wanted = _parameters(function)[1 if test.binding in ("method", "class") else 0 :]
        arguments = {}
        for name in wanted:
            if name in given:
                arguments[name] = given[name]
            else:
                arguments[name] = self._fixture(name, fixtures, cache, finish)
        return call, arguments

    def _around(self, test: _Test, instance: Any, call: Any, arguments: dict[str, Any]) -> None:
        """setup_method / setup_function, the test, then the teardown (even after a failure)."""
        if instance is not None:
            _hook(getattr(instance, "setup_method", None), test.function)
        else:
            _hook(self.scope.get("setup_function"), test.function)
        try:
            outcome = call(**arguments)
            if isinstance(outcome, types.CoroutineType):  # as pytest-asyncio runs it
                import asyncio

                asyncio.run(outcome)
        finally:
            if instance is not None:
                _hook(getattr(instance, "teardown_method", None), test.function)
            else:
                _hook(self.scope.get("teardown_function"), test.function)

    def _fixture(
        self,
        name: str,
        fixtures: dict[str, Any],
        cache: dict[str, Any],
        finish: list[Iterator[Any]],
    ) -> Any:
        if name in cache:
            return cache[name]
        function = fixtures.get(name)
        if function is None:
            raise _Unresolved(name)
        wanted = _parameters(function)[1 if hasattr(function, "__self__") else 0 :]
        arguments = {n: self._fixture(n, fixtures, cache, finish) for n in wanted}
        value = function(**arguments)
        if isinstance(value, types.GeneratorType):
            finish.append(value)
            value = next(value)
        cache[name] = value
        return value

    def _finish(self, finish: list[Iterator[Any]]) -> None:
        while finish:
            next(finish.pop(), None)

    def _helper(self, function: Any) -> bool:
        """The test code names the function itself (``test_with(f)`` called below it): its
        own helper, which pytest would not run, not a test that cannot be run."""
        if self.loaded is None:
            self.loaded = _loaded_names(self.code) if self.code is not None else set()
        return function.__name__ in self.loaded


def _class_dicts(owner: type | None) -> list[dict[str, Any]]:
    if owner is None:
        return []
    return [dict(vars(klass)) for klass in reversed(owner.__mro__[:-1])]


def _fixtures(dicts: list[dict[str, Any]], instance: Any = None) -> dict[str, Any]:
    """Fixtures by name in these namespaces (a class's, bound to the test's instance; a later
    namespace's fixture of a name replaces an earlier one's)."""
    found: dict[str, Any] = {}
    for namespace in dicts:
        for value in list(namespace.values()):
            if not isinstance(value, types.FunctionType):
                continue
            name = getattr(value, "_rlvr_fixture", None)
            if isinstance(name, str):
                bound = value if instance is None else value.__get__(instance, type(instance))
                found[name] = bound
    return found


def _parameters(function: Any) -> list[str]:
    """The arguments a call must give: those without a default."""
    code = function.__code__
    positional = list(code.co_varnames[: code.co_argcount])
    if function.__defaults__:
        positional = positional[: len(positional) - len(function.__defaults__)]
    keyword_only = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    defaults = function.__kwdefaults__ or {}
    return positional + [name for name in keyword_only if name not in defaults]


def _hook(function: Any, argument: Any) -> None:
    """A setup or teardown hook, with its one argument if it takes one (pytest allows both)."""
    if function is None:
        return
    if isinstance(function, classmethod | staticmethod):
        function = function.__get__(None, argument)
    code = getattr(function, "__code__", None)
    takes = 0 if code is None else code.co_argcount - (1 if hasattr(function, "__self__") else 0)
    if takes >= 1:
        function(argument)
    else:
        function()


def _forgives(mark: _Mark, exc: BaseException) -> bool:
    raises = mark.kwargs.get("raises")
    return raises is None or isinstance(exc, raises)


def _loaded_names(code: types.CodeType) -> set[str]:
    import dis

    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        for instruction in dis.get_instructions(current):
            if instruction.opname in ("LOAD_NAME", "LOAD_GLOBAL"):
                names.add(str(instruction.argval))
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return names


def run_tests(scope: dict[str, Any], code: types.CodeType | None = None) -> bool:
    """Run every test pytest would collect from the test's module; False when it has none.
    The first failure propagates, as any failing test code does."""
    tests = collected(scope)
    if tests:
        _Runner(scope, code).run(tests)
    return bool(tests)


# --------------------------------------------------------------------------------------------
# ``import pytest``


def _module() -> types.ModuleType:
    module = types.ModuleType(NAME, __doc__)
    for name in ("fail", "skip", "importorskip", "raises", "approx", "mark", "param", "fixture"):
        setattr(module, name, globals()[name])
    module.__getattr__ = _missing  # type: ignore[method-assign]
    return module


def _missing(name: str) -> Any:
    if name.startswith("_"):  # not pytest's API: what a getattr with a default asks
        raise AttributeError(name)
    raise HarnessLimit(f"the test uses pytest.{name}, which the sandbox's stand-in lacks")


def install() -> None:
    """Before every real finder: ``import pytest`` in test code finds this stand-in even where
    the sandbox has pytest, so that a test is run the same way on every backend (the runner
    reads the stand-in's marks and fixtures)."""
    StandInFinder(NAME, _module).install(first=True)
