"""Exact equality of sympy expressions and equations.

Acceptance is by an exact argument: identical trees (up to the order of commutative sums and
products), a difference that sympy reduces to exactly zero (``expand``/``simplify``), or, for
two exact constants sympy could not settle, the bounded high-precision check of ``numeric``
(``numeric-mp``: a proof for algebraic numbers, >= 100 agreeing digits on top of a separation
bound with transcendental ones). Numeric evaluation at fixed sample points is used only to
*reject* quickly, and no decimal literal ever takes part in a numeric acceptance, so rounding
cannot produce a false positive (``1/2^99`` vs ``1/2^98``, ``pi`` vs ``3.14``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .evidence import NUMERIC, note
from .numeric import numeric_equal
from .parse import ParsedExpr

SYMBOLIC = "symbolic"
# Canonical keys of bigger trees are not built (the parser's own tree cap is 2000 nodes).
MAX_KEY_NODES = 4000

# simplify() on big trees can take seconds; beyond this only expand() is tried.
MAX_SIMPLIFY_NODES = 150
_EVALF_DIGITS = 30
_REJECT_REL_GAP = 1e-9
# Before simplify(): a rejection at 30 digits more than the written digits of both sides. A
# rational written with many digits (``1.5849625007211563``) agrees with ``\log_2 3`` beyond
# the 1e-9 gap, and simplify() of that difference (logcombine on big powers) never returns.
_DEEP_EXTRA_DIGITS = 30
_DEEP_MAX_DIGITS = 400


def _sample_points(symbols: list[Any]) -> list[dict[Any, Any]]:
    import sympy

    # Positive, non-integer, pairwise distinct values keep sqrt/log real and avoid poles at 0, 1.
    bases = ((7, 10), (29, 17), (31, 7))
    return [
        {s: sympy.Rational(num + 3 * idx, den) for idx, s in enumerate(symbols)}
        for num, den in bases
    ]


def _as_complex(value: Any) -> complex | None:
    try:
        if not value.is_number:
            return None
        result = complex(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if result != result or abs(result) == float("inf"):
        return None
    return result


def _visibly_different(a: Any, b: Any, first_only: bool = False) -> bool:
    """True when a numeric evaluation shows a != b beyond any rounding doubt."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    points = _sample_points(symbols) if symbols else [{}]
    for point in points[:1] if first_only else points:
        try:
            va = _as_complex(a.evalf(_EVALF_DIGITS, subs=point))
            vb = _as_complex(b.evalf(_EVALF_DIGITS, subs=point))
        except Exception:  # evaluation problems only mean "no evidence"
            continue
        if va is None or vb is None:
            continue
        if abs(va - vb) > _REJECT_REL_GAP * max(1.0, abs(va), abs(vb)):
            return True
    return False


def _written_digits(*exprs: Any) -> int:
    """Decimal digits of the rational numbers written in the expressions."""
    import sympy

    total = 0
    for expr in exprs:
        for atom in expr.atoms(sympy.Rational):
            total += len(str(abs(int(atom.p)))) + len(str(int(atom.q)))
    return total


def _deeply_different(a: Any, b: Any) -> bool | None:
    """a != b at some sample point, evaluated to 30 digits beyond all the digits written in
    them (mpmath floats: complex() would round the gap away). None: too many digits to try,
    so simplify() must not be tried either."""
    digits = _written_digits(a, b) + _DEEP_EXTRA_DIGITS
    if digits > _DEEP_MAX_DIGITS:
        return None
    gap = _float_gap(digits)
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    for point in _sample_points(symbols) if symbols else [{}]:
        try:
            va = a.evalf(digits, subs=point)
            vb = b.evalf(digits, subs=point)
            if not (va.is_number and vb.is_number):
                continue
            size = max(1, abs(va), abs(vb))
            if abs(va - vb) > gap * size:
                return True
        except Exception:  # evaluation problems only mean "no evidence"
            continue
    return False


def _float_gap(digits: int) -> Any:
    """The relative gap that ``digits``-digit evaluations show beyond rounding doubt."""
    import sympy

    return sympy.Float(10, digits) ** -(digits - 10)


