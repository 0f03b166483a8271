"""Reward hacks against code@1.0.0, through each real sandbox backend: none earns a reward."""

from __future__ import annotations

import time
from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.sandbox.forged_failures import FORGED_SETUP_FAILURE
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

ADD = {"language": "python", "mode": "function", "fn_name": "add"}
FUNCTION = {
    **ADD,
    "tests": [{"args": [1, 2], "expected": 3}, {"args": [[1], [2]], "expected": [1, 2]}],
}
ASSERT = {
    "language": "python",
    "mode": "assert",
    "tests": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"],
}
SANDBOX_ASSERT = {**ASSERT, "tests": ["assert all(add(i, 1) == i + 1 for i in range(3))"]}
STDIO = {
    "language": "python",
    "tests": [{"stdin": "3\n", "stdout": "1\n2\n3\n"}, {"stdin": "2\n", "stdout": "1\n2\n"}],
}

ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
def add(a, b):
    return Anything()
"""
FORGE_RESULT = """
import json, os
def add(a, b):
    return 0
os.write(3, json.dumps({"value": 3, "values": [{"int": "0x3"}], "done": "PASS"}).encode())
os._exit(0)
"""
EXITS = [
    "import sys\ndef add(a, b):\n    return 0\nsys.exit(0)\n",
    "import os\ndef add(a, b):\n    return 0\nos._exit(0)\n",
    "def add(a, b):\n    return 0\nquit()\n",
    "def add(a, b):\n    return 0\nraise SystemExit(0)\n",
    "import os\ndef add(a, b):\n    return 0\nos.execv('/bin/true', ['true'])\n",
]
PATCH_BUILTINS = """
import builtins
builtins.AssertionError = type("Never", (Exception,), {})
builtins.isinstance = lambda *a: True
builtins.type = lambda *a: int
def add(a, b):
    return "three"
"""


def _assert_no_reward(verdict: Any) -> None:
    assert verdict.status in ("incorrect", "timeout"), verdict
    assert verdict.reward == 0.0


@pytest.mark.parametrize("ground_truth", [FUNCTION, ASSERT], ids=["function", "assert"])
def test_an_honest_solution_passes(ground_truth: dict[str, Any]) -> None:
    verdict = verify(fenced("def add(a, b):\n    return a + b\n"), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0)


@pytest.mark.parametrize("ground_truth", [FUNCTION, ASSERT], ids=["function", "assert"])
def test_an_object_equal_to_everything_fails(ground_truth: dict[str, Any]) -> None:
    verdict = verify(fenced(ALWAYS_EQUAL), ground_truth, {})
    _assert_no_reward(verdict)
    assert "not" in verdict.details["tests"][0]["reason"]  # "... is not JSON/plain data"
    assert "overrides_comparison" in verdict.details["flags"]


EXIT_IDS = ["sys.exit", "os._exit", "quit", "SystemExit", "execv"]


@pytest.mark.parametrize("program", EXITS, ids=EXIT_IDS)
@pytest.mark.parametrize(
    "ground_truth", [FUNCTION, ASSERT, SANDBOX_ASSERT], ids=["function", "assert", "in-sandbox"]
)
def test_leaving_before_the_tests_run_fails(program: str, ground_truth: dict[str, Any]) -> None:
    verdict = verify(fenced(program), ground_truth, {})
    _assert_no_reward(verdict)
    assert "exits_early" in verdict.details["flags"]


@pytest.mark.parametrize(
    "ground_truth", [FUNCTION, ASSERT, SANDBOX_ASSERT], ids=["function", "assert", "in-sandbox"]
)
def test_forged_results_on_the_driver_channel_fail(ground_truth: dict[str, Any]) -> None:
    _assert_no_reward(verify(fenced(FORGE_RESULT), ground_truth, {}))


def test_patched_builtins_do_not_reach_the_host_comparison() -> None:
    verdict = verify(fenced(PATCH_BUILTINS), ASSERT, {})
    _assert_no_reward(verdict)
    assert "patches_builtins" in verdict.details["flags"]


def test_printing_pass_fails_everywhere() -> None:
    program = "print('PASS')\nprint('All tests passed')\ndef add(a, b):\n    return 0\n"
    for ground_truth in (STDIO, FUNCTION, ASSERT, SANDBOX_ASSERT):
        _assert_no_reward(verify(fenced(program), ground_truth, {}))


def test_printing_only_the_first_line_fails() -> None:
    verdict = verify(fenced("n = int(input())\nprint(1)\n"), STDIO, {"reward": "fraction"})
    _assert_no_reward(verdict)
    assert verdict.details["tests"][0]["reason"] == "expected 3 line(s), got 1"


def test_non_utf8_and_nul_output_is_wrong_not_an_error() -> None:
    program = "import sys\nsys.stdout.buffer.write(b'1\\x00\\n2\\xff\\n3\\n')\n"
    verdict = verify(fenced(program), STDIO, {})
    _assert_no_reward(verdict)
    assert verdict.details["tests"][0]["reason"] == "output is not valid UTF-8"


def test_expected_values_never_enter_the_sandbox() -> None:
    # The program searches everything it can read for the expected answer of test 0.
    program = """
import os, sys
needle = "7a3f" + "9c"  # not spelled out: the program's own source is in /work
found = []
for top in ("/work", "/tmp", "/proc/self"):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("fd", "task")]  # its own pipes: reads block
        for name in files:
            try:
                with open(os.path.join(root, name), "rb") as handle:
                    if needle.encode() in handle.read(1 << 20):
                        found.append(os.path.join(root, name))
            except OSError:
                pass
data = sys.stdin.read()
print("found" if found or needle in data else "absent")
"""
    secret = {"language": "python", "tests": [{"stdin": "", "stdout": "7a3f9c\n"}]}
    verdict = verify(fenced(program), secret, {})
    assert verdict.details["tests"][0]["stdout_head"] == "absent\n"


def test_function_results_are_json_as_json_dumps_would_make_them() -> None:
    ground_truth = {
        "language": "python",
        "mode": "function",
        "fn_name": "count",
        "tests": [{"args": ["abca"], "expected": {"a": 2, "b": 1, "c": 1}}],
    }
    program = "from collections import Counter\ndef count(s):\n    return dict(Counter(s))\n"
    assert verify(fenced(program), ground_truth, {}).status == "correct"
    square_tests = [{"args": [2], "expected": {"1": 1, "2": 4}}]
    squares = {**ground_truth, "fn_name": "sq", "tests": square_tests}
    program = "def sq(n):\n    return {i: i * i for i in range(1, n + 1)}\n"
    assert verify(fenced(program), squares, {}).status == "correct"
    tuples = {**ground_truth, "fn_name": "pair", "tests": [{"args": [], "expected": [1, [2, 3]]}]}
    assert verify(fenced("def pair():\n    return (1, (2, 3))\n"), tuples, {}).status == "correct"


def test_a_forged_sandbox_failure_earns_a_zero_not_a_null() -> None:
    # A wrong program must not trade its 0.0 for an error (reward null) by writing what the
    # sandbox's own failure would look like; nor hold the worker while /tmp is cleaned.
    started = time.monotonic()
    verdict = verify(fenced(FORGED_SETUP_FAILURE), STDIO, {})
    _assert_no_reward(verdict)
    assert time.monotonic() - started < 15.0
