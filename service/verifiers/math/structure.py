"""Top-level shape of a normalised answer: lists, sets, tuples, relations, matrices, leaves.

Only the outer structure is read here, by bracket-depth scanning; each leaf (a single
expression) is later handed to the fast number path or to latex2sympy. Splitting ourselves keeps
``(1,2)`` vs ``(2,1)`` or ``x<2 or x>3`` away from the slow ANTLR parser and lets us decide
ordered/unordered semantics explicitly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalize import clean_piece
from .units import strip_units

MAX_NESTING = 12
# Longer lists are compared as opaque strings: truncating them could make unequal lists equal.
MAX_ITEMS = 32
MAX_STRUCTURE_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Leaf:
    """A single expression, number or word."""

    text: str


@dataclass(frozen=True, slots=True)
class Junction:
    """Pieces joined at top level by commas, ``or``/``and`` or ``\\cup``."""

    items: tuple[Node, ...]
    seps: tuple[str, ...]  # "comma", "or", "and", "cup"


@dataclass(frozen=True, slots=True)
class Bracket:
    """``(a, b)``, ``[a, b)``, ``(a, b, c)``: tuple or interval, decided when comparing."""

    opener: str
    closer: str
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class SetNode:
    """``\\{a, b\\}`` or ``\\emptyset``."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Relation:
    """A chain ``t0 op0 t1 op1 t2``; ops are ``=``, ``<``, ``>``, ``\\leq``, ``\\geq``, ..."""

    terms: tuple[Node, ...]
    ops: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MatrixNode:
    """A matrix or vector written with a matrix environment."""

    rows: tuple[tuple[Node, ...], ...]


Node = Leaf | Junction | Bracket | SetNode | Relation | MatrixNode

_SEPARATOR = re.compile(
    r",|;|(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])|\\(?:cup|lor|land|vee|wedge)(?![A-Za-z])"
)
_RELATION = re.compile(r"\\leq|\\geq|\\neq|\\approx|\\in(?![A-Za-z])|<|>|=")
_MATRIX = re.compile(
    r"^\\begin\{(pmatrix|bmatrix|Bmatrix|matrix|smallmatrix|array)\}(?:\{[^{}]*\})?"
    r"(.*)\\end\{\1\}$",
    re.DOTALL,
)
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?$")
# Set-builder notation: "\\{x \\mid x > 2\\}", "\\{x \\in \\mathbb{R} : x \\neq 0\\}".
_SET_BUILDER = re.compile(
    r"^\s*[A-Za-z](?:\s*\\in\s*\\mathbb\s*\{?[RZNQ]\}?)?\s*(?:\\mid|\||:)\s*(?P<cond>.+)$",
    re.DOTALL,
)
_PM = re.compile(r"\\pm(?![A-Za-z])|\\mp(?![A-Za-z])")
_SEP_KIND = {",": "comma", ";": "comma", "or": "or", "and": "and"}


def depth_profile(text: str) -> list[int]:
    """Nesting depth at every character; a bracket itself sits at its outer depth."""
    depths = [0] * len(text)
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "{":
                depths[i] = depths[i + 1] = depth
                depth += 1
                i += 2
                continue
            if nxt == "}" or text.startswith("end{", i + 1):
                depth = max(depth - 1, 0)
            depths[i] = depths[i + 1] = depth
            if text.startswith("begin{", i + 1):
                depth += 1
            i += 2
            continue
        if ch in "{([":
            depths[i] = depth
            depth += 1
        elif ch in "})]":
            depth = max(depth - 1, 0)
            depths[i] = depth
        else:
            depths[i] = depth
        i += 1
    return depths


def _top_matches(pattern: re.Pattern[str], text: str, depths: list[int]) -> list[re.Match[str]]:
    return [m for m in pattern.finditer(text) if depths[m.start()] == 0]


def _split(text: str, matches: list[re.Match[str]]) -> list[str]:
    pieces = []
    start = 0
    for m in matches:
        pieces.append(text[start : m.start()])
        start = m.end()
    pieces.append(text[start:])
    return pieces


