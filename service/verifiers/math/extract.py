"""Find the final answer in a model completion.

Order: an R1 ``<answer>`` block (searched recursively), else the last cluster of ``\\boxed{}``
(several boxes count only when nothing but separators lies between them, so hedges like
``\\boxed{381} or \\boxed{391}`` are kept together and judged), unless an explicit "final
answer"/"the answer is"/"####" statement comes after it; then Markdown bold near the end,
then the last number or formula of the final lines. Boxes separated by prose are also offered
as the parts of a multi-part answer (``part_boxes``), which the verifier reads only against a
ground truth that lists several values. Everything is linear string scanning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .normalize import drop_invisible, find_closing_brace

FORMS: tuple[str, ...] = (
    "answer_tag",
    "boxed",
    "final_answer",
    "answer_is",
    "gsm8k",
    "bold",
    "last_number",
)
MAX_SCAN_CHARS = 200_000
MAX_PIECE_CHARS = 200_000
MAX_BOXES = 12
MAX_EXAMINED_BOXES = 4 * MAX_BOXES
TAIL_CHARS = 600
MAX_GAP_CHARS = 120
# Boxes of a multi-part answer ("\\boxed{(3,3)} for part (a) and \\boxed{(1,1)}") may have prose
# between them; they are read together only against a ground truth that lists several values.
MAX_PART_GAP_CHARS = 2000
MAX_ANCHORS = 64

# "answer:" counts only as a label at the start of a line ("Answer: 5", "**Answer:** 5"), not
# in prose such as "let me check my answer: 5 + 2 = 7".
_ANCHOR = re.compile(
    r"(?P<final>final\s+answer\s*(?:\*\*)?\s*(?:is|:|=)?)"
    r"|(?P<answer_is>(?:the\s+)?(?:correct\s+|right\s+)?(?:answer|option|choice)\s*"
    r"(?:is|would\s+be|will\s+be|should\s+be)"
    r"|^[ \t]*(?:[*#>]+[ \t]*)?(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*"
    r"(?:\*\*)?\s*:)"
    r"|(?P<gsm8k>####)",
    re.IGNORECASE | re.MULTILINE,
)
_ANCHOR_KEYWORDS = ("answer", "option", "choice", "####")
# An anchor match spans at most this far before / after its keyword.
_ANCHOR_LOOKBEHIND = 40
_ANCHOR_LOOKAHEAD = 40
_FORM_OF_GROUP = {"final": "final_answer", "answer_is": "answer_is", "gsm8k": "gsm8k"}
# What may stand between boxes that together form the final answer (a list, or a hedge).
_GAP = re.compile(
    r"^(?:\s|\$|\\[()\[\]]|\\\\|[,;.&()]|\*\*|\\q?quad|\\text\{\s*(?:or|and|,)?\s*\}"
    r"|\b(?:or|and|either|maybe|possibly|perhaps|alternatively|also)\b"
    r"|[A-Za-z](?:_\{?\w+\}?)?\s*=)*$",
    re.IGNORECASE,
)
# Prose between two boxes that takes the first one back: those boxes are not parts of one answer.
_REVISION = re.compile(
    r"\b(?:wait|actually|mistakes?|wrong|incorrect|errors?|oops|hmm+|however|instead|but|not|"
    r"re-?check\w*|reconsider\w*|correct(?:ion|ed|ing)|no)\b",
    re.IGNORECASE,
)
# "The answer is 4, not 3": a value ruled out after the answer is not a second answer.
_RULED_OUT = r",\s*(?:and\s+|but\s+)?not\s|\s+(?:and|but)\s+not\s|\s*\(\s*not\s"
_CUT = re.compile(
    r"\n|\.(?=\s|$)|(?:\s+\(?|\()\s*(?:since|because|which|so that|where|when|for all)\s|\s+as\s"
    r"|I hope"
    rf"|{_RULED_OUT}|,?\s+(?:rather\s+than|instead\s+of)\s",
    re.I,
)
# "Answer: 7; the remainder is 5": after a value, a clause that starts after a semicolon or after
# ", and" / ", so" with a new subject is another sentence. Its verb must not make _prose_tail
# read the clause's value ("5") as the answer.
_NEXT_CLAUSE = re.compile(
    r";\s*(?=[A-Za-z]{2,}\b(?!\s*[=_^(]))"
    r"|,?\s+(?:and|so|thus|hence|while|whereas)\s+(?=(?:the|this|that|it|its|there|we|our)\b)",
    re.I,
)
# Words of a clause that takes the value before it back ("7; wait, actually it is 5").
_TAKES_BACK = re.compile(
    r"\b(?:wait|actually|oops|hmm+|sorry|correct(?:ion|ed)|mistakes?|wrong|incorrect|instead|"
    r"rather|re-?check\w*|reconsider\w*)\b|\bno\s*,",
    re.I,
)
# The last number of "so x is 4, not 3" is the one ruled out.
# Also "the answer cannot be 5", "must not be", "could never be", "is unlikely to be", "is not
# equal to", "we can rule out 5".
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bcannot|\bunlikely\s+to|\brul(?:e|ed|ing)\s+out|"
    r"\b(?:false\s+that|no\s+way)\s+the\s+answer\s+is)"
    r"(?:\s+(?:be|been|equals?(?:\s+to)?))?\s*(?:\$|\\\()?\s*$",
    re.I,
)
_NEGATED_WINDOW = 40
# "5 is not the answer.", "So 5 is impossible.": a value the words after it deny.
_DENIED_AFTER = re.compile(
    r"\s*(?:\$|\\\))?\s*(?:is|was)\s*(?:not\b|n't\b|never\b|impossible\b|ruled\s+out\b|"
    r"wrong\b|incorrect\b|excluded\b)",
    re.I,
)
# "The answer is not 5.": a statement that denies a value states no answer.
_DENIED = re.compile(r"^(?:not\b|n't\b|never\b|unlikely\b|hardly\b)", re.I)
# "A common mistake is to think the answer is 5", "If we had forgotten the edge case, the
# answer is 5", "For three coins instead of two, the answer is 1/8": the sentence reports a
# value someone might give, or the answer to another question. Such a statement is nobody's
# final answer: it neither replaces a box nor stands as the answer.
_NOT_OURS = re.compile(
    r"\b(?:if|unless|without|suppose|supposing|assume|assuming|imagine|had|were|would|could|"
    r"might|think|thinks|thought|believe|believes|believed|say|says|said|claim|claims|claimed|"
    r"suggest|suggests|suggested|guess|guessed|tempting|mistake|mistakes|mistaken|mistakenly|"
    r"naive|naively|common|erroneous|erroneously|incorrectly|wrongly|instead|otherwise|"
    r"harder|easier|variant|version|original|earlier|previously|initially|reference|key|"
    r"official|textbook|classmate|classmates|according|sources|reported|"
    # Someone else's value, or an example of the format: "The expected answer is 5", "My
    # friend's answer is 5", "Example format: The answer is 5".
    r"expected|expects|expect|(?:the|a|our)\s+given|given(?=\s*$)|provided|teacher|"
    r"friend|chatgpt|gpt|model's|(?:other|another|language|ai)\s+model|manual|user's|"
    r"example|false\s+that|no\s+way)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
_CONDITION = re.compile(
    r"\b(?:(?:attained|achieved|reached|obtained|occurs|holds)\s+(?:only\s+)?"
    r"(?:at|when|for|if|with)|equality\s+(?:holds\s+)?(?:at|when|for|if|iff)|when|if|iff|where)"
    r"\s*,?\s*(?:\$|\\\()?\s*$",
    re.I,
)
# "The maximum is 12 at x = 3.", "The maximum value is $12$ at $x=3$": right after a value, a
# condition ("at", "for", "when", "if", "where", "with", "attained at") on a variable.
_AFTER_VALUE = (
    r"(?:\d|\$|\\\))\s*,?\s*(?:(?:attained|achieved|reached|obtained|occurring|occurs)\s+)?"
    r"(?:at|for|when|if|where|with)\s*"
)
_VALUE_CONDITION = re.compile(_AFTER_VALUE + r"[A-Za-z]\s*=\s*$", re.I)  # before a number
_VALUE_CONDITION_FORMULA = re.compile(_AFTER_VALUE + r"$", re.I)  # before a formula
_BOLD = re.compile(r"\*\*([^*\n]{1,200})\*\*")
_BOLD_LABEL = re.compile(
    r"^\s*(?:final\s+)?(?:answer|solution|step\b.*|note|result)\s*:?\s*$", re.I
)
# An escaped dollar (\$, currency) inside or outside math is never a delimiter.
_MATH_ENV = re.compile(
    r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$((?:[^$\n\\]|\\.)+?)\$"
    r"|\\\((.+?)\\\)|\\\[(.+?)\\\]",
    re.S,
)
# A time of day is one value ("arrives at 11:30 AM" answers 11:30 AM, not 30).
_NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,2}:[0-5]\d(?![\d:])(?:\s?[AaPp]\.?\s?[Mm](?![A-Za-z])\.?)?"
    r"|[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+|/\d+)?%?)"
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_VERB_TAIL = re.compile(r"^.*\b(?:is|are|equals|was|be)\s+(.+)$", re.S)
# "The answer is that $n = 12$ is the only solution": the clause after the verb only describes
# the value before it (never when it denies it: "is not a solution").
_DESCRIBES_VALUE = re.compile(
    r"^(?!.*(?:n't|\b(?:not|no|never|wrong|incorrect|false|invalid|extraneous|excluded|"
    r"impossible|spurious|rejected)\b))the\s+(?:[a-z]+\s+){0,3}?(?:solution|answer|value)s?[.,;!]?$",
    re.IGNORECASE,
)
_JOIN_GAP = re.compile(r"^[ \t]*,?[ \t]*(?:and|or)[ \t]+$", re.IGNORECASE)
_CHOICE_ONLY = re.compile(r"^\(?[A-E]\)?$")
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Extraction:
    """The answer text found (one piece, or several boxed pieces) and where it came from."""

    parts: tuple[str, ...]
    source: str
    # Where the boxes were found, for ``part_boxes`` (read only when a multi-part reading is
    # needed: most answers never pay for it).
    region: str = field(default="", repr=False, compare=False)

    @property
    def text(self) -> str:
        """All parts joined for display."""
        return ", ".join(self.parts)


@dataclass(frozen=True, slots=True)
class _Box:
    start: int
    end: int
    content: str


def _read_box(text: str, start: int, cmd_len: int) -> _Box | None:
    i = start + cmd_len
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        return None
    if text[i] == "{":
        close = find_closing_brace(text, i)
        if close < 0:
            return _Box(start, len(text), text[i + 1 : i + 1 + MAX_PIECE_CHARS])
        return _Box(start, close + 1, text[i + 1 : close])
    m = re.match(r"[^\s$]+", text[i:])
    return _Box(start, i + m.end(), m.group(0)) if m else None


# A box quoted from elsewhere, or called wrong right after it, is not the completion's answer
# when an earlier box is.
_QUOTED = re.compile(
    r"\b(?:reference|answer\s+key|official|textbook|classmates?|example|"
    r"(?:first|previous|earlier|other)\s+(?:attempt|try|approach)|wrong\s+(?:approach|method))\b",
    re.I,
)
_CALLED_WRONG = re.compile(
    r"^\s*\$?\s*\)?\s*,?\s*(?:which\s+)?(?:is|was)\s+(?:a\s+(?:common\s+)?)?"
    r"(?:wrong|incorrect|mistaken|false|an?\s+(?:error|mistake|typo))\b",
    re.I,
)


def _disowned(text: str, start: int, end: int) -> bool:
    return bool(
        _QUOTED.search(_sentence_before(text, start)) or _CALLED_WRONG.match(text[end : end + 80])
    )


def last_box_cluster(text: str, parts: bool = False) -> list[_Box]:
    """The final cluster of \\boxed/\\fbox contents, in reading order.

    ``parts``: boxes separated by prose (not a revision) count as parts of one answer.
    """
    boxes: list[_Box] = []
    pos = len(text)
    # Each box costs a scan to its closing brace; thousands of nested boxes must not add up.
    for _ in range(MAX_EXAMINED_BOXES):
        if len(boxes) >= MAX_BOXES:
            break
        b_idx = text.rfind("\\boxed", 0, pos)
        f_idx = text.rfind("\\fbox", 0, pos)
        idx = max(b_idx, f_idx)
        if idx < 0:
            break
        box = _read_box(text, idx, 6 if idx == b_idx else 5)
        pos = idx
        if box is None:
            continue
        if not boxes and _ruled_out(text, idx):
            continue  # "\\boxed{5}, not \\boxed{6}": the last box is the value ruled out
        if not boxes and _disowned(text, idx, box.end) and "boxed" in text[:idx]:
            continue  # "(The answer key gives \\boxed{5}, which is wrong.)" after a box
        if boxes:
            nxt = boxes[-1]
            if box.end > nxt.start:
                continue  # an outer box wrapping the inner one: same answer
            gap = text[box.end : nxt.start]
            if parts:
                if len(gap) > MAX_PART_GAP_CHARS or _REVISION.search(gap):
                    break
            elif len(gap) > MAX_GAP_CHARS or not _GAP.match(gap):
                break
        boxes.append(box)
    boxes.reverse()
    return boxes


def all_boxed(text: str) -> list[str]:
    """Contents of every outermost \\boxed/\\fbox, in order (for ground truths)."""
    out: list[str] = []
    pos = 0
    while len(out) < 4 * MAX_BOXES:
        starts = [i for i in (text.find("\\boxed", pos), text.find("\\fbox", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        box = _read_box(text, start, 6 if text.startswith("\\boxed", start) else 5)
        if box is None:
            break
        if box.content.strip():
            out.append(box.content.strip())
        pos = max(box.end, start + 1)
    return out


def _prose_tail(content: str) -> str:
    """From a sentence such as "The volume of $V$ is 120", keep what follows the verb."""
    outside = _MATH_ENV.sub(" ", content)
    if not _PROSE_WORD.search(outside):
        return content
    m = _VERB_TAIL.match(content)
    if m and m.group(1).strip() and _VERB_TAIL.match(outside):
        tail = m.group(1).strip()
        if _DESCRIBES_VALUE.match(tail) and not re.search(r"[\d\\$]", tail):
            head = [g for mm in _MATH_ENV.finditer(content, 0, m.start(1)) for g in mm.groups()]
            values = [g for g in head if g is not None]
            if len(values) == 1 and any(ch.isdigit() for ch in values[0]):
                return values[0]
        return tail
    values = [g for mm in _MATH_ENV.finditer(content) for g in mm.groups() if g is not None]
    values += _NUMBER.findall(outside)
    if len(_PROSE_WORD.findall(outside)) >= 4 and len(values) == 1:
        return values[0]
    return content


def _find_unescaped(text: str, token: str, start: int) -> int:
    """Index of ``token`` at or after ``start`` that is not escaped by a backslash, or -1."""
    pos = text.find(token, start)
    while pos > 0 and text[pos - 1] == "\\":
        pos = text.find(token, pos + 1)
    return pos


def _cut_statement(rest: str) -> str:
    """The answer right after an anchor such as "The answer is": one formula or one clause."""
    s = rest.lstrip(" \t*:")
    if s.startswith("\n"):
        s = s.lstrip()  # "**Final Answer**" on its own line: the answer is the next line
    for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if s.startswith(left):
            end = _find_unescaped(s, right, len(left))
            if end > 0:
                return s[: end + len(right)]
    if s.startswith(("\\boxed", "\\fbox")):
        boxes = all_boxed(s[:2000])
        return boxes[0] if boxes else s
    m = _CUT.search(s)
    return _prose_tail(_first_clause(s[: m.start()] if m else s).strip().rstrip("*").strip())


def _first_clause(statement: str) -> str:
    """A value and no more when a further clause follows it ("7; the remainder is 5"), unless
    that clause takes the value back ("7; wait, actually it is 5": read as before)."""
    clause = _NEXT_CLAUSE.search(statement)
    if clause is None:
        return statement
    head = statement[: clause.start()]
    is_value = bool(re.search(r"[\d\\$]", head)) and len(_PROSE_WORD.findall(head)) <= 1
    if not is_value or _TAKES_BACK.search(statement, clause.end()):
        return statement
    return head


def _plausible(content: str) -> bool:
    if not content or len(content) > 300:
        return False
    has_math = any(ch.isdigit() for ch in content) or "\\" in content or "$" in content
    return has_math or len(content.split()) <= 6


def _keyword_positions(text: str) -> list[int]:
    """Where an anchor keyword occurs, last first (plain find is far cheaper than a regex scan)."""
    lower = text.lower()
    positions = []
    for keyword in _ANCHOR_KEYWORDS:
        pos = lower.find(keyword)
        while pos >= 0:
            positions.append(pos)
            pos = lower.find(keyword, pos + 1)
    # Only the last few matter: the final answer is stated near the end.
    return sorted(positions, reverse=True)[:MAX_ANCHORS]


def _last_anchor(text: str, forms: frozenset[str]) -> tuple[int, str, str] | None:
    seen: set[int] = set()
    for pos in _keyword_positions(text):
        window = _ANCHOR.finditer(text, max(0, pos - _ANCHOR_LOOKBEHIND), pos + _ANCHOR_LOOKAHEAD)
        for m in reversed(list(window)):
            if m.start() in seen:
                continue
            seen.add(m.start())
            form = _FORM_OF_GROUP.get(m.lastgroup or "", "")
            if form not in forms:
                continue
            rest = text[m.end() : m.end() + 2000]
            if _DENIED.match(rest.lstrip(" \t*:")):
                continue
            if form == "answer_is" and _NOT_OURS.search(_own_clause(text, m.start())):
                continue
            content = _cut_statement(rest)
            if _plausible(content):
                return m.start(), content, form
    return None


# "I think it's (B) but the answer is (C)": what follows "but" is set against what came before.
_CONTRAST = re.compile(r".*\b(?:but|however|yet)\b", re.I | re.S)


def _own_clause(text: str, end: int) -> str:
    """The sentence before ``end`` from its last "but" / "however" on (all of it without one)."""
    sentence = _sentence_before(text, end)
    contrast = _CONTRAST.match(sentence)
    return sentence[contrast.end() :] if contrast else sentence


def _sentence_before(text: str, end: int) -> str:
    """The part of the sentence that ends at ``end`` (at most 300 characters of it)."""
    before = text[max(0, end - 300) : end]
    ends = list(_SENTENCE_END.finditer(before))
    return before[ends[-1].end() :] if ends else before


def _overrides_box(content: str) -> bool:
    """A statement after the last box replaces it only if it states a value, not prose."""
    return bool(re.search(r"[\d\\$]", content)) or bool(_CHOICE_ONLY.match(content))


def _bold(text: str) -> str | None:
    tail = text[-TAIL_CHARS:]
    for m in reversed(list(_BOLD.finditer(tail))):
        content = m.group(1).strip()
        if content and not _BOLD_LABEL.match(content) and _plausible(content):
            return content
    return None


def _short_whole(text: str, limit: int) -> str | None:
    """A one-line completion that is just the answer: a formula, or words without numbers."""
    s = text.strip()
    if not s or "\n" in s or len(s) > limit:
        return None
    outside_math = _MATH_ENV.sub(" ", s)
    outside_math = re.sub(r"\\text\{[^{}]*\}", " ", outside_math)
    if not _WORD.search(outside_math):
        return s
    if not any(ch.isdigit() for ch in s) and len(outside_math.split()) <= 4:
        return s  # a word answer such as "Monday" or "no solution"
    return None


def _last_number(text: str) -> tuple[str, ...] | None:
    lines = [ln for ln in text[-TAIL_CHARS:].split("\n") if ln.strip()]
    tail = "\n".join(lines[-2:])
    # "The minimum is $\\frac32$, attained at $a=b=c=1$": the condition is not the answer,
    # unless nothing else is stated.
    return _last_value(tail, skip_conditions=True) or _last_value(tail, skip_conditions=False)


def _last_value(tail: str, skip_conditions: bool) -> tuple[str, ...] | None:
    best: tuple[int, tuple[str, ...]] | None = None
    formulas: list[tuple[int, int, str]] = []
    rejected: list[tuple[int, int]] = []
    conditions: list[tuple[int, int]] = []
    for m in _MATH_ENV.finditer(tail):
        # "when $x=3$ and $y=4$": a formula joined to a condition is part of it.
        joined = bool(conditions) and bool(_JOIN_GAP.match(tail[conditions[-1][1] : m.start()]))
        if skip_conditions and (joined or _condition(tail, m.start())):
            conditions.append(m.span())
            rejected.append(m.span())
            continue
        if _ruled_out(tail, m.start()) or _denied_after(tail, m.end()):
            rejected.append(m.span())
            continue
        content = next(g for g in m.groups() if g is not None)
        formulas.append((m.start(), m.end(), content))
    if formulas:
        # "the solutions are $x = 3$ and $x = -3$": formulas joined by "and"/"or" are read
        # together (a list, or a hedge), not as the last one alone.
        k = len(formulas) - 1
        while k > 0 and _JOIN_GAP.match(tail[formulas[k - 1][1] : formulas[k][0]]):
            k -= 1
        best = (formulas[-1][1], tuple(f[2] for f in formulas[k:]))
    for n in _NUMBER.finditer(tail):
        if best is not None and n.end() <= best[0]:
            continue
        if _ruled_out(tail, n.start()) or _denied_after(tail, n.end()):
            continue
        if (
            skip_conditions
            and best is not None
            and _VALUE_CONDITION.search(tail, max(0, n.start() - 40), n.start())
        ):
            continue  # "12 at x = 3": the condition's value
        if any(a <= n.start() < b for a, b in rejected):
            continue
        best = (n.end(), (n.group(0),))
    return best[1] if best else None


def _condition(text: str, start: int) -> bool:
    """The formula at ``start`` says where a value is attained ("attained at $x=1$")."""
    window = max(0, start - 40)
    if _CONDITION.search(text, window, start):
        return True
    return bool(_VALUE_CONDITION_FORMULA.search(text, window, start))


def _ruled_out(text: str, start: int) -> bool:
    """The value at ``start`` follows "not" ("4, not 3"): it is rejected, not answered."""
    return bool(_NEGATED.search(text, max(0, start - _NEGATED_WINDOW), start))


def _denied_after(text: str, end: int) -> bool:
    """The value ending at ``end`` is denied by the words after it ("5 is not the answer")."""
    return bool(_DENIED_AFTER.match(text, end))


def _answer_block(text: str) -> str | None:
    opens = list(_ANSWER_OPEN.finditer(text))
    if not opens:
        return None
    start = opens[-1].end()
    close = _ANSWER_CLOSE.search(text, start)
    block = text[start : close.start() if close else len(text)]
    return block if block.strip() else None


def _contents(boxes: list[_Box]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(b.content.strip() for b in boxes if b.content.strip()))


def _from_region(text: str, forms: frozenset[str], whole_ok: bool) -> Extraction | None:
    boxes = last_box_cluster(text) if "boxed" in forms else []
    anchor = _last_anchor(text, forms)
    if boxes and not (anchor and anchor[0] >= boxes[-1].end and _overrides_box(anchor[1])):
        parts = _contents(boxes)
        if parts:
            return Extraction(parts, "boxed", text)
    if anchor:
        return Extraction((anchor[1],), anchor[2])
    if whole_ok or "last_number" in forms:
        # Inside <answer>...</answer> a formula-only line is the answer even if it is long.
        whole = _short_whole(text, 300 if whole_ok else 120)
        if whole:
            return Extraction((whole,), "whole")
    if "bold" in forms:
        bold = _bold(text)
        if bold:
            return Extraction((bold,), "bold")
    if "last_number" in forms:
        last = _last_number(text)
        if last:
            return Extraction(last, "last_number")
    return None


def part_boxes(found: Extraction) -> tuple[str, ...]:
    """The boxes of a multi-part answer ending with the extracted box, when prose separates
    them (see MAX_PART_GAP_CHARS); () when there are no more than the tight cluster."""
    if not found.region:
        return ()
    wide = _contents(last_box_cluster(found.region, parts=True))
    return wide if len(wide) > len(found.parts) else ()


# Text that is never shown: an HTML comment, a TeX \iffalse block.
# Also a comment environment, what follows \\end{document}, and
# what follows a redefinition of \\boxed (\\renewcommand{\\boxed}[1]{}: its boxes print nothing).
_HIDDEN = re.compile(
    r"<!--.*?(?:-->|$)|\\iffalse\b.*?(?:\\fi\b|$)|\\begin\{comment\}.*?(?:\\end\{comment\}|$)"
    r"|\\end\{document\}.*|\\(?:(?:re)?newcommand\*?\s*\{?\s*|def\s*)\\(?:boxed|fbox)\b.*",
    re.S,
)
# An HTML element a browser does not show (display:none, visibility:hidden, the hidden attribute).
_HTML_HIDDEN = re.compile(
    r"<(?P<tag>[A-Za-z][\w-]*)\b[^<>]*?(?:display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b)"
    r"[^<>]*>.*?(?:</(?P=tag)\s*>|$)",
    re.S | re.I,
)
# A macro defined to print nothing: "\\newcommand{\\hide}[1]{}", "\\def\\hide#1{}".
_EMPTY_MACRO = re.compile(
    r"\\(?:(?:re|provide)?newcommand\*?\s*\{?\s*\\(?P<name>[A-Za-z]+)\s*\}?\s*(?:\[\s*\d\s*\])?"
    r"|def\s*\\(?P<dname>[A-Za-z]+)\s*(?:#\d\s*)*)\s*\{\s*\}"
)
_IFTRUE = re.compile(r"\\iftrue\b(.*?)(?:\\else\b.*?)?(?:\\fi\b|$)", re.S)
_THINK_END = "</think>"
# A TeX comment: an unescaped "%" to the end of its line. A percent sign is not one: it follows
# a number ("25%", "25 %"), a group, a bracket or a formula ("\\frac{1}{2}%", "$25$%"), or is a
# label in parentheses ("(%)"); "\\%" is escaped. But no percent sign is followed by a box: a
# "%" before "\\boxed" is a comment whatever precedes it ("\\boxed{7}%\\boxed{5}"). The pattern
# starts with "%" and looks back from there: leading with the look-behinds made every position
# a try (60 µs on 2,000 characters).
_COMMENT = re.compile(
    r"%(?<!\\%)(?:(?=[ \t]*\\(?:boxed|fbox))|(?<![\d})\]$]%)(?<!\d %)(?!(?<=[(\[]%)[)\]]))"
)
_BOXES = ("\\boxed", "\\fbox")


def _drop_comments(text: str) -> str:
    """Drop TeX comments where one can hide an answer: a "%" that opens its line, or one after
    the completion's first box (an answer given, then another in a comment). Elsewhere a "%"
    is prose ("{% raw %} so the answer is \\boxed{3}", "up by r%, so..."): dropping the rest of
    its line there lost the answer a right completion gave after it."""
    found = [i for i in (text.find(box) for box in _BOXES) if i >= 0]
    first_box = min(found) if found else len(text)
    pieces, kept_to = [], 0
    # Linear in the text however many "%" a line holds: each stretch is scanned once.
    scanned, line_start, prose_line = 0, 0, -1
    for match in _COMMENT.finditer(text):
        start = match.start()
        if start < kept_to:  # inside a comment already dropped
            continue
        newline = text.rfind("\n", scanned, start)
        if newline >= 0:
            line_start = newline + 1
        scanned = start
        # A line that holds text before one of its "%" is prose up to the first box.
        prose = prose_line == line_start or (
            start > line_start and not text[line_start:start].isspace()
        )
        if start <= first_box and prose:
            prose_line = line_start
            continue
        line_end = text.find("\n", start)
        pieces.append(text[kept_to:start])
        kept_to = len(text) if line_end < 0 else line_end
    pieces.append(text[kept_to:])
    return "".join(pieces)


def _drop_empty_macros(text: str) -> str:
    """Without the macros defined to print nothing, and what they were given (one braced
    argument, as ``\\hide{\\boxed{5}}``): their boxes are never seen."""
    names = {m.group("name") or m.group("dname") for m in _EMPTY_MACRO.finditer(text)}
    text = _EMPTY_MACRO.sub(" ", text)
    for name in names:
        use = re.compile(rf"\\{name}(?![A-Za-z])\s*")
        out: list[str] = []
        pos = 0
        while (m := use.search(text, pos)) is not None:
            out.append(text[pos : m.start()])
            pos = m.end()
            if text.startswith("{", pos):
                close = find_closing_brace(text, pos)
                pos = len(text) if close < 0 else close + 1
        out.append(text[pos:])
        text = "".join(out)
    return text


# Every construct _drop_unseen drops starts with "<!--", "%", a tag with "none" or "hidden" in
# it, or one of these commands: one search (1.4 µs on the bench's 1.7 KB completions, which hold
# none) stands for its eleven substring tests (10 µs), which ran on every completion.
_MAY_HIDE = re.compile(
    r"\\(?:if|end\{|begin\{comment|def|[a-z]*command|[hv]?phantom|(?:text)?color|scalebox"
    r"|resizebox)"
)


def _drop_unseen(text: str) -> str:
    """What no reader sees: comments, false branches, empty macros, hidden HTML, phantoms and
    white ink (a box there is never the answer)."""
    if "<!--" in text or "\\if" in text or "\\end{" in text or "command" in text or "\\def" in text:
        text = _HIDDEN.sub(" ", text)
        if "\\iftrue" in text:
            text = _IFTRUE.sub(r" \1 ", text)
    if "command" in text or "\\def" in text:
        text = _drop_empty_macros(text)
    if "<" in text and ("none" in text or "hidden" in text):
        text = _HTML_HIDDEN.sub(" ", text)
    if "%" in text:
        text = _drop_comments(text)
    if "phantom" in text or "color" in text or "scalebox" in text or "resizebox" in text:
        text = drop_invisible(text)  # a box in a phantom or in white ink is never seen
    return text


def extract_answer(completion: str, forms: frozenset[str]) -> Extraction | None:
    """Locate the final answer; None means the completion states no answer.

    After a reasoning block (``<think> ... </think>``) the answer is what follows it when that
    states one: a box tried inside the reasoning is not the answer given after it."""
    text = completion[-MAX_SCAN_CHARS:]
    if (
        "%" in text
        or _MAY_HIDE.search(text) is not None
        or ("<" in text and ("<!--" in text or "none" in text or "hidden" in text))
    ):
        text = _drop_unseen(text)
    if "<" in text and _THINK_END in text:
        after = text.rsplit(_THINK_END, 1)[1]
        if after.strip():
            found = _extract(after, forms)
            # A number the closing words happen to end with is not an answer stated after
            # the reasoning ("see step 2"): then the reasoning's own answer stands.
            if found is not None and found.source != "last_number":
                return found
    return _extract(text, forms)


def _extract(text: str, forms: frozenset[str]) -> Extraction | None:
    if "answer_tag" in forms:
        block = _answer_block(text)
        if block is not None:
            found = _from_region(block, forms, whole_ok=True)
            if found is not None:
                return Extraction(found.parts, f"answer_tag/{found.source}", found.region)
    return _from_region(text, forms, whole_ok=False)
