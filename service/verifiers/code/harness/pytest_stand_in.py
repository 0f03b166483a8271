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

import importlib.machinery
import itertools
import math
import re
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

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
        numbers = int | float
        if isinstance(want, bool) or isinstance(got, bool) or not isinstance(want, numbers):
            return bool(got == want)
        if not isinstance(got, numbers):
            return False
        if math.isnan(want) or math.isnan(got):
            return self.nan_ok and math.isnan(want) and math.isnan(got)
        if math.isinf(want) or math.isinf(got):
            return got == want
        rel = 1e-6 if self.rel is None else self.rel
        absolute = 1e-12 if self.abs is None else self.abs
        if self.rel is None and self.abs is not None:
            rel = 0.0
        return builtin_abs(got - want) <= max(rel * builtin_abs(want), absolute)


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
        self.values, self.marks = values, marks


def fixture(*args: Any, **kwargs: Any) -> Any:
    """A fixture of the test module's own: the runner calls it for a test that names it."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        args[0]._rlvr_fixture = True
        return args[0]

    def decorate(function: Any) -> Any:
        function._rlvr_fixture = True
        return function

    return decorate


# --------------------------------------------------------------------------------------------
# Running what pytest would collect


def collected(scope: dict[str, Any]) -> list[Callable[[], Any]]:
    """The tests pytest would collect from the module: functions named ``test*`` it defined,
    and ``test*`` methods of classes named ``Test*`` it defined (unittest's classes run as
    unittest runs them, not here), each parametrized case a test of its own."""
    found: list[Callable[[], Any]] = []
    unittest = sys.modules.get("unittest")
    for name, value in list(scope.items()):
        if not name.startswith(("test", "Test")):
            continue
        if isinstance(value, types.FunctionType) and name.startswith("test"):
            if value.__globals__ is scope and not getattr(value, "_rlvr_fixture", False):
                found.extend(_cases(value, scope, None))
        elif isinstance(value, type) and name.startswith("Test"):
            if value.__module__ != scope["__name__"]:
                continue
            if unittest is not None and issubclass(value, unittest.TestCase):
                continue
            for attribute, method in list(vars(value).items()):
                if attribute.startswith("test") and isinstance(method, types.FunctionType):
                    found.extend(_cases(method, scope, value))
    return found


def _cases(function: Any, scope: dict[str, Any], owner: type | None) -> Iterator[Any]:
    marks = list(getattr(function, "pytestmark", []))
    if owner is not None:
        marks += list(getattr(owner, "pytestmark", []))
    if any(m.name == "skip" or (m.name == "skipif" and _holds(m, scope)) for m in marks):
        return
    # An xfail test's failure is forgiven; a strict one that passes fails, as in pytest.
    xfails = [m for m in marks if m.name == "xfail" and _holds(m, scope, default=True)]
    expected_failure = "strict" if any(m.kwargs.get("strict") for m in xfails) else bool(xfails)
    grids = [_grid(m) for m in marks if m.name == "parametrize"]
    for combination in itertools.product(*grids):
        given: dict[str, Any] = {}
        for values in combination:
            given.update(values)
        yield lambda given=given: _call(function, scope, owner, given, expected_failure)


def _holds(mark: _Mark, scope: dict[str, Any], default: bool = False) -> bool:
    """A ``skipif`` / ``xfail`` condition: a value, or a string pytest evaluates with ``os``,
    ``sys`` and ``platform`` and the module's names (a string that fails to evaluate does not
    hold: the test runs)."""
    if not mark.args:
        return default
    condition = mark.args[0]
    if isinstance(condition, str):
        import os
        import platform

        try:
            condition = eval(condition, {"os": os, "sys": sys, "platform": platform, **scope})
        except Exception:
            return False
    return bool(condition)


def _grid(mark: _Mark) -> list[dict[str, Any]]:
    names, rows = [*mark.args, None, None][:2]
    names = mark.kwargs.get("argnames", names)
    rows = mark.kwargs.get("argvalues", rows) or []
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    grid = []
    for row in rows:
        if isinstance(row, param):
            row = row.values if len(names) > 1 else row.values[0]
        values = list(row) if len(names) > 1 else [row]
        if len(values) != len(names):
            raise HarnessLimit(f"parametrize gives {len(values)} values for {len(names)} names")
        grid.append(dict(zip(names, values, strict=True)))
    return grid


def _call(
    function: Any,
    scope: dict[str, Any],
    owner: type | None,
    given: dict[str, Any],
    xfail: bool | str,
) -> None:
    code = function.__code__
    wanted = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    instance = None
    if owner is not None:
        instance = owner()
        wanted = wanted[1:]
    defaults = _defaults(function)
    finish: list[Iterator[Any]] = []
    arguments = {}
    try:
        for name in wanted:
            if name in given:
                arguments[name] = given[name]
            elif name not in defaults:
                arguments[name] = _fixture_value(name, scope, finish)
    except _NotATest:
        return
    target = function if instance is None else function.__get__(instance, owner)
    try:
        if instance is not None and hasattr(instance, "setup_method"):
            instance.setup_method(function)
        target(**arguments)
        if instance is not None and hasattr(instance, "teardown_method"):
            instance.teardown_method(function)
    except Exception as exc:
        if isinstance(exc, Skipped) or xfail:
            return
        raise
    else:
        if xfail == "strict":
            raise Failed("[XPASS(strict)] a test expected to fail passed")
    finally:
        for generator in reversed(finish):
            next(generator, None)


def _defaults(function: Any) -> set[str]:
    code = function.__code__
    positional = code.co_varnames[: code.co_argcount]
    names = set(positional[len(positional) - len(function.__defaults__ or ()) :])
    return names | set(function.__kwdefaults__ or {})


# pytest's own fixtures: a test that asks for one cannot be run here (the ground truth's limit).
_BUILTIN_FIXTURES = frozenset(
    {
        "capsys",
        "capfd",
        "capsysbinary",
        "capfdbinary",
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
        "cache",
    }
)


class _NotATest(Exception):
    """A function named ``test*`` whose parameters are neither parametrized nor fixtures: a
    helper the test code calls itself, not one pytest could run."""


def _fixture_value(name: str, scope: dict[str, Any], finish: list[Iterator[Any]]) -> Any:
    function: Any = scope.get(name)
    if not getattr(function, "_rlvr_fixture", False):
        if name in _BUILTIN_FIXTURES:
            raise HarnessLimit(
                f"the test asks for pytest's fixture {name!r}, which the sandbox lacks"
            )
        raise _NotATest(name)
    code = function.__code__
    arguments = {n: _fixture_value(n, scope, finish) for n in code.co_varnames[: code.co_argcount]}
    value = function(**arguments)
    if isinstance(value, types.GeneratorType):
        finish.append(value)
        return next(value)
    return value


def run_tests(scope: dict[str, Any]) -> bool:
    """Run every test pytest would collect from the test's module; False when it has none.
    The first failure propagates, as any failing test code does."""
    tests = collected(scope)
    for test in tests:
        test()
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
    if name.startswith("__"):
        raise AttributeError(name)
    raise HarnessLimit(f"the test uses pytest.{name}, which the sandbox's stand-in lacks")


class _Finder:
    """A meta path finder and its loader (the protocol, not ``importlib.abc``'s classes)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != NAME:
            return None
        return importlib.machinery.ModuleSpec(NAME, self)  # type: ignore[arg-type]  # a Loader by protocol

    def create_module(self, spec: Any) -> types.ModuleType:
        return _module()

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install() -> None:
    """Before every real finder: ``import pytest`` in test code finds this stand-in even where
    the sandbox has pytest, so that a test is run the same way on every backend (the runner
    reads the stand-in's marks and fixtures)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