def _may_simplify(a: Any, b: Any) -> bool:
    """simplify() is tried only on sides that no deep evaluation tells apart."""
    return _deeply_different(a, b) is False


def _is_plain_expr(expr: Any) -> bool:
    from sympy import Expr

    return isinstance(expr, Expr) and not getattr(expr, "is_Matrix", False)


def _has_undefined(expr: Any) -> bool:
    from sympy import S

    return bool(expr.has(S.NaN, S.ComplexInfinity))


def _zero_exactly(diff: Any, small: bool) -> bool:
    import sympy

    if diff == 0:
        return True
    try:
        if sympy.expand(diff) == 0:
            return True
        if not small:
            return False
        # e^{i\pi/3} - (1/2 + \sqrt{3}i/2): simplify() leaves (-1)^{1/3}; real and imaginary
        # parts cancel exactly.
        if diff.has(sympy.I) and sympy.expand_complex(diff) == 0:
            return True
        return bool(sympy.simplify(diff) == 0)
    except Exception:  # sympy failure is "not shown equal"
        return False


def _key(node: Any, budget: list[int]) -> tuple[Any, ...]:
    """A structural key in which the operands of sums and products are sorted and flattened."""
    budget[0] -= 1
    if budget[0] < 0:
        raise OverflowError("tree too big for a canonical key")
    if node.is_Integer:
        return ("I", int(node))
    if node.is_Rational:
        return ("Q", int(node.p), int(node.q))
    if node.is_Symbol:
        return ("S", node.name)
    if not node.args:
        return ("A", type(node).__name__, str(node))
    name = type(node).__name__
    # Unevaluated trees (sizes beyond the evaluation guard) keep the order they were written
    # in: 3\cdot 2^{20000}+1 and 2^{20000}\cdot 3+1 must still be the same tree.
    if node.is_Add or (node.is_Mul and node.is_commutative):
        operands: list[Any] = []
        for arg in node.args:
            if type(arg) is type(node):
                operands.extend(arg.args)  # (a + b) + c is a + (b + c)
            else:
                operands.append(arg)
        return (name, tuple(sorted(_key(arg, budget) for arg in operands)))
    return (name, tuple(_key(arg, budget) for arg in node.args))


def same_tree(ea: Any, eb: Any) -> bool:
    """The same expression up to the order and grouping of commutative sums and products."""
    if ea == eb:
        return True
    try:
        return _key(ea, [MAX_KEY_NODES]) == _key(eb, [MAX_KEY_NODES])
    except (OverflowError, TypeError, RecursionError):  # too big, or keys not comparable
        return False


def _numeric(a: ParsedExpr, b: ParsedExpr, proof_only: bool = False) -> bool | None:
    """The high-precision check, for two exact real constants only."""
    if not (a.constant and b.constant and a.exact and b.exact):
        return None
    return numeric_equal(a.expr, b.expr, proof_only)


def expr_match(a: ParsedExpr, b: ParsedExpr) -> str | None:
    """How two parsed expressions were shown equal (``symbolic``/``numeric-mp``), or None."""
    ea, eb = a.expr, b.expr
    try:
        if _has_undefined(ea) or _has_undefined(eb):
            return None
        if same_tree(ea, eb):
            return SYMBOLIC
        if not (_is_plain_expr(ea) and _is_plain_expr(eb)):
            return None
        if not (a.evaluable and b.evaluable and a.expandable and b.expandable):
            # Beyond sympy's guards: only the bounded numeric check may still decide.
            return NUMERIC if _numeric(a, b) else None
        if _visibly_different(ea, eb, first_only=True):
            return None
        # Before expand()/simplify() (seconds on big powers): enclosures that are apart reject,
        # and a proof for algebraic numbers accepts; the rest is left to sympy first.
        early = _numeric(a, b, proof_only=True)
        if early is not None:
            return NUMERIC if early else None
        diff = ea - eb
        if _zero_exactly(diff, small=False):
            return SYMBOLIC
        # expand() did not cancel: check all sample points before the costly simplify().
        if _visibly_different(ea, eb):
            return None
        small = a.nodes + b.nodes <= MAX_SIMPLIFY_NODES
        if small and _may_simplify(ea, eb) and _zero_exactly(diff, small):
            return SYMBOLIC
        return NUMERIC if _numeric(a, b) else None
    except Exception:  # sympy failure is "not shown equal"
        return None