def split_top_level(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``text`` cut at the matches of ``pattern`` outside every bracket."""
    return _split(text, _top_matches(pattern, text, depth_profile(text)))


def _enclosing(text: str, depths: list[int]) -> tuple[str, str, str] | None:
    """(opener, closer, inner) when one bracket pair wraps the whole text."""
    if text.startswith("\\{") and text.endswith("\\}"):
        opener, closer, inner_start, inner_end = "\\{", "\\}", 2, len(text) - 2
    elif text[:1] in "([" and text[-1:] in ")]":
        opener, closer, inner_start, inner_end = text[0], text[-1], 1, len(text) - 1
    else:
        return None
    # The opening bracket must close only at the very end: "(a)(b)" is not wrapped.
    if inner_start > inner_end or any(d == 0 for d in depths[inner_start:inner_end]):
        return None
    return opener, closer, text[inner_start:inner_end]


def parse_structure(text: str, nesting: int = 0) -> Node | None:
    """Read the outer structure of a normalised answer string."""
    s = clean_piece(text)
    if not s:
        return None
    if nesting > MAX_NESTING or len(s) > MAX_STRUCTURE_CHARS:
        return Leaf(s)
    m = _MATRIX.match(s)
    if m and "\\begin{" not in m.group(2) and "\\end{" not in m.group(2):
        return _parse_matrix(m.group(2), nesting)
    depths = depth_profile(s)
    if s[0] == "{" and s[-1] == "}" and all(d > 0 for d in depths[1:-1]):
        # A plain brace group is only TeX grouping: "{1, 3}" reads as "1, 3".
        return parse_structure(s[1:-1], nesting + 1)
    seps = _top_matches(_SEPARATOR, s, depths)
    # "32,348 \\text{ dollars}" is one number with a unit, not the list "32, 348".
    if seps and not _THOUSANDS.match(s) and not _THOUSANDS.match(strip_units(s)):
        pieces = _split(s, seps)
        if len(pieces) > MAX_ITEMS:
            return Leaf(s)
        items = [parse_structure(p, nesting + 1) for p in pieces]
        kept = tuple(item for item in items if item is not None)
        kinds = tuple(_SEP_KIND.get(sep.group(0), "cup") for sep in seps)
        if len(kept) == 1:
            return kept[0]
        if kept:
            return Junction(kept, kinds)
        return None
    rels = _top_matches(_RELATION, s, depths)
    if rels:
        pieces = _split(s, rels)
        terms = [parse_structure(p, nesting + 1) for p in pieces]
        if all(t is not None for t in terms):
            return Relation(
                tuple(t for t in terms if t is not None), tuple(r.group(0) for r in rels)
            )
        return Leaf(s)
    wrapped = _enclosing(s, depths)
    if wrapped:
        return _parse_bracket(*wrapped, nesting)
    if s == "\\emptyset":
        return SetNode(())
    pm = _top_matches(_PM, s, depths)
    if len(pm) == 1:
        left, right = s[: pm[0].start()].strip(), s[pm[0].end() :].strip()
        if right:
            plus = f"{left}+{right}" if left else right
            minus = f"{left}-({right})" if left else f"-({right})"
            return Junction((Leaf(plus), Leaf(minus)), ("or",))
    inner_pm = list(_PM.finditer(s)) if not pm else []
    if len(inner_pm) == 1:
        # "\\frac{-1 \\pm \\sqrt{5}}{2}": the sign inside a term gives two values.
        at = inner_pm[0]
        signs = ("+", "-") if at.group(0).startswith("\\pm") else ("-", "+")
        values = tuple(Leaf(s[: at.start()] + sign + s[at.end() :]) for sign in signs)
        return Junction(values, ("or",))
    return Leaf(s)


def _parse_bracket(opener: str, closer: str, inner: str, nesting: int) -> Node | None:
    depths = depth_profile(inner)
    if opener == "\\{":
        builder = _SET_BUILDER.match(inner)
        cond = builder.group("cond") if builder else ""
        if builder and depths[builder.start("cond")] == 0 and _RELATION.search(cond):
            # "\\{x \\mid x > 2\\}" is the set its condition describes: "x > 2".
            return parse_structure(cond, nesting + 1)
    commas = [m for m in _top_matches(_SEPARATOR, inner, depths) if m.group(0) in ",;"]
    pieces = _split(inner, commas) if commas else [inner]
    if len(pieces) > MAX_ITEMS:
        return Leaf(f"{opener}{inner}{closer}")
    items = tuple(parse_structure(p, nesting + 1) for p in pieces)
    if any(item is None for item in items):
        if opener == "\\{" and not inner.strip():
            return SetNode(())
        return Leaf(f"{opener}{inner}{closer}")
    kept = tuple(item for item in items if item is not None)
    if opener == "\\{":
        return SetNode(kept)
    if len(kept) == 1:
        # "(5)" is 5 and "[matrix]" the matrix; "[x]" stays a leaf so latex2sympy can read it.
        if (opener == "(" and closer == ")") or isinstance(kept[0], MatrixNode):
            return kept[0]
        return Leaf(f"{opener}{inner}{closer}")
    return Bracket(opener, closer, kept)


def _parse_matrix(body: str, nesting: int) -> Node | None:
    rows: list[tuple[Node, ...]] = []
    row_texts = [r for r in body.split("\\\\") if r.strip()]
    if len(row_texts) > MAX_ITEMS:
        return None
    for row_text in row_texts:
        cell_texts = row_text.split("&")
        if len(cell_texts) > MAX_ITEMS:
            return None
        cells = [parse_structure(c, nesting + 1) for c in cell_texts]
        if any(c is None for c in cells):
            return None
        rows.append(tuple(c for c in cells if c is not None))
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return MatrixNode(tuple(rows))
