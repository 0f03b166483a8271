"""What an answer means: structure read as sets, tuples, intervals, equations.

Semantics (ground truth decides):
- ``\\{...\\}`` is a set and a bare list ``1, 2`` is unordered (solutions of "find all ...");
  a tuple ``(1, 2, 3)`` is ordered; a set never equals a tuple.
- ``(a, b)`` is ambiguous: it equals ``(a, b)`` as an ordered pair and, when ``a < b``, the
  open interval ``a < x < b``. ``[a, b]`` is a closed interval; infinite ends are open.
- ``x = 3`` matches ``3``; ``y = 2x + 1`` matches ``2x - y + 1 = 0`` (same equation up to a
  non-zero factor); ``x = 1, y = 2`` matches ``(1, 2)`` in order; solutions written variable by
  variable (``p=5, q=2; p=7, q=2``) are the tuples ``(5, 2), (7, 2)``.
- Several *different* values where one is expected is hedging and is never correct.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .normalize import text_canon
from .parse import ParsedExpr
from .structure import (
    Bracket,
    Junction,
    Leaf,
    MatrixNode,
    Node,
    Relation,
    SetNode,
    parse_structure,
)
from .symbolic import exprs_equal, numeric_value, solve_inequality_chain
from .values import approx_leaf, is_assignment_target, is_symbol_name, leaf_expr, leaves_equal


@dataclass(frozen=True, slots=True)
class Ctx:
    """Comparison limits taken from the verifier config."""

    max_length: int
    rel_tol: float | None
    min_digits: int | None = None
    decimal_comma: bool = False


@dataclass(frozen=True, slots=True)
class Scalar:
    """One value (number, expression or word), kept as its normalised leaf text."""

    text: str
    # "2\\sqrt{3} \\approx 3.46": the decimal written after the value (the value is 2\\sqrt{3}).
    approx: str | None = None


@dataclass(frozen=True, slots=True)
class Items:
    """A collection: set (``explicit_set``), bare list (unordered) or tuple (``ordered``)."""

    items: tuple[Sem, ...]
    ordered: bool
    explicit_set: bool


@dataclass(frozen=True, slots=True)
class Pair:
    """``(a, b)`` / ``[a, b]``: an ordered pair or an interval, decided by the other side."""

    first: Sem
    second: Sem
    opener: str
    closer: str


@dataclass(frozen=True, slots=True)
class End:
    """One end of an interval: a constant leaf or solved value, closedness, float position.

    ``pos`` orders ends (and is +-inf for infinite ends); equality is always decided exactly.
    """

    text: str | None
    closed: bool
    pos: float
    value: ParsedExpr | None = None


@dataclass(frozen=True, slots=True)
class Intervals:
    """A union of disjoint intervals of the real line, sorted and merged."""

    parts: tuple[tuple[End, End], ...]


@dataclass(frozen=True, slots=True)
class Equation:
    """``lhs = rhs``; ``var`` names the unknown when the left side is one (``x``, ``f(x)``)."""

    lhs: str
    rhs: Sem
    var: str | None


@dataclass(frozen=True, slots=True)
class Inequality:
    """An inequality that is not an interval of one variable (``x + y > 1``)."""

    lhs: str
    op: str
    rhs: str


@dataclass(frozen=True, slots=True)
class MatrixSem:
    """A matrix or vector, row by row."""

    rows: tuple[tuple[Sem, ...], ...]


@dataclass(frozen=True, slots=True)
class Opaque:
    """Something we can only compare as a string (mixed relation chains)."""

    text: str


Sem = Scalar | Items | Pair | Intervals | Equation | Inequality | MatrixSem | Opaque

_FLIP = {"<": ">", ">": "<", "\\leq": "\\geq", "\\geq": "\\leq"}
_INEQ = frozenset(_FLIP)
# A number set a parameter may range over: "\\mathbb{R}", "\\mathbb{Z}^+", "\\mathbb{N}_0".
_NUMBER_SET = re.compile(r"^\\mathbb\s*\{?[RZNQC]\}?(?:[\^_]\s*\{?[^{}]{1,4}\}?)?$")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_REAL_LINE = frozenset({"\\mathbb{R}", "\\R", "\\mathbb R"})
_REAL_LINE_WORDS = frozenset({"allrealnumbers", "allreals", "realnumbers"})
# The real line without some points or an interval: "\\mathbb{R}\\setminus\\{0\\}",
# "\\mathbb{R}-\\{1\\}", "\\mathbb{R}\\setminus[-1,1]".
_REAL_LINE_MINUS = re.compile(
    r"^(?:\\mathbb\s*\{?R\}?|\\R)\s*(?:\\setminus|\\smallsetminus|\\backslash|-)\s*"
    r"(?P<removed>\\\{.*\\\}|[(\[].*[)\]])$"
)
# A half-line written with its bound: "\\mathbb{R}_{>0}", "\\mathbb{R}^{\\geq 1}". "\\mathbb{R}^+"
# and "\\mathbb{R}_+" are left alone: whether they hold 0 depends on the writer's convention.
_REAL_HALF_LINE = re.compile(
    r"^(?:\\mathbb\s*\{?R\}?|\\R)\s*[_^]\s*"
    r"\{\s*(?P<rel>[<>]|\\[lg]eq)\s*(?P<bound>(?:[^{}]|\{[^{}]*\})+?)\s*\}$"
)
_NEG_INF = End(None, False, -math.inf)
_POS_INF = End(None, False, math.inf)


def _end(text: str, closed: bool, ctx: Ctx) -> End | None:
    pos = approx_leaf(text, ctx.max_length)
    if pos is None or math.isnan(pos):
        return None
    if math.isinf(pos):
        return _NEG_INF if pos < 0 else _POS_INF
    return End(text, closed, pos)


def _same_point(a: End, b: End, ctx: Ctx, tolerant: bool) -> bool:
    if math.isinf(a.pos) or math.isinf(b.pos):
        return a.pos == b.pos
    if a.text is not None and b.text is not None:
        if not tolerant:
            return leaves_equal(a.text, b.text, ctx.max_length, None)
        return leaves_equal(a.text, b.text, ctx.max_length, ctx.rel_tol, ctx.min_digits)
    ea = a.value if a.text is None else leaf_expr(a.text, ctx.max_length)
    eb = b.value if b.text is None else leaf_expr(b.text, ctx.max_length)
    return ea is not None and eb is not None and exprs_equal(ea, eb)


def ends_equal(a: End, b: End, ctx: Ctx) -> bool:
    """Exact equality of two interval ends, closedness included (infinite ends are open)."""
    if math.isinf(a.pos) or math.isinf(b.pos):
        return a.pos == b.pos
    return a.closed == b.closed and _same_point(a, b, ctx, tolerant=True)


def _canonical(parts: list[tuple[End, End]], ctx: Ctx) -> Intervals:
    parts = sorted(parts, key=lambda p: (p[0].pos, not p[0].closed))
    merged: list[tuple[End, End]] = []
    for lo, hi in parts:
        if merged:
            plo, phi = merged[-1]
            touching = (phi.closed or lo.closed) and _same_point(phi, lo, ctx, tolerant=False)
            if lo.pos < phi.pos or touching:
                merged[-1] = (plo, hi if (hi.pos, hi.closed) > (phi.pos, phi.closed) else phi)
                continue
        merged.append((lo, hi))
    return Intervals(tuple(merged))


def _interval(
    lo_text: str | None, hi_text: str | None, lo_closed: bool, hi_closed: bool, ctx: Ctx
) -> tuple[End, End] | None:
    lo = _NEG_INF if lo_text is None else _end(lo_text, lo_closed, ctx)
    hi = _POS_INF if hi_text is None else _end(hi_text, hi_closed, ctx)
    if lo is None or hi is None or lo.pos > hi.pos:
        return None
    if lo.pos == hi.pos and not (lo.closed and hi.closed):
        return None
    return lo, hi


def _intersect(a: Intervals, b: Intervals) -> Intervals:
    out = []
    for alo, ahi in a.parts:
        for blo, bhi in b.parts:
            lo = alo if (alo.pos, not alo.closed) > (blo.pos, not blo.closed) else blo
            hi = ahi if (ahi.pos, ahi.closed) < (bhi.pos, bhi.closed) else bhi
            if lo.pos < hi.pos or (lo.pos == hi.pos and lo.closed and hi.closed):
                out.append((lo, hi))
    return Intervals(tuple(out))


def _solved_intervals(texts: list[str], ops: tuple[str, ...], ctx: Ctx) -> Intervals | None:
    """``|x| < 1``, ``-x > -1``, ``x^2 \\geq 4``: solved exactly by sympy, under guards."""
    exprs = [leaf_expr(t, ctx.max_length) for t in texts]
    if any(e is None for e in exprs) or any(op not in _INEQ for op in ops):
        return None
    solved = solve_inequality_chain([e for e in exprs if e is not None], ops)
    if solved is None:
        return None
    parts = []
    for lo, lo_closed, hi, hi_closed in solved:
        lo_end = _NEG_INF if lo is None else _solved_end(lo, lo_closed)
        hi_end = _POS_INF if hi is None else _solved_end(hi, hi_closed)
        if lo_end is None or hi_end is None:
            return None
        parts.append((lo_end, hi_end))
    return _canonical(parts, ctx)


def _solved_end(value: ParsedExpr, closed: bool) -> End | None:
    pos = numeric_value(value)
    return None if pos is None or math.isinf(pos) else End(None, closed, pos, value)


def _inequality_intervals(rel: Relation, ctx: Ctx) -> Intervals | None:
    """``1 < x \\leq 2``, ``x > 3``, ``x \\neq 0`` as a union of intervals of the real line."""
    texts = [t.text if isinstance(t, Leaf) else None for t in rel.terms]
    if any(t is None for t in texts):
        return None
    names = [i for i, t in enumerate(texts) if t is not None and is_symbol_name(t)]
    if len(names) != 1:
        return _solved_intervals([t for t in texts if t is not None], rel.ops, ctx)
    var = names[0]
    if rel.ops == ("\\neq",):
        bound = texts[1 - var]
        left = _interval(None, bound, False, False, ctx)
        right = _interval(bound, None, False, False, ctx)
        return _canonical([left, right], ctx) if left and right else None
    lo: tuple[str, bool] | None = None
    hi: tuple[str, bool] | None = None
    for k, op in enumerate(rel.ops):
        if k == var:  # var op bound
            op, bound = _FLIP.get(op, op), texts[k + 1]
        elif k + 1 == var:  # bound op var
            bound = texts[k]
        else:
            return None
        if op not in _INEQ or bound is None:
            return None
        closed = op in ("\\leq", "\\geq")
        if op in ("<", "\\leq"):  # bound < var
            if lo is not None:
                return None
            lo = (bound, closed)
        else:
            if hi is not None:
                return None
            hi = (bound, closed)
    part = _interval(
        lo[0] if lo else None, hi[0] if hi else None, bool(lo and lo[1]), bool(hi and hi[1]), ctx
    )
    return _canonical([part], ctx) if part else None


def as_intervals(sem: Sem, ctx: Ctx) -> Intervals | None:
    """Read a semantic value as a subset of the real line, when that reading exists."""
    if isinstance(sem, Intervals):
        return sem
    if isinstance(sem, Pair) and isinstance(sem.first, Scalar) and isinstance(sem.second, Scalar):
        part = _interval(sem.first.text, sem.second.text, sem.opener == "[", sem.closer == "]", ctx)
        return _canonical([part], ctx) if part else None
    if isinstance(sem, Scalar) and (
        sem.text in _REAL_LINE or text_canon(sem.text) in _REAL_LINE_WORDS
    ):
        return Intervals(((_NEG_INF, _POS_INF),))
    if isinstance(sem, Scalar) and (half := _REAL_HALF_LINE.match(sem.text)):
        rel, bound = half.group("rel"), half.group("bound").strip()
        closed = rel.startswith("\\")
        above = rel in (">", "\\geq")
        part = (
            _interval(bound, None, closed, False, ctx)
            if above
            else _interval(None, bound, False, closed, ctx)
        )
        return _canonical([part], ctx) if part else None
    if isinstance(sem, Scalar) and (minus := _REAL_LINE_MINUS.match(sem.text)):
        node = parse_structure(minus.group("removed"))
        if not isinstance(node, (SetNode, Bracket)):
            return None  # "\\{0\\}\\cup\\{1\\}" is not one set the real line is cut by
        removed = as_intervals(interpret(node, ctx), ctx)
        return _complement(removed) if removed is not None else None
    if isinstance(sem, Items) and sem.explicit_set:
        points = []
        for item in sem.items:
            if not isinstance(item, Scalar):
                return None
            part = _interval(item.text, item.text, True, True, ctx)
            if part is None:
                return None
            points.append(part)
        return _canonical(points, ctx)
    return None


def _complement(sem: Intervals) -> Intervals:
    """The real line without ``sem`` (its parts are sorted and disjoint)."""
    parts = []
    lo = _NEG_INF
    for start, end in sem.parts:
        hi = End(start.text, not start.closed, start.pos, start.value)
        if lo.pos < hi.pos or (lo.pos == hi.pos and lo.closed and hi.closed):
            parts.append((lo, hi))
        lo = End(end.text, not end.closed, end.pos, end.value)
    if lo.pos < math.inf:
        parts.append((lo, _POS_INF))
    return Intervals(tuple(parts))


def interpret(node: Node, ctx: Ctx) -> Sem:
    """Turn syntax into meaning (ordered or not, interval or tuple, equation or value)."""
    if isinstance(node, Leaf):
        return Scalar(node.text)
    if isinstance(node, SetNode):
        return Items(tuple(interpret(i, ctx) for i in node.items), False, True)
    if isinstance(node, Bracket):
        alternatives = [i for i in node.items if isinstance(i, Junction) and set(i.seps) == {"or"}]
        if len(alternatives) == 1 and len(node.items) > 1 and node.opener == "(":
            # "(\\pm 1, 0)" is the two points (1, 0) and (-1, 0); with two signs
            # ("(\\pm 1, \\pm 1)") whether they vary together is a convention: that stays unread.
            k = node.items.index(alternatives[0])
            return Items(
                tuple(
                    interpret(
                        Bracket("(", node.closer, (*node.items[:k], alt, *node.items[k + 1 :])), ctx
                    )
                    for alt in alternatives[0].items
                ),
                False,
                False,
            )
        items = tuple(interpret(i, ctx) for i in node.items)
        if len(items) == 2:
            return Pair(items[0], items[1], node.opener, node.closer)
        return Items(items, True, False)
    if isinstance(node, MatrixNode):
        return MatrixSem(tuple(tuple(interpret(c, ctx) for c in row) for row in node.rows))
    if isinstance(node, Relation):
        return _interpret_relation(node, ctx)
    return _interpret_junction(node, ctx)


def _leaf_texts(node: Node) -> list[str]:
    if isinstance(node, Leaf):
        return [node.text]
    if isinstance(node, MatrixNode):
        return [t for row in node.rows for cell in row for t in _leaf_texts(cell)]
    children = node.terms if isinstance(node, Relation) else node.items
    return [t for child in children for t in _leaf_texts(child)]


def _parameter_of(node: Node) -> str | None:
    """``c \\in \\mathbb{R}``: the parameter a qualifier ranges over a number set, else None."""
    if not (isinstance(node, Relation) and node.ops == ("\\in",)):
        return None
    name, domain = node.terms
    if isinstance(name, Leaf) and isinstance(domain, Leaf) and _NUMBER_SET.match(domain.text):
        return name.text if is_symbol_name(name.text) else None
    return None


def _without_qualifiers(items: tuple[Node, ...]) -> tuple[Node, ...]:
    """Drop ``c \\in \\mathbb{R}`` from ``P(x)=x^2+c, c \\in \\mathbb{R}`` when ``c`` occurs in
    the rest: it says what the parameter ranges over, not another value of the answer."""
    kept = []
    for k, item in enumerate(items):
        param = _parameter_of(item)
        if param is not None:
            others = [i for j, i in enumerate(items) if j != k and _parameter_of(i) is None]
            texts = [t for other in others for t in _leaf_texts(other)]
            if len(param) == 1:
                # "cx" mentions c; "\\cos x" does not.
                texts = [_COMMAND.sub(" ", t) for t in texts]
            if any(param in t for t in texts):
                continue
        kept.append(item)
    return tuple(kept)


def _interpret_junction(node: Junction, ctx: Ctx) -> Sem:
    kept = _without_qualifiers(node.items)
    if len(kept) < len(node.items):
        if len(kept) == 1:
            return interpret(kept[0], ctx)
        node = Junction(kept, ("comma",) * (len(kept) - 1))
    node = _excluded_points(node)
    items = [interpret(i, ctx) for i in node.items]
    setlike = [as_intervals(i, ctx) if not isinstance(i, Scalar) else None for i in items]
    if any(isinstance(i, Intervals) for i in items) or "cup" in node.seps:
        if all(s is not None for s in setlike):
            acc = setlike[0]
            for k, (sep, nxt) in enumerate(zip(node.seps, setlike[1:], strict=True)):
                if acc is None or nxt is None:
                    break
                if sep == "and" or (sep == "comma" and _conditions(items[k + 1], acc, nxt)):
                    acc = _intersect(acc, nxt)
                else:
                    acc = _canonical(list(acc.parts) + list(nxt.parts), ctx)
            if acc is not None:
                return _canonical(list(acc.parts), ctx)
        if "cup" in node.seps and all(isinstance(i, Items) and i.explicit_set for i in items):
            merged = tuple(x for i in items if isinstance(i, Items) for x in i.items)
            return Items(merged, False, True)
    flat: list[Sem] = []
    for item in items:
        if isinstance(item, Items) and not item.ordered and not item.explicit_set:
            flat.extend(item.items)
        else:
            flat.append(item)
    return _solutions_by_variable(tuple(flat)) or Items(tuple(flat), False, False)


def _conditions(item: Sem, acc: Intervals, nxt: Intervals) -> bool:
    """Comma-joined inequalities that overlap are conditions that all hold (``x > 1, x < 3``
    is ``(1, 3)``, ``x \\neq -4, x \\neq 6`` excludes both points); disjoint ones
    (``x < -1, x > 2``) list the pieces of a solution set."""
    return isinstance(item, Intervals) and bool(_intersect(acc, nxt).parts)


def _excluded_points(node: Junction) -> Junction:
    """``x \\neq -4, 6``: the values listed after ``x \\neq -4`` are excluded too."""
    first = node.items[0]
    if not (isinstance(first, Relation) and first.ops == ("\\neq",)):
        return node
    var = first.terms[0]
    if not (isinstance(var, Leaf) and is_symbol_name(var.text)) or "or" in node.seps:
        return node
    items: list[Node] = [first]
    for item in node.items[1:]:
        if isinstance(item, Leaf) and not is_symbol_name(item.text):
            items.append(Relation((var, item), ("\\neq",)))
        elif isinstance(item, Relation) and item.ops == ("\\neq",) and item.terms[0] == var:
            items.append(item)
        else:
            return node
    return Junction(tuple(items), tuple("and" for _ in node.seps))


def _solutions_by_variable(items: tuple[Sem, ...]) -> Items | None:
    """``p=5, q=2; p=7, q=2``: the same unknowns assigned again and again are a list of
    solutions, each one the assignments of one round (compared like ``(5, 2), (7, 2)``)."""
    names = [i.var for i in items if isinstance(i, Equation) and i.var and is_symbol_name(i.var)]
    if not names or len(names) != len(items):
        return None
    keys = [var_key(n) for n in names]
    width = keys.index(keys[0], 1) if keys.count(keys[0]) > 1 else 0
    if width < 2 or len(keys) % width or len(set(keys[:width])) != width:
        return None
    starts = range(0, len(keys), width)
    if any(set(keys[k : k + width]) != set(keys[:width]) for k in starts):
        return None
    return Items(tuple(Items(items[k : k + width], False, False) for k in starts), False, False)


def var_key(var: str) -> str:
    """``x_{1}`` and ``x_1`` name the same unknown."""
    return var.replace("{", "").replace("}", "").replace(" ", "")


def _excluded_signs(rel: Relation) -> Junction | None:
    """``x \\neq \\pm 3``: both signed values are excluded (``x \\neq 3`` and ``x \\neq -3``)."""
    var, values = rel.terms
    if not (isinstance(var, Leaf) and is_symbol_name(var.text) and isinstance(values, Junction)):
        return None
    if not all(isinstance(v, Leaf) for v in values.items) or set(values.seps) != {"or"}:
        return None
    excluded = tuple(Relation((var, v), rel.ops) for v in values.items)
    return Junction(excluded, ("and",) * (len(excluded) - 1))


def _interpret_relation(rel: Relation, ctx: Ctx) -> Sem:
    terms, ops = rel.terms, rel.ops
    if ops == ("\\neq",) and (excluded := _excluded_signs(rel)) is not None:
        return _interpret_junction(excluded, ctx)
    if "\\approx" in ops:
        # "1/3 \approx 0.333" answers 1/3; "x \approx 0.333" answers 0.333.
        k = ops.index("\\approx")
        first = terms[0]
        if k == 0 and isinstance(first, Leaf) and is_symbol_name(first.text):
            rest = Relation(terms[1:], ops[1:]) if len(terms) > 2 else terms[1]
            return interpret(rest, ctx)
        keep = Relation(terms[: k + 1], ops[:k]) if k > 0 else terms[0]
        kept = interpret(keep, ctx)
        after = terms[k + 1]
        if isinstance(kept, Scalar) and len(terms) == k + 2 and isinstance(after, Leaf):
            return Scalar(kept.text, after.text)
        return kept
    if ops == ("\\in",) and isinstance(terms[0], Leaf):
        return interpret(terms[1], ctx)
    if all(op == "=" for op in ops):
        lhs, rhs = terms[0], terms[-1]
        if isinstance(lhs, Bracket) and all(
            isinstance(i, Leaf) and is_symbol_name(i.text) for i in lhs.items
        ):
            # "(p, q) = (3, 2)": the tuple of unknowns names what the right side answers.
            lhs_text = "(" + ",".join(i.text for i in lhs.items if isinstance(i, Leaf)) + ")"
            var: str | None = lhs_text
        elif isinstance(lhs, Leaf):
            lhs_text = lhs.text
            var = lhs.text if is_assignment_target(lhs.text) else None
        else:
            return Opaque(_node_text(rel))
        rhs_sem = interpret(rhs, ctx)
        if var and isinstance(rhs_sem, Items) and not rhs_sem.ordered and not rhs_sem.explicit_set:
            eqs = tuple(Equation(lhs_text, item, var) for item in rhs_sem.items)
            return Items(eqs, False, False)
        return Equation(lhs_text, rhs_sem, var)
    if all(op in _INEQ or op == "\\neq" for op in ops):
        intervals = _inequality_intervals(rel, ctx)
        if intervals is not None:
            return intervals
        if len(ops) == 1 and all(isinstance(t, Leaf) for t in terms) and ops[0] in _INEQ:
            lhs_t, rhs_t = terms
            assert isinstance(lhs_t, Leaf) and isinstance(rhs_t, Leaf)
            return Inequality(lhs_t.text, ops[0], rhs_t.text)
    return Opaque(_node_text(rel))


def _node_text(node: Node) -> str:
    if isinstance(node, Leaf):
        return node.text
    if isinstance(node, Relation):
        out = _node_text(node.terms[0])
        for op, term in zip(node.ops, node.terms[1:], strict=True):
            out += op + _node_text(term)
        return out
    return repr(node)
