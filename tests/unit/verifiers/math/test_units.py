"""Unit labels: which are dropped, which unit they name, and when two units differ."""

from __future__ import annotations

import pytest

from service.verifiers.math import verify
from service.verifiers.math.normalize import normalize_answer
from service.verifiers.math.units import split_units, strip_units, unit_key, units_differ


def key_of(answer: str) -> str | None:
    _, labels = split_units(normalize_answer(answer))
    return unit_key(labels)


@pytest.mark.parametrize(
    ("answer", "key"),
    [
        ("5 \\text{ cm}", "cm"),
        ("5 \\text{ centimeters}", "cm"),
        ("5 \\text{ centimetre}", "cm"),
        ("5 \\mathrm{~kg}", "kg"),
        ("5 \\text{ hrs}", "h"),
        ("5 \\text{ Hours}", "h"),
        ("5 \\text{ min}", "min"),
        ("5 \\text{ seconds}", "s"),
        ("5 \\mathrm{~mL}", "mL"),
        ("5 \\text{ ml}", "mL"),
        ("5 \\text{ L}", "L"),
        ("5 \\text{ litres}", "L"),
        ("5 \\text{ feet}", "ft"),
        ("5 \\text{ inches}", "in"),
        ("\\$5", "USD"),
        ("5 \\text{ dollars}", "USD"),
        ("\\$5 \\text{ dollars}", "USD"),
        ("5 \\text{ cents}", "cent"),
        ("5^\\circ \\text{C}", "degC"),
        ("5 \\text{ degrees Celsius}", "degC"),
        ("5^\\circ F", "degF"),
        ("5^\\circ", "deg"),
        ("5 \\text{ cm}^2", "cm^2"),
        ("5 \\text{ square centimeters}", "cm^2"),
        ("5 \\text{ meters squared}", "m^2"),
        ("5 \\text{ cm cubed}", "mL"),
        ("20 \\text{ mph}", "mi/h"),
        ("20 \\text{ miles per hour}", "mi/h"),
        ("3 \\text{ m/s}", "m/s"),
        ("17 \\text{ (cm)}", "cm"),
        ("50 \\text{ cm}^3", "mL"),  # one unit under two names
        ("50 \\text{ cc}", "mL"),
        ("\\text{Rs.} 500", "INR"),
        # unknown labels and compound units name no unit: they are ignored as before
        ("5 \\text{ units}", None),
        ("12 \\text{ apples}", None),
        ("3 \\text{ J s}", None),
        ("5.2 \\mathrm{~km} \\mathrm{~s}^{-1}", None),
        ("3.54\\,\\text{m}/\\text{s}", None),
        ("5 \\text{ PM}", "PM"),  # the half of the day of a time without minutes
        ("5 \\text{ p.m.}", "PM"),
        ("5", None),
    ],
)
def test_unit_key(answer: str, key: str | None) -> None:
    assert key_of(answer) == key


def test_case_matters_for_symbols_only() -> None:
    assert key_of("250 \\text{ pm}") == "pm"  # the picometre, not the afternoon
    assert key_of("5 \\text{ Mm}") is None
    assert key_of("5 \\text{ MG}") is None  # milligrams or megagrams
    assert key_of("5 \\text{ KM}") == "km"  # a word-like spelling reads in any case


