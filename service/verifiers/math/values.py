"""Leaf values: what one leaf of an answer means, and exact comparison of two leaves.

A leaf resolves, cheapest first, to an exact number (no sympy), a word (case/space-insensitive
text), or a sympy expression. Both resolution and leaf-vs-leaf comparison are memoised on the
leaf strings, because the 16 completions of one prompt share a ground truth and often repeat
the same answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from .digits import agrees_to_digits
from .evidence import SIGNIFICANT_DIGITS, UNITS_DIFFER, note
from .memo import memoize
from .normalize import text_canon, unwrap_text_commands
from .numbers import ExactNumber, from_fraction, parse_number, percent_readings, same_number
from .parse import ParsedExpr, has_decimal_literal, parse_latex
from .symbolic import close_constants, expr_match, numeric_value, rational_expr, scaled
from .units import split_units, unit_key, units_differ

ValueKind = Literal["number", "based", "text", "expr", "bad"]

_WORDS = re.compile(r"^[A-Za-z][A-Za-z\s'\-.]*$")
_LETTER_RUN = re.compile(r"[A-Za-z]+")


def _longest_letter_run(text: str) -> int:
    """Length of the longest run of letters (``p - q`` -> 1, ``well-known`` -> 5)."""
    return max((len(m) for m in _LETTER_RUN.findall(text)), default=0)


_SYMBOL_NAME = re.compile(
    r"^(?:[A-Za-z]{1,3}|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?'*$|^[A-Za-z]\([A-Za-z]\)$"
)
_NOT_SYMBOLS = frozenset({"\\infty", "\\pi", "\\emptyset", "e", "i"})
_SUBSCRIPT = re.compile(r"_\{[^{}]*\}|_\w")
_TARGET_CHARS = re.compile(r"^[A-Za-z\\{}()|:/,' ]+$")
_HUNDREDTH = Fraction(1, 100)
# "1011_2", "2A_{16}": digits written in a base (at least one decimal digit, so "x_2" stays a
# variable).
_BASED = re.compile(r"^(?=[0-9A-Za-z]*\d)([0-9A-Za-z]+)_\{?(\d{1,2})\}?$")
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# "\\angle ABC" names the angle at B: "\\angle CBA" is the same angle, "\\angle ACB" another one
# (latex2sympy reads all three as the product A B C times a symbol "angle").
_ANGLE_NAME = re.compile(
    r"^(?:m\s*)?\\(?:angle|measuredangle)\s*(\{)?\s*([A-Z])\s*([A-Z])\s*([A-Z])\s*(?(1)\})$"
)
# The digits of a decimal literal's significand: "0.08330" has 4 significant digits.
_SIGNIFICAND = re.compile(
    r"^[+-]?(?P<int>\d{1,3}(?:,\d{3})+|\d*)\.(?P<frac>\d+)(?:$|[eE]|\\times|\\cdot|\*)"
)


@dataclass(frozen=True, slots=True)
class Value:
    """A resolved leaf."""

    kind: ValueKind
    text: str
    number: ExactNumber | None = None
    parsed: ParsedExpr | None = None
    percent: bool = False
    # The unit the leaf names, when the unit table knows it (units.unit_key).
    unit: str | None = None


def is_symbol_name(text: str) -> bool:
    """True for a bare variable name such as ``x``, ``a_1`` or ``\\theta``."""
    return bool(_SYMBOL_NAME.match(text)) and text not in _NOT_SYMBOLS


def is_assignment_target(text: str) -> bool:
    """A left-hand side that names what is asked (``x``, ``f(x)``, ``AB``, ``a:b``, ``x_1``)."""
    core = _SUBSCRIPT.sub("", text)
    if len(core) > 40 or not any(ch.isalpha() for ch in core):
        return False
    core = core.replace("\\frac", "").replace("\\cdot", "")
    return bool(_TARGET_CHARS.match(core)) and text not in _NOT_SYMBOLS


def _number_from_expr(parsed: ParsedExpr, percent: bool) -> ExactNumber | None:
    expr = parsed.expr
    if not (parsed.constant and getattr(expr, "is_Rational", False)):
        return None
    value = from_fraction(Fraction(int(expr.p), int(expr.q)), percent)
    return value


def _based_digits(text: str) -> str | None:
    """``1011_2`` -> ``1011_2`` in canonical form (upper case, no leading zeros), else None."""
    m = _BASED.match(text)
    if m is None:
        return None
    base = int(m.group(2))
    digits = m.group(1).upper().lstrip("0") or "0"
    if not 2 <= base <= len(_DIGITS) or any(_DIGITS.index(d) >= base for d in digits):
        return None
    return f"{digits}_{base}"


def _letters_only(value: Value) -> str | None:
    """The text key of an expression written like words (``a-b`` against ``\\text{a-b}``)."""
    if value.kind == "expr" and _WORDS.match(value.text):
        return text_canon(value.text, hyphens=True)
    return None


def _same_based(based: Value, other: Value) -> bool:
    """A number in a base equals the same digits in the same base, or the bare digits (the
    question names the base), never the same digits in another base."""
    if other.kind == "based":
        return based.text == other.text
    digits = based.text.rsplit("_", 1)[0]
    bare = other.text.upper().lstrip("0") or "0"
    return other.kind in ("number", "expr") and bare.isalnum() and bare == digits


@memoize(maxsize=8192, max_chars=2000)
def resolve_leaf(text: str, max_length: int) -> Value:
    """Resolve one leaf string to a number, a word, or a sympy expression."""
    core, labels = split_units(text)
    unit = unit_key(labels) if labels else None
    number = parse_number(core)
    if number is not None:
        return Value("number", core, number=number, unit=unit)
    based = _based_digits(core)
    if based is not None:
        return Value("based", based)
    if invalid := _BASED.match(core):
        # Digits the base does not have (``5_3``, ``19_8``): no number, and never the bare
        # digits (the parser would read the subscript away).
        return Value("text", f"{invalid.group(1).upper()}_{int(invalid.group(2))}")
    if angle := _ANGLE_NAME.match(core):
        _, first, vertex, last = angle.groups()
        return Value("text", f"angle {vertex} {min(first, last)}{max(first, last)}")
    had_text = "\\text{" in core
    plain = unwrap_text_commands(core).strip() if had_text else core
    if had_text:
        # "\\text{8 inches}": the unit is inside the text command, so strip it once unwrapped.
        inner, inner_labels = split_units(plain)
        number = parse_number(plain) or parse_number(inner)
        if number is not None:
            unit = unit or (unit_key(inner_labels) if inner_labels else None)
            return Value("number", core, number=number, unit=unit)
    # Bare single letters joined by "-" or spaces are an expression (``p - q``), not words.
    words = had_text or _longest_letter_run(plain) >= 2
    if _WORDS.match(plain) and sum(ch.isalpha() for ch in plain) >= 2 and words:
        return Value("text", text_canon(plain, hyphens=True))
    percent = core.endswith("%")
    body = core[:-1].rstrip() if percent else core
    parsed = parse_latex(body, max_length)
    if parsed is None:
        return Value("bad", core)
    exact = _number_from_expr(parsed, percent)
    if exact is not None:
        return Value("number", core, number=exact, unit=unit)
    return Value("expr", core, parsed=parsed, percent=percent, unit=unit)


def _expr_readings(value: Value) -> list[ParsedExpr]:
    if value.kind == "number" and value.number is not None:
        exact = not has_decimal_literal(value.text)
        out = []
        for reading in percent_readings(value.number):
            if reading.frac is not None:
                out.append(rational_expr(reading.frac, exact))
        return out
    if value.parsed is None:
        return []
    if value.percent:
        return [value.parsed, scaled(value.parsed, _HUNDREDTH)]
    return [value.parsed]


def significant_digits(text: str) -> int | None:
    """Significant digits written in a decimal literal (None when it has no decimal point)."""
    m = _SIGNIFICAND.match(text.strip())
    if m is None:
        return None
    digits = (m.group("int").replace(",", "") + m.group("frac")).lstrip("0")
    return len(digits)


def _decimal_approximates(approx: Value, exact: Value, digits: int) -> bool:
    """``approx`` is a decimal of >= ``digits`` significant digits that agrees with ``exact``
    to within one unit in the exact value's ``digits``-th significant digit."""
    number = approx.number
    written = significant_digits(approx.text) if approx.kind == "number" else None
    if written is None or written < digits or number is None or number.percent:
        return False
    if number.frac is None or number.inf:
        return False
    if exact.kind == "number" and exact.number is not None:
        other = exact.number
        if other.percent or other.inf or other.frac is None:
            return False
        return agrees_to_digits(other.frac, number.frac, digits) is True
    parsed = exact.parsed
    if exact.kind != "expr" or parsed is None or exact.percent:
        return False
    if not (parsed.constant and parsed.exact):
        return False
    return agrees_to_digits(parsed.expr, number.frac, digits) is True


