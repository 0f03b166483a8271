"""Values a wrong solution hands back, dressed to pass, through each real sandbox backend:
objects equal to everything in every disguise, values that are not data, values too large or
too deep, numbers past a float's range, exceptions that end the test's loop, stand-ins for the
standard modules test code uses, a module for a name the test passes on. Each is a wrong
answer (``incorrect`` or, for the harness's memory, ``timeout``) with reward 0.0, never an
``error``; the honest solution beside it passes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import EXEC, FUNCTION, VALUES, fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

MODES = {"function": FUNCTION, "values": VALUES, "exec": EXEC}
HONEST = "def add(a, b):\n    return a + b\n"

# Each ``add`` returns something that is not the plain answer but might compare as it.
DISGUISES = {
    "dict subclass": "class D(dict):\n    def __eq__(s, o): return True\ndef add(a, b): return D()",
    "tuple subclass": "class T(tuple):\n    def __eq__(s, o): return True\n"
    "    __hash__ = tuple.__hash__\ndef add(a, b): return T()",
    "truthy int subclass": "class B(int):\n    def __bool__(s): return True\n"
    "    def __eq__(s, o): return True\n    __hash__ = int.__hash__\n"
    "def add(a, b): return B(1)",
    "index and float": "class X:\n    def __index__(s): return 3\n"
    "    def __float__(s): return 3.0\n"
    "    def __int__(s): return 3\n    def __hash__(s): return 3\n"
    "    def __eq__(s, o): return True\ndef add(a, b): return X()",
    "numpy-like": "class Arr:\n    def __eq__(s, o): return Arr()\n"
    "    def __bool__(s): return True\n"
    "    def all(s): return True\n    def tolist(s): return [1, 2]\n"
    "def add(a, b): return Arr()",
    "generator": "def add(a, b):\n    yield a\n    yield b",
    "iterator": "def add(a, b): return iter([3])",
    "map object": "def add(a, b): return map(int, [3])",
    "nan": "def add(a, b): return float('nan')",
    "recursive list": "def add(a, b):\n    x = []\n    x.append(x)\n    return x",
    "recursive dict": "def add(a, b):\n    x = {}\n    x['a'] = x\n    return x",
    "5000 deep": "def add(a, b):\n    x = 3\n    for _ in range(5000):\n        x = [x]\n"
    "    return x",
    "15 MB string": "def add(a, b): return 'x' * (15 << 20)",
    "2 million items": "def add(a, b): return list(range(2_000_000))",
    "bytearray": "def add(a, b): return bytearray(b'3')",
    "memoryview": "def add(a, b): return memoryview(b'3')",
    "key equal to anything": "class K:\n    def __hash__(s): return hash(3)\n"
    "    def __eq__(s, o): return True\ndef add(a, b): return {K(): 1}",
    "__reduce__ runs code": "import os\nclass R:\n"
    "    def __reduce__(s): return (os.system, ('echo 3',))\n"
    "    def __repr__(s): return '3'\ndef add(a, b): return R()",
    "__del__ prints": "class Z:\n    def __del__(s):\n        import os\n"
    "        os.write(1, b'3\\n')\ndef add(a, b): return Z()",
    "__class__ lies": "class C:\n    @property\n    def __class__(s): return int\n"
    "    def __eq__(s, o): return True\ndef add(a, b): return C()",
    "metaclass": "class M(type):\n    def __instancecheck__(c, i): return True\n"
    "    def __eq__(c, o): return True\n    __hash__ = type.__hash__\n"
    "class C(metaclass=M): pass\ndef add(a, b): return C",
    "patched type": "import builtins\n_t = type\n"
    "builtins.type = lambda *a: int if len(a) == 1 else _t(*a)\n"
    "class I(int):\n    def __eq__(s, o): return True\n    __hash__ = int.__hash__\n"
    "def add(a, b): return I(0)",
    "itself": "def add(a, b): return add",
    "a class": "def add(a, b): return int",
    "a module": "import math\ndef add(a, b): return math",
    "an exception": "def add(a, b): return ValueError(3)",
    "ellipsis": "def add(a, b): return ...",
    "range": "def add(a, b): return range(3, 4)",
}


def _no_reward(verdict: Any) -> None:
    assert verdict.reward == 0.0, verdict
    assert verdict.status in ("incorrect", "timeout"), verdict
    assert "accepted" not in {test["status"] for test in verdict.details["tests"]}, verdict


@pytest.mark.parametrize("mode", MODES)
def test_the_honest_solution_passes(mode: str) -> None:
    verdict = verify(fenced(HONEST), MODES[mode], {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize("disguise", DISGUISES)
@pytest.mark.parametrize("mode", MODES)
def test_a_disguised_wrong_value_earns_nothing(mode: str, disguise: str) -> None:
    verdict = verify(fenced(DISGUISES[disguise]), MODES[mode], {"reward": "fraction"})
    _no_reward(verdict)
    assert verdict.status == "incorrect", verdict


HUGE = {
    "language": "python",
    "mode": "function",
    "fn_name": "power",
    "tests": [{"args": [5000], "expected": 10**5000}, {"args": [2], "expected": 100}],
}


def test_ints_too_long_for_json_are_judged_not_an_error() -> None:
    # 10**5000 has more digits than a JSON writer takes (4300): the harness used to fail on
    # it, so any wrong solution could trade its 0.0 for a null by returning one.
    right = verify(fenced("def power(n):\n    return 10 ** n\n"), HUGE, {})
    assert (right.status, right.reward) == ("correct", 1.0), right.details
    for wrong in ("return 10 ** 6000", "return [10 ** 5000]", "return 10 ** n + 1"):
        _no_reward(verify(fenced(f"def power(n):\n    {wrong}\n"), HUGE, {}))


def test_an_int_past_a_floats_range_is_wrong_under_a_tolerance() -> None:
    # The host used to convert it to float for the tolerance and fail (OverflowError).
    for ground_truth in (FUNCTION, VALUES):
        tolerant = {**ground_truth, "float_tolerance": 1e-6}
        verdict = verify(fenced("def add(a, b):\n    return 10 ** 400\n"), tolerant, {})
        _no_reward(verdict)
        assert verdict.status == "incorrect"


# An expected infinity, and the numbers stdout holds that float() reads as one: under a
# tolerance, |x - inf| <= tolerance * inf held for every finite x, and any answer passed.
_BIG = "1" + "0" * 400


def _stdio(expected: str, **keys: Any) -> dict[str, Any]:
    return {"language": "python", **keys, "tests": [{"stdin": "", "stdout": expected}]}


INFINITE = {
    "function": {
        "language": "python",
        "mode": "function",
        "fn_name": "f",
        "tests": [{"args": [[0, 1]], "expected": float("inf")}],
    },
    "lifted float('inf')": {
        "language": "python",
        "mode": "assert",
        "tests": ["assert f([0, 1]) == float('inf')"],
    },
    "lifted math.inf": {
        "language": "python",
        "mode": "assert",
        "tests": ["assert f([0, 1]) == math.inf"],
    },
    "stdio, 401 digits": _stdio(_BIG),
    "stdio, 300!": _stdio(str(__import__("math").factorial(300))),
    "stdio, a case line": _stdio("Case #1: 3" + "7" * 330),
    "stdio, -1e400": _stdio("-1e400"),
    "stdio, ignore_case": _stdio(_BIG + " YES", ignore_case=True),
}


@pytest.mark.parametrize("form", INFINITE)
@pytest.mark.parametrize("number", ["0", "7", "-1"])
def test_no_finite_number_passes_for_an_infinity_under_a_tolerance(form: str, number: str) -> None:
    expected = INFINITE[form]["tests"][0]
    if isinstance(expected, dict) and "stdout" in expected:
        # The expected line with its one long number replaced by a short one.
        words = [number if w[-1].isdigit() else w for w in expected["stdout"].split(" ")]
        line = " ".join(words)
        answer = line.lower() if INFINITE[form].get("ignore_case") else line
        program = f"print({answer!r})"
    else:
        program = f"def f(x):\n    return {number}\n"
    verdict = verify(fenced(program), {**INFINITE[form], "float_tolerance": 1e-6}, {})
    _no_reward(verdict)
    assert verdict.status == "incorrect", verdict.details


def test_an_infinity_still_equals_itself_under_a_tolerance() -> None:
    program = fenced("def f(x):\n    return float('inf')\n")
    for form in ("function", "lifted float('inf')", "lifted math.inf"):
        verdict = verify(program, {**INFINITE[form], "float_tolerance": 1e-6}, {})
        assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    stdio = {**INFINITE["stdio, 401 digits"], "float_tolerance": 1e-6}
    verdict = verify(fenced(f"print('{_BIG[:-1]}1')"), stdio, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize("items", [400_000, 700_000])
def test_a_value_too_big_for_the_harness_memory_is_no_error(items: int) -> None:
    # Plain data by its bounds, but the harness holding it as JSON runs out of memory: the
    # test's memory (or output) limit, never the sandbox's failure.
    ground_truth = {**FUNCTION, "memory_mb": 64, "tests": [{"args": [1, 2], "expected": 3}]}
    program = f"def add(a, b):\n    return ['ab' * 3] * {items}\n"
    _no_reward(verify(fenced(program), ground_truth, {}))


# Tests that pass a name of the program's on to it: LeetCodeDataset's prompt code (the ground
# truth's prelude) binds ``inf``, which the program may bind again, to a module.
PASSES_ON = {
    "values": "assert add(inf, 1) == inf",
    "exec": "def check(candidate):\n    assert candidate(inf, 1) == inf\ncheck(add)",
}


@pytest.mark.parametrize("form", PASSES_ON)
def test_a_module_for_a_name_the_test_passes_on_is_a_wrong_answer(form: str) -> None:
    # A module is not plain data: from the test, the ground truth's limit (an error); from the
    # program, the program's failure. As the former it was a null the program could choose.
    ground_truth = {**VALUES, "prelude": "inf = float('inf')", "tests": [PASSES_ON[form]]}
    program = "import math\ninf = math\ndef add(a, b):\n    return a + b\n"
    verdict = verify(fenced(program), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    honest = verify(fenced(HONEST), ground_truth, {})
    assert (honest.status, honest.reward) == ("correct", 1.0), honest.details


LOOPS = {
    "map": "for got, want in zip(map(add, [1, 2], [2, 2]), [3, 4]):\n    assert got == want",
    "filter": "assert list(filter(lambda x: add(x, 0) != x, [1, 2])) == []",
    "iter": "for got in iter(lambda: add(1, 2), None):\n    assert got == 3\n    break",
}


@pytest.mark.parametrize("loop", LOOPS)
def test_stop_iteration_from_the_solution_does_not_end_the_tests_loop(loop: str) -> None:
    # As itself it would end map/filter/iter quietly: no assert would run, and the test passed.
    ground_truth = {"language": "python", "mode": "assert", "tests": [LOOPS[loop]]}
    for program in (
        "def add(a, b):\n    raise StopIteration\n",
        "def add(a, b):\n    raise StopAsyncIteration\n",
    ):
        verdict = verify(fenced(program), ground_truth, {})
        _no_reward(verdict)
        assert verdict.status == "incorrect"
    assert verify(fenced(HONEST), ground_truth, {}).status == "correct"


MODULE_TESTS = {
    "exec": [
        "for r, want in [(1, 3.14159), (2, 12.56637)]:\n"
        "    assert math.isclose(area(r), want, rel_tol=1e-4)"
    ],
    "values": [
        "assert math.floor(area(1)) == 3",
        "assert math.isclose(area(2), 12.56637, rel_tol=1e-4)",
    ],
}
FAKE_TAIL = "def area(r):\n    return 0\n"
STAND_INS = {
    "object": "class _M:\n    @staticmethod\n    def isclose(*a, **k): return True\n"
    "    @staticmethod\n    def floor(x): return 3\nmath = _M()\n",
    "class": "class math:\n    @staticmethod\n    def isclose(*a, **k): return True\n"
    "    @staticmethod\n    def floor(x): return 3\n",
    "function": "def math(): pass\nmath.isclose = lambda *a, **k: True\nmath.floor = lambda x: 3\n",
    "module": "import types\nmath = types.ModuleType('math')\n"
    "math.isclose = lambda *a, **k: True\nmath.floor = lambda x: 3\n",
    "another module": "import cmath as math\n",
}


@pytest.mark.parametrize("stand_in", STAND_INS)
@pytest.mark.parametrize("form", MODULE_TESTS)
def test_a_stand_in_for_a_standard_module_is_not_the_tests_module(form: str, stand_in: str) -> None:
    # The test relies on the solution's ``import math``; whatever the solution binds to that
    # name, test code gets the real module.
    ground_truth = {"language": "python", "mode": "assert", "tests": MODULE_TESTS[form]}
    verdict = verify(fenced(STAND_INS[stand_in] + FAKE_TAIL), ground_truth, {"reward": "fraction"})
    _no_reward(verdict)
    honest = "import math\ndef area(r):\n    return math.pi * r * r\n"
    assert verify(fenced(honest), ground_truth, {}).status == "correct"


# Lone surrogates in what the solution controls: the harness failed on them as it wrote the
# test's trace or reason, and the wrong answer became an error with a null reward.
SURROGATES = {
    "message": "def add(a, b):\n    raise ValueError('\\ud800')\n",
    "KeyError": "def add(a, b):\n    raise KeyError('\\ud83d')\n",
    "function's name": "def add(a, b):\n    raise ValueError('plain')\n"
    "add.__code__ = add.__code__.replace(co_name='\\ud800')\n",
    "class's name": "class X:\n    pass\nX.__qualname__ = '\\ud800'\n"
    "def add(a, b):\n    return X()\n",
    "returned value": "def add(a, b):\n    return '\\udcff'\n",
}
# The returned value reaches the trace through the test's own assert message.
SHOWN = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "def check(candidate):\n    got = candidate(1, 2)\n    assert got == 3, got\ncheck(add)",
        "for a, b, want in [([1], [2], [1, 2])]:\n    got = add(a, b)\n"
        "    assert got == want, f'add({a}, {b}) = {got}, want {want}'",
    ],
}
LEETCODE = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "def check(candidate):\n    assert candidate(nums=[2, 7, 11, 15], target=9) == [0, 1]\n"
        "check(Solution().twoSum)"
    ],
}


def _encodable(verdict: Any) -> None:
    # Details go to JSON and the database: every text in them must encode as UTF-8.
    json.dumps(verdict.details, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("program", SURROGATES)
@pytest.mark.parametrize("mode", [*MODES, "shown"])
def test_a_lone_surrogate_from_the_solution_is_a_wrong_answer(mode: str, program: str) -> None:
    verdict = verify(fenced(SURROGATES[program]), SHOWN if mode == "shown" else MODES[mode], {})
    _no_reward(verdict)
    assert verdict.status == "incorrect", verdict.details
    _encodable(verdict)


def test_a_lone_surrogate_in_a_solution_method_is_a_wrong_answer() -> None:
    program = "class Solution:\n    def twoSum(self, nums, target):\n"
    verdict = verify(fenced(program + "        raise ValueError('\\ud83d')\n"), LEETCODE, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    _encodable(verdict)


@pytest.mark.parametrize("mode", MODES)
def test_a_lone_surrogate_in_one_test_leaves_the_others_their_reward(mode: str) -> None:
    program = "def add(a, b):\n    if a == 1:\n        raise RuntimeError('\\udfff')\n"
    program += "    return a + b\n"
    verdict = verify(fenced(program), MODES[mode], {"reward": "fraction"})
    expected = (0.0, "incorrect") if mode == "exec" else (0.5, "partial")
    assert (verdict.reward, verdict.status) == expected, verdict.details
    _encodable(verdict)
