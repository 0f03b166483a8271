"""String normalisation of answers and ground truths (pure text work, no sympy).

Every rewrite here must preserve mathematical meaning: the verifier accepts two answers whose
normalised strings are identical, so a rewrite that merges two different values would be a
false positive. Unit and currency stripping is the one deliberate exception (documented in
``units.py``): it only drops a label after a complete value, and happens at comparison time.
"""

from __future__ import annotations

import re

from .number_words import read_number_words

MAX_DETAIL_CHARS = 500

_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u2013": "-",
    "\u00d7": r"\times ",
    "\u22c5": r"\cdot ",
    "\u00b7": r"\cdot ",
    "\u00f7": r"\div ",
    "\u03c0": r"\pi ",
    "\u221e": r"\infty ",
    "\u2264": r"\leq ",
    "\u2265": r"\geq ",
    "\u2260": r"\neq ",
    "\u222a": r"\cup ",
    "\u2229": r"\cap ",
    "\u2205": r"\emptyset ",
    "\u00b0": r"^\circ ",
    "\u2192": r"\to ",
    "\u2208": r"\in ",
    "\u2209": r"\notin ",
    # Number sets: "ℝ" is \mathbb{R}, the real line.
    "\u2115": r"\mathbb{N}",
    "\u2124": r"\mathbb{Z}",
    "\u211a": r"\mathbb{Q}",
    "\u211d": r"\mathbb{R}",
    "\u2102": r"\mathbb{C}",
    "\u27e8": "(",
    "\u27e9": ")",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
    # Vulgar fractions: "2½" then reads as the mixed number 2\frac{1}{2}.
    "\u00bd": r"\frac{1}{2}",
    "\u2153": r"\frac{1}{3}",
    "\u2154": r"\frac{2}{3}",
    "\u00bc": r"\frac{1}{4}",
    "\u00be": r"\frac{3}{4}",
    "\u2155": r"\frac{1}{5}",
    "\u2156": r"\frac{2}{5}",
    "\u2157": r"\frac{3}{5}",
    "\u2158": r"\frac{4}{5}",
    "\u2159": r"\frac{1}{6}",
    "\u215a": r"\frac{5}{6}",
    "\u2150": r"\frac{1}{7}",
    "\u215b": r"\frac{1}{8}",
    "\u215c": r"\frac{3}{8}",
    "\u215d": r"\frac{5}{8}",
    "\u215e": r"\frac{7}{8}",
    "\u2151": r"\frac{1}{9}",
    "\u2152": r"\frac{1}{10}",
    "\u2044": "/",  # fraction slash
    # Invisible characters: nothing of the value (a zero-width space inside "1\u200b8").
    "\u200b": "",
    "\u200c": "",
    "\u200d": "",
    "\u2060": "",
    "\u00ad": "",
    "\ufeff": "",
    # Direction marks and embeddings/isolates: they order the text, digits stay in order. (The
    # overrides U+202D/U+202E reverse what follows and are kept.)
    "\u200e": "",
    "\u200f": "",
    "\u202a": "",
    "\u202b": "",
    "\u202c": "",
    "\u2066": "",
    "\u2067": "",
    "\u2068": "",
    "\u2069": "",
}
_UNICODE_RE = re.compile("|".join(re.escape(k) for k in _UNICODE))

# Full-width forms ("１２３", "－５", "（１，２）", "５０％") are their ASCII characters, and an
# ideographic space a space. Only these: NFKC would also make the superscript of x² a digit (x2).
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
# "√2", "∛8", "∜16" are roots of the whole number after them (as "\\sqrt 11" is read below),
# "√(x+1)" of the parenthesis; otherwise the sign is the command and takes its argument.
_ROOT_SIGN = re.compile(r"([√∛∜])\s*(?:(\d+(?:\.\d+)?)|\(([^()]*)\))?")
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]"}
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")

