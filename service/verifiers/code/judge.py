"""Host-side judging: outputs against expectations, runs against their limits.

Nothing here trusts the sandbox beyond bytes: outputs are compared as text or as parsed JSON
data, never through objects the program made.
"""

from __future__ import annotations

import decimal
import math
import re
import signal
import string
from collections import OrderedDict, deque
from fractions import Fraction
from typing import Any

from service.sandbox.base import Limits, RunResult

ACCEPTED = "accepted"
WRONG_ANSWER = "wrong answer"
TIME_LIMIT = "time limit"
MEMORY_LIMIT = "memory limit"
OUTPUT_LIMIT = "output limit"
RUNTIME_ERROR = "runtime error"
COMPILE_ERROR = "compile error"
LIMIT_STATUSES = frozenset({TIME_LIMIT, MEMORY_LIMIT})


def numbers_close(got: float, want: float, tolerance: float) -> bool:
    """|got - want| <= tolerance, absolute or relative to the expected value. Ints too large
    for a float (10**400) are compared exactly, never converted (OverflowError). An infinity
    or NaN on either side equals only the same infinity: |x - inf| <= tolerance * inf holds
    for every finite x, so any number would pass for an expected infinity."""
    try:
        got_f, want_f = float(got), float(want)
    except OverflowError:
        return _exactly_close(got, want, tolerance)
    if not (math.isfinite(got_f) and math.isfinite(want_f)):
        return got_f == want_f
    difference = abs(got_f - want_f)
    return difference <= tolerance or difference <= tolerance * abs(want_f)


def _exactly_close(got: float, want: float, tolerance: float) -> bool:
    # One of them is an int past a float's range: an infinity or NaN beside it is not close.
    if any(isinstance(x, float) and not math.isfinite(x) for x in (got, want)):
        return False
    difference = abs(Fraction(got) - Fraction(want))
    bound = Fraction(tolerance)
    return difference <= bound or difference <= bound * abs(Fraction(want))


def _tokens_numbers_close(got: str, want: str, tolerance: float) -> bool:
    """Two numeric tokens of stdout within the tolerance. float() reads a token past a float's
    range ("1" + 400 zeros, "1e400") as inf, which ``numbers_close`` rightly finds close only
    to inf: such tokens are compared in decimal instead, digit for digit."""
    got_f, want_f = float(got), float(want)
    if math.isfinite(got_f) and math.isfinite(want_f):
        return numbers_close(got_f, want_f, tolerance)
    # More digits than both tokens hold: the difference and the bound are exact unless the
    # exponents are further apart than that, when the difference is the larger one anyway.
    context = decimal.Context(
        prec=len(got) + len(want) + 100,
        Emax=decimal.MAX_EMAX,
        Emin=decimal.MIN_EMIN,
        traps=[decimal.InvalidOperation, decimal.Overflow],
    )
    try:
        got_d, want_d = context.create_decimal(got), context.create_decimal(want)
        difference = context.abs(context.subtract(got_d, want_d))
        bound = context.create_decimal_from_float(tolerance)
        return difference <= bound or difference <= context.multiply(bound, context.abs(want_d))
    except decimal.DecimalException:
        # An exponent past decimal's range (10**18 digits): no judge prints such a number,
        # and only the same text (compared before) matches it.
        return False


def approx_equal(got: Any, want: Any, tolerance: float | None) -> bool:
    """Python ``==`` on plain data; with a tolerance, floats inside may differ by it."""
    if tolerance is None:
        return bool(got == want)
    numeric = (int, float)
    if isinstance(got, numeric) and isinstance(want, numeric):
        if isinstance(got, bool) or isinstance(want, bool):
            return bool(got == want)
        return got == want or numbers_close(got, want, tolerance)
    if type(got) is not type(want) or not isinstance(got, (list, tuple, dict, deque)):
        return bool(got == want)
    if isinstance(got, dict):
        # An OrderedDict is equal only in the same order, as in Python.
        if isinstance(got, OrderedDict) and list(got) != list(want):
            return False
        return got.keys() == want.keys() and all(
            approx_equal(got[k], want[k], tolerance) for k in got
        )
    return len(got) == len(want) and all(
        approx_equal(g, w, tolerance) for g, w in zip(got, want, strict=True)
    )


