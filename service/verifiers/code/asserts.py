"""Assert tests, judged on the host wherever the line allows it.

``assert f(3) == [1, 2]`` becomes: the sandbox evaluates only ``f(3)`` and reports it as plain
data; the host evaluates ``<value> == [1, 2]``. The expected value never enters the sandbox.
The host understands comparisons (any operator, chained), ``not``, ``+``/``-``, ``abs()`` and
``math.isclose()`` over literals and lifted operands, with Python's own operators on the
values it rebuilt. An operand that is an iterator a call of the solution returned (a generator,
``map``, ``range``, a dict view) reaches the host as its items, read in the sandbox, and is
rebuilt as ``Iterated`` (``4 in evens(10)`` consumes it as Python would) or as itself.

Lines it cannot split this way (several statements, a loop over cases, helper code, a
comparison inside an operand, an ``and``/``or``) run whole in the sandbox, marked
``judged: "sandbox"``, and pass only if they run to their end. They run in the harness's
driver, never in the solution's interpreter: the solution's names are proxies that return
plain data only (``harness/proxies.py``), so an object equal to everything, a subclass of
``int`` with its own ``__eq__`` or a patched builtin cannot make such a line pass either.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from service.verifiers.base import InvalidGroundTruth

from .harness import plain
from .judge import approx_equal

_PLACEHOLDER = "_rlvr_operand_"
_HOST_CALLS = {"abs", "isclose", "math.isclose"}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class HostCheckError(Exception):
    """The host-side part of an assert raised (a TypeError in Python terms)."""


@dataclass(frozen=True, slots=True)
class AssertTest:
    source: str
    # Expressions the sandbox evaluates; None: the whole test runs in the sandbox.
    operands: tuple[str, ...] | None
    check: ast.expr | None
    # Names the test reads attributes of (``math`` in ``math.floor(x)``): where such a name is
    # a standard module's, test code gets that module, never the solution's value of it.
    namespaces: tuple[str, ...] = ()
    # Names the test takes from the solution (read, not bound by the test, not builtins): what
    # the program must define, so a usage example after the solution is not taken for it.
    reads: tuple[str, ...] = ()


_NOT_LITERAL = object()


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


class _NotLiftable(Exception):
    pass


def _lift(node: ast.expr, operands: list[str], source: str) -> ast.expr:
    # Literals become their values once, here: the host never parses them again.
    value = _literal(node)
    if value is not _NOT_LITERAL:
        return ast.Constant(value)
    if isinstance(node, ast.Compare):
        left = _lift(node.left, operands, source)
        comparators = [_lift(c, operands, source) for c in node.comparators]
        return ast.Compare(left, node.ops, comparators)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
        return ast.UnaryOp(node.op, _lift(node.operand, operands, source))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _lift(node.left, operands, source), _lift(node.right, operands, source)
        return ast.BinOp(left, node.op, right)
    if isinstance(node, ast.Call) and _call_name(node) in _HOST_CALLS:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg not in {"rel_tol", "abs_tol"} for k in node.keywords
        ):
            raise _NotLiftable
        args = [_lift(a, operands, source) for a in node.args]
        keywords = [ast.keyword(k.arg, _lift(k.value, operands, source)) for k in node.keywords]
        return ast.Call(node.func, args, keywords)
    # A leaf the sandbox evaluates: it must not compare anything itself, or a solution's
    # objects would decide the comparison.
    if any(isinstance(inner, (ast.Compare, ast.BoolOp)) for inner in ast.walk(node)):
        raise _NotLiftable
    operands.append(ast.get_source_segment(source, node) or ast.unparse(node))
    return ast.Name(f"{_PLACEHOLDER}{len(operands) - 1}", ast.Load())


@lru_cache(maxsize=4096)
def plan_assert(source: str) -> AssertTest:
    """Split an assert test into sandbox operands and a host check (InvalidGroundTruth if the
    test is not Python). Cached: every completion of a group shares its tests."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise InvalidGroundTruth(f"assert test does not parse: {source[:80]!r} ({exc})") from exc
    namespaces = _namespaces(tree)
    reads = _reads(tree, namespaces)
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
        operands: list[str] = []
        try:
            check = _lift(tree.body[0].test, operands, source)
        except _NotLiftable:
            return AssertTest(source, None, None, namespaces, reads)
        if operands:
            return AssertTest(source, tuple(operands), check, namespaces, reads)
    return AssertTest(source, None, None, namespaces, reads)


_BUILTIN_NAMES = frozenset(dir(builtins))


def _reads(tree: ast.AST, namespaces: tuple[str, ...]) -> tuple[str, ...]:
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    # ``math`` in ``math.isclose(...)`` is the standard module, whatever the solution binds.
    modules = {name for name in namespaces if name in sys.stdlib_module_names}
    return tuple(sorted(loaded - bound - modules - _BUILTIN_NAMES))


