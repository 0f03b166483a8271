"""Remembered full-context predictions give ANTLR's own parse trees, and spare its LL pass."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from antlr4 import CommonTokenStream, InputStream
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from latex2sympy2_extended.antlr_parser import PSLexer, PSParser

from service.verifiers.math import parse, verify
from service.verifiers.math.memo import clear_caches
from service.verifiers.math.prediction import RememberingSimulator, remember_predictions

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def _parser(text: str) -> Any:
    lexer = PSLexer(InputStream(text))
    lexer.removeErrorListeners()
    parser = PSParser(CommonTokenStream(lexer))
    parser.removeErrorListeners()
    return parser


def _tree(parser: Any) -> str:
    try:
        return str(parser.math().toStringTree(recog=parser))
    except Exception as exc:  # a syntax error raises where the listener would have
        return f"error: {type(exc).__name__}"


def _prepared_leaves() -> list[str]:
    """Every text the verifier hands to the parser on the regression files and the bench's
    labelled cases (recorded through ``_latex_to_sympy``)."""
    cases = []
    for name in ("fixed_false_negatives.json", "false_positive_pairs.json"):
        cases += json.loads((HERE / name).read_text(encoding="utf-8"))
    with (ROOT / "bench" / "data" / "math_cases.jsonl").open(encoding="utf-8") as fh:
        cases += [json.loads(line) for line in fh if line.strip()]
    seen: list[str] = []
    original = parse._latex_to_sympy
    clear_caches()  # a leaf parsed by an earlier test would not reach the parser

    def record(prepared: str) -> Any:
        seen.append(prepared)
        return original(prepared)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse, "_latex_to_sympy", record)
        for case in cases:
            verify(case["completion"], case["ground_truth"], case.get("config") or {})
    return sorted(set(seen))


POLYNOMIALS = ["x^{2}+3x-40", "x^2-7x+12", "x^{2}-10x+16", "2x^2-3x+1", "y^{3}+y-1", "a_{1}+a_{2}"]


def test_every_recorded_leaf_parses_to_antlrs_own_tree_first_time_and_remembered() -> None:
    leaves = _prepared_leaves() + POLYNOMIALS
    assert len(leaves) > 100
    for text in leaves:
        expected = _tree(_parser(text))
        first = _tree(remember_predictions(_parser(text)))
        again = _tree(remember_predictions(_parser(text)))
        assert first == expected == again, text


_ATOMS = ["x", "y", "2", "15", "x^{2}", "x^2", "x_1", "a_{n}^{2}", "\\pi", "e", "i", "\\alpha"]
_INFIX = ["+", "-", "\\cdot ", "", "/", "=", "<", "\\le ", ",", "\\cup ", "\\setminus "]


def _expression(rng: random.Random, depth: int = 0) -> str:
    """A random answer-like expression: the same tokens in many different rule contexts."""
    r = rng.random()
    if depth > 1 or r < 0.3:
        return rng.choice(_ATOMS)
    inner = [_expression(rng, depth + 1) for _ in range(2)]
    shapes = [
        f"{inner[0]}{rng.choice(_INFIX)}{inner[1]}",
        f"\\frac{{{inner[0]}}}{{{inner[1]}}}",
        f"({inner[0]}){rng.choice(['', '^{2}', '^2', '!'])}",
        f"|{inner[0]}|",
        f"\\sqrt{{{inner[0]}}}",
        f"\\{{{inner[0]},{inner[1]}\\}}",
        f"[{inner[0]},{inner[1]})",
        f"\\sin {inner[0]}",
    ]
    return rng.choice(shapes)


def test_generated_expressions_parse_to_antlrs_own_trees() -> None:
    """The same decision at the same remaining tokens in different rule contexts: a key without
    the invoking states gives some of these the wrong tree."""
    rng = random.Random(20261124)
    texts = sorted({_expression(rng) for _ in range(500)})
    assert len(texts) > 300
    for text in texts:
        assert _tree(remember_predictions(_parser(text))) == _tree(_parser(text)), text


@pytest.fixture
def full_context_passes() -> Iterator[list[int]]:
    """Counts ANTLR's full-context (LL) predictions while the test runs."""
    calls: list[int] = []
    original = ParserATNSimulator.execATNWithFullContext

    def counted(self: Any, *args: Any) -> Any:
        calls.append(1)
        return original(self, *args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ParserATNSimulator, "execATNWithFullContext", counted)
        yield calls


def test_a_polynomial_of_a_seen_shape_needs_no_full_context_pass(
    full_context_passes: list[int],
) -> None:
    # Plain ANTLR runs its LL pass for this shape every time.
    for text in ("x^{2}+5x-13", "x^{2}+5x-13"):
        _tree(_parser(text))
    assert len(full_context_passes) >= 2
    # Through the verifier's parser: once for the shape, never again for the same token types.
    assert parse.parse_latex("x^{2}+17x-91", 1000) is not None
    full_context_passes.clear()
    for text in ("x^{2}+23x-58", "x^{2} + 4 x - 6", "y^{2}+9y-1"):
        parsed = parse.parse_latex(text, 1000)
        assert parsed is not None and parsed.expr.is_polynomial()
    assert full_context_passes == []


def test_the_verifiers_parser_remembers_predictions() -> None:
    parser = parse._converter_class()(None).create_parser("x^{2}+1")
    assert isinstance(parser._interp, RememberingSimulator)


def test_the_remembered_predictions_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.verifiers.math import prediction

    monkeypatch.setattr(prediction, "MAX_PREDICTIONS", 3)
    monkeypatch.setattr(prediction, "_predictions", {})
    texts = ["x^{2}+3x-40", "x^{2}-3x+40", "(x+1)(x-2)", "x^2-x-1", "a_{1}+a_{2}+a_{3}"]
    for text in texts:
        expected = _tree(_parser(text))
        assert _tree(remember_predictions(_parser(text))) == expected
        assert prediction.remembered_count() <= 3
