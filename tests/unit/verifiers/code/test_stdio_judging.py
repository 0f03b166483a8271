"""Stdio judging against how public suites (APPS, CodeContests, LiveCodeBench, TACO) state
their tests: line ends, trailing whitespace and blank lines, float tolerances; and what stays a
wrong answer whatever the tolerance."""

from __future__ import annotations

import pytest

from service.verifiers.code.ground_truth import StdioTest, parse_ground_truth
from service.verifiers.code.judge import compare_stdout


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"3\n", "3"),  # expected without a final newline
        (b"3", "3\n"),  # output without one
        (b"3\n", "3\r\n"),  # expected stored with CRLF
        (b"3\r\n4\r\n", "3\n4\n"),  # output with CRLF
        (b"1 2\n", "1 2 \n"),  # trailing spaces in the expected line
        (b"1 2 \t\n", "1 2\n"),  # and in the output's
        (b"3\n", "3\n\n"),  # a final blank line in the expected output
        (b"3\n\n\n", "3\n"),
        (b"", ""),
        (b"\n", ""),
        (b"YES\nNO\n", "YES\r\nNO\r\n\r\n"),
    ],
)
def test_layout_the_suites_differ_in_is_forgiven(output: bytes, expected: str) -> None:
    assert compare_stdout(output, expected, None) is None


@pytest.mark.parametrize("tolerance", [None, 1e-6])
@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"1  2\n", "1 2\n"),  # inside a line, whitespace counts
        (b"1\t2\n", "1 2\n"),
        (b" 1 2\n", "1 2\n"),
        (b"yes\n", "YES\n"),
        (b"Yes\n", "YES\n"),
        (b"2 1\n", "1 2\n"),
        (b"\n3\n", "3\n"),  # a leading blank line is a line
        (b"3\n4\n", "3\n"),
        (b"3\x00\n", "3\n"),
        (b"3\xff\n", "3\n"),
    ],
)
def test_a_difference_inside_a_line_stays_wrong(
    output: bytes, expected: str, tolerance: float | None
) -> None:
    assert compare_stdout(output, expected, tolerance) is not None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"0.333333333\n", "0.333333\n"),
        (b"2.000000000 0.5\n", "2 0.5\n"),  # an integral answer printed as a float
        (b"1e-7\n", "0\n"),
        (b"-0.000000\n", "0.000000\n"),
        (b"1000000.5\n", "1000000\n"),  # relative to the expected value
        (b"nan\n", "nan\n"),  # the same text is always the same
    ],
)
def test_numbers_within_the_tolerance_pass(output: bytes, expected: str) -> None:
    assert compare_stdout(output, expected, 1e-6) is None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"0.334\n", "0.333333\n"),
        (b"1_0\n", "10\n"),  # Python's float() reads these; no judge does
        (b"\xd9\xa3\n", "3\n"),  # ARABIC-INDIC DIGIT THREE
        (b"infinity\n", "inf\n"),
        (b"inf\n", "1e308\n"),
        (b"nan\n", "0.5\n"),
        (b"1e999\n", "5\n"),
        (b"0x10\n", "16\n"),
        (b"0.5 x\n", "0.5 y\n"),
    ],
)
def test_what_is_not_a_close_number_stays_wrong(output: bytes, expected: str) -> None:
    assert compare_stdout(output, expected, 1e-6) == "line 1 differs"


def test_float_tolerance_is_the_ground_truths_own_key() -> None:
    assert compare_stdout(b"0.333333333\n", "0.333333\n", None) == "line 1 differs"
    problem = parse_ground_truth(
        {
            "language": "cpp",
            "float_tolerance": 1e-6,
            "tests": [{"stdin": "", "stdout": "0.333333\n"}],
        }
    )
    assert problem.float_tolerance == 1e-6


def test_crlf_inputs_reach_the_program_as_lf() -> None:
    problem = parse_ground_truth(
        {
            "language": "cpp",
            "tests": [
                {"stdin": "abc\r\nde\r\n", "stdout": "cba\ned\n"},
                {"stdin": "a\rb\n", "stdout": ""},  # a lone CR is data
                {"stdin": "1 2", "stdout": "3"},  # no final newline: left as it is
            ],
        }
    )
    assert problem.tests == (
        StdioTest("abc\nde\n", "cba\ned\n"),
        StdioTest("a\rb\n", ""),
        StdioTest("1 2", "3"),
    )


def test_a_long_line_is_judged_whole() -> None:
    line = " ".join(["1000000000"] * 200_000)
    assert compare_stdout(line.encode() + b"\n", line, None) is None
    assert compare_stdout(line.encode() + b" 1\n", line, 1e-6) == "line 1 differs"
    changed = line[:-1] + "1"
    assert compare_stdout(changed.encode(), line, None) == "line 1 differs"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"yes\n", "YES\n"),
        (b"Yes\nnO\n", "YES\nNO\n"),
        (b"ALICE 3\n", "Alice 3\n"),
        (b"1E5\n", "1e5\n"),
    ],
)
def test_ignore_case_forgives_ascii_letter_case_only_when_asked(
    output: bytes, expected: str
) -> None:
    assert compare_stdout(output, expected, None) is not None
    assert compare_stdout(output, expected, None, ignore_case=True) is None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (b"Y ES\n", "YES\n"),  # spacing still counts
        (b"yess\n", "YES\n"),
        (b"YES\nNO\n", "YES\n"),  # an extra line
        (b"STRASSE\n", "straße\n"),  # no Unicode case folding
        ("İ\n".encode(), "i\n"),
        (b"NO\n", "YES\n"),
    ],
)
def test_ignore_case_forgives_nothing_else(output: bytes, expected: str) -> None:
    assert compare_stdout(output, expected, None, ignore_case=True) is not None
    assert compare_stdout(output, expected, 1e-6, ignore_case=True) is not None


def test_ignore_case_with_a_float_tolerance() -> None:
    assert compare_stdout(b"YES 0.3333333\n", "yes 0.333333\n", 1e-5, ignore_case=True) is None
    assert parse_ground_truth(
        {"language": "python", "tests": [{"stdin": "", "stdout": "YES"}], "ignore_case": True}
    ).ignore_case
