"""The 25 instructions of Google's IFEval, with the reference checkers' semantics.

Every check reproduces the reference (google-research ``instruction_following_eval``, as shipped
in ``lm_eval.tasks.ifeval``) and is tested against it on generated boundary cases. Deliberate
differences, each where the reference would crash, loop for long or guess:

- Keywords, forbidden words, section splitters and postscript markers are matched as literal
  text; the reference pastes them into regular expressions, which differs only when they hold
  regex metacharacters (the marker "p.s." there also finds "P.S?"; an invalid pattern crashes).
- A few reference regexes take quadratic time on adversarial lines (``[[[[…``, thousands of
  blank lines); bullets, placeholders and titles are counted by equivalent linear scans.
- JSON nested too deeply for Python's parser is "not followed" instead of a crash.
- A count of 0 means 0. The reference harness drops falsy kwargs before building a checker,
  which then draws a random count: its verdict for ``num_words: 0`` and the like is random.
- Any language code the detector returns is accepted; the reference crashes (KeyError) on the
  codes missing from its table of language names, such as ``zh-cn``.
"""

from __future__ import annotations

import json
import re

from service.verifiers.base import InvalidGroundTruth

from . import params as p
from .instruction import Args, Instruction, Outcome, compare, measured, quoted
from .text import (
    BLANK_LINE,
    PARAGRAPH_DIVIDER,
    count_words,
    detect_language,
    punkt_sentences,
    split_paragraphs,
    word_tokens,
)

_CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
_HIGHLIGHT = re.compile(r"\*[^\n\*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n\*]*\*\*")
_FIRST_WORD_STOP = frozenset(".,?!'\"")


def _keywords(text: str, a: Args) -> Outcome:
    missing = [k for k in a["keywords"] if not re.search(re.escape(k), text, re.IGNORECASE)]
    return measured(not missing, f"missing {missing}" if missing else "all keywords present")


def _frequency(text: str, a: Args) -> Outcome:
    found = len(re.findall(re.escape(a["keyword"]), text, re.IGNORECASE))
    return measured(
        compare(found, a["frequency"], a["relation"]), f"{quoted(a['keyword'])} x{found}"
    )


def _forbidden(text: str, a: Args) -> Outcome:
    used = [
        w for w in a["forbidden_words"] if re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE)
    ]
    return measured(not used, f"used {used}" if used else "none used")


def _letter_frequency(text: str, a: Args) -> Outcome:
    found = text.lower().count(a["letter"])
    return measured(compare(found, a["let_frequency"], a["let_relation"]), f"{found} letters")


def _language(text: str, a: Args) -> Outcome:
    detected = detect_language(text)
    if detected is None:  # the reference counts an undetectable language as followed
        return measured(True, "language undetectable")
    return measured(detected == a["language"], f"detected {detected}")


def _sentences(text: str, a: Args) -> Outcome:
    found = len(punkt_sentences(text))
    return measured(compare(found, a["num_sentences"], a["relation"]), f"{found} sentences")


def _paragraphs(text: str, a: Args) -> Outcome:
    paragraphs = split_paragraphs(text, PARAGRAPH_DIVIDER, empty_inside="refused")
    if paragraphs.empty_inside is not None:
        return measured(False, f"empty paragraph {paragraphs.empty_inside} between dividers")
    found = paragraphs.count
    return measured(found == a["num_paragraphs"], f"{found} paragraphs")


def _words(text: str, a: Args) -> Outcome:
    found = count_words(text)
    return measured(compare(found, a["num_words"], a["relation"]), f"{found} words")


def _first_word_of(paragraph: str) -> str:
    token = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    word = []
    for char in token:
        if char in _FIRST_WORD_STOP:
            break
        word.append(char.lower())
    return "".join(word)


def _nth_paragraph_first_word(text: str, a: Args) -> Outcome:
    paragraphs = split_paragraphs(text, BLANK_LINE, empty_inside="skipped")
    found = paragraphs.count
    nth = a["nth_paragraph"]
    # The reference indexes the raw split (blank parts included) with the count of non-blank
    # ones: kept as is so that verdicts agree.
    if nth > found:
        return measured(False, f"{found} paragraphs, no paragraph {nth}")
    paragraph = paragraphs.parts[nth - 1].strip()
    if not paragraph:
        return measured(False, f"paragraph {nth} is blank")
    first = _first_word_of(paragraph)
    ok = found == a["num_paragraphs"] and first == a["first_word"].lower()
    return measured(ok, f"{found} paragraphs, paragraph {nth} starts with {quoted(first)}")


def _validate_nth(instruction_id: str, args: dict[str, object]) -> None:
    nth, total = args["nth_paragraph"], args["num_paragraphs"]
    if not isinstance(nth, int) or not isinstance(total, int) or nth > total:
        raise InvalidGroundTruth(
            f"{instruction_id}: argument 'nth_paragraph' ({nth}) exceeds 'num_paragraphs' ({total})"
        )


