"""Equivalence of normalised answers (semantics + comparison, no extraction)."""

from __future__ import annotations

import pytest

from service.verifiers.math.compare import judge
from service.verifiers.math.normalize import normalize_answer
from service.verifiers.math.parse import parse_latex
from service.verifiers.math.semantics import Ctx, Intervals, Items, Sem, interpret
from service.verifiers.math.structure import parse_structure
from service.verifiers.math.symbolic import exprs_equal

CTX = Ctx(max_length=1000, rel_tol=None)


def sem(text: str) -> Sem:
    node = parse_structure(normalize_answer(text))
    assert node is not None
    return interpret(node, CTX)


def equal(gt: str, answer: str) -> bool:
    return judge(sem(gt), sem(answer), CTX).correct


@pytest.mark.parametrize(
    ("gt", "answer", "expected"),
    [
        # exact numbers
        ("0.5", "\\frac{1}{2}", True),
        ("\\frac{1}{3}", "0.333", False),
        # symbolic
        ("x^2+2x+1", "(x+1)^2", True),
        ("2\\sqrt{2}", "\\sqrt{8}", True),
        ("\\pi", "3.14", False),
        ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}", False),
        ("3+4i", "4i+3", True),
        ("2i", "(1+i)^2", True),
        # sets, lists, tuples
        ("\\{1,2\\}", "\\{2,1\\}", True),
        ("1, 2", "2, 1", True),
        ("(1,2)", "(2,1)", False),
        ("\\{1,2\\}", "(1,2)", False),
        ("(1,2,3)", "(1,2,3)", True),
        ("\\{1,2\\}", "\\{1,2,2\\}", True),
        ("\\{1,2\\}", "\\{1,2,3\\}", False),
        ("\\pm 3", "3, -3", True),
        ("(1,0),(-1,0)", "(\\pm 1, 0)", True),
        ("(0,2,1),(0,-2,1)", "(0, \\pm 2, 1)", True),
        ("(1,0)", "(\\pm 1, 0)", False),
        ("(1,1),(-1,-1)", "(\\pm 1, \\pm 1)", False),  # do the signs vary together? unread
        # assignments
        ("3", "x=3", True),
        ("x=3", "3", True),
        ("(3,-1)", "x=3, y=-1", True),
        ("x=1, y=2", "y=2, x=1", True),
        ("(p,q)=(3,2)", "(3,2)", True),
        ("\\{-2,3\\}", "x=-2 or x=3", True),
        ("\\{1,2\\}", "x_1=2, x_2=1", True),  # the roots of one unknown, indexed
        ("\\{1,2\\}", "x=1, y=2", False),  # two unknowns: a tuple, not a set
        ("\\{1,2\\}", "x_1=1, y_2=2", False),
        ("(2,1)", "x_1=1, x_2=2", False),
        ("x^2+y^2=25", "25", False),
        # equations
        ("y=2x+1", "2x-y+1=0", True),
        ("y=2x+1", "y=2x-1", False),
        ("y=-\\frac{1}{2}x+3", "x+2y=6", True),
        ("x^2=4", "x=2", False),
        # intervals and inequalities
        ("(-\\infty,2)\\cup(3,\\infty)", "x<2 or x>3", True),
        ("(-\\infty,2)\\cup(3,\\infty)", "x\\leq 2 or x\\geq 3", False),
        ("(-\\infty, 2]", "x\\leq 2", True),
        ("(-\\infty, 2]", "x<2", False),
        ("[1,5)", "1\\leq x<5", True),
        ("[1,5)", "(1,5]", False),
        ("(1,2)", "1<x<2", True),
        ("[1,2]", "(1,2)", False),
        ("(-\\infty,\\infty)", "\\mathbb{R}", True),
        ("(-\\infty,3)\\cup(3,\\infty)", "x\\neq 3", True),
        ("(-\\infty,-3)\\cup(-3,3)\\cup(3,\\infty)", "x\\neq\\pm 3", True),
        ("(-\\infty,3)\\cup(3,\\infty)", "x\\neq\\pm 3", False),
        ("x\\neq\\pm 3", "x\\neq 3", False),
        ("[0,2]", "[0,1]\\cup[1,2]", True),
        ("(0,2)", "(0,1)\\cup(1,2)", False),
        ("(1,3)", "x>1 and x<3", True),
        ("x+y>1", "1<x+y", True),
        # the real line without points or an interval
        ("(-\\infty,0)\\cup(0,\\infty)", "\\mathbb{R}\\setminus\\{0\\}", True),
        ("\\mathbb{R}\\setminus\\{0\\}", "(-\\infty,0)\\cup(0,\\infty)", True),
        ("(-\\infty,1)\\cup(1,\\infty)", "\\mathbb{R}-\\{1\\}", True),
        ("\\mathbb{R}\\setminus\\{-1,1\\}", "x\\neq 1, x\\neq -1", True),
        ("(-\\infty,-1)\\cup(1,\\infty)", "\\mathbb{R}\\setminus[-1,1]", True),
        ("\\mathbb{R}\\setminus\\{0\\}", "(-\\infty,0)", False),
        ("\\mathbb{R}\\setminus\\{0\\}", "(0,\\infty)", False),
        ("\\mathbb{R}\\setminus\\{0\\}", "\\mathbb{R}\\setminus\\{1\\}", False),
        ("\\mathbb{R}\\setminus\\{0\\}", "\\mathbb{R}", False),
        ("(-\\infty,-1)\\cup(1,\\infty)", "\\mathbb{R}\\setminus(-1,1)", False),
        ("(-\\infty,0)\\cup(0,\\infty)", "\\mathbb{R}\\setminus\\{a\\}", False),
        # a half-line written with its bound
        ("(0,\\infty)", "\\mathbb{R}_{>0}", True),
        ("[0,\\infty)", "\\mathbb{R}_{\\geq 0}", True),
        ("(-\\infty,-1]", "\\mathbb{R}^{\\le -1}", True),
        ("(0,\\infty)", "\\mathbb{R}_{\\geq 0}", False),
        ("(-\\infty,0)", "\\mathbb{R}_{>0}", False),
        ("(0,\\infty)", "\\mathbb{R}^+", False),
        # ratios of three or more terms: proportional terms, not ":" as division
        ("1:2:3", "2:4:6", True),
        ("1:2:3", "\\frac12:1:\\frac32", True),
        ("1:2:3", "1:3:2", False),
        ("0:1:2", "0:3:4", False),
        ("1:2:3", "0:0:0", False),
        ("1:2:3", "\\frac16", False),
        # matrices
        (
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}",
            True,
        ),
        (
            "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
            "\\begin{pmatrix}1&2\\\\4&3\\end{pmatrix}",
            False,
        ),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1,2)", True),
        (
            "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}",
            "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}^2",
            True,
        ),
        # special values and text
        ("\\infty", "\\infty", True),
        ("\\infty", "-\\infty", False),
        ("\\emptyset", "\\{\\}", True),
        ("\\emptyset", "\\{0\\}", False),
        ("\\text{Monday}", "monday", True),
        ("\\text{Monday}", "Tuesday", False),
    ],
)
def test_equivalence(gt: str, answer: str, expected: bool) -> None:
    assert equal(gt, answer) is expected