def values_match(g: Value, a: Value, rel_tol: float | None, digits: int | None) -> str | None:
    """How two resolved leaves are equal (exactly, or by a configured tolerance), or None."""
    if g.kind == "bad" or a.kind == "bad":
        same = g.kind == a.kind and g.text == a.text and bool(g.text)
        return "string" if same else None
    if g.kind == "text" or a.kind == "text":
        texts = [v.text if v.kind == "text" else _letters_only(v) for v in (g, a)]
        return "text" if texts[0] is not None and texts[0] == texts[1] else None
    if g.kind == "based" or a.kind == "based":
        based, other = (g, a) if g.kind == "based" else (a, g)
        return "string" if _same_based(based, other) else None
    if g.number is not None and a.number is not None:
        tol = Fraction(str(rel_tol)) if rel_tol else None
        if same_number(g.number, a.number, tol):
            return "exact-number"
    else:
        for x in _expr_readings(g):
            for y in _expr_readings(a):
                method = expr_match(x, y)
                if method is not None:
                    return method
                if rel_tol and x.constant and y.constant and close_constants(x, y, rel_tol):
                    return "rel_tol"
    if digits and (_decimal_approximates(a, g, digits) or _decimal_approximates(g, a, digits)):
        return SIGNIFICANT_DIGITS
    return None


