"""The code ground truth: validated into a CodeProblem, or InvalidGroundTruth naming why."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from service.verifiers.base import InvalidGroundTruth

from .asserts import AssertTest, plan_assert
from .languages import LANGUAGES, Language, language_named

MODES = ("stdio", "function", "assert")
# HumanEval+ states up to ~1,000 function tests for one problem and generated stdio suites run
# to thousands; one run takes them all (about 0.2 ms a test), and a wrong answer stops the run
# under "all". The ground truth's size cap (RLVR_MAX_GROUND_TRUTH_CHARS) bounds them as well.
MAX_TESTS = 5000
_KEYS = {
    "language",
    "mode",
    "tests",
    "fn_name",
    "time_limit_s",
    "memory_mb",
    "float_tolerance",
    "ignore_case",
    "unwrap_expected",
    "prelude",
}
# A prelude is a suite's prompt code (imports, helper classes), not a test suite.
MAX_PRELUDE_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class StdioTest:
    stdin: str
    stdout: str


@dataclass(frozen=True, slots=True)
class FunctionTest:
    args: list[Any]
    expected: Any


Test = StdioTest | FunctionTest | AssertTest


@dataclass(frozen=True, slots=True)
class CodeProblem:
    language: Language
    mode: str
    tests: tuple[Test, ...]
    fn_name: str | None
    time_limit_s: float
    memory_mb: int
    float_tolerance: float | None
    # Stdio only: ASCII letters compare without case ("YES" and "yes"), for tasks that accept
    # an answer in any case.
    ignore_case: bool
    # Function only: an expected value that is a one-element list also accepts its element
    # (APPS and TACO call-based tests store each return value wrapped: ``[3]`` for 3).
    unwrap_expected: bool
    # Code the program starts with, as the suite's prompt gives it above the answer
    # (LeetCodeDataset's imports, ``inf`` and node classes): "" for none.
    prelude: str = ""


def _number(raw: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidGroundTruth(f"{key!r} must be a number")
    if not low <= value <= high:
        raise InvalidGroundTruth(f"{key!r} must be between {low:g} and {high:g}, got {value}")
    return float(value)


def _stdio_test(index: int, test: Any) -> StdioTest:
    if not isinstance(test, Mapping):
        raise InvalidGroundTruth(f"stdio test {index} must be an object with 'stdin', 'stdout'")
    stdin, stdout = test.get("stdin", ""), test.get("stdout")
    if not isinstance(stdin, str) or not isinstance(stdout, str):
        raise InvalidGroundTruth(f"stdio test {index} needs string 'stdin' and 'stdout'")
    # Inputs stored with "\r\n" line ends: a line read with getline() or input() would keep
    # the "\r", and an honest program fail on how the test was stored, not on the task.
    return StdioTest(stdin.replace("\r\n", "\n"), stdout)


def _function_test(index: int, test: Any) -> FunctionTest:
    if not isinstance(test, Mapping) or "expected" not in test:
        raise InvalidGroundTruth(f"function test {index} must be an object with 'args', 'expected'")
    args = test.get("args")
    if not isinstance(args, list):
        raise InvalidGroundTruth(f"function test {index}: 'args' must be a list")
    return FunctionTest(args, test["expected"])


def _assert_test(index: int, test: Any) -> AssertTest:
    if not isinstance(test, str) or not test.strip():
        raise InvalidGroundTruth(f"assert test {index} must be a non-empty source string")
    return plan_assert(test)


def parse_ground_truth(raw: Any) -> CodeProblem:
    """Validate a code ground truth (an object, or its JSON text)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise InvalidGroundTruth("code ground truth text is not JSON") from exc
    if not isinstance(raw, Mapping):
        raise InvalidGroundTruth("code ground truth must be an object")
    unknown = sorted(str(key)[:40] for key in raw if key not in _KEYS)
    if unknown:
        raise InvalidGroundTruth(f"unknown ground truth key(s): {', '.join(unknown)}")
    name = raw.get("language")
    language = language_named(name) if isinstance(name, str) else None
    if language is None:
        raise InvalidGroundTruth(f"'language' must be one of {sorted(LANGUAGES)}, got {name!r}")
    mode = raw.get("mode", "stdio")
    if mode not in MODES:
        raise InvalidGroundTruth(f"'mode' must be one of {list(MODES)}, got {mode!r}")
    if mode not in language.modes:
        raise InvalidGroundTruth(f"mode {mode!r} is not supported for {language.name}")
    tests = raw.get("tests")
    if not isinstance(tests, list) or not tests:
        raise InvalidGroundTruth("'tests' must be a non-empty list")
    if len(tests) > MAX_TESTS:
        raise InvalidGroundTruth(f"at most {MAX_TESTS} tests, got {len(tests)}")
    builders: dict[str, Callable[[int, Any], Test]] = {
        "stdio": _stdio_test,
        "function": _function_test,
        "assert": _assert_test,
    }
    build = builders[mode]
    parsed = tuple(build(index, test) for index, test in enumerate(tests))
    fn_name = raw.get("fn_name")
    if mode == "function" and (not isinstance(fn_name, str) or not fn_name.isidentifier()):
        raise InvalidGroundTruth("function mode needs 'fn_name', a Python identifier")
    tolerance = raw.get("float_tolerance")
    if tolerance is not None:
        tolerance = _number(raw, "float_tolerance", 0.0, 0.0, 1.0)
    memory = raw.get("memory_mb", 256)
    if isinstance(memory, bool) or not isinstance(memory, int) or not 16 <= memory <= 4096:
        raise InvalidGroundTruth(f"'memory_mb' must be an integer in [16, 4096], got {memory!r}")
    return CodeProblem(
        language=language,
        mode=mode,
        tests=parsed,
        fn_name=fn_name if mode == "function" else None,
        time_limit_s=_number(raw, "time_limit_s", 2.0, 0.05, 60.0),
        memory_mb=memory,
        float_tolerance=tolerance,
        ignore_case=_switch(raw, "ignore_case", mode, "stdio"),
        unwrap_expected=_switch(raw, "unwrap_expected", mode, "function"),
        prelude=_prelude(raw.get("prelude", "")),
    )


def _prelude(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidGroundTruth(f"'prelude' must be a string of code, got {type(value).__name__}")
    if len(value) > MAX_PRELUDE_CHARS:
        raise InvalidGroundTruth(f"'prelude' is longer than {MAX_PRELUDE_CHARS} characters")
    if "\0" in value:
        raise InvalidGroundTruth("'prelude' holds a NUL character")
    return value


def _switch(raw: Mapping[str, Any], key: str, mode: str, applies_to: str) -> bool:
    """A boolean key that only one mode's tests know."""
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise InvalidGroundTruth(f"{key!r} must be true or false, got {value!r}")
    if value and mode != applies_to:
        raise InvalidGroundTruth(f"{key!r} applies to {applies_to} tests only")
    return value
