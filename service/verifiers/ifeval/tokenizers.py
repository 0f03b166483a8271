"""NLTK's English Punkt sentence splitter and word tokenizer, built once, tuned, same tokens.

NLTK routes every regular expression through ``nltk.redos``: the pattern is compiled by the
``regex`` engine and each match runs under a 5-second wall-clock timeout. The timeout is half
of what tokenizing costs (the engine checks the clock as it goes), and it makes an answer depend
on the machine's load: on a starved machine a long sentence raises ``TimeoutError``. Here the
tokenizers use the same patterns, with the same flags, compiled by the same engine, minus the
timeout. NLTK's tokenizer patterns are linear, and the bounded child's time limit still stops
any verification. The word tokenizer also skips the substitutions that cannot match the
sentence (``_NEEDS_ONE_OF``), which would return it unchanged.

``tests/unit/verifiers/ifeval/test_text.py`` compares the results with NLTK's own objects.
Each replaced pattern is one NLTK reads from the tokenizer it belongs to (an instance or class
attribute, or a method of the language variables), so nothing of NLTK's own state changes: a
reference checker in the same process still gets NLTK as shipped.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from typing import Any

import regex
from nltk import redos
from nltk.tokenize import punkt as punkt_module
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.tokenize.punkt import (
    PunktLanguageVars,
    PunktParameters,
    PunktSentenceTokenizer,
    PunktToken,
)


def untimed(pattern: Any) -> Any:
    """The pattern NLTK compiled (an ``nltk.redos`` wrapper), compiled again without a timeout."""
    return regex.compile(pattern.pattern, pattern.flags)


class _LanguageVars(PunktLanguageVars):
    __slots__ = ("_untimed_periods", "_untimed_words")
    re_boundary_realignment = untimed(PunktLanguageVars.re_boundary_realignment)

    def __init__(self) -> None:
        self._untimed_words = untimed(super()._word_tokenizer_re())
        self._untimed_periods = untimed(super().period_context_re())

    def _word_tokenizer_re(self) -> Any:
        return self._untimed_words

    def period_context_re(self) -> Any:
        return self._untimed_periods


class _Token(PunktToken):
    __slots__ = ()
    _RE_ELLIPSIS = untimed(PunktToken._RE_ELLIPSIS)
    _RE_NUMERIC = untimed(PunktToken._RE_NUMERIC)
    _RE_INITIAL = untimed(PunktToken._RE_INITIAL)
    _RE_ALPHA = untimed(PunktToken._RE_ALPHA)
    # punkt's module-level _re_non_punct, the pattern PunktToken.is_non_punct searches with.
    _RE_NON_PUNCT = untimed(punkt_module._re_non_punct)

    @property
    def is_non_punct(self) -> Any:
        """True if the token is either a number or is alphabetic."""
        return self._RE_NON_PUNCT.search(self.type)


@cache
def punkt() -> Any:
    """NLTK's Punkt sentence tokenizer with the English ``punkt_tab`` parameters."""
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params, lang_vars=_LanguageVars(), token_cls=_Token)


