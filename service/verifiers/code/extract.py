"""Which program does a completion hold? The last fenced block of the language wins.

Two exceptions, for answers that would otherwise fail on their layout rather than their code: a
block indented as a whole (a fence inside a list item) is dedented, and where the tests name
what the program must define (function mode: the function or ``Solution``; assert mode: the
names the assert lines take from the solution) a last block that defines none of them (a usage
example after the solution) gives way to the last block that defines one."""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Collection
from dataclasses import dataclass

from .languages import Language

# A fence opens at the start of a line with ``` (or ~~~) and an optional info string; a
# final fence left open (a completion cut at the length limit) runs to the end. No quantifier
# gives back what it took (the first way is the only one that can match): an opening line
# without a newline after it, 1 MB of backticks or spaces, was tried in every split, for minutes.
_FENCE = re.compile(
    r"^[ \t]*+(?P<fence>```++|~~~++)[ \t]*+(?P<tag>[^\s`]*+)[^\n]*+\n(?P<body>.*?)"
    r"(?:^[ \t]*+(?P=fence)[ \t]*+$|\Z)",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Extracted:
    program: str
    source: str  # "fenced block", "other fenced block" or "whole completion"


def _blocks(completion: str) -> list[tuple[str, str]]:
    return [(m.group("tag").lower(), m.group("body")) for m in _FENCE.finditer(completion)]


def _is_only_code(text: str, language: Language) -> bool:
    stripped = text.strip()
    if not stripped or not any(marker in stripped for marker in language.code_markers):
        return False
    if language.name == "python":
        try:
            ast.parse(stripped)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
    return True


def _binds(program: str, wanted: frozenset[str]) -> bool | None:
    """Whether a Python program binds one of ``wanted`` anywhere in it (a nested definition
    counts too: only a block that surely lacks them gives way); None when that cannot be told
    (it does not parse, or it imports with ``*``)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and any(a.name == "*" for a in statement.names):
            return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = node.name
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound = node.id
        elif isinstance(node, ast.alias):
            bound = (node.asname or node.name).split(".")[0]
        else:
            continue
        if bound in wanted:
            return True
    return False


def _entry_block(tagged: list[str], wanted: frozenset[str]) -> str:
    """The last block, unless it surely lacks all of ``wanted`` and an earlier block defines
    one of them."""
    last = textwrap.dedent(tagged[-1])
    if _binds(last, wanted) is not False:
        return last
    for body in reversed(tagged[:-1]):
        earlier = textwrap.dedent(body)
        if _binds(earlier, wanted):
            return earlier
    return last


def extract_program(
    completion: str,
    language: Language,
    entry: str | None = None,
    reads: Collection[str] = (),
) -> Extracted | None:
    """Last ```<language> block, else the last fenced block, else the completion if it is
    only code; None when there is no program. ``entry``: the function a Python program must
    define (function mode; ``Solution`` serves too); ``reads``: names the tests take from the
    program (assert mode), one of which it must define."""
    blocks = _blocks(completion)
    tagged = [body for tag, body in blocks if tag in language.fence_tags]
    wanted = frozenset({entry, "Solution"} if entry is not None else reads)
    if tagged and tagged[-1].strip():
        if wanted and language.name == "python":
            return Extracted(_entry_block(tagged, wanted), "fenced block")
        return Extracted(textwrap.dedent(tagged[-1]), "fenced block")
    if blocks and blocks[-1][1].strip():
        return Extracted(textwrap.dedent(blocks[-1][1]), "other fenced block")
    if not blocks and _is_only_code(completion, language):
        return Extracted(completion.strip() + "\n", "whole completion")
    return None
