"""Pure math verifier (kind ``math``): is the completion's final answer the ground truth?

Contract: ``verify(completion, ground_truth, config, prompt=None) -> Verdict``.

- ``correct`` (1.0): the extracted final answer is mathematically equal to the ground truth.
- ``incorrect`` (0.0): it is not, it could not be read, it hedges between several different
  answers, or a safety guard refused to evaluate it.
- ``unparseable`` (0.0): no final answer was found in the completion.
- invalid ground truth (None, empty, bool, not a string/number, NaN) or a bad config: ``verify``
  raises ``InvalidGroundTruth``; the caller maps it to status ``invalid`` (reward None).

Decisions:
- Comparison is exact (Fractions, canonical digit strings, sympy, sums and products compared
  up to the order of their operands), never by float rounding, unless the config sets
  ``rel_tol`` or ``min_significant_digits``. When sympy cannot settle two exact constants in
  time, a bounded mpmath interval check may accept (``details["method"] == "numeric-mp"``):
  a proof for algebraic numbers (root separation bound), >= 100 agreeing digits on top of that
  bound with transcendental ones; no side with a decimal literal ever takes part.
- Percent: ``50%`` equals both ``50`` and ``0.5`` (the sign read as a label or as /100); as a
  label only against a number of magnitude 1 or more (``0.25%`` is never ``0.25``).
- Units, currency and degree signs after a complete value are ignored (``5 cm`` == ``5``);
  scale words are not units (``5 million`` == ``5000000``).
- ``1,234`` is one thousand two hundred thirty-four; ``1, 234`` and ``1,2`` are lists.
- ``\\{1, 2\\}`` is a set and a bare list ``1, 2`` is unordered; ``(1, 2, 3)`` is ordered; a set
  never equals a tuple; ``(a, b)`` is an ordered pair or, against an interval, an open interval.
- ``x = 3`` answers ``3``; an equation equals another up to rearrangement and a constant factor.
- Several different final answers (``\\boxed{3} or \\boxed{4}``, ``either 3 or 4``) are hedging:
  never correct. Repeating one answer is fine. Against a ground truth that lists several values
  (``(3, 3), (1, 1)``), boxes separated by prose (``\\boxed{(3,3)} for part (a) and
  \\boxed{(1,1)}``) are the parts of one answer, unless the prose takes a box back.
- Solutions written variable by variable (``p=5, q=2; p=7, q=2``) are the tuples
  ``(5, 2), (7, 2)``. ``\\$`` inside math is currency, not a delimiter.
- Conventions (config, default off; part of the version hash only when set):
  ``decimal_separator: ","`` reads ``2,74`` as 2.74 (a list needs ``2, 74``);
  ``min_significant_digits: N`` accepts a decimal of >= N significant digits within one unit in
  the N-th significant digit of an exact value (``0.0833333333333333`` for ``1/12`` at N = 12).
- Multiple choice (ground truth A-E): the stated letter decides; a value answer is mapped to an
  option only when the prompt lists options and exactly one of them equals it. A ground truth
  with its value (``\\textbf{(B) }12``) also accepts that value alone. Listing further options
  after the first (``(A)(B)(C)(D)(E)``) is hedging.
- ``1011_2`` equals ``1011_{2}`` and the bare digits ``1011``, never ``1011_3``.
- ``\\mathbb{R}`` and "all real numbers" are the interval ``(-\\infty, \\infty)``; set-builder
  ``\\{x \\mid x > 2\\}`` is the set its condition describes. ``c \\in \\mathbb{R}`` next to an
  answer that uses ``c`` qualifies the parameter and is not a further value.
- A trailing universal qualifier over a whole number set (``\\text{ for all } x \\in
  \\mathbb{R}``, ``\\forall x``, ``\\text{ for some constant } c``) is dropped when the answer
  uses its variable; a condition such as ``\\text{ for } x \\geq 0`` is kept.
- "no solution", "there are no real solutions", "None" and ``\\emptyset`` are the empty set.
- ``\\cos 30^\\circ`` is cos(pi/6): a degree sign inside a trigonometric function is read.
- ``x \\neq -4, 6`` excludes both points; comma-joined inequalities that overlap are
  conditions (``x > 1, x < 3`` is ``(1, 3)``), disjoint ones the pieces of a union.
- ``\\frac{-1 \\pm \\sqrt{5}}{2}`` is two values; a system ``\\left\\{ x=1 \\\\ y=2
  \\right.`` or ``\\begin{cases}`` of relations is the list ``x=1, y=2``.
"""

from __future__ import annotations

from service.verifiers.base import installed_versions

from .config import DEFAULT_CONFIG, validate_config
from .parse import warm_up
from .verifier import CODE_VERSION, verify

_VERDICT_LIBRARIES = ("sympy", "mpmath", "latex2sympy2_extended", "antlr4-python3-runtime")


LIBRARY_VERSIONS: dict[str, str] = installed_versions(_VERDICT_LIBRARIES)

__all__ = [
    "CODE_VERSION",
    "DEFAULT_CONFIG",
    "LIBRARY_VERSIONS",
    "validate_config",
    "verify",
    "warm_up",
]