@memoize(maxsize=16384, max_chars=2000)
def _leaf_match(
    g_text: str, a_text: str, max_length: int, rel_tol: float | None, digits: int | None
) -> str | None:
    if g_text == a_text:
        return "string"
    g, a = resolve_leaf(g_text, max_length), resolve_leaf(a_text, max_length)
    method = values_match(g, a, rel_tol, digits)
    if method is not None and units_differ(g.unit, a.unit):
        return UNITS_DIFFER  # the same number of another unit: 5 g is not 5 kg
    return method


def leaves_equal(
    g_text: str, a_text: str, max_length: int, rel_tol: float | None, digits: int | None = None
) -> bool:
    """Memoised leaf comparison on the normalised leaf strings (notes how it matched, or
    that only the units differed)."""
    method = _leaf_match(g_text, a_text, max_length, rel_tol, digits)
    note(method)
    return method is not None and method != UNITS_DIFFER


def approx_leaf(text: str, max_length: int) -> float | None:
    """Float position of a constant leaf (to order interval ends); None if not a real constant."""
    value = resolve_leaf(text, max_length)
    if value.kind == "number" and value.number is not None:
        n = value.number
        if n.inf:
            return float(n.inf) * float("inf")
        if n.key is not None:
            sign, digits, exp = n.key
            head = digits[:17]
            return sign * float(f"{head}e{exp + len(digits) - len(head)}")
        try:
            return float(n.frac) if n.frac is not None else None
        except OverflowError:
            return None
    if value.kind == "expr" and value.parsed is not None:
        return numeric_value(value.parsed)
    return None


def leaf_expr(text: str, max_length: int) -> ParsedExpr | None:
    """The leaf as a sympy expression (numbers become exact rationals), if it has one."""
    value = resolve_leaf(text, max_length)
    if value.kind == "number" and value.number is not None and not value.number.percent:
        frac = value.number.frac
        return rational_expr(frac) if frac is not None and not value.number.inf else None
    if value.kind == "expr" and not value.percent:
        return value.parsed
    return None


def leaf_matrix(text: str, max_length: int) -> list[list[ParsedExpr]] | None:
    """Rows of a leaf that latex2sympy evaluated to a matrix (e.g. a matrix product)."""
    value = resolve_leaf(text, max_length)
    parsed = value.parsed
    if value.kind != "expr" or parsed is None or not getattr(parsed.expr, "is_Matrix", False):
        return None
    matrix = parsed.expr
    return [
        [
            ParsedExpr(matrix[r, c], parsed.evaluable, parsed.expandable, True, parsed.nodes)
            for c in range(matrix.cols)
        ]
        for r in range(matrix.rows)
    ]
