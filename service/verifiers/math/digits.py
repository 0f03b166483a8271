"""Significant-digit agreement of a decimal with an exact value (``min_significant_digits``).

A decimal of at least N significant digits equals an exact value when they differ by less than
one unit in the N-th significant digit of the exact value: ``0.0833333333333333`` for ``1/12``
at N = 12, truncated or rounded. Fractions are compared exactly; a constant expression is
enclosed with the bounded interval evaluation of ``numeric`` at a precision N digits beyond its
size.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

from .numeric import (
    BITS_PER_DIGIT,
    DEADLINE_S,
    GUARD_BITS,
    MAX_ALGEBRAIC_PRECISION,
    MAX_TRANSCENDENTAL_PRECISION,
    Enclosure,
    Planner,
    evaluation_errors,
    log2_size,
)


def _decade(value: Fraction) -> int:
    """``e`` with ``10^e <= |value| < 10^(e+1)``, exactly."""
    size = abs(value)
    e = math.floor((size.numerator.bit_length() - size.denominator.bit_length()) * math.log10(2))
    while size >= Fraction(10) ** (e + 1):
        e += 1
    while size < Fraction(10) ** e:
        e -= 1
    return e


def _agrees_with_expr(exact: Any, approx: Fraction, digits: int) -> bool | None:
    deadline = time.monotonic() + DEADLINE_S
    planner = Planner(deadline)
    plan = planner.visit(exact)
    precision = math.ceil(digits * BITS_PER_DIGIT) + max(plan.mag, 0.0) + plan.growth
    precision += abs(log2_size(planner.ctx, plan.approx)) + 2 * GUARD_BITS
    cap = MAX_TRANSCENDENTAL_PRECISION if plan.atoms else MAX_ALGEBRAIC_PRECISION
    if precision > cap:
        return None
    enclosure = Enclosure(math.ceil(precision), deadline, planner.ctx)
    lo, hi = enclosure.ends(enclosure.visit(exact))
    if lo <= 0 <= hi:
        return None
    mp = planner.ctx
    mp.prec = math.ceil(precision)
    # The smaller decade when the enclosure straddles a power of ten: a stricter unit.
    decade = int(mp.floor(mp.log10(min(abs(lo), abs(hi)))))
    unit = mp.power(10, decade - digits + 1)
    value = mp.mpf(approx.numerator) / approx.denominator
    return max(abs(value - lo), abs(value - hi)) < unit


def agrees_to_digits(exact: Any, approx: Fraction, digits: int) -> bool | None:
    """``|approx - exact|`` is below one unit in the ``digits``-th significant digit of the
    exact value (a Fraction or a sympy constant); None when that cannot be evaluated."""
    if isinstance(exact, Fraction):
        if not exact:
            return False
        unit = Fraction(10) ** (_decade(exact) - digits + 1)
        return abs(approx - exact) < unit
    try:
        return _agrees_with_expr(exact, approx, digits)
    except evaluation_errors():
        return None