def exprs_equal(a: ParsedExpr, b: ParsedExpr) -> bool:
    """Exact equality of two parsed expressions (guards respected); notes the method."""
    method = expr_match(a, b)
    note(method)
    return method is not None


def _ratio_may_be_constant(d1: Any, d2: Any) -> bool:
    """d1/d2 takes one value at two sample points (to deep precision): only then may
    simplify() try to show the ratio constant."""
    symbols = sorted(d1.free_symbols | d2.free_symbols, key=lambda s: s.name)
    if not symbols:
        return False  # two constant (false) statements are not one equation
    first, second = _sample_points(symbols)[:2]
    try:
        r1 = (d1 / d2).subs(first)
        r2 = (d1 / d2).subs(second)
    except Exception:  # no evidence either way: simplify() stays bounded by the node cap
        return True
    return _deeply_different(r1, r2) is False


def rational_expr(value: Fraction, exact: bool = True) -> ParsedExpr:
    """Wrap a rational as a ParsedExpr (``exact=False``: it was written as a decimal)."""
    import sympy

    expr = sympy.Rational(value.numerator, value.denominator)
    return ParsedExpr(expr, True, True, True, 1, exact)


def scaled(parsed: ParsedExpr, factor: Fraction) -> ParsedExpr:
    """``parsed * factor`` (used for percent readings)."""
    import sympy

    expr = parsed.expr * sympy.Rational(factor.numerator, factor.denominator)
    return ParsedExpr(
        expr, parsed.evaluable, parsed.expandable, parsed.constant, parsed.nodes + 2, parsed.exact
    )


def equations_equal(l1: ParsedExpr, r1: ParsedExpr, l2: ParsedExpr, r2: ParsedExpr) -> bool:
    """Same equation up to rearrangement and a non-zero constant factor."""
    parts = (l1, r1, l2, r2)
    if not all(p.evaluable and p.expandable and _is_plain_expr(p.expr) for p in parts):
        return same_tree(l1.expr, l2.expr) and same_tree(r1.expr, r2.expr)
    try:
        d1 = l1.expr - r1.expr
        d2 = l2.expr - r2.expr
        nodes = sum(p.nodes for p in parts)
        small = nodes <= MAX_SIMPLIFY_NODES
        if d1 == d2 or d1 == -d2:
            return True
        if _zero_exactly(d1 - d2, small and _may_simplify(d1, d2)):
            return True
        if _zero_exactly(d1 + d2, small and _may_simplify(d1, -d2)):
            return True
        if d2 == 0 or not small or not _ratio_may_be_constant(d1, d2):
            return False
        import sympy

        ratio = sympy.simplify(d1 / d2)
        if ratio.free_symbols or _has_undefined(ratio):
            return False
        return bool(ratio != 0 and ratio.is_finite)
    except Exception:
        return False


def numeric_value(parsed: ParsedExpr) -> float | None:
    """A float approximation of a real constant (ordering of interval ends only)."""
    if not (parsed.constant and parsed.evaluable and _is_plain_expr(parsed.expr)):
        return None
    try:
        if parsed.expr.is_infinite:
            return float("inf") if parsed.expr.is_extended_positive else float("-inf")
        value = _as_complex(parsed.expr.evalf(20))
    except Exception:
        return None
    if value is None or abs(value.imag) > 1e-12:
        return None
    return value.real


def close_constants(a: ParsedExpr, b: ParsedExpr, rel_tol: float) -> bool:
    """Relative closeness of two constants (only when the caller configured ``rel_tol``)."""
    va, vb = numeric_value(a), numeric_value(b)
    if va is None or vb is None:
        return False
    return abs(va - vb) <= rel_tol * max(abs(va), abs(vb))