def test_hedging_is_reported() -> None:
    outcome = judge(sem("381"), sem("381, 391"), CTX)
    assert not outcome.correct and "hedging" in outcome.reason


def test_repeated_value_is_not_hedging() -> None:
    assert judge(sem("5"), sem("5, 5"), CTX).correct


def test_inequality_reads_as_interval() -> None:
    assert isinstance(sem("x\\geq 2"), Intervals)


def test_rel_tol_applies_only_when_configured() -> None:
    loose = Ctx(max_length=1000, rel_tol=0.01)
    assert not judge(sem("\\pi"), sem("3.14"), CTX).correct
    assert judge(sem("\\pi"), sem("3.14"), loose).correct
    assert not judge(sem("\\pi"), sem("3"), loose).correct


def test_numeric_check_only_rejects() -> None:
    # Equal to 1e-30 numerically at every sample point, but not equal: must be False.
    a, b = parse_latex("2^{-100}", 100), parse_latex("2^{-101}", 100)
    assert a is not None and b is not None
    assert not exprs_equal(a, b)


def test_guarded_expressions_only_match_identical_trees() -> None:
    huge = parse_latex("2^{2^{40}}", 100)
    assert huge is not None and not huge.evaluable
    assert exprs_equal(huge, huge)
    other = parse_latex("2^{2^{40}}+1", 100)
    assert other is not None and not exprs_equal(huge, other)


@pytest.mark.parametrize(
    ("gt", "answer", "expected"),
    [
        ("(5,2),(7,2)", "p=5,q=2; p=7,q=2", True),
        ("p=5,q=2; p=7,q=2", "(7,2),(5,2)", True),
        ("p=5,q=2; p=7,q=2", "q=2,p=7; q=2,p=5", True),
        ("(p,q)=(5,2),(7,2)", "p=5,q=2; p=7,q=2", True),
        ("(5,2),(7,2)", "p=5,q=2; p=7,q=3", False),
        ("(5,2),(7,2)", "p=5,q=2", False),
        ("p=5,q=2; p=7,q=2", "q=5,p=2; q=7,p=2", False),
        ("(5,2),(7,2)", "p=5,q=2; p=7", False),
    ],
)
def test_solutions_written_per_variable(gt: str, answer: str, expected: bool) -> None:
    assert equal(gt, answer) is expected


def test_per_variable_solutions_read_as_rounds() -> None:
    grouped = sem("x=1, y=2, x=3, y=4")
    assert isinstance(grouped, Items) and len(grouped.items) == 2
    assert all(isinstance(r, Items) and len(r.items) == 2 for r in grouped.items)
    assert isinstance(sem("x=1, x=2"), Items) and len(sem("x=1, x=2").items) == 2


def test_reordered_products_of_unevaluated_trees() -> None:
    assert equal("2^{20000}\\cdot 3+1", "1+3\\cdot 2^{20000}")
    assert not equal("2^{20000}\\cdot 3+1", "1+3\\cdot 2^{20001}")


@pytest.mark.parametrize(
    ("gt", "answer", "expected"),
    [
        ("\\angle ABC", "\\angle CBA", True),  # the angle at B either way round
        ("\\angle ABC", "\\angle{ABC}", True),
        ("m\\angle ABC", "m\\angle CBA", True),
        ("\\angle ACB", "\\angle ABC", False),  # not a product of A, B and C
        ("\\angle BAC", "\\angle ABC", False),
        ("\\angle QPR", "\\angle PQR", False),
        ("m\\angle CAB", "m\\angle ABC", False),
    ],
)
def test_an_angle_is_named_by_its_vertex(gt: str, answer: str, expected: bool) -> None:
    assert equal(gt, answer) is expected