# An odd root of a negative number is the real root (\\sqrt[3]{-27} is -3), as MATH-style
# problems mean it; sympy would take the principal complex root.
_ODD_ROOT_OF_NEGATIVE = re.compile(
    r"\\sqrt\s*\[\s*(\d*[13579])\s*\]\s*\{\s*-\s*(\d+(?:\.\d+)?|\\frac\{\d+\}\{\d+\})\s*\}"
)
# Also the font sizes (\\large 5, \\Large{5}): size is nothing of the value.
_SIZING = re.compile(
    r"\\(?:left|right|[bB]igg?[lr]?|middle|tiny|scriptsize|footnotesize|small|normalsize|"
    r"large|Large|LARGE|huge|Huge)(?![a-zA-Z])\s*"
)
_SIZING_DOT = re.compile(r"\\(?:left|right)\s*\.")
_FRAC_VARIANTS = re.compile(r"\\[dtc]frac(?![a-zA-Z])")
_BINOM_VARIANTS = re.compile(r"\\[dt]binom(?![a-zA-Z])")
# "{n \\choose k}" is \\binom{n}{k} (one level of nested braces on either side); at the top
# level "n \\choose k" takes the whole formula, as in TeX.
_CHOOSE_ARG = r"((?:[^{}]|\{[^{}]*\})*?)\\choose(?![a-zA-Z])((?:[^{}]|\{[^{}]*\})*)"
_CHOOSE_GROUP = re.compile(r"(?<!\\)\{" + _CHOOSE_ARG + r"\}")
_CHOOSE_WHOLE = re.compile("^" + _CHOOSE_ARG + "$")
_THOUSANDS_THIN = re.compile(r"(?<=\d),\\!\s*(?=\d{3}(?!\d))|(?<=\d)\\,(?=\d{3}(?!\d))")
_NEG_SPACE = re.compile(r"(?<!\\)\\!")
_QUOTES = re.compile(r"\\?\"|''|``")
# Primes on a one-letter name (f'(x), y'', A'B', f^{\prime}): the parser deletes "'" and
# _QUOTES deletes "''", which made f'(x) equal f(x). They become a subscript that is kept, one
# \prime per mark, so f'(x) and f^{\prime}(x) are one name and y'' is not y'.
_PRIMES = re.compile(
    r"(?<![\\A-Za-z])([A-Za-z])((?:'|\^\s*\\prime\b|\^\s*\{(?:\s*\\prime\b|')+\s*\})+)"
)
_PRIME_MARK = re.compile(r"'|\\prime\b")
_EULER = re.compile(r"\\(?:text|mathrm|rm)\s*\{\s*e\s*\}|\\rm\s+e(?![a-zA-Z])")
# "3+2\\mathrm{i}": an upright i is the imaginary unit (ISO style), never a unit label to drop.
_UPRIGHT_I = re.compile(r"\\(?:text|mathrm|rm)\s*\{\s*i\s*\}")
_SPACING = re.compile(r"(?<!\\)\\[,;:> ]|\\q?quad(?![a-zA-Z])|\\enspace|\\hspace\*?\{[^{}]*\}|~")
_STYLE = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])")
_TEXT_CMD = re.compile(
    r"\\(?:textbf|textit|textrm|textnormal|textsf|texttt|mathrm|mathbf|mathit|mathsf|"
    r"mathtt|boldsymbol|bm|mbox|hbox|text)\s*\{"
)
# "5^{\\text{th}}", "22^{nd}": an ordinal's suffix (when it is the number's own) is not a power.
_ORDINAL = re.compile(
    r"(?<![\d.])(\d+)\s*\^\s*(?:\{\s*(?:\\text\{\s*(st|nd|rd|th)\s*\}|(st|nd|rd|th))\s*\}"
    r"|\\text\{\s*(st|nd|rd|th)\s*\})"
)
# "2 \\text{ out of } 3" is the proportion 2/3.
_OUT_OF = re.compile(r"^(\d+)\s*(?:\\text\{\s*out\s+of\s*\}|out\s+of)\s*(\d+)$")
_TEXT_WORD_SEP = re.compile(r"\\text\{\s*(or|and|,)\s*\}")
# "\\text{(1, 2)}": a tuple or interval of numbers typed in text mode is still that tuple.
_TEXT_NUMBER_TUPLE = re.compile(r"^\\text\{\s*([(\[][^{}\\A-Za-z]*[)\]])\s*\}$")
_EMPTY_TEXT = re.compile(r"\\text\{\s*\}")
# "\\boxed{\\text{The answer is } 5}": the box restates the lead-in before its value.
_ANSWER_LEAD = re.compile(
    r"^(\\text\{)?\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|:|=)\s*:?\s*", re.IGNORECASE
)
_RELATIONS = [
    (re.compile(r"\\leqslant|\\leqq|\\le(?![a-zA-Z])|<="), r"\\leq "),
    (re.compile(r"\\geqslant|\\geqq|\\ge(?![a-zA-Z])|>="), r"\\geq "),
    (re.compile(r"\\ne(?![a-zA-Z])|!="), r"\\neq "),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
]
_EMPTYSET = re.compile(r"\\varnothing(?![a-zA-Z])|\\\{\s*\\\}|\\text\{\s*empty set\s*\}")
_INFINITY = re.compile(
    r"\\infin(?![a-zA-Z])|\\text\{\s*infinity\s*\}|(?<![a-zA-Z\\])(?:infinity|inf)(?![a-zA-Z])"
)
# "r \\operatorname{cis} \\theta" is r (cos theta + i sin theta); the angle is a group or one number
# (with its degree sign), never a guess at where a longer argument ends.
_CIS = re.compile(
    r"\\(?:operatorname|text)\{\s*cis\s*\}\s*"
    r"(?:\(([^()]*)\)|\{([^{}]*)\}|(-?\d+(?:\.\d+)?(?:\^\s*\\circ|\^\s*\{\s*\\circ\s*\})?)\s*$"
    r"|(\\frac\{[^{}]*\}\{[^{}]*\}|\\[A-Za-z]+)\s*$)"
)
_PI_WORD = re.compile(r"(?<![a-zA-Z\\])pi(?![a-zA-Z])")
_DEGREE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\degree(?![a-zA-Z])")
_FRAC_DIGITS = [
    (re.compile(r"\\frac\s*(\d)\s*(\d)"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\frac\s*(\d)\s*\{"), r"\\frac{\1}{"),
    (re.compile(r"\\frac\s*\{([^{}]*)\}\s*(\d)"), r"\\frac{\1}{\2}"),
    # "\sqrt 11" is written for sqrt(11) (TeX would read sqrt(1)*1): follow the writer.
    (re.compile(r"\\sqrt\s*(\d+)"), r"\\sqrt{\1}"),
]
_WS = re.compile(r"\s+")
_SPACE_NEAR_SYMBOL = re.compile(r" (?=[^A-Za-z0-9 ])|(?<=[^A-Za-z0-9, ]) ")
TRAILING_PUNCT = re.compile(r"(?:\s|[.,;:]|\\\\|\\text\{\s*\.?\s*\})+$")
# "1, 2, 3, ..." (or "1, 2, 3...") goes on: its dots are an ellipsis, not punctuation to trim,
# which would leave the finite list 1, 2, 3. Two dots are enough: a statement cut at its full
# stop keeps two of three. A lone "3..." stays 3; "2,74..." (no space) may be a decimal comma.
_LIST_ELLIPSIS = re.compile(r"\s*,\s*\.(?:\s*\.)+$|(?<=, )([-+]?\d+)\.(?:\s*\.)+$")
_LEADING_WORDS = re.compile(
    r"^(?:(?:either|both|thus|so|hence|therefore|approximately|about|exactly|is|are)\b\s*"
    r"|(?:[=:]|\\approx(?![a-zA-Z])|\\sim(?![a-zA-Z]))\s*)+",
    re.IGNORECASE,
)
_PERCENT_WORD = re.compile(r"\s*(?:\\text\{\s*)?(?:percent|per cent|pct)\s*\}?\s*$", re.I)
# "2,74" with the decimal-comma convention; "2, 74" stays a list and "1,234,567" a grouping.
_DECIMAL_COMMA = re.compile(r"(?<![\d.,A-Za-z_])(\d+),(\d+)(?![\d,])")
_SCRIPT_OPEN = ("_{", "^{")
_ESCAPED_DOLLAR = re.compile(r"\\\$(?!\s*[-+]?\.?\d)")
_DOLLAR = re.compile(r"(?<!\\)\$")
_TEXTDOLLAR = re.compile(r"\\textdollar(?![a-zA-Z])(?:\s*\{\s*\})?")
_COLOR = re.compile(r"\\(?:text)?color\s*\{[^{}]*\}")
# "\\max\\{a, b\\}" is "\\max(a, b)" (the arguments written as a set).
_SET_ARGUMENT = re.compile(r"\\(max|min|gcd|lcm)\s*\\\{([^{}\\]*)\\\}")
_PMOD = re.compile(r"\\pmod\s*([A-Za-z0-9]+)")
# A system of equations: "\left\{ x = 1, y = 2 \right." or a cases/array environment.
_BRACE_SYSTEM = re.compile(r"^\\left\s*\\\{(.*)\\right\s*\.$", re.DOTALL)
_ROWS_ENV = re.compile(
    r"^\\begin\{(cases|array|aligned|align\*?|gathered)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$",
    re.DOTALL,
)
# A trigonometric function of an angle in degrees: "\cos 30^\circ" is cos(pi/6), not cos(30).
_TRIG_DEGREES = re.compile(
    r"(\\(?:sin|cos|tan|cot|sec|csc)(?:\^\{?-?\d\}?)?)\s*(\()?"
    r"\s*(-?\d+(?:\.\d+)?)\s*\^\\circ\s*(?(2)\))"
)
_NO_SOLUTION = re.compile(
    r"^(?:\\text\{\s*)?(?:(?:there\s+(?:is|are|exists?)\s+)?no\s+(?:real\s+|such\s+|integer\s+)?"
    r"(?:solutions?|values?|roots?)(?:\s+exists?)?|none)\s*\.?\s*\}?$",
    re.IGNORECASE,
)
# A universal qualifier after an answer ("f(x)=x \text{ for all } x \in \mathbb{R}",
# "\forall x \in \mathbb{R}") or a parameter's ("\text{for some constant } c"): the answer
# holds for every such value; only qualifiers over a whole number set are dropped, never a
# condition such as "for x > 0" that restricts a piece of the answer.
_NUMBER_SET_TEXT = r"\\mathbb\s*\{?[RZNQC]\}?(?:\^\s*\{?[+*]\}?|_\s*\{?[0+]\}?)?"
_QUALIFIER_TAIL = re.compile(
    r"\s*,?\s*(?:\\text\{\s*(?:for\s+(?:all|every|each|any|some|arbitrary)|where)"
    r"(?:\s+(?:real|constant|real\s+constant|integers?|positive\s+integers?|"
    r"natural\s+numbers?|reals?|real\s+numbers?))?\s*\}|\\forall)"
    rf"\s*(?P<var>[A-Za-z])\s*(?:\\in\s*{_NUMBER_SET_TEXT}|\\text\{{\s*(?:is\s+)?(?:a\s+)?"
    r"(?:real\s+)?(?:constant|real\s+number|integer)\s*\})?\s*$"
)
_COMMANDS = re.compile(r"\\[A-Za-z]+")
_ROW_RELATION = re.compile(r"=|<|>|\\[lg]eq?(?![a-zA-Z])|\\neq?(?![a-zA-Z])")
_ALIGNED_RELATION = re.compile(r"&\s*(?:=|<|>|\\[lgn]eq?(?![a-zA-Z]))|(?:=|<|>)\s*&")

_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


def cap(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """Cap a string for details, marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def find_closing_brace(text: str, open_pos: int) -> int:
    """Index of the ``}`` matching the ``{`` at ``open_pos``, or -1 when unbalanced.

    A backslash escapes the next character: ``\\{`` is a literal brace, and ``\\\\}`` (a line
    break, then a brace) closes a group.
    """
    depth = 0
    i = open_pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def strip_delimiters(text: str) -> str:
    """Remove math-mode wrappers ($..$, \\(..\\), \\[..\\]) and a whole-string \\boxed{}."""
    s = text.strip()
    for _ in range(6):
        before = s
        for left, right in _DELIMS:
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                inner = s[len(left) : len(s) - len(right)]
                # "$a$ or $b$" starts and ends with "$" but is two formulas, not one; an
                # escaped "\\$" inside ("$\\$18$") is currency, not a delimiter.
                bare = inner.replace("\\$", "")
                if left not in bare and right not in bare:
                    s = inner.strip()
        if len(s) > 4 and s.startswith("**") and s.endswith("**"):
            s = s[2:-2].strip()  # Markdown bold around the whole answer
        for cmd in ("\\boxed", "\\fbox"):
            if s.startswith(cmd):
                brace = s.find("{", len(cmd))
                if brace >= 0 and not s[len(cmd) : brace].strip():
                    end = find_closing_brace(s, brace)
                    if end == len(s) - 1:
                        s = s[brace + 1 : end].strip()
        if s == before:
            break
    return s


def _superscripts(match: re.Match[str]) -> str:
    return "^{" + match.group(0).translate(_SUPERSCRIPTS) + "}"


def unwrap_text_commands(text: str) -> str:
    """Replace every \\text-like command by its content (used for text/choice comparison)."""
    out = text
    for _ in range(8):
        m = _TEXT_CMD.search(out)
        if m is None:
            break
        end = find_closing_brace(out, m.end() - 1)
        if end < 0:
            out = out[: m.start()] + out[m.end() :]
        else:
            out = out[: m.start()] + out[m.end() : end] + out[end + 1 :]
    return out


def _system_row(row: str) -> bool:
    """A row of a system: a relation, with any ``&`` only as its alignment point (``x &= 1``).
    A piecewise row (``x & x \\geq 0``) is not one."""
    if not _ROW_RELATION.search(row):
        return False
    return "&" not in row or bool(_ALIGNED_RELATION.search(row))


def _system_rows(text: str) -> str:
    """``\\left\\{ x=1 \\\\ y=2 \\right.`` or ``\\begin{cases}...\\end{cases}`` -> ``x=1, y=2``."""
    braced = _BRACE_SYSTEM.match(text)
    body = braced.group(1).strip() if braced else text
    env = _ROWS_ENV.match(body)
    if env is not None and (braced or env.group(1) == "cases"):
        body = env.group(2)
    elif not braced:
        return text
    rows = [r.strip() for r in body.split("\\\\")]
    rows = [r for r in rows if r]
    if len(rows) == 1 and braced and env is None:
        return rows[0]
    # Only a system (every row a relation) is read as a list: a piecewise function is not.
    if len(rows) < 2 or not all(_system_row(r) for r in rows):
        return text
    return ", ".join(r.replace("&", " ") for r in rows)


def _drop_qualifier(s: str) -> str:
    """Drop a trailing universal or parameter qualifier whose variable the answer uses."""
    m = _QUALIFIER_TAIL.search(s)
    if m is None or m.start() == 0:
        return s
    rest = _COMMANDS.sub(" ", s[: m.start()])
    return s[: m.start()] if m.group("var") in rest else s


# "\\not=" and "\\not\\in" negate the relation (the parser would drop the \\not).
_NOT_RELATION = re.compile(r"\\not\s*(?:(=)|\\in(?![a-zA-Z]))")
# What prints nothing: "\\phantom{5}" (and \\hphantom, \\vphantom) only takes the room of 5, and
# white ink is invisible: \\textcolor{white}{5}, and \\color{white} to the end of its group or
# formula.
# \\scalebox{0}{5} and \\resizebox{0pt}{0pt}{5} scale their text to nothing.
_INVISIBLE = re.compile(
    r"\\(?:(?P<phantom>[hv]?phantom)|(?P<text>text)?color|(?P<scale>scalebox|resizebox))"
    r"(?![a-zA-Z])\s*"
)
_ZERO_SCALE = re.compile(r"\{\s*[+-]?0*\.?0*\s*(?:pt|cm|mm|in|em|ex|bp)?\s*\}\s*")
_ANY_SCALE = re.compile(r"\{[^{}]*\}\s*")
# Near white is as unseen as white (#FEFEFE, rgb .999): every component within 3% of white.
_NEAR_WHITE = 0.03
# An xcolor mix "c!p" (p% of c in white) or "c1!p!c2": its share of white, at least.
_MIX = re.compile(r"^([a-z]+)(?:!(\d{1,3}(?:\.\d+)?)(?:!([a-z]+))?)?$")
_HEX = re.compile(r"^#?([0-9a-f]{3}|[0-9a-f]{6})$")
_COLOR_SPEC = re.compile(r"(?:\[\s*([A-Za-z]+)\s*\])?\s*\{([^{}]*)\}")
_WHITE_NAMES = frozenset({"white", "transparent", "#fff", "#ffffff"})
# The value of white in each xcolor model: every component at its maximum (cmyk: no ink).
_WHITE_COMPONENT = {"rgb": 1.0, "RGB": 255.0, "gray": 1.0, "cmyk": 0.0, "cmy": 0.0}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.", re.S)
# A group left empty ("7{\\color{white}0}" is "7{}"), unless it is an argument or a script.
_EMPTY_GROUP = re.compile(r"(?<![\\A-Za-z}\]^_])\{\s*\}")


def _whiteness(name: str) -> float:
    """Share of white in a named colour, at least (only white itself counts)."""
    return 1.0 if name in ("white", "transparent") else 0.0


def _white_mix(value: str) -> bool:
    """``white!100``, ``gray!0``, ``white!99!black``: a mix that is (near) white."""
    m = _MIX.match(value)
    if m is None or m.group(2) is None:
        return False
    share = min(float(m.group(2)), 100.0) / 100
    other = _whiteness(m.group(3)) if m.group(3) else 1.0  # "c!p" mixes c with white
    return share * _whiteness(m.group(1)) + (1 - share) * other >= 1 - _NEAR_WHITE


def _white_hex(value: str) -> bool:
    """``#fff``, ``#FEFEFE``, ``FFFFFE``: every byte near its maximum."""
    m = _HEX.match(value)
    if m is None:
        return False
    digits = m.group(1)
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    return all(int(digits[k : k + 2], 16) >= 255 * (1 - _NEAR_WHITE) for k in (0, 2, 4))


def _white(model: str | None, spec: str) -> bool:
    """The colour ``[model]{spec}`` is white or near white: what it writes cannot be seen."""
    value = spec.replace(" ", "").lower()
    if model is None or model == "named":
        return value in _WHITE_NAMES or _white_mix(value) or _white_hex(value)
    if model == "HTML":
        return _white_hex(value)
    if model not in _WHITE_COMPONENT:
        return False
    try:
        components = [float(c) for c in value.split(",")]
    except ValueError:
        return False
    full = _WHITE_COMPONENT[model]
    scale = max(full, 1.0)
    return all(abs(c - full) <= _NEAR_WHITE * scale for c in components)


def _argument_end(text: str, start: int) -> int:
    """Where the macro argument at ``start`` ends: a braced group (unclosed: the rest of the
    text) or a single token."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start < len(text) and text[start] == "{":
        close = find_closing_brace(text, start)
        return len(text) if close < 0 else close + 1
    token = _TOKEN.match(text, start)
    return token.end() if token else start


def _scope_end(text: str, start: int) -> int:
    """Where a declaration at ``start`` (\\color) stops: the end of its group or of its
    formula (``$``, ``\\]``, ``\\)``), else the end of the text."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if depth == 0 and text[i + 1 : i + 2] in ("]", ")"):
                return i
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                return i
            depth -= 1
        elif ch == "$" and depth == 0:
            return i
        i += 1
    return len(text)


def _zero_scale_end(text: str, start: int, two: bool) -> int | None:
    """After ``\\scalebox{0}`` (``\\resizebox{0pt}{0pt}``: either size 0 is nothing): where its
    text starts; None when the scale is not zero."""
    first = _ZERO_SCALE.match(text, start) or _ANY_SCALE.match(text, start)
    if first is None:
        return None
    zero = first.re is _ZERO_SCALE
    if not two:
        return first.end() if zero else None
    second = _ZERO_SCALE.match(text, first.end()) or _ANY_SCALE.match(text, first.end())
    if second is None:
        return None
    return second.end() if zero or second.re is _ZERO_SCALE else None


def drop_invisible(text: str) -> str:
    """The text without what prints nothing (a phantom, white ink): a box no reader sees is
    no answer, and a digit no reader sees is no part of one. Other colours stay as they are."""
    out: list[str] = []
    pos = 0
    while (m := _INVISIBLE.search(text, pos)) is not None:  # each pass moves past a command
        if m.group("phantom"):
            out.append(text[pos : m.start()])
            pos = _argument_end(text, m.end())
            continue
        if m.group("scale"):
            end = _zero_scale_end(text, m.end(), m.group("scale") == "resizebox")
            out.append(text[pos : m.start() if end else m.end()])
            pos = _argument_end(text, end) if end else m.end()
            continue
        spec = _COLOR_SPEC.match(text, m.end())
        if spec is None or not _white(spec.group(1), spec.group(2)):
            out.append(text[pos : m.end()])
            pos = m.end()
            continue
        out.append(text[pos : m.start()])
        pos = _argument_end(text, spec.end()) if m.group("text") else _scope_end(text, spec.end())
    out.append(text[pos:])
    shown = "".join(out)
    return _EMPTY_GROUP.sub("", shown) if len(shown) < len(text) else shown


def _primes(m: re.Match[str]) -> str:
    count = len(_PRIME_MARK.findall(m.group(2)))
    return m.group(1) + "_{" + "\\prime" * count + "}"


def normalize_answer(text: str, decimal_comma: bool = False) -> str:
    """Canonical LaTeX-ish string of an answer: wrappers, spacing and synonyms unified.

    ``decimal_comma``: the ``decimal_separator: ","`` convention (``2,74`` is 2.74).
    """
    s = strip_delimiters(text)
    if not s.isascii():
        s = _unicode(s)
    if "\\not" in s:
        s = _NOT_RELATION.sub(lambda m: "\\neq " if m.group(1) == "=" else "\\notin ", s)
    if "phantom" in s or "color" in s or "scalebox" in s or "resizebox" in s:
        s = drop_invisible(s)  # prints nothing, so it is nothing of the answer
    s = s.replace("**", "^")  # Python-style power, once Markdown bold is gone
    s = _SUPERSCRIPT_RUN.sub(_superscripts, s)
    s = _TEXTDOLLAR.sub("$", s)
    # "\\$5" is currency: its sign is kept for the unit comparison (not against "5 cents").
    s = _ESCAPED_DOLLAR.sub("$", s.replace("\\%", "%")).replace("{,}", ",").replace("{:}", ":")
    s = s.replace("\\langle", "(").replace("\\rangle", ")").replace(":=", "=")
    s = _system_rows(s)
    s = _COLOR.sub("", s)
    s = _SIZING_DOT.sub("", s)
    s = _SIZING.sub("", s)
    s = _FRAC_VARIANTS.sub(r"\\frac", s)
    if "binom" in s or "choose" in s:
        s = _binomials(s)
    if "\\sqrt[" in s:
        s = _ODD_ROOT_OF_NEGATIVE.sub(r"(-\\sqrt[\1]{\2})", s)
    s = _STYLE.sub("", s)
    s = _THOUSANDS_THIN.sub(",", s)
    s = _NEG_SPACE.sub("", s)
    if "'" in s or "\\prime" in s:
        s = _PRIMES.sub(_primes, s)
    s = _QUOTES.sub(" ", s)
    s = _EULER.sub("e", s)
    s = _UPRIGHT_I.sub("i", s)
    s = _SPACING.sub(" ", s)
    s = _TEXT_CMD.sub(r"\\text{", s)
    if "^" in s:
        s = _ORDINAL.sub(_ordinal, s)
    s = _ANSWER_LEAD.sub(lambda m: m.group(1) or "", s, count=1)
    if (tuple_text := _TEXT_NUMBER_TUPLE.match(s)) and "," in tuple_text.group(1):
        s = tuple_text.group(1)
    s = _TEXT_WORD_SEP.sub(r" \1 ", s)
    s = _EMPTY_TEXT.sub(" ", s)
    for pattern, repl in _RELATIONS:
        s = pattern.sub(repl, s)
    if "cis" in s:
        s = _CIS.sub(_cis, s)
    s = _EMPTYSET.sub(r"\\emptyset ", s)
    s = _INFINITY.sub(r"\\infty ", s)
    s = _PI_WORD.sub(r"\\pi ", s)
    s = _DEGREE.sub(r"^\\circ ", s)
    s = _TRIG_DEGREES.sub(r"\1(\\frac{\3\\pi}{180})", s)
    s = _PMOD.sub(r"\\pmod{\1}", s)
    s = _SET_ARGUMENT.sub(r"\\\1(\2)", s)
    for pattern, repl in _FRAC_DIGITS:
        s = pattern.sub(repl, s)
    # Unescaped dollars left after unwrapping are inline-math delimiters or currency: both carry
    # no value.
    s = _DOLLAR.sub(" ", s).replace("\\(", " ").replace("\\)", " ")
    s = _WS.sub(" ", s).strip()
    s = _PERCENT_WORD.sub("%", s)
    s = _LEADING_WORDS.sub("", s)
    if s.endswith(".") and "," in s:
        s = _LIST_ELLIPSIS.sub(lambda m: (m.group(1) or "") + ",\\ldots", s)
    s = TRAILING_PUNCT.sub("", s)
    s = _SPACE_NEAR_SYMBOL.sub("", s).strip()
    s = TRAILING_PUNCT.sub("", _drop_qualifier(s))
    if "out of" in s:
        s = _OUT_OF.sub(r"\\frac{\1}{\2}", s)
    if _NO_SOLUTION.match(s):
        s = "\\emptyset"  # "no solution", "None", "there are no real solutions": the empty set
    elif s[:1].isalpha() or s.startswith("\\text{"):
        s = read_number_words(s) or s  # "five", "\\text{one half}"
    return read_decimal_commas(s) if decimal_comma else s


def full_width_as_ascii(s: str) -> str:
    """Full-width forms (U+FF01-FF5E) as their ASCII characters (``Ｃ`` is ``C``)."""
    return s.translate(_FULL_WIDTH)


def _unicode(s: str) -> str:
    """Unicode spellings as LaTeX: full-width forms, roots, symbols, vulgar fractions."""
    s = s.translate(_FULL_WIDTH)
    if "√" in s or "∛" in s or "∜" in s:
        s = _ROOT_SIGN.sub(_root, s)
    return _UNICODE_RE.sub(lambda m: _UNICODE[m.group(0)], s)


def _root(match: re.Match[str]) -> str:
    index = _ROOT_INDEX[match.group(1)]
    argument = match.group(2) if match.group(2) is not None else match.group(3)
    return f"\\sqrt{index} " if argument is None else f"\\sqrt{index}{{{argument}}}"


def _choose(match: re.Match[str]) -> str:
    return f"\\binom{{{match.group(1).strip()}}}{{{match.group(2).strip()}}}"


def _binomials(s: str) -> str:
    """``\\dbinom``, ``\\tbinom`` and ``{n \\choose k}`` all as ``\\binom{n}{k}``."""
    s = _BINOM_VARIANTS.sub(r"\\binom", s)
    if "\\choose" in s:
        s = _CHOOSE_WHOLE.sub(_choose, _CHOOSE_GROUP.sub(_choose, s))
    return s


def _ordinal(match: re.Match[str]) -> str:
    digits = match.group(1)
    suffix = next(g for g in match.groups()[1:] if g is not None)
    last_two = int(digits[-2:])
    own = "th" if 11 <= last_two <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(last_two % 10, "th")
    return digits if suffix == own else match.group(0)


def _cis(match: re.Match[str]) -> str:
    angle = next(g for g in match.groups() if g is not None)
    return f"(\\cos({angle})+i\\sin({angle}))"


def _decimal_comma(match: re.Match[str]) -> str:
    before = match.string[max(0, match.start() - 2) : match.start()]
    if before in _SCRIPT_OPEN:
        return match.group(0)  # "x_{1,2}" names x_{12}-style indices, not 1.2
    return f"{match.group(1)}.{match.group(2)}"


def read_decimal_commas(text: str) -> str:
    """``2,74`` -> ``2.74`` (the ``decimal_separator: ","`` convention); lists keep a space."""
    return _DECIMAL_COMMA.sub(_decimal_comma, text) if "," in text else text


_ARTICLE = re.compile(r"^\s*(?:the|an|a)\s+(?=\w)")


def text_canon(text: str, hyphens: bool = False) -> str:
    """Case- and space-insensitive key for word answers (``\\text{Monday}`` == ``monday``); a
    leading article is not part of the answer (``\\text{the square}`` == ``square``). With
    ``hyphens``, a hyphen between letters stays in the key: ``a-b`` is not ``ab``."""
    s = _ARTICLE.sub("", unwrap_text_commands(text).lower())
    if hyphens:
        s = _HYPHEN_BETWEEN.sub("-", s)
        return "".join(ch for ch in s if ch.isalnum() or ch == "-").strip("-")
    return "".join(ch for ch in s if ch.isalnum())


# A minus or hyphen between two letters or digits, with or without spaces around it.
_HYPHEN_BETWEEN = re.compile(r"(?<=[a-z0-9])\s*-\s*(?=[a-z0-9])")


def clean_piece(text: str) -> str:
    """Trim filler words and trailing punctuation from one piece of a split answer."""
    s = _LEADING_WORDS.sub("", text.strip())
    return TRAILING_PUNCT.sub("", s).strip()