def count_placeholders(text: str) -> int:
    """Matches of ``\\[.*?\\]`` (one line each), counted in linear time."""
    count, pos = 0, text.find("[")
    while pos >= 0:
        end_of_line = text.find("\n", pos)
        if end_of_line < 0:
            end_of_line = len(text)
        close = text.find("]", pos + 1, end_of_line)
        if close < 0:  # no later "[" on this line can close either
            pos = text.find("[", end_of_line)
        else:
            count += 1
            pos = text.find("[", close + 1)
    return count


def _placeholders(text: str, a: Args) -> Outcome:
    found = count_placeholders(text)
    return measured(found >= a["num_placeholders"], f"{found} placeholders")


def _postscript(text: str, a: Args) -> Outcome:
    marker = a["postscript_marker"]
    if marker == "P.P.S":
        pattern = r"p\.\s?p\.\s?s"
    elif marker == "P.S.":
        pattern = r"p\.\s?s\."
    else:
        pattern = re.escape(marker.lower())
    found = re.search(pattern, text.lower()) is not None
    return measured(found, f"marker {quoted(marker)} {'found' if found else 'not found'}")


def _markdown_items(text: str, marker: str) -> int:
    """Matches of ``^\\s*\\*[^\\*].*$`` (marker ``*``) or ``^\\s*-.*$`` (marker ``-``) under
    re.MULTILINE, counted in linear time (the regex is quadratic on many blank lines)."""
    count, scan, n = 0, 0, len(text)
    pos = text.find(marker)
    while pos >= 0:
        start = pos
        while start > scan and text[start - 1].isspace():
            start -= 1
        # A match begins at a line start p with scan <= p <= pos, from which only whitespace
        # leads to the marker.
        at_line_start = start == 0 or text.find("\n", start - 1, pos) >= 0
        body = pos + 1
        if marker == "*":
            at_line_start = at_line_start and body < n and text[body] != "*"
            body += 1
        if not at_line_start:
            pos = text.find(marker, pos + 1)
            continue
        count += 1
        scan = text.find("\n", body)
        if scan < 0:
            break
        pos = text.find(marker, scan)
    return count


def _bullets(text: str, a: Args) -> Outcome:
    found = _markdown_items(text, "*") + _markdown_items(text, "-")
    return measured(found == a["num_bullets"], f"{found} bullet points")


def _constrained(text: str, a: Args) -> Outcome:
    stripped = text.strip()
    hit = next((o for o in _CONSTRAINED_OPTIONS if o in stripped), None)
    return measured(hit is not None, f"contains {quoted(hit)}" if hit else "no allowed option")


def _highlights(text: str, a: Args) -> Outcome:
    single = sum(1 for h in _HIGHLIGHT.findall(text) if h.strip("*").strip())
    double = sum(
        1
        for h in _DOUBLE_HIGHLIGHT.findall(text)
        if h.removeprefix("**").removesuffix("**").strip()
    )
    found = single + double
    return measured(found >= a["num_highlights"], f"{found} highlighted sections")


def _sections(text: str, a: Args) -> Outcome:
    splitter = re.escape(a["section_spliter"].strip())
    found = len(re.split(rf"\s?{splitter}\s?\d+\s?", text)) - 1
    return measured(found >= a["num_sections"], f"{found} sections")


def _json(text: str, a: Args) -> Outcome:
    body = (
        text.strip()
        .removeprefix("```json")
        .removeprefix("```Json")
        .removeprefix("```JSON")
        .removeprefix("```")
        .removesuffix("```")
        .strip()
    )
    try:
        json.loads(body)
    except ValueError as exc:
        return measured(False, f"invalid JSON: {str(exc)[:80]}")
    except RecursionError:
        return measured(False, "invalid JSON: nested too deeply")
    return measured(True, "valid JSON")


def has_title(text: str) -> bool:
    """Does ``<<[^\\n]+>>`` find a non-blank title? Linear: one candidate per line."""
    for line in text.split("\n"):
        start = line.find("<<")
        if start < 0:
            continue
        end = line.rfind(">>")
        if end - start >= 3 and line[start : end + 2].lstrip("<").rstrip(">").strip():
            return True
    return False


def _title(text: str, a: Args) -> Outcome:
    found = has_title(text)
    return measured(found, "title found" if found else "no <<title>>")


def _two_responses(text: str, a: Args) -> Outcome:
    parts = text.split("******")
    responses = []
    for index, part in enumerate(parts):
        if part.strip():
            responses.append(part)
        elif index not in (0, len(parts) - 1):
            return measured(False, "empty response between separators")
    if len(responses) != 2:
        return measured(False, f"{len(responses)} responses")
    different = responses[0].strip() != responses[1].strip()
    return measured(different, "2 different responses" if different else "2 identical responses")


