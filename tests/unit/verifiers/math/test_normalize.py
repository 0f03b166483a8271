"""String normalisation: wrappers, spacing, synonyms, units."""

from __future__ import annotations

import pytest

from service.verifiers.math.normalize import (
    cap,
    drop_invisible,
    find_closing_brace,
    normalize_answer,
    read_decimal_commas,
    strip_delimiters,
    text_canon,
)
from service.verifiers.math.units import strip_units


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("$\\frac{1}{2}$", "\\frac{1}{2}"),
        ("\\(x+1\\)", "x+1"),
        ("\\[ 42 \\]", "42"),
        ("$$7$$", "7"),
        ("\\boxed{\\boxed{3}}", "3"),
        ("$a$ or $b$", "$a$ or $b$"),
    ],
)
def test_strip_delimiters(raw: str, expected: str) -> None:
    assert strip_delimiters(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\frac12", "\\frac{1}{2}"),
        ("\\sqrt3", "\\sqrt{3}"),
        ("\\left( -\\infty, 2 \\right]", "(-\\infty, 2]"),
        ("x \\le 2", "x\\leq 2"),
        ("x \\geqslant 2", "x\\geq 2"),
        ("\\varnothing", "\\emptyset"),
        ("\\{\\}", "\\emptyset"),
        ("\\text{infinity}", "\\infty"),
        ("50\\%", "50%"),
        ("25 percent", "25%"),
        ("5^{\\circ}", "5^\\circ"),
        ("10⁻⁷", "10^{-7}"),
        ("3 × 4", "3\\times 4"),
        ("x=3.", "x=3"),
        ("either 3 or 4", "3 or 4"),
        ("$x=3$ or $x=4$", "x=3 or x=4"),
        ("16,\\!386.20", "16,386.20"),
        ("1\\,234", "1,234"),
        ("\\mathrm{e}^2", "e^2"),
        ("\\textbf{(C)}", "\\text{(C)}"),
        ("\\text{(1, 2)}", "(1, 2)"),
        ("\\text{[-1, 2.5)}", "[-1, 2.5)"),
        ("\\text{(A), (C)}", "\\text{(A),(C)}"),
        ("\\text{(5)}", "\\text{(5)}"),
        ("\\text{(1, 2) is the point}", "\\text{(1, 2)is the point}"),
        ("x\\!=\\!3", "x=3"),
        ("isosceles", "isosceles"),
        ("5!", "5!"),
        ("\\cos 30^\\circ", "\\cos(\\frac{30\\pi}{180})"),
        ("\\sin(45°)", "\\sin(\\frac{45\\pi}{180})"),
        ("\\cos x^\\circ", "\\cos x^\\circ"),
        ("\\text{There are no real solutions.}", "\\emptyset"),
        ("\\text{None}", "\\emptyset"),
        ("\\text{no}", "\\text{no}"),
        ("f(x)=x \\text{ for all } x \\in \\mathbb{R}", "f(x)=x"),
        ("f(x)=cx, \\forall c\\in\\mathbb{R}", "f(x)=cx"),
        ("f(x)=x \\text{ for all } x > 0", "f(x)=x\\text{for all}x>0"),
        ("y=2 \\text{ for all } x", "y=2\\text{for all}x"),
        ("\\left\\{ x=1 \\\\ y=2 \\right.", "x=1, y=2"),
        ("\\begin{cases} x &= 1 \\\\ y &= 2 \\end{cases}", "x=1, y=2"),
        (
            "\\begin{cases} 1 & x=0 \\\\ 0 & x\\neq 0 \\end{cases}",
            "\\begin{cases}1&x=0\\\\0&x\\neq 0\\end{cases}",
        ),
        ("5 \\\\", "5"),
        ("\\textdollar 5", "5"),
        ("\\color{red} 5", "5"),
        ("n \\equiv 1 \\pmod 3", "n\\equiv 1\\pmod{3}"),
        ("\\max\\{a, b\\}", "\\max(a, b)"),
        ("11{:}30", "11:30"),
        # an ordinal's own suffix is not a power; another one is left alone
        ("5^{\\text{th}}", "5"),
        ("5^\\text{th}", "5"),
        ("21^{st}", "21"),
        ("12^{\\mathrm{th}}", "12"),
        ("2^{st}", "2^{st}"),
        ("x^{th}", "x^{th}"),
        # vulgar fractions, also in mixed numbers
        ("½", "\\frac{1}{2}"),
        ("2½", "2\\frac{1}{2}"),
        ("⅞", "\\frac{7}{8}"),
        ("1⁄2", "1/2"),
        ("2\\text{ out of }3", "\\frac{2}{3}"),
        ("2 out of 3", "\\frac{2}{3}"),
        ("{5 \\choose 2}", "\\binom{5}{2}"),
        ("2{n+1 \\choose k}", "2\\binom{n+1}{k}"),
        ("5 \\choose 2", "\\binom{5}{2}"),
        ("\\dbinom{5}{2}", "\\binom{5}{2}"),
        ("\\tbinom{5}{2}", "\\binom{5}{2}"),
        ("∛8", "\\sqrt[3]{8}"),
        ("2∛2", "2\\sqrt[3]{2}"),
        ("∜x", "\\sqrt[4]x"),
        ("√(x+1)", "\\sqrt{x+1}"),
        ("√11", "\\sqrt{11}"),
        ("ℝ", "\\mathbb{R}"),
        ("x ∈ ℤ", "x\\in\\mathbb{Z}"),
        ("ℕ, ℚ, ℂ", "\\mathbb{N},\\mathbb{Q},\\mathbb{C}"),
        ("１２３", "123"),
        ("－５", "-5"),
        ("（１，２）", "(1,2)"),
        ("５０％", "50%"),
        ("x²", "x^{2}"),  # a superscript stays a power: no NFKC
        ("ｘ²", "x^{2}"),
        ("1, 2, 3, ...", "1, 2, 3,\\ldots"),  # a list that goes on keeps its ellipsis
        ("1, 2, 3, . . .", "1, 2, 3,\\ldots"),
        ("1, 2, 3, ..", "1, 2, 3,\\ldots"),
        ("1, 2, 3...", "1, 2, 3,\\ldots"),
        ("1, 2, 3, \\ldots", "1, 2, 3,\\ldots"),
        ("1, 2, 3.", "1, 2, 3"),  # a full stop is punctuation
        ("3...", "3"),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\\phantom{b{c}}d", "ad"),
        ("a\\hphantom {x}y", "ay"),
        ("a\\vphantom5d", "ad"),  # an argument without braces is one token
        ("{\\color{white}x}y", "y"),  # white to the end of its group
        ("\\color{White} x$y", "$y"),  # ... or of its formula
        ("\\(\\color{white}x\\) y", "\\(\\) y"),
        ("\\textcolor{white}{x}y", "y"),
        ("\\textcolor[rgb]{1,1,1}{x}y", "y"),
        ("\\textcolor[RGB]{255, 255, 255}{x}y", "y"),
        ("\\textcolor[HTML]{FFFFFF}{x}y", "y"),
        ("\\color{#fff}x", ""),
        ("\\color[gray]{1}x", ""),
        ("7{\\color{white}0}", "7"),
        ("\\boxed{\\color{white}5}", "\\boxed{}"),  # the box is an argument: it stays, empty
        # Ink that shows stays: normalisation drops the command and keeps its text.
        ("\\color[gray]{0.5}x", "\\color[gray]{0.5}x"),
        ("\\textcolor{red}{x}y", "\\textcolor{red}{x}y"),
        ("\\colorbox{white}{x}", "\\colorbox{white}{x}"),
    ],
)
def test_drop_invisible(raw: str, expected: str) -> None:
    assert drop_invisible(raw) == expected