def inequalities_equal(
    g: tuple[ParsedExpr, ParsedExpr, bool], a: tuple[ParsedExpr, ParsedExpr, bool]
) -> bool:
    """``big > small`` pairs (strictness flag) equal up to a positive constant factor."""
    (g_big, g_small, g_strict), (a_big, a_small, a_strict) = g, a
    if g_strict != a_strict:
        return False
    parts = (g_big, g_small, a_big, a_small)
    if not all(p.evaluable and p.expandable and _is_plain_expr(p.expr) for p in parts):
        return same_tree(g_big.expr, a_big.expr) and same_tree(g_small.expr, a_small.expr)
    try:
        d1 = g_big.expr - g_small.expr
        d2 = a_big.expr - a_small.expr
        small = sum(p.nodes for p in parts) <= MAX_SIMPLIFY_NODES
        if d1 == d2 or _zero_exactly(d1 - d2, small and _may_simplify(d1, d2)):
            return True
        if d2 == 0 or not small or not _ratio_may_be_constant(d1, d2):
            return False
        import sympy

        ratio = sympy.simplify(d1 / d2)
        if ratio.free_symbols or _has_undefined(ratio):
            return False
        return bool(ratio.is_positive and ratio.is_finite)
    except Exception:
        return False


MAX_INEQUALITY_DEGREE = 4
MAX_INEQUALITY_NODES = 80
SolvedPart = tuple[ParsedExpr | None, bool, ParsedExpr | None, bool]


def _solvable(expr: Any, symbol: Any) -> bool:
    """Polynomials of low degree, possibly inside absolute values: fast and exact to solve."""
    import sympy

    plain = expr.replace(sympy.Abs, lambda arg: arg)
    if not plain.is_polynomial(symbol):
        return False
    return bool(sympy.degree(plain, symbol) <= MAX_INEQUALITY_DEGREE)


def _constant(value: Any) -> ParsedExpr | None:
    if value.is_infinite:
        return None
    return ParsedExpr(value, True, True, True, 1)


def solve_inequality_chain(
    terms: list[ParsedExpr], ops: tuple[str, ...]
) -> list[SolvedPart] | None:
    """The solution set of ``t0 op t1 op t2 ...`` in one real variable, as interval parts."""
    import sympy

    if not all(t.evaluable and t.expandable and _is_plain_expr(t.expr) for t in terms):
        return None
    if sum(t.nodes for t in terms) > MAX_INEQUALITY_NODES:
        return None
    symbols = set().union(*(t.expr.free_symbols for t in terms))
    if len(symbols) != 1:
        return None
    symbol = next(iter(symbols))
    relations = {"<": sympy.Lt, ">": sympy.Gt, "\\leq": sympy.Le, "\\geq": sympy.Ge}
    try:
        if not all(_solvable(t.expr, symbol) for t in terms):
            return None
        solution: Any = sympy.S.Reals
        for op, left, right in zip(ops, terms, terms[1:], strict=False):
            relation = relations[op](left.expr, right.expr)
            part = sympy.solve_univariate_inequality(relation, symbol, relational=False)
            solution = sympy.Intersection(solution, part)
        return _set_parts(solution)
    except Exception:  # sympy could not solve it exactly: no interval reading
        return None


def _set_parts(solution: Any) -> list[SolvedPart] | None:
    import sympy

    pieces = solution.args if isinstance(solution, sympy.Union) else (solution,)
    parts: list[SolvedPart] = []
    for piece in pieces:
        if piece is sympy.S.EmptySet:
            continue
        if piece is sympy.S.Reals:
            parts.append((None, False, None, False))
        elif isinstance(piece, sympy.Interval):
            lo, hi = _constant(piece.start), _constant(piece.end)
            parts.append((lo, not piece.left_open, hi, not piece.right_open))
        elif isinstance(piece, sympy.FiniteSet):
            for point in piece.args:
                value = _constant(point)
                if value is None:
                    return None
                parts.append((value, True, value, True))
        else:
            return None
    return parts