def json_equal(got: Any, want: Any, tolerance: float | None) -> bool:
    """JSON data equality: true is not 1, 2 equals 2.0, lists in order, objects by key."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        if tolerance is None:
            return bool(got == want)
        return got == want or numbers_close(got, want, tolerance)
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(json_equal(g, w, tolerance) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(json_equal(got[k], want[k], tolerance) for k in want)
        )
    return type(got) is type(want) and got == want


def _lines(text: str) -> list[str]:
    # Trailing whitespace on each line and trailing blank lines do not count; nothing else
    # is forgiven (no lower-casing, no token sets).
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


# A number as judges print it: ASCII digits, an optional sign, point and exponent. Python's
# float() also takes "1_0", "infinity" and other scripts' digits, which no judge reads as numbers.
# Each part can match in one way only, and no quantifier gives back what it took: the pattern
# runs on the program's own output, and "\d+\.?\d*" split a run of digits in every way before
# failing on a letter after it (15 s on the host for a 30,000-digit token).
_NUMBER = re.compile(r"[+-]?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?+\d++)?+", re.ASCII)
_SPACES = re.compile(r"(\s+)")


def _tokens_close(got: str, want: str, tolerance: float) -> bool:
    # Only numbers may differ, by the tolerance: the whitespace between tokens must be the same,
    # as without a tolerance ("1  2" is not "1 2"). Splitting on a captured group keeps the
    # separators at the odd places.
    got_parts, want_parts = _SPACES.split(got), _SPACES.split(want)
    if len(got_parts) != len(want_parts):
        return False
    for place, (g, w) in enumerate(zip(got_parts, want_parts, strict=True)):
        if g == w:
            continue
        if place % 2 or not (_NUMBER.fullmatch(g) and _NUMBER.fullmatch(w)):
            return False
        if not _tokens_numbers_close(g, w, tolerance):
            return False
    return True


# ASCII letters only: a judge that accepts "any case" means YES / Yes / yes, not Unicode case
# folding ("STRASSE" is not "straße").
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def compare_stdout(
    output: bytes, expected: str, tolerance: float | None, ignore_case: bool = False
) -> str | None:
    """None when the output matches, else why not (no expected content is quoted)."""
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError:
        return "output is not valid UTF-8"
    if ignore_case:
        text, expected = text.translate(_ASCII_LOWER), expected.translate(_ASCII_LOWER)
    got, want = _lines(text), _lines(expected)
    if len(got) != len(want):
        return f"expected {len(want)} line(s), got {len(got)}"
    for number, (g, w) in enumerate(zip(got, want, strict=True), start=1):
        if g != w and (tolerance is None or not _tokens_close(g, w, tolerance)):
            return f"line {number} differs"
    return None


# The share of the CPU limit a run killed by SIGXCPU must have spent for the signal to be the
# limit's: a program that sends itself SIGXCPU early is a runtime error.
SIGXCPU_SPENT = 0.9


def run_failure(result: RunResult, limits: Limits) -> tuple[str, str] | None:
    """(status, reason) when the run itself failed; None when it ran to a normal exit 0.

    A limit is what the host's facts say: the sandbox's wall clock and caps, the CPU time the
    kernel counted, an OOM kill read from the cgroup or the harness's own report that a test's
    data did not fit in its memory. Never what the program wrote or raised: any program can
    print "MemoryError" or "std::bad_alloc", raise MemoryError or send itself SIGXCPU, and a
    wrong answer would be a ``timeout`` instead. A MemoryError of the program's own is a
    runtime error."""
    if result.exceeded_output:
        return OUTPUT_LIMIT, f"{result.killed.replace('_limit', '')} exceeded its cap"  # type: ignore[union-attr]
    if result.memory_exceeded and not _exceeded_time(result, limits):
        return MEMORY_LIMIT, f"exceeded {limits.memory_mb} MB"
    if _exceeded_time(result, limits):
        why = "wall clock" if result.killed == "wall" else "CPU time"
        return TIME_LIMIT, f"exceeded {limits.cpu_s:g} s ({why})"
    if result.term_signal is not None:
        try:
            name = signal.Signals(result.term_signal).name
        except ValueError:
            name = "unknown"
        return RUNTIME_ERROR, f"killed by signal {result.term_signal} ({name})"
    if result.exit_code:
        return RUNTIME_ERROR, f"exit code {result.exit_code}"
    return None


def _exceeded_time(result: RunResult, limits: Limits) -> bool:
    """The wall clock stopped the run, or it spent more CPU time than allowed. SIGXCPU counts
    only with the CPU time spent (RLIMIT_CPU sends it then; a program can send it at once),
    within what the accounting loses: the kernel signals at the limit by its own clock, and the
    time the process is charged may read a few per cent below it (a busy loop under a 1 s
    limit, killed by SIGXCPU, read 0.976 s)."""
    spent = result.cpu_s > limits.cpu_s
    if result.term_signal == signal.SIGXCPU:
        spent = result.cpu_s >= SIGXCPU_SPENT * limits.cpu_s
    return result.killed == "wall" or spent