def test_normalize_keeps_list_and_thousands_apart() -> None:
    assert normalize_answer("1,234") != normalize_answer("1, 234")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("5\\text{cm}", "5"),
        ("5\\text{cm}^2", "5"),
        ("12 apples", "12"),
        ("60 km/h", "60"),
        ("$18", "18"),
        ("30^\\circ", "30"),
        ("7.50 dollars", "7.50"),
        ("\\text{Monday}", "\\text{Monday}"),
        ("5x", "5x"),
        ("5 m", "5 m"),
        ("5m", "5m"),
        ("3 or 4", "3 or 4"),
        # the fast-failing checks that keep 100 KB of digits cheap still see these
        ("5 million", "5\\times10^{6}"),
        ("3 Billions", "3\\times10^{9}"),
        ("2\\text{ thousand}", "2\\times10^{3}"),
        ("4 square units", "4"),
        ("12 Km", "12"),
        ("1" * 60 + " cm", "1" * 60),
    ],
)
def test_strip_units(raw: str, expected: str) -> None:
    assert strip_units(raw) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [("\\text{Monday}", "monday"), ("No Solution", "\\textbf{no solution}"), ("(C)", "c")],
)
def test_text_canon_is_case_and_space_insensitive(a: str, b: str) -> None:
    assert text_canon(a) == text_canon(b)


def test_cap_marks_truncation() -> None:
    assert cap("x" * 600).endswith("...") and len(cap("x" * 600)) == 500
    assert cap("short") == "short"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2,74", "2.74"),
        ("-2,74+1,5x", "-2.74+1.5x"),
        ("2, 74", "2, 74"),
        ("1,234,567", "1,234,567"),
        ("x_{1,2}", "x_{1,2}"),
        ("a_1,2", "a_1,2"),
        ("(1,5; 2,5)", "(1.5; 2.5)"),
        ("2.74", "2.74"),
    ],
)
def test_read_decimal_commas(text: str, expected: str) -> None:
    assert read_decimal_commas(text) == expected


def test_decimal_comma_only_when_asked() -> None:
    assert normalize_answer("$2{,}74$") == "2,74"
    assert normalize_answer("$2{,}74$", decimal_comma=True) == "2.74"


def test_escaped_dollar_inside_math_is_unwrapped() -> None:
    assert strip_delimiters("$\\$18$") == "\\$18"
    # kept as the currency of a number (5 dollars are not 5 cents), dropped with the units
    assert normalize_answer("$\\$18$") == "\\$18"
    assert normalize_answer("$\\$$") == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{5}", 2),
        ("{5\\\\}", 4),  # a line break before the closing brace
        ("{5\\}}", 4),  # an escaped brace does not close the group
        ("{a{b}c}", 6),
        ("{5", -1),
    ],
)
def test_find_closing_brace(text: str, expected: int) -> None:
    assert find_closing_brace(text, 0) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2\\operatorname{cis}(\\pi/2)", "2(\\cos(\\pi/2)+i\\sin(\\pi/2))"),
        ("\\mathrm{cis}\\frac{\\pi}{3}", "(\\cos(\\frac{\\pi}{3})+i\\sin(\\frac{\\pi}{3}))"),
        ("3\\operatorname{cis}\\theta", "3(\\cos(\\theta)+i\\sin(\\theta))"),
        # the end of a bare argument is not guessed
        ("\\operatorname{cis} 2x+1", "\\operatorname{cis}2x+1"),
    ],
)
def test_cis_is_cos_plus_i_sin(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected
