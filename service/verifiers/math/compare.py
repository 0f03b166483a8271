"""Equivalence of a ground truth and an answer, both read by ``semantics.interpret``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .clock import clocks_same
from .digits import agrees_to_digits
from .evidence import NUMERIC, SIGNIFICANT_DIGITS, UNITS_DIFFER, collect, deciding
from .parse import has_decimal_literal
from .semantics import (
    Ctx,
    Equation,
    Inequality,
    Intervals,
    Items,
    MatrixSem,
    Opaque,
    Pair,
    Scalar,
    Sem,
    as_intervals,
    ends_equal,
    var_key,
)
from .structure import split_top_level
from .symbolic import equations_equal, exprs_equal, inequalities_equal
from .values import (
    is_symbol_name,
    leaf_expr,
    leaf_matrix,
    leaves_equal,
    resolve_leaf,
    significant_digits,
)

MAX_DEPTH = 10
_MAX_RATIO_TERMS = 20
_INDEXED_NAME = re.compile(r"^([A-Za-z])_\{?\d\}?$")
_COLON = re.compile(":")
_EQUIVALENT = "equivalent to the ground truth"
_REASONS = {
    NUMERIC: "equal by a high-precision interval check (mpmath) within a separation bound",
    SIGNIFICANT_DIGITS: "a decimal that agrees with the exact value to the configured "
    "min_significant_digits",
}
_UNITS_REASON = "a different unit from the ground truth's (units are not converted)"
_METHOD_BY_KIND = {
    "number": "exact-number",
    "based": "string",
    "text": "text",
    "expr": "symbolic",
    "bad": "string",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """Result of comparing one answer with the ground truth."""

    correct: bool
    method: str
    reason: str


def _ordered_same(gs: tuple[Sem, ...], as_: tuple[Sem, ...], ctx: Ctx, depth: int) -> bool:
    return len(gs) == len(as_) and all(
        same(g, a, ctx, depth + 1) for g, a in zip(gs, as_, strict=True)
    )


def distinct(items: tuple[Sem, ...], ctx: Ctx, depth: int = 0) -> tuple[Sem, ...]:
    """Items with repeats (equal values) removed, first occurrence kept."""
    out: list[Sem] = []
    for item in items:
        if not any(same(kept, item, ctx, depth + 1) for kept in out):
            out.append(item)
    return tuple(out)


def _unordered_same(gs: tuple[Sem, ...], as_: tuple[Sem, ...], ctx: Ctx, depth: int) -> bool:
    gs, as_ = distinct(gs, ctx, depth), distinct(as_, ctx, depth)
    if len(gs) != len(as_):
        return False
    remaining = list(as_)
    for g in gs:
        hit = next((i for i, a in enumerate(remaining) if same(g, a, ctx, depth + 1)), None)
        if hit is None:
            return False
        remaining.pop(hit)
    return True


def _vector(m: MatrixSem) -> tuple[Sem, ...] | None:
    if len(m.rows) == 1:
        return m.rows[0]
    if all(len(row) == 1 for row in m.rows):
        return tuple(row[0] for row in m.rows)
    return None


def _as_sequence(a: Sem) -> Items | None:
    """An answer read as an ordered sequence: tuple, pair, vector or bare list."""
    if isinstance(a, Items) and not a.explicit_set:
        return a
    if isinstance(a, Pair) and (a.opener, a.closer) in (("(", ")"), ("[", "]")):
        return Items((a.first, a.second), True, False)
    if isinstance(a, MatrixSem):
        vec = _vector(a)
        return Items(vec, True, False) if vec is not None else None
    return None


def _assignments(items: Items) -> tuple[tuple[str, ...], tuple[Sem, ...]] | None:
    if items.items and all(isinstance(i, Equation) and i.var for i in items.items):
        eqs = [i for i in items.items if isinstance(i, Equation)]
        return tuple(var_key(str(e.var)) for e in eqs), tuple(e.rhs for e in eqs)
    return None


def _values_same(
    g_vals: tuple[Sem, ...], a_vals: tuple[Sem, ...], ordered: bool, ctx: Ctx, depth: int
) -> bool:
    if ordered:
        return _ordered_same(g_vals, a_vals, ctx, depth)
    return _unordered_same(g_vals, a_vals, ctx, depth)


def _indexed_roots(names: tuple[str, ...]) -> bool:
    """``x_1, x_2``: one letter with numeric indices (the roots of one unknown)."""
    found = [_INDEXED_NAME.match(name) for name in names]
    return all(found) and len({m.group(1) for m in found if m}) == 1


def _items_same(g: Items, a: Sem, ctx: Ctx, depth: int) -> bool:
    if isinstance(a, Intervals):
        gi = as_intervals(g, ctx)
        return gi is not None and _intervals_same(gi, a, ctx)
    seq = a if isinstance(a, Items) else _as_sequence(a)
    if seq is None:
        return False
    g_asg, a_asg = _assignments(g), _assignments(seq)
    if g_asg and a_asg:
        g_vars, g_vals = g_asg
        a_vars, a_vals = a_asg
        if len(set(g_vars)) == len(g_vars) and len(set(a_vars)) == len(a_vars):
            if set(g_vars) != set(a_vars):
                return False
            a_map = dict(zip(a_vars, a_vals, strict=True))
            return all(
                same(gv, a_map[var], ctx, depth + 1) for var, gv in zip(g_vars, g_vals, strict=True)
            )
        if set(g_vars) != set(a_vars):
            return False
        return _unordered_same(g_vals, a_vals, ctx, depth)
    if g_asg or a_asg:
        # "x=1, y=2" against "(1, 2)": values in the order written; one repeated variable
        # ("x=1, x=2") is a list of solutions and stays unordered.
        names, vals = g_asg or a_asg or ((), ())
        plain = seq.items if g_asg else g.items
        g_vals, a_vals = (vals, plain) if g_asg else (plain, vals)
        # "x_1 = 1, x_2 = 2" names the roots of one unknown: a list of solutions, like "x=1, x=2".
        distinct_names = len(set(names)) == len(names) and not _indexed_roots(names)
        other = seq if g_asg else g
        if other.explicit_set and distinct_names:
            return False
        return _values_same(g_vals, a_vals, distinct_names or other.ordered, ctx, depth)
    if (g.explicit_set and seq.ordered) or (seq.explicit_set and g.ordered):
        return False
    return _values_same(g.items, seq.items, g.ordered or seq.ordered, ctx, depth)


def _pair_same(g: Pair, a: Sem, ctx: Ctx, depth: int) -> bool:
    if isinstance(a, Pair):
        return (
            (g.opener, g.closer) == (a.opener, a.closer)
            and same(g.first, a.first, ctx, depth + 1)
            and same(g.second, a.second, ctx, depth + 1)
        )
    ai = as_intervals(a, ctx)
    if ai is not None and not isinstance(a, Items):
        gi = as_intervals(g, ctx)
        return gi is not None and _intervals_same(gi, ai, ctx)
    if (g.opener, g.closer) not in (("(", ")"), ("[", "]")):
        return False
    seq = _as_sequence(a)
    if seq is None or not (seq.ordered or not seq.explicit_set):
        return False
    asg = _assignments(seq)
    vals = asg[1] if asg and len(set(asg[0])) == len(asg[0]) else seq.items
    return _ordered_same((g.first, g.second), vals, ctx, depth)


def _intervals_same(g: Intervals, a: Intervals, ctx: Ctx) -> bool:
    return len(g.parts) == len(a.parts) and all(
        ends_equal(glo, alo, ctx) and ends_equal(ghi, ahi, ctx)
        for (glo, ghi), (alo, ahi) in zip(g.parts, a.parts, strict=True)
    )


def _matrix_vs_evaluated(g: MatrixSem, a: Scalar, ctx: Ctx) -> bool:
    rows = leaf_matrix(a.text, ctx.max_length)
    if rows is None or len(rows) != len(g.rows):
        return False
    for g_row, a_row in zip(g.rows, rows, strict=True):
        if len(g_row) != len(a_row):
            return False
        for cell, value in zip(g_row, a_row, strict=True):
            expected = leaf_expr(cell.text, ctx.max_length) if isinstance(cell, Scalar) else None
            if expected is None or not exprs_equal(expected, value):
                return False
    return True


def _matrix_same(g: MatrixSem, a: Sem, ctx: Ctx, depth: int) -> bool:
    if isinstance(a, Scalar):
        return _matrix_vs_evaluated(g, a, ctx)
    if isinstance(a, MatrixSem):
        if len(g.rows) != len(a.rows):
            return False
        return all(_ordered_same(gr, ar, ctx, depth) for gr, ar in zip(g.rows, a.rows, strict=True))
    vec = _vector(g)
    seq = _as_sequence(a)
    return vec is not None and seq is not None and _ordered_same(vec, seq.items, ctx, depth)


def _equations_same(g: Equation, a: Equation, ctx: Ctx, depth: int) -> bool:
    if g.var is not None and a.var is not None and var_key(g.var) == var_key(a.var):
        return same(g.rhs, a.rhs, ctx, depth + 1)
    if not (isinstance(g.rhs, Scalar) and isinstance(a.rhs, Scalar)):
        return False
    parts = [leaf_expr(t, ctx.max_length) for t in (g.lhs, g.rhs.text, a.lhs, a.rhs.text)]
    if any(p is None for p in parts):
        return False
    l1, r1, l2, r2 = parts
    assert l1 is not None and r1 is not None and l2 is not None and r2 is not None
    return equations_equal(l1, r1, l2, r2)


def _oriented(ineq: Inequality, ctx: Ctx) -> tuple[object, object, bool] | None:
    lhs, rhs = leaf_expr(ineq.lhs, ctx.max_length), leaf_expr(ineq.rhs, ctx.max_length)
    if lhs is None or rhs is None:
        return None
    strict = ineq.op in ("<", ">")
    return (lhs, rhs, strict) if ineq.op in (">", "\\geq") else (rhs, lhs, strict)


def _answer_values(a: Equation) -> tuple[Sem, ...]:
    """What an equation answers when a plain value is expected: its last right-hand side."""
    if isinstance(a.rhs, Scalar) and is_symbol_name(a.rhs.text) and a.var is None:
        return (Scalar(a.lhs),)
    return (a.rhs,)


def _ratio_terms(text: str) -> list[str] | None:
    """``1:2:3`` -> ``["1", "2", "3"]``: a ratio of three or more terms, else None."""
    if text.count(":") < 2 or "\\{" in text or "\\mid" in text:
        return None
    terms = [term.strip() for term in split_top_level(text, _COLON)]
    return terms if len(terms) >= 3 and all(terms) else None


def _ratios_same(g_text: str, a_text: str, ctx: Ctx) -> bool | None:
    """Ratios of three or more terms are equal when their terms are proportional (2:4:6 is
    1:2:3); a reading of ":" as division would make 1:3:2 equal to 1:2:3. None: no such ratio."""
    gt, at = _ratio_terms(g_text), _ratio_terms(a_text)
    if gt is None and at is None:
        return None
    if gt is None or at is None or len(gt) != len(at) or len(gt) > _MAX_RATIO_TERMS:
        return False
    pivot = next(
        (k for k, t in enumerate(gt) if not leaves_equal("0", t, ctx.max_length, None)), -1
    )
    if pivot < 0 or leaves_equal("0", at[pivot], ctx.max_length, None):
        return gt == at  # 0:0:0 would be proportional to anything
    # With g_p and a_p not 0, a = (a_p / g_p) g exactly when a_i g_p = g_i a_p for every i.
    return all(
        leaves_equal(
            f"({g})\\cdot({at[pivot]})",
            f"({a})\\cdot({gt[pivot]})",
            ctx.max_length,
            ctx.rel_tol,
            ctx.min_digits,
        )
        for g, a in zip(gt, at, strict=True)
    )


def _approximation_same(g: Scalar, a: Scalar, ctx: Ctx) -> bool:
    """``2\\sqrt{3} \\approx 3.46`` against a rounded ground truth ``3.46``: the decimal
    answers it when it is the ground truth and the exact value agrees with it to every digit
    written (one unit in its last significant digit), so a wrong exact value never passes."""
    if a.approx is None or not has_decimal_literal(g.text):
        return False
    digits = significant_digits(a.approx)
    decimal = resolve_leaf(a.approx, ctx.max_length)
    exact = leaf_expr(a.text, ctx.max_length)
    if digits is None or decimal.number is None or decimal.number.frac is None or exact is None:
        return False
    if not leaves_equal(g.text, a.approx, ctx.max_length, None):
        return False
    if not (exact.constant and exact.exact):
        return False
    return agrees_to_digits(exact.expr, decimal.number.frac, digits) is True


def same(g: Sem, a: Sem, ctx: Ctx, depth: int = 0) -> bool:
    """True when answer ``a`` is mathematically the ground truth ``g``."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(a, Items) and not a.ordered and not isinstance(g, Items):
        # "{5}" or "5, 5" answer a single value; several different values never do.
        unique = distinct(a.items, ctx, depth) if len(a.items) > 1 else a.items
        if len(unique) == 1:
            return same(g, unique[0], ctx, depth + 1)
    if isinstance(g, Items) and len(g.items) == 1 and not isinstance(a, (Items, Intervals)):
        return same(g.items[0], a, ctx, depth + 1)
    if isinstance(a, Equation) and not isinstance(g, Equation):
        # "x = 3" answers "3": compare what the equation states with the expected value.
        return any(same(g, v, ctx, depth + 1) for v in _answer_values(a))
    if isinstance(g, Scalar):
        if isinstance(a, Scalar) and a.approx is not None:
            return same(g, Scalar(a.text), ctx, depth + 1) or _approximation_same(g, a, ctx)
        if isinstance(a, Scalar) and (clock := clocks_same(g.text, a.text)) is not None:
            return clock  # 2:30 PM is not 1:15 PM, although 2:30 = 1:15 as ratios
        if isinstance(a, Scalar) and (ratios := _ratios_same(g.text, a.text, ctx)) is not None:
            return ratios
        if isinstance(a, Scalar) and leaves_equal(
            g.text, a.text, ctx.max_length, ctx.rel_tol, ctx.min_digits
        ):
            return True
        # "\\mathbb{R}" is also the interval (-\\infty, \\infty).
        gi = as_intervals(g, ctx)
        ai = as_intervals(a, ctx) if gi is not None else None
        return ai is not None and gi is not None and _intervals_same(gi, ai, ctx)
    if isinstance(g, Equation):
        if isinstance(a, Equation):
            return _equations_same(g, a, ctx, depth)
        return g.var is not None and same(g.rhs, a, ctx, depth + 1)
    if isinstance(g, Items):
        return _items_same(g, a, ctx, depth)
    if isinstance(g, Pair):
        return _pair_same(g, a, ctx, depth)
    if isinstance(g, Intervals):
        ai = as_intervals(a, ctx)
        return ai is not None and _intervals_same(g, ai, ctx)
    if isinstance(g, MatrixSem):
        return _matrix_same(g, a, ctx, depth)
    if isinstance(g, Inequality):
        if not isinstance(a, Inequality):
            return False
        go, ao = _oriented(g, ctx), _oriented(a, ctx)
        return go is not None and ao is not None and inequalities_equal(go, ao)  # type: ignore[arg-type]
    if isinstance(g, Opaque):
        return isinstance(a, Opaque) and g.text == a.text
    return False


def _method(g: Sem, a: Sem, ctx: Ctx) -> str:
    if isinstance(g, Scalar) and isinstance(a, Scalar) and clocks_same(g.text, a.text) is not None:
        return "time"
    if isinstance(g, Scalar):
        g_kind = resolve_leaf(g.text, ctx.max_length).kind
        if isinstance(a, Scalar) and g_kind == "number":
            a_kind = resolve_leaf(a.text, ctx.max_length).kind
            return "exact-number" if a_kind == "number" else "symbolic"
        return _METHOD_BY_KIND[g_kind]
    if isinstance(g, Items):
        return "tuple" if g.ordered else "set"
    if isinstance(g, Pair):
        mixed = (g.opener, g.closer) not in (("(", ")"),)
        return "interval" if isinstance(a, Intervals) or mixed else "tuple"
    names = {Intervals: "interval", Equation: "equation", MatrixSem: "matrix"}
    return names.get(type(g), "inequality" if isinstance(g, Inequality) else "string")


def _is_hedge(g: Sem, a: Sem, ctx: Ctx) -> bool:
    """Several different values offered where the ground truth is one value."""
    if not isinstance(g, (Scalar, Equation)) or not isinstance(a, Items):
        return False
    return not (a.explicit_set or a.ordered) and len(distinct(a.items, ctx)) > 1


def judge(g: Sem, a: Sem, ctx: Ctx) -> Outcome:
    """Compare and explain: the verdict plus which comparison decided it."""
    method = _method(g, a, ctx)
    if _is_hedge(g, a, ctx):
        return Outcome(False, method, "several different answers given (hedging)")
    with collect() as notes:
        equal = same(g, a, ctx)
    if equal:
        decided_by = deciding(notes)
        if decided_by is None:
            return Outcome(True, method, _EQUIVALENT)
        return Outcome(True, decided_by, _REASONS[decided_by])
    if UNITS_DIFFER in notes:
        return Outcome(False, method, _UNITS_REASON)
    return Outcome(False, method, "not equivalent to the ground truth")
