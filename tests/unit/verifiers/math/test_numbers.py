"""Exact number fast path: parsing and comparison without sympy."""

from __future__ import annotations

from fractions import Fraction

import pytest

from service.verifiers.math.numbers import numbers_equal, parse_number, same_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", Fraction(42)),
        ("-7", Fraction(-7)),
        ("+5", Fraction(5)),
        ("0.5", Fraction(1, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("1,234", Fraction(1234)),
        ("1,234,567.25", Fraction(123456725, 100)),
        ("1 234 567", Fraction(1234567)),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("-\\frac{3}{4}", Fraction(-3, 4)),
        ("\\frac{-3}{4}", Fraction(-3, 4)),
        ("\\frac{1.5}{2}", Fraction(3, 4)),
        ("3/4", Fraction(3, 4)),
        ("2\\frac{1}{2}", Fraction(5, 2)),
        ("1.5e3", Fraction(1500)),
        ("1.5E-3", Fraction(3, 2000)),
        ("1.5\\times10^{3}", Fraction(1500)),
        ("1.5\\cdot10^3", Fraction(1500)),
        ("4\\times10^{-7}", Fraction(4, 10**7)),
        ("10^{-7}", Fraction(1, 10**7)),
        ("0.\\overline{3}", Fraction(1, 3)),
        ("0.1\\overline{6}", Fraction(1, 6)),
        ("0.(3)", Fraction(1, 3)),
        ("1.(09)", Fraction(12, 11)),
        ("0.1666\\ldots", Fraction(1, 6)),
        ("0.333\\cdots", Fraction(1, 3)),
    ],
)
def test_parse_number_values(text: str, value: Fraction) -> None:
    parsed = parse_number(text)
    assert parsed is not None and parsed.frac == value


@pytest.mark.parametrize(
    "text",
    [
        "1,2",
        "1, 234",
        "x",
        "2x",
        "\\sqrt{2}",
        "1/0",
        "\\frac{1}{0}",
        "1 2",
        "",
        "--5",
        "3.14159\\ldots",  # an ellipsis after digits that do not repeat: no exact value
        "0.166\\ldots",  # a digit written only twice is no repetend
    ],
)
def test_parse_number_rejects_non_numbers(text: str) -> None:
    assert parse_number(text) is None


def test_percent_is_marked() -> None:
    parsed = parse_number("50%")
    assert parsed is not None and parsed.percent and parsed.frac == 50


@pytest.mark.parametrize(
    ("marked", "plain", "same"),
    [
        ("25%", "25", True),  # "what percent ...?": the sign as a unit
        ("25%", "0.25", True),  # the sign as /100
        ("150%", "1.5", True),
        ("150%", "150", True),
        ("1%", "1", True),
        ("0.25%", "0.25", False),  # a hundredth of a probability, never the probability
        ("0.5%", "0.5", False),
        ("-0.5%", "-0.5", False),
        ("0.5%", "0.005", True),
    ],
)
def test_a_percent_sign_is_a_unit_only_against_a_number_of_one_or_more(
    marked: str, plain: str, same: bool
) -> None:
    a, b = parse_number(marked), parse_number(plain)
    assert a is not None and b is not None
    assert same_number(a, b, None) is same
    assert same_number(b, a, None) is same


def test_infinity() -> None:
    plus, minus = parse_number("\\infty"), parse_number("-\\infty")
    assert plus is not None and minus is not None
    assert not numbers_equal(plus, minus)
    assert numbers_equal(plus, parse_number("+\\infty"))  # type: ignore[arg-type]


def test_huge_digit_strings_compare_without_int_conversion() -> None:
    digits = "7" + "3" * 100_000
    a, b = parse_number(digits), parse_number(digits + ".000")
    c = parse_number(digits[:-1] + "4")
    assert a is not None and b is not None and c is not None
    assert a.frac is None  # too long for Fraction: compared by canonical digits
    assert numbers_equal(a, b)
    assert not numbers_equal(a, c)


def test_huge_exponent_is_not_materialised() -> None:
    a = parse_number("1.5\\times10^{999999999}")
    b = parse_number("15\\times10^{999999998}")
    assert a is not None and b is not None and a.frac is None
    assert numbers_equal(a, b)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("0.5", "\\frac{1}{2}", True),
        ("0.333", "\\frac{1}{3}", False),
        ("1048570", "1048576", False),
        ("4\\times10^{-7}", "1\\times10^{-7}", False),
        ("50%", "0.5", True),
        ("50%", "50", True),
        ("50%", "5", False),
        ("12.5%", "\\frac{1}{8}", True),
        ("50%", "50%", True),
        ("50%", "0.5%", False),
    ],
)
def test_same_number(a: str, b: str, equal: bool) -> None:
    na, nb = parse_number(a), parse_number(b)
    assert na is not None and nb is not None
    assert same_number(na, nb, None) is equal


def test_relative_tolerance_only_when_asked() -> None:
    a, b = parse_number("3.14159"), parse_number("3.1416")
    assert a is not None and b is not None
    assert not same_number(a, b, None)
    assert same_number(a, b, Fraction(1, 10**4))