@pytest.mark.parametrize(
    ("g", "a", "differ"),
    [
        ("kg", "g", True),
        ("USD", "cent", True),
        ("degC", "degF", True),
        ("cm", "cm", False),
        ("deg", "degC", False),  # a degree sign alone may be the temperature's
        ("pm", "PM", False),  # 5 pm: the picometre or the afternoon
        ("pm", "AM", True),
        ("AM", "PM", True),
        ("USD", "USD/h", False),  # a wage's currency alone
        ("km/h", "km", False),
        ("km/h", "m/s", True),
        ("km/h", "km/s", True),
        ("m", "km/h", True),
        (None, "cm", False),
        ("cm", None, False),
    ],
)
def test_units_differ(g: str | None, a: str | None, differ: bool) -> None:
    assert units_differ(g, a) is differ


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("17\\text{(cm)}", "17"),
        ("17(\\text{cm})", "17"),
        ("17\\text{(units)}", "17"),
        ("17\\text{(m)}", "17"),
        # a single capital letter in parentheses is an option label, not a unit
        ("12\\text{(C)}", "12\\text{(C)}"),
        ("12\\text{(L)}", "12\\text{(L)}"),
        ("3\\text{(impossible)}", "3\\text{(impossible)}"),
    ],
)
def test_units_in_parentheses(raw: str, expected: str) -> None:
    assert strip_units(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "x=3\\text{is not a solution}",
        "3\\text{is extraneous}",
        "3\\text{is wrong}",
        "5\\text{or more}",
        "5\\text{squared}",
        "5\\text{cubed}",
        "2\\text{and a half}",
        "2\\text{thirds}",
        "5\\text{at least}",
        "5 squared",
        "5 isn't it",
        "3\\text{ lakh}",
        "3\\text{ twelfths}",
        "5\\text{ times three}",
        "5\\text{e-3}",
        "1\\text{ in 6}",
        "3\\text{ to 2}",
    ],
)
def test_words_that_change_or_deny_the_value_are_kept(raw: str) -> None:
    assert strip_units(raw) == raw


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("3\\text{meters per second}", "3"),
        ("12\\text{ways}", "12"),
        ("5\\text{times}", "5"),
        ("5\\text{is the answer}", "5"),
        ("5 is the only solution", "5"),
        ("12\\text{apples are left}", "12"),
        ("12\\text{more}", "12"),  # the answer to "how many more"
        ("5\\text{meters squared}", "5"),
        ("-\\$5", "-5"),
        ("\\$2\\text{million}", "2\\times10^{6}"),
        ("\\$-5", "-5"),
        ("12\\text{ cm^2}", "12"),
        ("5\\text{ (mod 7)}", "5"),  # a digit in a modulus, not a value-changing label
    ],
)
def test_plain_labels_are_still_dropped(raw: str, expected: str) -> None:
    assert strip_units(raw) == expected


@pytest.mark.parametrize(
    ("completion", "ground_truth"),
    [
        ("\\boxed{5 \\mathrm{~g}}", "5 \\mathrm{~kg}"),
        ("\\boxed{\\$5}", "5 \\text{ cents}"),
        ("\\boxed{5^\\circ \\text{C}}", "5^\\circ \\text{F}"),
        ("\\boxed{d = 5 \\text{ km}}", "5 \\text{ m}"),
    ],
)
def test_different_units_say_so(completion: str, ground_truth: str) -> None:
    verdict = verify(completion, ground_truth, {})
    assert verdict.status == "incorrect"
    assert "different unit" in verdict.details["reason"]


@pytest.mark.parametrize("raw", ["rs+1", "-rs", "usd"])
def test_a_currency_word_goes_before_a_number_only(raw: str) -> None:
    assert strip_units(raw) == raw


def test_units_are_not_converted() -> None:
    assert verify("\\boxed{100 \\text{ cm}}", "1 \\text{ m}", {}).status == "incorrect"
    assert verify("\\boxed{5 \\text{ cm}}", "5 \\text{ centimeters}", {}).status == "correct"
    assert verify("\\boxed{5 \\text{ cm}}", "5", {}).status == "correct"


def test_an_upright_i_is_the_imaginary_unit() -> None:
    assert normalize_answer("3+2\\mathrm{i}") == "3+2i"
    assert verify("\\boxed{3+2\\mathrm{i}}", "5", {}).status == "incorrect"
    assert verify("\\boxed{3+2\\mathrm{i}}", "3+2i", {}).status == "correct"