# The word tokenizer runs ~35 substitutions on every sentence, most of which find nothing to
# replace. Each pattern below can only match where one of its characters is: every match holds
# one of them literally (a literal, a class or a group of literals; these characters have no
# other case, so ``(?i)`` changes nothing). Without any of them in the text, the substitution
# would return the text unchanged, so it is not run. Keyed by the exact pattern: a pattern not
# listed here (a future NLTK's) simply always runs.
_NEEDS_ONE_OF: dict[str, str] = {
    # STARTING_QUOTES
    "([«“‘„]|[`]+)": "«“‘„`",
    r"^\"": '"',
    r"(``)": "`",
    r"([ \(\[{<])(\"|\'{2})": "\"'",
    r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)": "'",
    # PUNCTUATION
    r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$": ".",
    r"([:,])([^\d])": ":,",
    r"([:,])$": ":,",
    r"\.{2,}": ".",
    r"[;@#$%&]": ";@#$%&",
    r"[\u2012-\u2015]": "\u2012\u2013\u2014\u2015",
    r'([^\.])(\.)([\]\)}>"\']*)\s*$': ".",
    r"[?!]": "?!",
    r"([^'])' ": "'",
    r"[*]": "*",
    # PARENS_BRACKETS, DOUBLE_DASHES
    r"[\]\[\(\)\{\}\<\>]": "][(){}<>",
    r"--": "-",
    # ENDING_QUOTES (r"\s+" always runs: the tokenizer pads the sentence with spaces)
    "([»”’])": "»”’",
    r"''": "'",
    r'"': '"',
    r"([^' ])('[sS]|'[mM]|'[dD]|') ": "'",
    r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": "'",
}
# CONTRACTIONS2 and CONTRACTIONS3 (``(?i)``): a match is these characters in some case. Letters
# can match other characters case-insensitively (the Kelvin sign matches "k"), so the shortcut
# is taken for ASCII text only, where a match means the lower-cased text contains the word.
_NEEDS_WORD: dict[str, str] = {
    r"(?i)\b(can)(?#X)(not)\b": "cannot",
    r"(?i)\b(d)(?#X)('ye)\b": "d'ye",
    r"(?i)\b(gim)(?#X)(me)\b": "gimme",
    r"(?i)\b(gon)(?#X)(na)\b": "gonna",
    r"(?i)\b(got)(?#X)(ta)\b": "gotta",
    r"(?i)\b(lem)(?#X)(me)\b": "lemme",
    r"(?i)\b(more)(?#X)('n)\b": "more'n",
    r"(?i)\b(wan)(?#X)(na)(?=\s)": "wanna",
    r"(?i) ('t)(?#X)(is)\b": " 'tis",
    r"(?i) ('t)(?#X)(was)\b": " 'twas",
}


class _NeedsOneOf:
    """A pattern's ``sub``, skipped when none of the characters every match holds is there."""

    __slots__ = ("needs", "pattern")

    def __init__(self, pattern: Any, needs: str) -> None:
        self.pattern, self.needs = pattern, needs

    def sub(self, replacement: str, text: str) -> str:
        for char in self.needs:
            if char in text:
                return str(self.pattern.sub(replacement, text))
        return text


class _NeedsWord:
    """A case-insensitive pattern's ``sub``, skipped on ASCII text without its word."""

    __slots__ = ("pattern", "word")

    def __init__(self, pattern: Any, word: str) -> None:
        self.pattern, self.word = pattern, word

    def sub(self, replacement: str, text: str) -> str:
        if text.isascii() and self.word not in text.lower():
            return text
        return str(self.pattern.sub(replacement, text))


def _fast(pattern: Any) -> Any:
    """The pattern without NLTK's timeout, skipped where it cannot match."""
    if isinstance(pattern, redos.TimedPattern):
        pattern = untimed(pattern)
    if pattern.pattern in _NEEDS_ONE_OF:
        return _NeedsOneOf(pattern, _NEEDS_ONE_OF[pattern.pattern])
    if pattern.pattern in _NEEDS_WORD:
        return _NeedsWord(pattern, _NEEDS_WORD[pattern.pattern])
    return pattern


@cache
def treebank() -> Any:
    """``nltk.word_tokenize``'s word tokenizer (it takes one sentence at a time)."""
    tokenizer = NLTKWordTokenizer()
    for name in ("STARTING_QUOTES", "PUNCTUATION", "ENDING_QUOTES"):
        rules = getattr(NLTKWordTokenizer, name)
        setattr(tokenizer, name, [(_fast(p), replacement) for p, replacement in rules])
    for name in ("PARENS_BRACKETS", "DOUBLE_DASHES"):
        pattern, replacement = getattr(NLTKWordTokenizer, name)
        setattr(tokenizer, name, (_fast(pattern), replacement))
    # Compiled by ``re`` itself, without a timeout; NLTK calls them with one replacement.
    for name in ("CONTRACTIONS2", "CONTRACTIONS3"):
        setattr(tokenizer, name, [_fast(p) for p in getattr(NLTKWordTokenizer, name)])
    return tokenizer