def _repeat_prompt(text: str, a: Args) -> Outcome:
    ok = text.strip().lower().startswith(a["prompt_to_repeat"].strip().lower())
    return measured(ok, "starts with the prompt" if ok else "does not start with the prompt")


def _end(text: str, a: Args) -> Outcome:
    ok = text.strip().strip('"').lower().endswith(a["end_phrase"].strip().lower())
    return measured(ok, f"ends with {quoted(a['end_phrase'])}" if ok else "other ending")


def _capital_words(text: str, a: Args) -> Outcome:
    found = sum(1 for token in word_tokens(text) if token.isupper())
    return measured(
        compare(found, a["capital_frequency"], a["capital_relation"]), f"{found} capital words"
    )


def _english_case(text: str, upper: bool) -> Outcome:
    case_ok = text.isupper() if upper else text.islower()
    if not case_ok:
        return measured(False, f"not all {'upper' if upper else 'lower'} case")
    detected = detect_language(text)
    if detected is None:  # the reference counts an undetectable language as followed
        return measured(True, "language undetectable")
    return measured(detected == "en", f"detected {detected}")


def _english_capital(text: str, a: Args) -> Outcome:
    return _english_case(text, upper=True)


def _english_lowercase(text: str, a: Args) -> Outcome:
    return _english_case(text, upper=False)


def _no_comma(text: str, a: Args) -> Outcome:
    found = text.count(",")
    return measured(found == 0, f"{found} commas")


def _quotation(text: str, a: Args) -> Outcome:
    s = text.strip()
    ok = len(s) > 1 and s[0] == '"' and s[-1] == '"'
    return measured(ok, "wrapped in double quotes" if ok else "not wrapped in double quotes")


def _language_code(instruction_id: str, name: str, value: object) -> str:
    from .text import supported_languages

    languages = supported_languages()
    if value not in languages:
        raise InvalidGroundTruth(
            f"{instruction_id}: argument {name!r} must be a language code the detector knows "
            f"({', '.join(languages)}), got {str(value)[:40]!r}"
        )
    return str(value)


_P = p.Param
_N0 = p.count(0)
_N1 = p.count(1)

INSTRUCTIONS: tuple[Instruction, ...] = tuple(
    Instruction(id_, params, check, "ifeval", validate)
    for id_, params, check, validate in (
        ("keywords:existence", (_P("keywords", p.words),), _keywords, None),
        (
            "keywords:frequency",
            (_P("keyword", p.word), _P("frequency", _N0), _P("relation", p.relation)),
            _frequency,
            None,
        ),
        ("keywords:forbidden_words", (_P("forbidden_words", p.words),), _forbidden, None),
        (
            "keywords:letter_frequency",
            (_P("letter", p.letter), _P("let_frequency", _N0), _P("let_relation", p.relation)),
            _letter_frequency,
            None,
        ),
        ("language:response_language", (_P("language", _language_code),), _language, None),
        (
            "length_constraints:number_sentences",
            (_P("num_sentences", _N0), _P("relation", p.relation)),
            _sentences,
            None,
        ),
        ("length_constraints:number_paragraphs", (_P("num_paragraphs", _N1),), _paragraphs, None),
        (
            "length_constraints:number_words",
            (_P("num_words", _N0), _P("relation", p.relation)),
            _words,
            None,
        ),
        (
            "length_constraints:nth_paragraph_first_word",
            (_P("num_paragraphs", _N1), _P("nth_paragraph", _N1), _P("first_word", p.text)),
            _nth_paragraph_first_word,
            _validate_nth,
        ),
        (
            "detectable_content:number_placeholders",
            (_P("num_placeholders", _N0),),
            _placeholders,
            None,
        ),
        ("detectable_content:postscript", (_P("postscript_marker", p.word),), _postscript, None),
        ("detectable_format:number_bullet_lists", (_P("num_bullets", _N0),), _bullets, None),
        ("detectable_format:constrained_response", (), _constrained, None),
        (
            "detectable_format:number_highlighted_sections",
            (_P("num_highlights", _N0),),
            _highlights,
            None,
        ),
        (
            "detectable_format:multiple_sections",
            (_P("section_spliter", p.word), _P("num_sections", _N0)),
            _sections,
            None,
        ),
        ("detectable_format:json_format", (), _json, None),
        ("detectable_format:title", (), _title, None),
        ("combination:two_responses", (), _two_responses, None),
        ("combination:repeat_prompt", (_P("prompt_to_repeat", p.text),), _repeat_prompt, None),
        ("startend:end_checker", (_P("end_phrase", p.word),), _end, None),
        (
            "change_case:capital_word_frequency",
            (_P("capital_frequency", _N0), _P("capital_relation", p.relation)),
            _capital_words,
            None,
        ),
        ("change_case:english_capital", (), _english_capital, None),
        ("change_case:english_lowercase", (), _english_lowercase, None),
        ("punctuation:no_comma", (), _no_comma, None),
        ("startend:quotation", (), _quotation, None),
    )
)
