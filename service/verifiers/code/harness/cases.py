"""One test's code, run by the driver against the solution's proxies; its report.

- ``function``: the solution's entry point with the test's JSON arguments; the value as
  strict JSON data (``plain.to_json``) in plain data's wire form (ints of any size as hex:
  JSON writers refuse ints past 4300 digits), compared with the expected value on the host.
- ``values``: the operands of a lifted assert line (an iterator the solution returned as its
  items, ``proxies.operand``); the host finishes the comparison.
- ``exec``: a whole test (loops, helpers, several statements) in a fresh namespace whose
  names of the solution are proxies; it passes only if it runs to its end.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

from . import nodes, plain
from .proxies import Session, operand


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
    exec(codes[0], namespace(session, codes, namespaces))
    return {"done": True}
