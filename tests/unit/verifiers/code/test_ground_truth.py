"""Ground truth and config validation: bad input is named, never guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.verifiers.base import InvalidGroundTruth
from service.verifiers.code.config import validate_config
from service.verifiers.code.ground_truth import FunctionTest, StdioTest, parse_ground_truth
from service.verifiers.code.verifier import with_prelude

STDIO = {"language": "python", "mode": "stdio", "tests": [{"stdin": "1\n", "stdout": "1\n"}]}


def test_defaults_and_json_text_form() -> None:
    problem = parse_ground_truth(json.dumps(STDIO))
    assert problem.language.name == "python" and problem.mode == "stdio"
    assert problem.tests == (StdioTest("1\n", "1\n"),)
    assert (problem.time_limit_s, problem.memory_mb, problem.float_tolerance) == (2.0, 256, None)


def test_language_aliases_and_function_mode() -> None:
    problem = parse_ground_truth(
        {
            "language": "Py",
            "mode": "function",
            "fn_name": "solve",
            "tests": [{"args": [1], "expected": 2}],
        }
    )
    assert problem.language.name == "python" and problem.tests == (FunctionTest([1], 2),)
    assert parse_ground_truth({**STDIO, "language": "c++"}).language.name == "cpp"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"language": "cobol"}, "'language' must be one of"),
        ({"mode": "interactive"}, "'mode' must be one of"),
        ({"language": "cpp", "mode": "function", "fn_name": "f"}, "not supported for cpp"),
        ({"tests": []}, "non-empty list"),
        ({"tests": [{"stdin": "1"}]}, "stdio test 0 needs string"),
        ({"tests": ["1"]}, "stdio test 0 must be an object"),
        ({"time_limit_s": 0}, "'time_limit_s' must be between"),
        ({"time_limit_s": "2"}, "'time_limit_s' must be a number"),
        ({"memory_mb": 10**6}, "'memory_mb' must be an integer"),
        ({"float_tolerance": 5}, "'float_tolerance' must be between"),
        ({"timelimit": 3}, "unknown ground truth key(s): timelimit"),
        ({"ignore_case": "yes"}, "'ignore_case' must be true or false"),
        ({"ignore_case": 1}, "'ignore_case' must be true or false"),
        (
            {"mode": "function", "fn_name": "f", "tests": [{"args": [], "expected": 1}]}
            | {"ignore_case": True},
            "'ignore_case' applies to stdio tests only",
        ),
        ({"unwrap_expected": "true"}, "'unwrap_expected' must be true or false"),
        ({"unwrap_expected": True}, "'unwrap_expected' applies to function tests only"),
        (
            {"mode": "assert", "tests": ["assert f(1) == 1"], "unwrap_expected": True},
            "'unwrap_expected' applies to function tests only",
        ),
        ({"mode": "function", "tests": [{"args": [1], "expected": 1}]}, "needs 'fn_name'"),
        ({"mode": "function", "fn_name": "f", "tests": [{"args": 1, "expected": 1}]}, "'args'"),
        ({"mode": "assert", "tests": ["assert f(1) =="]}, "does not parse"),
    ],
)
def test_bad_ground_truth_is_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidGroundTruth, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_ground_truth({**STDIO, **change})


def test_a_thousand_test_suite_is_a_ground_truth_and_the_cap_is_named() -> None:
    # HumanEval+ states about a thousand function tests for some problems.
    tests = [{"args": [i], "expected": i + 1} for i in range(1200)]
    problem = parse_ground_truth(
        {"language": "python", "mode": "function", "fn_name": "f", "tests": tests}
    )
    assert len(problem.tests) == 1200 and problem.tests[-1] == FunctionTest([1199], 1200)
    with pytest.raises(InvalidGroundTruth, match="at most 5000 tests, got 5001"):
        parse_ground_truth({**STDIO, "tests": STDIO["tests"] * 5001})


def test_not_an_object_is_invalid() -> None:
    for raw in (None, 3, "not json", ["tests"], "[" * 100_000):  # the last: too deep to parse
        with pytest.raises(InvalidGroundTruth):
            parse_ground_truth(raw)


def test_config() -> None:
    assert validate_config({}) == {"reward": "all"}
    assert validate_config({"reward": "fraction"}) == {"reward": "fraction"}
    with pytest.raises(InvalidGroundTruth, match="'reward'"):
        validate_config({"reward": "most"})
    with pytest.raises(InvalidGroundTruth, match="unknown config"):
        validate_config({"rewards": "all"})


def test_a_prelude_is_code_the_program_starts_with() -> None:
    base = {"language": "python", "mode": "assert", "tests": ["assert f() == 1"]}
    assert parse_ground_truth(base).prelude == ""
    assert parse_ground_truth({**base, "prelude": "from heapq import *\n"}).prelude == (
        "from heapq import *\n"
    )
    for bad, named in ((["import os"], "string of code"), ("x" * 100_001, "longer than")):
        with pytest.raises(InvalidGroundTruth, match=named):
            parse_ground_truth({**base, "prelude": bad})


def test_the_prelude_goes_first_and_the_answers_future_imports_before_it() -> None:
    answer = "from __future__ import annotations\nimport sys\ndef f() -> int:\n    return 1\n"
    program = with_prelude("from heapq import *\ninf = float('inf')\n", answer)
    assert program.startswith("from __future__ import annotations\nfrom heapq import *\n")
    assert program.count("from __future__") == 1
    assert program.endswith("import sys\ndef f() -> int:\n    return 1\n")
    compile(program, "solution.py", "exec")
    assert with_prelude("", answer) == answer
    # A continued or parenthesised one moves whole; one inside a string stays.
    answer = "from __future__ import (annotations,\n    division)\nx = 1\n"
    assert with_prelude("import os", answer).startswith("from __future__ import (annotations,\n")
    compile(with_prelude("import os", answer), "solution.py", "exec")
    quoted = 's = """\nfrom __future__ import annotations\n"""\n'
    assert with_prelude("import os", quoted) == "import os\n\n" + quoted
    cpp = with_prelude("#include <bits/stdc++.h>\nusing namespace std;", "int main() {}\n", "cpp")
    assert cpp == "#include <bits/stdc++.h>\nusing namespace std;\n\nint main() {}\n"
