"""Multiple-choice answers: the ground truth is a letter A-E, maybe with the option's value."""

from __future__ import annotations

import re

from .compare import same
from .normalize import (
    full_width_as_ascii,
    normalize_answer,
    strip_delimiters,
    unwrap_text_commands,
)
from .semantics import Ctx, interpret
from .structure import parse_structure

_GT_LETTER = re.compile(r"^\(?([A-E])\)?$")
# "\textbf{(B) }12": the option and its value, as AMC answers are often written.
_GT_LETTER_VALUE = re.compile(r"^\(([A-E])\)\s*(\S.*)$", re.DOTALL)
# "C: 7" (normalised "C:7"), as cn_k12/NuminaMath write an option and its value: a value that
# starts as a number or formula does (a ratio of names, "A:B", is not one).
_GT_LETTER_COLON = re.compile(r"^([A-E])\s*:\s*(?=[-\d\\$.])(\S.*)$", re.DOTALL)
_PIECES = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b)\s*", re.IGNORECASE)
_LETTER = (
    re.compile(r"^\(?([A-E])\)?\.?$"),
    # Lower case only with option punctuation: a bare "e" is Euler's number, not option E.
    re.compile(r"^(?:\(([a-e])\)|([a-e])\))$"),
    re.compile(r"^\(([A-E])\)"),
    re.compile(r"^([A-E])(?:[.:)]|\s+-)(?:\s|$)"),
    # "C 12", "C\ 12": the letter, then the option's value.
    re.compile(r"^([A-E])(?:\s|\\ )+(?=[-\d$]|\\[dt]?frac|\\sqrt|\\pi)"),
    re.compile(r"^(?:option|choice|answer)\s*:?\s*\(?([A-E])\)?(?![A-Za-z])", re.IGNORECASE),
    # "12 \quad (C)": the option's value, then its label.
    re.compile(r"^[-+\d.,/\s]+(?:\\q?quad\s*)?\(([A-E])\)$"),
)
# Further option labels after the one an answer starts with: "(A)(B)(C)(D)(E)" or
# "(A) 12 (C) 15" lists options and must not count as the first one.
_MORE_LABELS = re.compile(r"\(([A-E])\)|(?<![A-Za-z\\])([A-E])(?:[.:)]|\s+-)(?=\s|$)")
_WS = re.compile(r"\s+")
_LABEL = re.compile(r"\(([A-E])\)")
_OPTION_JUNK = re.compile(r"\\\$|\\q?quad|\\textbf\{|\\mathrm\{|\\text\{|\$|\\[ ,;!]|[{}]")
MAX_PROMPT_CHARS = 20_000


def ground_truth_option(normalized: str) -> tuple[str | None, str | None]:
    """The option letter of a ground truth and the value written after it, if any
    (``\\textbf{(B) }12`` -> ``("B", "12")``; ``C`` -> ``("C", None)``; ``12`` -> no letter)."""
    s = unwrap_text_commands(normalized).strip()
    m = _GT_LETTER.match(s)
    if m:
        return m.group(1), None
    m = _GT_LETTER_VALUE.match(s) or _GT_LETTER_COLON.match(s)
    if m:
        return m.group(1), m.group(2).strip()
    return None, None


def _choice_text(text: str) -> str:
    """An answer as option letters are read from it: no delimiters, text commands or bold,
    single spaces, no closing full stop."""
    s = unwrap_text_commands(strip_delimiters(text)).replace("**", "")
    if not s.isascii():
        s = full_width_as_ascii(s)  # "Ｃ", "（Ｃ）"
    return _WS.sub(" ", s).strip().rstrip(".").strip()


# Several options as one answer (JEEBench's multi-correct questions): "ABD", "A, B, D",
# "(A)(B)(D)", "(A), (B) and (D)".
_OPTION_SET = re.compile(r"(?:\(?[A-E]\)?(?:\s*(?:,|;|&|\band\b)\s*|\s*))+")


def option_set(text: str) -> frozenset[str] | None:
    """The options of a text that is nothing but two or more distinct option letters, each
    named once; else None (``AB`` reads as options A and B only where options are asked for:
    a ground truth written so)."""
    s = _choice_text(text)
    if not s or not _OPTION_SET.fullmatch(s):
        return None
    letters = re.findall(r"[A-E]", s)
    if len(letters) < 2 or len(set(letters)) != len(letters):
        return None
    return frozenset(letters)


def read_choice(text: str) -> frozenset[str] | None:
    """Option letters stated in an answer (``(C)``, ``C)``, ``\\text{(C)} 12``, ``A or C``)."""
    s = _choice_text(text)
    letters = set()
    for piece in _PIECES.split(s):
        piece = piece.strip()
        for pattern in _LETTER:
            m = pattern.match(piece)
            if m:
                letters.add(next(g for g in m.groups() if g).upper())
                more = _MORE_LABELS.finditer(piece, m.end())
                letters.update(next(g for g in k.groups() if g) for k in more)
                break
    return frozenset(letters) or None


def _options(prompt: str) -> dict[str, str] | None:
    text = prompt[-MAX_PROMPT_CHARS:]
    labels = list(_LABEL.finditer(text))
    # Keep the last run of labels A, B, C, ... in order: that is the option list.
    run: list[re.Match[str]] = []
    for m in labels:
        expected = chr(ord("A") + len(run))
        if m.group(1) == expected:
            run.append(m)
        elif m.group(1) == "A":
            run = [m]
    if len(run) < 3:
        return None
    options = {}
    for k, m in enumerate(run):
        end = run[k + 1].start() if k + 1 < len(run) else len(text)
        body = text[m.end() : end].split("\n", 1)[0]
        body = _OPTION_JUNK.sub(" ", body).strip()
        if not body:
            return None
        options[m.group(1)] = body
    return options


def choice_from_prompt(answer: str, prompt: str, ctx: Ctx) -> frozenset[str] | None:
    """Map an answer value to the single option of the prompt it equals, if exactly one."""
    options = _options(prompt)
    if not options:
        return None
    node = parse_structure(normalize_answer(answer, ctx.decimal_comma))
    if node is None:
        return None
    a_sem = interpret(node, ctx)
    hits = set()
    for letter, body in options.items():
        opt_node = parse_structure(normalize_answer(body, ctx.decimal_comma))
        if opt_node is not None and same(interpret(opt_node, ctx), a_sem, ctx):
            hits.add(letter)
    return frozenset(hits) if len(hits) == 1 else None
