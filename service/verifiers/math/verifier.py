"""The math verifier pipeline: ground truth -> extraction -> normalisation -> comparison.

Invalid ground truths and configs raise ``InvalidGroundTruth`` (the caller turns it into
status ``invalid``). Unexpected exceptions are not swallowed: an internal failure must surface
as ``error`` (reward None), never as a silent 0.0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from service.verifiers.base import InvalidGroundTruth, Status, Verdict

from .choice import choice_from_prompt, ground_truth_option, option_set, read_choice
from .compare import Outcome, distinct, judge
from .config import MathConfig, parse_config
from .extract import FORMS, Extraction, all_boxed, extract_answer, part_boxes
from .memo import memoize
from .normalize import cap, normalize_answer
from .parse import warm_up
from .semantics import Ctx, Items, Scalar, Sem, interpret
from .structure import Junction, Node, parse_structure

# 1.1.0: multi-part boxed answers, numeric-mp for hard closed forms, commutative rearrangements
# of unevaluated trees, per-variable solution lists, "\$" inside math, and the
# decimal_separator / min_significant_digits conventions.
# 1.2.0: option letter plus value ground truths and listed options as hedges, numbers in a base,
# the real line as an interval, set-builder notation, qualified parameters, compound and
# negative-power units, leading approximation signs, "p - q" read as an expression.
# 1.3.0: trigonometric functions of angles in degrees, excluded points and comma-joined
# conditions, "no solution"/"None"/the empty set, universal and parameter qualifiers, systems in
# a left brace or cases, plus-minus inside a term, e^{i theta} forms, formulas joined by "and"/"or"
# at the end of a completion, "\\" closing a box, \textdollar, \color, \pmod, \max\{..\}.
# 1.4.0: a bare command as the argument of \frac or \sqrt (\frac\pi4), and "d" before a letter
# read as a factor outside integrals and derivatives, a word answer's leading article dropped,
# an option's label with its value read against the value alone or the letter, a fraction
# followed by words, several option letters as one ground truth.
# 1.5.0: a function's bare argument ending before "/" or "\cdot" and another function
# (\ln 5/\ln 3), an accent's bare argument (\bar z), the real line without points or an interval
# (\mathbb{R}\setminus\{0\}), x \neq \pm a, a tuple of numbers in \text{}, and a value or box
# ruled out after the answer ("4, not 3").
# 1.6.0: a half-line written with its bound (\mathbb{R}_{>0} is (0, \infty); \mathbb{R}^+ stays
# unread, its convention on 0 varies), a number in words ("five", "three quarters"), a box that
# restates the lead-in (\boxed{\text{The answer is } 5}), "the answer is that $n = 12$ is the
# only solution", ratios of three or more terms compared term by term (1:3:2 is not 1:2:3),
# a last formula that says where a value is attained ("attained at $a=b=c=1$") is passed over,
# repeating decimals written 0.1(6) or 0.1666\ldots, indexed roots (x_1 = 1, x_2 = 2) as a list
# of solutions, one \pm inside a tuple ((\pm 1, 0) is two points), r \operatorname{cis} \theta.
# 1.6.1: an answer whose text is the ground truth's inside \text{} (or \textbf, \mathrm, ...)
# is identical to it: \boxed{\textbf{(5)}} against (5).
# 1.7.0: units compared when both sides name one the unit table knows (5 g is not 5 kg, \$5 not
# 5 cents, 5 PM not 5 AM; nothing converted), a trailing label that denies or changes the value
# kept (x = 3 \text{ is extraneous}, 5 \text{ squared}), units in parentheses, times of day as
# minutes since midnight (2:30 PM is not 1:15 PM), angle names by their vertex (\angle ABC is
# not \angle ACB), ordinal suffixes, Unicode vulgar fractions, "2 out of 3", an upright
# \mathrm{i}, "The answer is not 5." finding no answer, and "the answer is" in a sentence about
# a mistake, a condition or another version of the question ("a common mistake is to think the
# answer is 5") neither replacing the box nor standing as the answer; a percent sign read as a
# unit only against a number of magnitude 1 or more (0.25% is not 0.25), a numeral with digits
# its base lacks (5_3) no number, formulas after "where" and a reason in parentheses after the
# answer not part of it; a hyphen between letters kept (a-b is not ab), \not= and \not\in
# read, \phantom and boxes never shown (HTML comments, \iffalse) dropped, quoted answers (the
# answer key's, a textbook's) nobody's, the answer after </think> taken when one is stated
# there, and zero-width characters dropped.
# 1.7.1: TeX comments (an unescaped % to the end of its line; not a percent sign after a number)
# and what prints nothing (\hphantom, \vphantom, white \textcolor or \color) dropped before
# extraction, a further clause after the stated value ("Answer: 7; the remainder is 5") not read
# for the answer, a list ending in dots kept infinite, {n \choose k} and \dbinom as \binom,
# Unicode roots and number sets, and full-width forms as ASCII.
# 1.7.2: a constant with a logarithm against a long decimal told apart before simplify() (it
# never returned); someone else's answer after the box (expected, given, a friend's, an example
# of the format, a first attempt's box) and a denied value ("cannot be 5", "5 is not the answer")
# not read as the answer, but "the answer is" after "but" the completion's own; boxes in a
# comment environment, \iftrue's \else, after \end{document} or a redefinition of \boxed, in a
# zero scalebox, near-white ink, a macro defined to print nothing or a hidden HTML element
# dropped; primes kept (f'(x) is not f(x); f^{\prime}(x) is f'(x)); a label that changes the
# value (lakh, twelfths, times three, recurring, 5\text{e-3}, 1\text{ in 6}, \$2.5\text{M})
# never dropped as a unit; "12 at x = 3" answers 12; full-width option letters, direction marks
# and font sizes read; an odd root of a negative number real (\sqrt[3]{-27} is -3); a ground
# truth "C: 7" an option with its value; "2\sqrt{3} \approx 3.46" answers a rounded 3.46.
CODE_VERSION = "1.7.2"

_PROSE_GROUND_TRUTH_CHARS = 200
_WORDS = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}\s+[A-Za-z]{3,}")


@dataclass(frozen=True, slots=True)
class GroundTruth:
    """A prepared (and memoised) ground truth."""

    normalized: str
    choice: str | None
    sem: Sem
    # The value written after the option letter (``\\textbf{(B) }12``), prepared the same way.
    choice_value: GroundTruth | None = None
    # Two or more options that together are the answer ("ABD", "A, B, D"): JEEBench's
    # multi-correct questions.
    options: frozenset[str] | None = None


def coerce_ground_truth(ground_truth: Any) -> str:
    """The ground truth as text; numbers are accepted, anything else unusable is invalid."""
    if ground_truth is None or isinstance(ground_truth, bool):
        raise InvalidGroundTruth("ground truth must be a non-empty string or a number")
    if isinstance(ground_truth, int):
        try:
            return str(ground_truth)
        except ValueError as exc:  # beyond Python's int->str digit limit
            raise InvalidGroundTruth("integer ground truth is too large to convert") from exc
    if isinstance(ground_truth, float):
        if math.isnan(ground_truth):
            raise InvalidGroundTruth("ground truth is NaN")
        if math.isinf(ground_truth):
            return "\\infty" if ground_truth > 0 else "-\\infty"
        return repr(ground_truth)
    if isinstance(ground_truth, str):
        if not ground_truth.strip():
            raise InvalidGroundTruth("ground truth is empty")
        return ground_truth
    raise InvalidGroundTruth(
        f"ground truth must be a string or a number, not {type(ground_truth).__name__}"
    )


def _interpret_parts(parts: list[str], ctx: Ctx) -> Sem | None:
    nodes: list[Node] = [n for n in (parse_structure(p) for p in parts) if n is not None]
    if not nodes:
        return None
    node = nodes[0] if len(nodes) == 1 else Junction(tuple(nodes), ("comma",) * (len(nodes) - 1))
    return interpret(node, ctx)


def _ctx(config: MathConfig) -> Ctx:
    return Ctx(config.max_length, config.rel_tol, config.min_digits, config.decimal_comma)


@memoize(maxsize=2048, max_chars=4000)
def prepare_ground_truth(text: str, ctx: Ctx) -> GroundTruth:
    """Normalise and interpret a ground truth once; 16 completions usually share it."""
    s = text
    if "\\boxed" in s or "\\fbox" in s:
        # A reference answer is authoritative: every box in it is part of the answer.
        boxes = all_boxed(s)
        if boxes:
            s = ", ".join(boxes)
    elif "####" in s:
        s = s.rsplit("####", 1)[1]
    elif len(s) > _PROSE_GROUND_TRUTH_CHARS and _WORDS.search(s):
        # A worked solution given as ground truth: read its final answer like a completion.
        found = extract_answer(s, frozenset(FORMS))
        if found is not None:
            s = found.text
    normalized = normalize_answer(s, ctx.decimal_comma)
    if not normalized:
        raise InvalidGroundTruth("ground truth is empty after normalisation")
    sem = _interpret_parts([normalized], ctx)
    options = option_set(normalized)
    letter, value = ground_truth_option(normalized) if options is None else (None, None)
    choice_value = prepare_ground_truth(value, ctx) if value else None
    return GroundTruth(normalized, letter, sem or Scalar(normalized), choice_value, options)


def _lists_several_values(gt: GroundTruth, ctx: Ctx) -> bool:
    """A ground truth such as ``(3, 3), (1, 1)`` or ``x_1 = 2, x_2 = 5``: several parts."""
    sem = gt.sem
    return isinstance(sem, Items) and not sem.ordered and len(distinct(sem.items, ctx)) > 1


def _judge_answer(found: Extraction, gt: GroundTruth, ctx: Ctx) -> tuple[Outcome, str, Extraction]:
    outcome, answer = _judge_parts(found.parts, gt, ctx)
    if outcome.correct or not _lists_several_values(gt, ctx):
        return outcome, answer, found
    wide = part_boxes(found)
    if not wide:
        return outcome, answer, found
    # Each part boxed on its own with prose between ("\boxed{(3,3)} for part (a) and
    # \boxed{(1,1)}"): one answer in parts. Against a single value the boxes stay a hedge.
    wide_outcome, wide_answer = _judge_parts(wide, gt, ctx)
    if not wide_outcome.correct:
        return outcome, answer, found
    return wide_outcome, wide_answer, Extraction(wide, f"{found.source}/parts")


def _judge_parts(found_parts: tuple[str, ...], gt: GroundTruth, ctx: Ctx) -> tuple[Outcome, str]:
    normalized = (normalize_answer(x, ctx.decimal_comma) for x in found_parts)
    parts = [p for p in dict.fromkeys(normalized) if p]
    answer = ", ".join(parts)
    if not parts:
        return Outcome(False, "none", "the extracted answer is empty"), answer
    if len(parts) == 1 and _unwrapped(parts[0]) == _unwrapped(gt.normalized):
        return Outcome(True, "string", "identical to the ground truth after normalisation"), answer
    sem = _interpret_parts(parts, ctx)
    if sem is None:
        return Outcome(False, "none", "the extracted answer could not be read"), answer
    return judge(gt.sem, sem, ctx), answer


_TEXT_OPEN = "\\text{"


def _unwrapped(normalized: str) -> str:
    """The text inside ``\\text{...}`` when that (normalisation's spelling of \\textbf,
    \\mathrm, ...) wraps the whole answer, as often as it does: \\textbf{(5)} says (5)."""
    while normalized.startswith(_TEXT_OPEN) and normalized.endswith("}"):
        depth = 0
        for position, char in enumerate(normalized):
            depth += (char == "{") - (char == "}")
            if depth == 0 and position >= len(_TEXT_OPEN) - 1:
                break
        if position != len(normalized) - 1:  # the first group closes before the end
            return normalized
        normalized = normalized[len(_TEXT_OPEN) : -1]
    return normalized


_OPTION_LABEL = re.compile(r"\([A-E]\)")


def _judge_option_value(
    found: Extraction, gt: GroundTruth, ctx: Ctx
) -> tuple[Outcome, str, Extraction] | None:
    """An answer that names an option and its value (``\\text{(C) } 12``) against a ground
    truth that is the value alone: the value is the answer, if it is right; else None."""
    if not _OPTION_LABEL.search(found.text):
        return None  # most wrong answers: no label to read, nothing more to normalise
    _, value = ground_truth_option(normalize_answer(found.text, ctx.decimal_comma))
    if not value:
        return None
    outcome, answer, _ = _judge_answer(Extraction((value,), found.source), gt, ctx)
    if not outcome.correct:
        return None
    return outcome, answer, Extraction((value,), f"{found.source}/option value")


def _judge_options(named: frozenset[str], options: frozenset[str]) -> tuple[Outcome, str]:
    """Several options asked for together: the answer must name exactly those."""
    answer = "".join(sorted(named))
    wanted = "".join(sorted(options))
    if named == options:
        return Outcome(True, "choice", f"options {answer} match"), answer
    return Outcome(False, "choice", f"options {answer} are not {wanted}"), answer


def _judge_choice(
    found: Extraction, gt: GroundTruth, prompt: str | None, ctx: Ctx
) -> tuple[Outcome, str, Extraction]:
    assert gt.choice is not None
    letters = read_choice(found.text)
    if letters is None and gt.choice_value is not None:
        # No letter, but the ground truth names the option's value too: "12" answers "(B) 12".
        return _judge_answer(found, gt.choice_value, ctx)
    outcome, answer = _judge_letters(letters, found, gt.choice, prompt, ctx)
    return outcome, answer, found


def _judge_letters(
    letters: frozenset[str] | None, found: Extraction, choice: str, prompt: str | None, ctx: Ctx
) -> tuple[Outcome, str]:
    answer = normalize_answer(found.text, ctx.decimal_comma)
    if letters is None and prompt:
        letters = choice_from_prompt(found.text, prompt, ctx)
    if not letters:
        return Outcome(False, "choice", "no option letter in the answer"), answer
    if len(letters) > 1:
        return Outcome(False, "choice", "several different options given (hedging)"), answer
    letter = next(iter(letters))
    if letter == choice:
        return Outcome(True, "choice", f"option {letter} matches"), letter
    return Outcome(False, "choice", f"option {letter} is not {choice}"), letter


def _verdict(
    status: Status, found: Extraction | None, answer: str, gt: GroundTruth, outcome: Outcome
) -> Verdict:
    reward = 1.0 if status == "correct" else 0.0
    details = {
        "extracted": cap(found.text) if found else "",
        "normalized": {"answer": cap(answer), "ground_truth": cap(gt.normalized)},
        "reason": outcome.reason,
        "method": outcome.method,
        "source": found.source if found else "none",
    }
    return Verdict(reward=reward, status=status, components={"accuracy": reward}, details=details)


def run(completion: Any, ground_truth: Any, config: MathConfig, prompt: str | None) -> Verdict:
    """Verify with an already validated config."""
    ctx = _ctx(config)
    gt = prepare_ground_truth(coerce_ground_truth(ground_truth), ctx)
    text = completion if isinstance(completion, str) else ""
    found = extract_answer(text, config.forms)
    if found is None:
        outcome = Outcome(False, "none", "no final answer found")
        return _verdict("unparseable", None, "", gt, outcome)
    if gt.choice is not None:
        outcome, answer, found = _judge_choice(found, gt, prompt, ctx)
    elif gt.options is not None and (named := option_set(found.text)):
        outcome, answer = _judge_options(named, gt.options)
    else:
        outcome, answer, found = _judge_answer(found, gt, ctx)
        if not outcome.correct and (as_value := _judge_option_value(found, gt, ctx)):
            outcome, answer, found = as_value
    return _verdict("correct" if outcome.correct else "incorrect", found, answer, gt, outcome)


@lru_cache(maxsize=1)
def _default_config() -> MathConfig:
    return parse_config({})


@lru_cache(maxsize=1)
def _warmed_up() -> bool:
    # The service calls verify once in the parent before forking children: loading sympy and
    # priming the ANTLR tables there keeps the first symbolic answer of every child fast.
    warm_up()
    return True


def verify(
    completion: str,
    ground_truth: str | int | float,
    config: Mapping[str, Any],
    prompt: str | None = None,
) -> Verdict:
    """Judge a completion's final answer against the ground truth (raises InvalidGroundTruth)."""
    _warmed_up()
    math_config = _default_config() if not config else parse_config(config)
    return run(completion, ground_truth, math_config, prompt)
