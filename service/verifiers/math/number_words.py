"""Numbers written in words ("five", "twenty-one", "three quarters") read as numerals.

Only a whole answer that is nothing but a number in words is read: "five apples" or "one of
them" are left alone. Ordinals that double as other words ("second" is a unit of time) are not
denominators, and a bare "half" or "quarter" is not a number.
"""

from __future__ import annotations

import re

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"thousand": 1000, "million": 1000_000}
# Denominators in words, singular and plural ("one half", "two thirds", "three quarters").
_DENOMINATORS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fourth": 4,
    "fourths": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "seventh": 7,
    "sevenths": 7,
    "eighth": 8,
    "eighths": 8,
    "ninth": 9,
    "ninths": 9,
    "tenth": 10,
    "tenths": 10,
}
_FIRST_WORDS = frozenset(_UNITS) | frozenset(_TENS) | {"minus", "negative", "a", "an"}
_PHRASE = re.compile(
    r"^(?:\\text\{\s*([A-Za-z][A-Za-z \-]{1,80})\s*\}|([A-Za-z][A-Za-z \-]{1,80}))$"
)
_MAX_WORDS = 12


def _integer(words: list[str]) -> int | None:
    """``["twenty", "one"]`` -> 21; None unless every word is part of one number."""
    if not words:
        return None
    total = current = 0
    seen_scale = 10**9
    for word in words:
        if word in _UNITS:
            tail = current % 100
            if tail and (_UNITS[word] >= 10 or tail % 10 or tail < 20):
                return None  # "five six", "twelve three", "twenty ten"
            current += _UNITS[word]
        elif word in _TENS:
            if current % 100:
                return None  # "five twenty"
            current += _TENS[word]
        elif word == "hundred":
            if current == 0 or current >= 100:
                return None
            current *= 100
        elif word in _SCALES:
            scale = _SCALES[word]
            if current == 0 or scale >= seen_scale:
                return None
            total += current * scale
            current = 0
            seen_scale = scale
        elif word == "and":
            continue
        else:
            return None
    return total + current


def read_number_words(text: str) -> str | None:
    """The numeral an answer in words stands for ("one half" -> ``\\frac{1}{2}``), else None."""
    m = _PHRASE.match(text.strip())
    if m is None:
        return None
    phrase = (m.group(1) or m.group(2)).lower()
    words = phrase.replace("-", " ").split()
    if not words or len(words) > _MAX_WORDS or words[0] not in _FIRST_WORDS:
        return None
    sign = ""
    if words[0] in ("minus", "negative"):
        sign, words = "-", words[1:]
    if words and words[-1] in _DENOMINATORS:
        denominator = _DENOMINATORS[words[-1]]
        head = words[:-1]
        numerator = 1 if head in (["a"], ["an"], ["one"]) else _integer(head)
        if numerator is None or numerator == 0:
            return None
        if words[-1].endswith("s") != (numerator > 1):
            return None  # "one thirds", "two third": not a reading we trust
        return f"{sign}\\frac{{{numerator}}}{{{denominator}}}"
    if words[:1] in (["a"], ["an"]):
        return None
    value = _integer(words)
    return None if value is None else f"{sign}{value}"
