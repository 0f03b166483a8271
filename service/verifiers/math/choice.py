"""Multiple-choice answers: the ground truth is a single letter A-E."""

from __future__ import annotations

import re

from .compare import same
from .normalize import normalize_answer, strip_delimiters, unwrap_text_commands
from .semantics import Ctx, interpret
from .structure import parse_structure

_GT_LETTER = re.compile(r"^\(?([A-E])\)?$")
_PIECES = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b)\s*", re.IGNORECASE)
_LETTER = (
    re.compile(r"^\(?([A-E])\)?\.?$"),
    # Lower case only with option punctuation: a bare "e" is Euler's number, not option E.
    re.compile(r"^(?:\(([a-e])\)|([a-e])\))$"),
    re.compile(r"^\(([A-E])\)"),
    re.compile(r"^([A-E])(?:[.:)]|\s+-)(?:\s|$)"),
    re.compile(r"^(?:option|choice|answer)\s*:?\s*\(?([A-E])\)?(?![A-Za-z])", re.IGNORECASE),
)
_WS = re.compile(r"\s+")
_LABEL = re.compile(r"\(([A-E])\)")
_OPTION_JUNK = re.compile(r"\\\$|\\q?quad|\\textbf\{|\\mathrm\{|\\text\{|\$|\\[ ,;!]|[{}]")
MAX_PROMPT_CHARS = 20_000


def ground_truth_letter(normalized: str) -> str | None:
    """The option letter when the ground truth is one (``C``, ``(C)``, ``\\textbf{(C)}``)."""
    m = _GT_LETTER.match(unwrap_text_commands(normalized).strip())
    return m.group(1) if m else None


def read_choice(text: str) -> frozenset[str] | None:
    """Option letters stated in an answer (``(C)``, ``C)``, ``\\text{(C)} 12``, ``A or C``)."""
    s = unwrap_text_commands(strip_delimiters(text)).replace("**", "")
    s = _WS.sub(" ", s).strip().rstrip(".").strip()
    letters = set()
    for piece in _PIECES.split(s):
        piece = piece.strip()
        for pattern in _LETTER:
            m = pattern.match(piece)
            if m:
                letters.add(next(g for g in m.groups() if g).upper())
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
