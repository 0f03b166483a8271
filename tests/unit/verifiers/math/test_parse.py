"""LaTeX leaf parsing: integer literals built directly give the trees latex2sympy gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from sympy import Integer, srepr

from service.verifiers.math.parse import _integer_literal, _latex_to_sympy, _prepare, parse_latex

LEAVES = [
    "42",
    "0",
    "007",
    "1,000,000",
    "123456789012345678901234567890",
    "x^2-13x+42",
    "-6+5x+x^2",
    "x^{2}-3x+2",
    "84\\cdot 40",
    "7\\sqrt{9}",
    "9\\cdot\\sqrt{7}",
    "2\\pi/3",
    "\\frac{5\\pi}{12}",
    "\\sqrt[3]{2}",
    "2^{10}",
    "10!",
    "\\binom{10}{3}",
    "3+4i",
    "50\\%",
    "1e5",
    "2.5",
    ".75",
    "0,111",
    "(1,2)",
    "\\{3, 4\\}",
    "[0, 1)",
    "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}",
    "\\log_{2}8",
    "x=3",
    "\\frac{1}{2006!}",
]


@pytest.mark.parametrize("leaf", LEAVES)
def test_integer_fast_path_builds_the_tree_latex2sympy_builds(leaf: str) -> None:
    prepared = _prepare(leaf)
    reference = _outcome(
        lambda: latex2sympy(
            prepared,
            is_real=True,
            convert_degrees=False,
            normalization_config=None,
            conversion_config=ConversionConfig(lowercase_symbols=False),
        )
    )
    assert _outcome(lambda: _latex_to_sympy(prepared)) == reference


def _outcome(parse: Callable[[], Any]) -> str:
    """The tree's srepr, or the type of what parsing raised (rejected input, alike in both)."""
    try:
        return srepr(parse())
    except Exception as exc:
        return f"raised {type(exc).__name__}"


@pytest.mark.parametrize(
    ("text", "value"),
    [("42", 42), ("0", 0), ("1,000", 1000), ("0042", 42), ("9" * 60, int("9" * 60))],
)
def test_integer_literal_of_plain_digits(text: str, value: int) -> None:
    number = _integer_literal(text)
    assert number == Integer(value)
    assert type(number) is type(Integer(value))


@pytest.mark.parametrize("text", ["1.5", "1e5", "²", "١٢", "", ",", "1 000"])
def test_integer_literal_leaves_everything_else_to_sympy(text: str) -> None:
    assert _integer_literal(text) is None


@pytest.mark.parametrize(
    ("written", "braced"),
    [
        ("\\bar z", "\\overline{z}"),
        ("\\overline z+1", "\\bar{z}+1"),
        ("\\bar\\alpha", "\\bar{\\alpha}"),
        ("\\hat x", "\\hat{x}"),
        ("\\vec v\\cdot\\vec w", "\\vec{v}\\cdot\\vec{w}"),
    ],
)
def test_an_accent_takes_a_bare_argument(written: str, braced: str) -> None:
    parsed, expected = parse_latex(written, 1000), parse_latex(braced, 1000)
    assert parsed is not None and expected is not None
    assert parsed.expr == expected.expr


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("\\ln 5/\\ln 3", "\\frac{\\ln(5)}{\\ln(3)}"),
        ("\\log 5 / \\log 3", "\\frac{\\log(5)}{\\log(3)}"),
        ("\\log_2 8/\\log_2 4", "\\frac{3}{2}"),
        ("\\ln 5\\cdot\\ln 3", "\\ln(5)\\ln(3)"),
        ("\\sin x/\\cos x", "\\tan(x)"),
        ("\\sin 2x/\\cos 2x", "\\tan(2x)"),
        ("\\ln \\frac{5}{2}/\\ln 3", "\\frac{\\ln(5/2)}{\\ln(3)}"),
        # Without a function after the operator the grammar's reading stands.
        ("\\ln 5/3", "\\ln(5/3)"),
    ],
)
def test_a_function_argument_ends_before_another_function(written: str, meant: str) -> None:
    parsed, expected = parse_latex(written, 1000), parse_latex(meant, 1000)
    assert parsed is not None and expected is not None
    assert (parsed.expr - expected.expr).simplify() == 0
