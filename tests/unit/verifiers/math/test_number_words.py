"""Numbers written in words: only a whole answer that is one number is read."""

from __future__ import annotations

import pytest

from service.verifiers.math.normalize import normalize_answer
from service.verifiers.math.number_words import read_number_words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("five", "5"),
        ("\\text{Twelve}", "12"),
        ("twenty-one", "21"),
        ("one hundred and five", "105"),
        ("two million three hundred thousand", "2300000"),
        ("minus three", "-3"),
        ("one half", "\\frac{1}{2}"),
        ("a half", "\\frac{1}{2}"),
        ("three quarters", "\\frac{3}{4}"),
        ("seven eighths", "\\frac{7}{8}"),
    ],
)
def test_number_in_words_is_read(text: str, expected: str) -> None:
    assert read_number_words(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "five apples",  # a count of something, not a bare number
        "twenty ten",
        "twelve three",
        "one hundred one hundred",
        "half",  # no numerator
        "one second",  # a unit of time, not a denominator
        "two third",
        "one thirds",
        "none",
        "one-to-one",
    ],
)
def test_words_that_are_not_one_number_stay(text: str) -> None:
    assert read_number_words(text) is None


def test_normalized_answer_in_words_is_a_numeral() -> None:
    assert normalize_answer("\\text{one half}") == "\\frac{1}{2}"
    assert normalize_answer("\\text{The answer is } 5") == "5"
    assert normalize_answer("Answer: x^2+1") == "x^2+1"
