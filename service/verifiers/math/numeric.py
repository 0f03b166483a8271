"""High-precision numeric equality of two exact constants (mpmath), after sympy gave up.

sympy cannot always reduce ``a - b`` to zero in time (``(1+\\sqrt3)^{4033}`` against the same
number written with ``(2\\pm\\sqrt3)^{2016}``). Here both sides are enclosed with mpmath interval
arithmetic at a precision chosen from the expressions themselves:

- Algebraic numbers (integers, + - * /, integer powers, k-th roots): a root separation bound
  (Burnikel, Fleischer, Mehlhorn, Schirra: ``|E| >= 1 / (u^(D^2-1) l)`` when ``E != 0``) says how
  close to zero a non-zero value of that shape can come; an enclosure of ``a - b`` inside it
  proves ``a == b``. Near-integers such as ``(1+\\sqrt2)^{300}`` are therefore told apart from
  the nearest integer, however many digits they share.
- With transcendental constants or functions (pi, e, exp, log, sin, ...) no such bound exists:
  each transcendental atom counts as a number of its size in the same bound, and at least 100
  significant digits must agree on top.

Only called for exact expressions (no decimal literal: ``3.14`` is never ``\\pi``). Guards cap
the tree size, every intermediate magnitude, exponents, root indices and the working precision
before anything is evaluated, and a deadline backs them up; a guard or an unsupported node
makes the answer "undecided" (None), which the caller treats as "not shown equal".
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

MAX_NODES = 2000
# Every intermediate value stays below 2^MAX_MAGNITUDE_BITS (about 12,000 decimal digits).
MAX_MAGNITUDE_BITS = 40_000
MAX_ALGEBRAIC_PRECISION = 100_000
MAX_TRANSCENDENTAL_PRECISION = 20_000
MAX_TRANSCENDENTAL_ATOMS = 32
MAX_ROOT_INDEX = 64
MAX_DEGREE = 1024
MAX_INT_EXPONENT = 10**7
MAX_TRIG_ARGUMENT_BITS = 20
MAX_FACTORIAL = 3000
MAX_BINOMIAL = 10_000
ALGEBRAIC_DIGITS = 60
TRANSCENDENTAL_DIGITS = 100
DEADLINE_S = 2.0
_PLAN_PRECISION = 256
GUARD_BITS = 64
BITS_PER_DIGIT = math.log2(10)


class Undecided(Exception):
    """A guard refused the expression or the evaluation could not conclude."""


@cache
def evaluation_errors() -> tuple[type[Exception], ...]:
    """What a refused or failed evaluation raises (mpmath's ComplexResult is a ValueError).

    mpmath is imported here, not when the package loads: plain numbers never pay for it.
    """
    from mpmath.libmp import NoConvergence

    return (Undecided, ArithmeticError, ValueError, NoConvergence, RecursionError)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the planning pass learnt about one node."""

    approx: Any  # low-precision mpf
    lu: float  # log2 of the separation-bound upper bound u
    ll: float  # log2 of the separation-bound lower bound l
    radicals: frozenset[tuple[Any, int]]
    atoms: int  # transcendental atoms below
    mag: float  # largest log2 |value| of any node below
    growth: float  # log2 of the relative error growth (integer exponents)


def log2_size(ctx: Any, value: Any) -> float:
    """About log2 |value| (0 for zero): mpmath's exponent, cheap at any size."""
    return float(ctx.mag(value)) if value else 0.0


def _log2_int(value: int) -> float:
    return math.log2(value) if value.bit_length() < 1000 else float(value.bit_length())


def _sum_bound(children: list[_Plan]) -> tuple[float, float]:
    """(log2 u, log2 l) of a sum: u = sum u_i prod_{j!=i} l_j, l = prod l_j."""
    ll = sum(c.ll for c in children)
    lu = max(c.lu + ll - c.ll for c in children) + math.log2(len(children))
    return lu, ll


# Building an mpmath context costs about 1 ms, more than the guards that end most checks of
# pathological input (9^{9^{9^9}} against 1 is refused after 7 nodes): one of each kind per
# thread, made on first use; every user sets its precision first.
_CONTEXTS = threading.local()


def _real_context() -> Any:
    ctx = getattr(_CONTEXTS, "real", None)
    if ctx is None:
        from mpmath import MPContext

        ctx = _CONTEXTS.real = MPContext()
    return ctx


def _interval_context() -> Any:
    ctx = getattr(_CONTEXTS, "interval", None)
    if ctx is None:
        from mpmath.ctx_iv import MPIntervalContext

        ctx = _CONTEXTS.interval = MPIntervalContext()
    return ctx


class Planner:
    """Pass 1: guards, magnitudes and separation-bound terms at low precision."""

    def __init__(self, deadline: float) -> None:
        self.ctx = _real_context()
        self.ctx.prec = _PLAN_PRECISION
        self.memo: dict[Any, _Plan] = {}
        self.deadline = deadline

    def visit(self, node: Any) -> _Plan:
        plan = self.memo.get(node)
        if plan is None:
            if len(self.memo) >= MAX_NODES or time.monotonic() > self.deadline:
                raise Undecided
            plan = self._plan(node)
            self.memo[node] = plan
        return plan

    def _mag(self, value: Any) -> float:
        return log2_size(self.ctx, value)

    def _leaf_int(self, value: int) -> _Plan:
        if value.bit_length() > MAX_MAGNITUDE_BITS:
            raise Undecided
        lu = _log2_int(abs(value)) if value else -math.inf
        mag = float(value.bit_length())
        return _Plan(self.ctx.mpf(value), lu, 0.0, frozenset(), 0, mag, 0.0)

    def _atom(self, value: Any, children: tuple[_Plan, ...] = ()) -> _Plan:
        """A transcendental value: a number of its size whose argument's bounds also count.

        Without them ``\\tan(\\pi/2 - 10^{-100})`` would pass for ``10^{100}``: the argument's
        fine structure must raise the precision the comparison asks for.
        """
        if not self.ctx.isfinite(value) or self.ctx.im(value):
            raise Undecided
        size = self._mag(value)
        if abs(size) > MAX_MAGNITUDE_BITS:
            raise Undecided
        inner = sum(max(c.lu, 0.0) + c.ll for c in children)
        mag = max([size, *(c.mag for c in children)])
        atoms = 1 + sum(c.atoms for c in children)
        if atoms > MAX_TRANSCENDENTAL_ATOMS:
            raise Undecided
        lu, ll = max(size, 0.0) + 1 + inner, max(-size, 0.0) + 1 + inner
        growth = max([0.0, *(c.growth for c in children)])
        return _Plan(value, lu, ll, frozenset(), atoms, mag, growth)

    def _plan(self, node: Any) -> _Plan:
        import sympy

        ctx = self.ctx
        if node.is_Integer:
            return self._leaf_int(int(node))
        if node.is_Rational:
            num, den = self._leaf_int(int(node.p)), self._leaf_int(int(node.q))
            value = ctx.mpf(int(node.p)) / int(node.q)
            return _Plan(value, num.lu, den.lu, frozenset(), 0, max(num.mag, den.mag), 0.0)
        if node is sympy.pi:
            return self._atom(ctx.pi)
        if node is sympy.E:
            return self._atom(ctx.e)
        if node.is_Add or node.is_Mul:
            children = [self.visit(arg) for arg in node.args]
            return self._combine(node.is_Add, children)
        if node.is_Pow:
            return self._power(node)
        return self._function(node)

    def _combine(self, is_add: bool, children: list[_Plan]) -> _Plan:
        ctx = self.ctx
        if is_add:
            value = ctx.fsum(c.approx for c in children)
            lu, ll = _sum_bound(children)
        else:
            value = ctx.fprod(c.approx for c in children)
            lu, ll = sum(c.lu for c in children), sum(c.ll for c in children)
        radicals = frozenset().union(*(c.radicals for c in children))
        mag = max([self._mag(value), *(c.mag for c in children)])
        if mag > MAX_MAGNITUDE_BITS:
            raise Undecided
        atoms = sum(c.atoms for c in children)
        growth = max(c.growth for c in children) + math.log2(len(children) + 1)
        return _Plan(value, lu, ll, radicals, atoms, mag, growth)

    def _power(self, node: Any) -> _Plan:
        ctx = self.ctx
        base_node, exponent = node.args
        base = self.visit(base_node)
        if exponent.is_Integer:
            n = int(exponent)
            if abs(n) > MAX_INT_EXPONENT or (n < 0 and not base.approx):
                raise Undecided
            size = abs(n) * abs(self._mag(base.approx))
            if size > MAX_MAGNITUDE_BITS:
                raise Undecided
            value = base.approx**n
            lu, ll = (base.lu, base.ll) if n >= 0 else (base.ll, base.lu)
            growth = base.growth + math.log2(abs(n) + 1)
            mag = max(base.mag, self._mag(value))
            return _Plan(value, abs(n) * lu, abs(n) * ll, base.radicals, base.atoms, mag, growth)
        if exponent.is_Rational:
            p, q = int(exponent.p), int(exponent.q)
            if q > MAX_ROOT_INDEX or abs(p) > MAX_INT_EXPONENT or not base.approx > 0:
                raise Undecided
            if abs(p) / q * abs(self._mag(base.approx)) > MAX_MAGNITUDE_BITS:
                raise Undecided
            value = ctx.power(base.approx, ctx.mpf(p) / q)
            lu, ll = (base.lu / q, base.ll / q) if p > 0 else (base.ll / q, base.lu / q)
            radicals = base.radicals | {(base_node, q)}
            growth = base.growth + math.log2(abs(p) + q)
            mag = max(base.mag, self._mag(value))
            return _Plan(value, abs(p) * lu, abs(p) * ll, radicals, base.atoms, mag, growth)
        power = self.visit(exponent)
        if not base.approx > 0:
            raise Undecided
        if abs(power.approx * self._mag(base.approx)) > MAX_MAGNITUDE_BITS:
            raise Undecided
        return self._atom(ctx.power(base.approx, power.approx), (base, power))

    def _function(self, node: Any) -> _Plan:
        import sympy

        ctx = self.ctx
        name = type(node).__name__
        if isinstance(node, sympy.factorial) and len(node.args) == 1:
            (arg,) = node.args
            if not (arg.is_Integer and 0 <= int(arg) <= MAX_FACTORIAL):
                raise Undecided
            return self._leaf_int(math.factorial(int(arg)))
        if isinstance(node, sympy.binomial):
            n, k = node.args
            if not (n.is_Integer and k.is_Integer and 0 <= int(n) <= MAX_BINOMIAL):
                raise Undecided
            return self._leaf_int(math.comb(int(n), int(k)) if int(k) >= 0 else 0)
        if isinstance(node, sympy.Abs):
            inner = self.visit(node.args[0])
            return replace(inner, approx=abs(inner.approx))
        if len(node.args) != 1 or name not in _FUNCTIONS:
            raise Undecided
        arg = self.visit(node.args[0])
        x = arg.approx
        if name in _EXP_LIKE and abs(x) > MAX_MAGNITUDE_BITS * math.log(2):
            raise Undecided
        if name == "log" and not x > 0:
            raise Undecided
        if name in _TRIG and self._mag(x) > MAX_TRIG_ARGUMENT_BITS:
            raise Undecided
        return self._atom(_FUNCTIONS[name](ctx, x), (arg,))


_TRIG = frozenset({"sin", "cos", "tan", "cot", "sec", "csc"})
_EXP_LIKE = frozenset({"exp", "sinh", "cosh", "tanh"})
_FUNCTIONS: dict[str, Any] = {
    "exp": lambda c, x: c.exp(x),
    "log": lambda c, x: c.log(x),
    "sin": lambda c, x: c.sin(x),
    "cos": lambda c, x: c.cos(x),
    "tan": lambda c, x: c.tan(x),
    "cot": lambda c, x: 1 / c.tan(x),
    "sec": lambda c, x: 1 / c.cos(x),
    "csc": lambda c, x: 1 / c.sin(x),
    "atan": lambda c, x: c.atan2(x, 1),
    "sinh": lambda c, x: (c.exp(x) - c.exp(-x)) / 2,
    "cosh": lambda c, x: (c.exp(x) + c.exp(-x)) / 2,
    "tanh": lambda c, x: (c.exp(x) - c.exp(-x)) / (c.exp(x) + c.exp(-x)),
}


class Enclosure:
    """Pass 2: rigorous interval enclosures at the planned precision."""

    def __init__(self, precision: int, deadline: float, points: Any) -> None:
        self.ctx = _interval_context()
        self.ctx.prec = precision
        self.points = points  # an MPContext to read interval ends into
        self.memo: dict[Any, Any] = {}
        self.deadline = deadline

    def ends(self, value: Any) -> tuple[Any, Any]:
        """The interval's ends as plain mpf numbers."""
        lo, hi = (self.points.make_mpf(end) for end in value._mpi_)
        return lo, hi

    def visit(self, node: Any) -> Any:
        value = self.memo.get(node)
        if value is None:
            if time.monotonic() > self.deadline:
                raise Undecided
            value = self._enclose(node)
            if not all(self.points.isfinite(end) for end in self.ends(value)):
                raise Undecided
            self.memo[node] = value
        return value

    def _enclose(self, node: Any) -> Any:
        import sympy

        ctx = self.ctx
        if node.is_Integer:
            return ctx.mpf(int(node))
        if node.is_Rational:
            return ctx.mpf(int(node.p)) / int(node.q)
        if node is sympy.pi:
            return ctx.mpf(ctx.pi)
        if node is sympy.E:
            return ctx.mpf(ctx.e)
        if node.is_Add:
            total = ctx.mpf(0)
            for arg in node.args:
                total += self.visit(arg)
            return total
        if node.is_Mul:
            product = ctx.mpf(1)
            for arg in node.args:
                product *= self.visit(arg)
            return product
        if node.is_Pow:
            return self._power(node)
        if isinstance(node, sympy.factorial):
            return ctx.mpf(math.factorial(int(node.args[0])))
        if isinstance(node, sympy.binomial):
            n, k = (int(a) for a in node.args)
            return ctx.mpf(math.comb(n, k) if k >= 0 else 0)
        if isinstance(node, sympy.Abs):
            return abs(self.visit(node.args[0]))
        return _FUNCTIONS[type(node).__name__](ctx, self.visit(node.args[0]))

    def _power(self, node: Any) -> Any:
        ctx = self.ctx
        base_node, exponent = node.args
        base = self.visit(base_node)
        if exponent.is_Integer:
            return base ** int(exponent)
        if exponent.is_Rational and int(exponent.q) == 2:
            return ctx.sqrt(base) ** int(exponent.p)
        if exponent.is_Rational:
            return ctx.exp(ctx.log(base) * (ctx.mpf(int(exponent.p)) / int(exponent.q)))
        return ctx.exp(ctx.log(base) * self.visit(exponent))


def _degree(radicals: frozenset[tuple[Any, int]]) -> int:
    degree = 1
    for _, index in radicals:
        degree *= index
        if degree > MAX_DEGREE:
            raise Undecided
    return degree


def _decide(a: Any, b: Any, proof_only: bool) -> bool | None:
    deadline = time.monotonic() + DEADLINE_S
    planner = Planner(deadline)
    pa, pb = planner.visit(a), planner.visit(b)
    atoms = pa.atoms + pb.atoms
    degree = _degree(pa.radicals | pb.radicals)
    # a - b as one expression: its u and l, then the separation bound in bits.
    lu = max(pa.lu + pb.ll, pb.lu + pa.ll, 0.0) + 1
    ll = pa.ll + pb.ll
    separation = (degree * degree - 1) * lu + ll + 2
    digits = TRANSCENDENTAL_DIGITS if atoms else ALGEBRAIC_DIGITS
    relative = math.ceil(digits * BITS_PER_DIGIT)
    mp = planner.ctx
    size = max(log2_size(mp, pa.approx), log2_size(mp, pb.approx))
    needed = max(separation, relative - size)
    precision = needed + max(pa.mag, pb.mag, 0.0) + max(pa.growth, pb.growth) + GUARD_BITS
    cap = MAX_TRANSCENDENTAL_PRECISION if atoms else MAX_ALGEBRAIC_PRECISION
    if precision > cap:
        return None
    enclosure = Enclosure(math.ceil(precision), deadline, mp)
    ea, eb = enclosure.visit(a), enclosure.visit(b)
    lo, hi = enclosure.ends(ea - eb)
    if lo > 0 or hi < 0:
        return False
    # Both sides must agree to `digits` significant digits and within the separation bound.
    smallest = min(enclosure.ends(abs(ea))[0], enclosure.ends(abs(eb))[0])
    threshold = mp.ldexp(mp.mpf(1), -math.ceil(separation))
    if smallest > 0:
        threshold = min(threshold, smallest * mp.ldexp(mp.mpf(1), -relative))
    if max(abs(lo), abs(hi)) >= threshold or (proof_only and atoms):
        return None
    return True


def numeric_equal(a: Any, b: Any, proof_only: bool = False) -> bool | None:
    """True: equal (see module doc); False: enclosures apart; None: undecided within bounds.

    ``proof_only``: True only for algebraic numbers, where the separation bound is a proof.
    """
    try:
        return _decide(a, b, proof_only)
    except evaluation_errors():
        # A refused or failed evaluation (mpmath's ComplexResult is a ValueError) only means
        # "no numeric evidence"; the caller then reports "not shown equal".
        return None