def _namespaces(tree: ast.AST) -> tuple[str, ...]:
    found = {
        node.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    }
    return tuple(sorted(found))


class Iterated:
    """A one-pass iterator the solution returned (a generator, ``map``, ``filter``), as the host
    holds it: the items the sandbox read from it and how the reading ended. Python's operators
    on it: ``x in it`` consumes it up to ``x`` (or raises what the iterator raised before
    ``x``), it is true, and it equals only itself."""

    __slots__ = ("_ending", "_items", "_message", "_next")

    def __init__(self, items: list[Any], ending: str, message: str) -> None:
        self._items, self._ending, self._message, self._next = items, ending, message, 0

    def __contains__(self, item: Any) -> bool:
        while self._next < len(self._items):
            value = self._items[self._next]
            self._next += 1
            if value is item or value == item:
                return True
        if self._ending == "raised":
            raise HostCheckError(f"the iterator raised {self._message}")
        if self._ending == "cut":
            # Python would read on; the sandbox read no further.
            raise HostCheckError(f"not among the first {len(self._items)} items of the iterator")
        return False

    def __repr__(self) -> str:
        return "<iterator>"


def _range(items: list[Any]) -> range:
    # The range whose items these are (a range crosses as its items, bounded as plain data).
    if any(type(item) is not int for item in items):
        raise ValueError("malformed range")
    start = items[0] if items else 0
    step = items[1] - start if len(items) > 1 else 1
    rebuilt = range(start, start + step * len(items), step or 1)
    if list(rebuilt) != items:
        raise ValueError("malformed range")
    return rebuilt


def _unique(pairs: list[Any]) -> dict[Any, Any]:
    rebuilt = dict(pairs)
    if len(rebuilt) != len(pairs):
        raise ValueError("malformed dict view")
    return rebuilt


_VIEWS: dict[str, Callable[[list[Any]], Any]] = {
    "range": _range,
    "keys": lambda items: _unique([(key, None) for key in items]).keys(),
    "values": lambda items: dict(enumerate(items)).values(),
    "items": lambda items: _unique(items).items(),
}


def decode_operand(data: Any) -> Any:
    """A lifted operand as the sandbox reported it: plain data, or an iterator a call of the
    solution returned (``harness.proxies.operand``), rebuilt from the host's own classes: a one
    pass iterator as ``Iterated``, a range or a dict view as itself. ValueError if malformed."""
    if type(data) is not list or not data or data[0] != plain.ITERATOR:
        return plain.decode(data)
    if len(data) != 5 or type(data[3]) is not str:
        raise ValueError("malformed iterator")
    kind, ending, message = data[1], data[2], data[3]
    items = plain.decode(data[4])
    if type(items) is not list:
        raise ValueError("malformed iterator")
    if kind == "once" and ending in ("end", "raised", "cut"):
        return Iterated(items, ending, message)
    if ending != "end" or type(kind) is not str or kind not in _VIEWS:
        raise ValueError("malformed iterator")
    try:
        return _VIEWS[kind](items)
    except TypeError as exc:  # an unhashable key, a pair that is not one
        raise ValueError(f"malformed {kind}: {exc}") from None


_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def evaluate(check: ast.expr, values: list[Any], tolerance: float | None) -> bool:
    """The host's half of a lifted assert, over plain data only. Its operators are Python's
    own: every value is one the host rebuilt from its own standard classes (``plain.decode``),
    so no code of the solution runs here, and a Fraction is a number to ``math.isclose`` and
    Counters add as Counters, as in Python. What Python refuses (a TypeError) is the test's
    runtime error."""

    def run(node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id.startswith(_PLACEHOLDER):
            return values[int(node.id[len(_PLACEHOLDER) :])]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Compare):
            left = run(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = run(right_node)
                if isinstance(op, (ast.Eq, ast.NotEq)):
                    same = approx_equal(left, right, tolerance)
                    holds = same if isinstance(op, ast.Eq) else not same
                else:
                    holds = bool(_COMPARE[type(op)](left, right))
                if not holds:
                    return False
                left = right
            return True
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](run(node.operand))
        if isinstance(node, ast.BinOp):
            left, right = run(node.left), run(node.right)
            return left + right if isinstance(node.op, ast.Add) else left - right
        if isinstance(node, ast.Call):
            args = [run(a) for a in node.args]
            keywords = {k.arg: run(k.value) for k in node.keywords if k.arg}
            function = abs if _call_name(node) == "abs" else math.isclose
            return function(*args, **keywords)
        raise HostCheckError(f"unsupported expression {ast.dump(node)[:80]}")

    try:
        return bool(run(check))
    except HostCheckError:
        raise
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise HostCheckError(f"{type(exc).__name__}: {exc}") from exc
