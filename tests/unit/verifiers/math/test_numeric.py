"""The bounded high-precision check (numeric-mp) and significant-digit agreement."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import Any

import pytest

from service.verifiers.math.digits import agrees_to_digits
from service.verifiers.math.normalize import normalize_answer
from service.verifiers.math.numeric import Planner, numeric_equal
from service.verifiers.math.parse import ParsedExpr, parse_latex
from service.verifiers.math.symbolic import NUMERIC, expr_match, same_tree

ISSUE_GT = r"\frac{(1+\sqrt3)^{4033}-(1-\sqrt3)^{4033}}{2^{2017}\sqrt3}"
ISSUE_ANSWER = r"\frac{(1+\sqrt{3})(2+\sqrt{3})^{2016}-(1-\sqrt{3})(2-\sqrt{3})^{2016}}{2\sqrt{3}}"


def parsed(text: str) -> ParsedExpr:
    result = parse_latex(normalize_answer(text), 1000)
    assert result is not None
    return result


def expr(text: str) -> Any:
    return parsed(text).expr


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ISSUE_GT, ISSUE_ANSWER),
        (r"\sqrt{5+2\sqrt{6}}", r"\sqrt{2}+\sqrt{3}"),
        (r"\sqrt[3]{2}+\sqrt[3]{4}", r"\sqrt[3]{2}\left(1+\sqrt[3]{2}\right)"),
        (r"2^{20000}\cdot 3+1", r"3\cdot 2^{20000}+1"),
        (r"\sin\frac{\pi}{12}", r"\frac{\sqrt6-\sqrt2}{4}"),
        (r"\ln 6", r"\ln 2+\ln 3"),
        ("3000!", r"3000\cdot 2999!"),
    ],
)
def test_equal_constants_are_accepted(a: str, b: str) -> None:
    assert numeric_equal(expr(a), expr(b)) is True


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ISSUE_GT, ISSUE_GT + "+1"),
        # near-integers: the separation bound, not a digit count, tells them apart
        (r"(1+\sqrt{2})^{300}", r"(1+\sqrt{2})^{300}+(1-\sqrt{2})^{300}"),
        (r"(2+\sqrt{3})^{3000}", r"(2+\sqrt{3})^{3000}+(2-\sqrt{3})^{3000}"),
        (r"((1+\sqrt{2})^{300}+(1-\sqrt{2})^{300})\pi", r"(1+\sqrt{2})^{300}\pi"),
        (r"\sqrt{10^{4000}+1}", r"10^{2000}"),
        (r"\sqrt[64]{2^{64}+1}", "2"),
        (r"e^{\pi\sqrt{163}}", "262537412640768744"),
        (r"\tan\left(\frac{\pi}{2}-10^{-100}\right)", r"10^{100}"),
        (r"\pi+10^{-200}", r"\pi"),
        (r"\ln\left(1+10^{-300}\right)", r"10^{-300}"),
        (r"\frac{1}{2^{99}}", r"\frac{1}{2^{98}}"),
        (r"\frac{1}{2004!}", r"\frac{1}{2006!}"),
        (r"1-\frac{1}{e}", r"1+\frac{1}{e}"),
    ],
)
def test_look_alike_constants_are_never_accepted(a: str, b: str) -> None:
    assert numeric_equal(expr(a), expr(b)) is not True


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (r"10^{10^{10}}", r"10^{10^{10}}+1"),  # magnitude beyond the cap
        (r"\pi+e^{-e^{10}}", r"\pi"),  # precision beyond the transcendental cap
        (r"(\frac{7}{10})^{10000000}", r"(\frac{7}{10})^{10000000}+10^{-100}"),
        ("x+1", "1+x"),  # not a constant
        (r"\sin\left(10^{100}\right)", r"\sin\left(10^{100}+2\pi\right)"),  # huge trig argument
    ],
)
def test_guards_leave_it_undecided(a: str, b: str) -> None:
    assert numeric_equal(expr(a), expr(b)) is None


def test_numeric_acceptance_is_reported() -> None:
    assert expr_match(parsed(ISSUE_GT), parsed(ISSUE_ANSWER)) == NUMERIC


def test_a_decimal_literal_never_takes_part() -> None:
    digits = "1.4142135623730950488016887242096980785696718753769480731766797379907324784621"
    assert expr_match(parsed(r"\sqrt{2}"), parsed(digits)) is None
    assert parsed(digits).exact is False and parsed(r"\sqrt{2}").exact is True


def test_same_tree_sorts_commutative_operands_of_unevaluated_trees() -> None:
    a, b = expr(r"2^{20000}\cdot 3+1"), expr(r"1+3\cdot 2^{20000}")
    assert a != b and same_tree(a, b)
    assert not same_tree(a, expr(r"3\cdot 2^{20000}+2"))
    assert not same_tree(expr(r"2^{20000}-3"), expr(r"3-2^{20000}"))


@pytest.mark.parametrize(
    ("exact", "approx", "digits", "expected"),
    [
        (Fraction(1, 12), Fraction("0.0833333333333333"), 12, True),
        (Fraction(1, 12), Fraction("0.083333333334"), 12, False),
        (Fraction(1), Fraction("0.999999999999999"), 12, True),
        (Fraction(10**30 + 1), Fraction(10**30), 12, True),
        (Fraction(0), Fraction("0.000000000000001"), 12, False),
    ],
)
def test_agreement_with_an_exact_fraction(
    exact: Fraction, approx: Fraction, digits: int, expected: bool
) -> None:
    assert agrees_to_digits(exact, approx, digits) is expected


def test_agreement_with_an_exact_expression() -> None:
    assert agrees_to_digits(expr(r"\pi"), Fraction("3.14159265358979"), 12) is True
    assert agrees_to_digits(expr(r"\pi"), Fraction("3.14159265368979"), 12) is False
    assert agrees_to_digits(expr(r"10^{10^{10}}"), Fraction(1), 12) is None


def test_mpmath_contexts_are_made_once_per_thread_and_reset_on_use() -> None:
    first = Planner(math.inf)
    # A significant-digits check leaves its high precision on the shared context.
    assert agrees_to_digits(expr(r"\pi"), Fraction("3.14159265358979"), 12) is True
    second = Planner(math.inf)
    assert second.ctx is first.ctx
    assert second.ctx.prec == 256
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(lambda: Planner(math.inf).ctx).result()
    assert other is not first.ctx
    assert numeric_equal(expr(r"\sqrt{5+2\sqrt{6}}"), expr(r"\sqrt{2}+\sqrt{3}")) is True
