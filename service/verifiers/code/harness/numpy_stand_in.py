"""``numpy`` for test code where the sandbox's Python has none: the comparisons public suites'
test code makes with it, over plain data.

MBPP+ states every problem's tests as code that starts with ``import numpy as np`` and
compares through a helper of its own (``isinstance(x, np.ndarray)``, ``np.float64``,
``np.allclose(out, exp, rtol=1e-07, atol=atol)``). Without numpy each of those tests failed on
its first line, whatever the solution, so a right answer earned 0.0. This module answers those
names as numpy does for lists, tuples and numbers (elementwise, ``|a - b| <= atol + rtol *
|b|``), except that shapes must be the same (``_pairs``: numpy's broadcasting would let an
empty answer pass); any other name of numpy is the ground truth's limit (``HarnessLimit``: the
item is an error), never a wrong answer. Only test code sees it: it is found after every real
finder (a sandbox with numpy uses numpy), and the solution's process never imports it.
"""

from __future__ import annotations

import importlib.machinery
import math
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from .proxies import HarnessLimit

NAME = "numpy"


class ndarray:
    """No value test code gets from the solution is an array (plain data only)."""


class float64(float):
    pass


class float32(float):
    pass


class int64(int):
    pass


class int32(int):
    pass


def _shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, (list, tuple)):
        shapes = {_shape(item) for item in value}
        if len(shapes) > 1:
            raise ValueError("setting an array element with a sequence: inhomogeneous shape")
        return (len(value), *(shapes.pop() if shapes else ()))
    if value is None or isinstance(value, (str, bytes, dict, set, frozenset)):
        raise TypeError(f"ufunc 'isfinite' not supported for {type(value).__name__}")
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"ufunc 'isfinite' not supported for {type(value).__name__}")
    return ()


def _elements(value: Any) -> Iterator[Any]:
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _elements(item)
    else:
        yield value


def _pairs(a: Any, b: Any) -> list[tuple[Any, Any]] | None:
    """Elements side by side, or None when the shapes differ. numpy would broadcast: ``[]``
    against a number is an empty comparison, which it calls close, so an empty answer would
    pass for any expected number; here the shapes must be the same."""
    if _shape(a) != _shape(b):
        return None
    return list(zip(_elements(a), _elements(b), strict=True))


def _close(a: Any, b: Any, rtol: float, atol: float, equal_nan: bool) -> bool:
    if isinstance(a, complex) or isinstance(b, complex):
        if any(math.isnan(part) for part in (a.real, a.imag, b.real, b.imag)):
            return equal_nan and a == b
    elif math.isnan(a) or math.isnan(b):
        return equal_nan and math.isnan(a) and math.isnan(b)
    if math.isinf(abs(a)) or math.isinf(abs(b)):
        return bool(a == b)
    return abs(a - b) <= atol + rtol * abs(b)


def allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every pair of elements is close (numpy's rule: not symmetric in a and b)."""
    pairs = _pairs(a, b)
    return pairs is not None and all(_close(x, y, rtol, atol, equal_nan) for x, y in pairs)


def isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Two numbers close as ``allclose`` has it. Shapes must be the same, as there: a sequence
    beside a number is not close (a wrong answer's list against the test's number was the ground
    truth's limit, an error the answer chose). Two sequences would make numpy's array of
    answers, which is past this stand-in."""
    shapes = _shape(a), _shape(b)
    if shapes[0] != shapes[1]:
        return False
    if shapes[0]:
        raise HarnessLimit("the test uses numpy.isclose on sequences; the sandbox has no numpy")
    return _close(a, b, rtol, atol, equal_nan)


def array_equal(a: Any, b: Any, equal_nan: bool = False) -> bool:
    """Same shape and equal elements."""
    pairs = _pairs(a, b)
    return pairs is not None and all(x == y or (equal_nan and x != x and y != y) for x, y in pairs)


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise HarnessLimit(f"the test uses numpy.{name}, and the sandbox has no numpy")


def _module() -> types.ModuleType:
    module = _Module(NAME, __doc__)
    exported = {
        "ndarray": ndarray,
        "float64": float64,
        "float32": float32,
        "int64": int64,
        "int32": int32,
        "allclose": allclose,
        "isclose": isclose,
        "array_equal": array_equal,
        "inf": math.inf,
        "nan": math.nan,
        "pi": math.pi,
        "e": math.e,
    }
    module.__dict__.update(exported)
    return module


class StandInFinder:
    """A meta path finder and its loader for one stand-in module (the protocol, not
    ``importlib.abc``'s classes: that module imports pathlib, tempfile and more into every
    sandboxed process). Test code's stand-ins (this one, pytest's) share it."""

    def __init__(self, name: str, make: Callable[[], types.ModuleType]) -> None:
        self.name, self.make = name, make

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.machinery.ModuleSpec(self.name, self)  # type: ignore[arg-type]  # a Loader by protocol

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.make()

    def exec_module(self, module: types.ModuleType) -> None:
        return None

    def install(self, first: bool) -> None:
        """Into ``sys.meta_path`` once: before every real finder, or after them."""
        if any(isinstance(f, StandInFinder) and f.name == self.name for f in sys.meta_path):
            return
        if first:
            sys.meta_path.insert(0, self)
        else:
            sys.meta_path.append(self)


def install() -> None:
    """After every real finder: ``import numpy`` in test code finds numpy if the sandbox has
    it, else this stand-in."""
    StandInFinder(NAME, _module).install(first=False)
