"""Values crossing from the solution into test code are plain data, in every mode, through
each real sandbox backend: an object that is equal to everything, a subclass with its own
``__eq__``, patched builtins, ``math``, ``operator``, ``json`` or ``sys.modules``, the test's
own helpers rewritten at call time... none earns a reward, and each is a wrong answer
(``incorrect``), never an ``error``. A correct solution still passes every test form."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

FUNCTION = {
    "language": "python",
    "mode": "function",
    "fn_name": "add",
    "tests": [{"args": [1, 2], "expected": 3}, {"args": [0.5, 0.25], "expected": 0.75}],
}
# Lifted: the sandbox evaluates only the operands, the host compares.
VALUES = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "assert add(1, 2) == 3",
        "assert not add(2, 2) != 4",
        "assert math.isclose(add(0.1, 0.2), 0.3)",
        "assert json.dumps(add(1, 2)) == '3'",
        "assert sorted([add(1, 1), add(0, 1)]) == [1, 2]",
    ],
}
# Not liftable: loops, helpers, several statements; they run whole in the sandbox.
EXEC = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "for a, b, want in [(1, 2, 3), (2, 2, 4)]:\n    assert add(a, b) == want",
        "r = add(1, 2)\nassert isinstance(r, int) and r == 3 and not r != 3",
        "import math\nfor a, b, want in [(0.1, 0.2, 0.3)]:\n"
        "    assert math.isclose(add(a, b), want)",
        # ``math`` as the solution imported it: the test gets an untouched copy of its own.
        "for a, b, want in [(0.5, 0.25, 0.75)]:\n    assert math.isclose(add(a, b), want)",
        "import operator\nfor a, b in [(1, 2)]:\n    assert operator.eq(add(a, b), 3)",
        "import json\nfor a, b in [(1, 2)]:\n    assert json.dumps(add(a, b)) == '3'",
        "def check_equal(got, want):\n    assert got == want, (got, want)\n"
        "check_equal(add(1, 2), 3)\ncheck_equal(add(5, 5), 10)",
        "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"
        "check(add)",
        "assert all(add(i, 1) == i + 1 for i in range(3))",
        "assert abs(add(1, 2) - 3) < 1e-9 and not (add(1, 2) < 3) and add(1, 2) >= 3",
    ],
}
MODES = {"function": FUNCTION, "values": VALUES, "exec": EXEC}

CORRECT = "import json, math\ndef add(a, b):\n    return a + b\n"

ALWAYS_EQUAL = """
import math
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return False
    def __le__(self, other): return True
    def __gt__(self, other): return False
    def __ge__(self, other): return True
    def __bool__(self): return True
    def __hash__(self): return 0
    def __abs__(self): return 0
    def __sub__(self, other): return 0
    def __rsub__(self, other): return 0
    def __add__(self, other): return self
    def __radd__(self, other): return self
    def __neg__(self): return self
    def __len__(self): return 0
    def __iter__(self): return iter(())
    def __contains__(self, item): return True
    def __float__(self): return 3.0
    def __int__(self): return 3
    def __index__(self): return 3
    def __round__(self, n=None): return 3
    def __str__(self): return "3"
    def __repr__(self): return "3"
    def __format__(self, spec): return "3"
def add(a, b):
    return Anything()
"""
SUBCLASSES = {
    "int": "class I(int):\n    def __eq__(self, o): return True\n"
    "    def __ne__(self, o): return False\n"
    "    __hash__ = int.__hash__\ndef add(a, b):\n    return I(0)\n",
    "float": "class F(float):\n    def __eq__(self, o): return True\n"
    "    __hash__ = float.__hash__\ndef add(a, b):\n    return F(0.0)\n",
    "str": "class S(str):\n    def __eq__(self, o): return True\n    __hash__ = str.__hash__\n"
    "def add(a, b):\n    return S('x')\n",
    "list": "class L(list):\n    def __eq__(self, o): return True\n"
    "def add(a, b):\n    return L()\n",
    "bool": "class Truth:\n    def __bool__(self): return True\n"
    "    def __eq__(self, o): return True\ndef add(a, b):\n    return [Truth()]\n",
}
# Each returns a wrong answer (0) and tries to make the comparison lie about it.
PATCHES = {
    "builtins": "import builtins\nbuiltins.isinstance = lambda *a: True\n"
    "builtins.AssertionError = type('Never', (Exception,), {})\n"
    "builtins.sorted = lambda *a, **k: [1, 2]\nbuiltins.all = lambda *a: True\n"
    "builtins.abs = lambda x: 0\nbuiltins.type = lambda *a: int\n",
    "math": "import math\nmath.isclose = lambda *a, **k: True\n",
    "operator": "import operator\noperator.eq = lambda *a: True\noperator.ne = lambda *a: False\n",
    "json": "import json\njson.dumps = lambda *a, **k: '3'\n",
    "sys.modules": "import sys, types\nfake = types.ModuleType('math')\n"
    "fake.isclose = lambda *a, **k: True\nsys.modules['math'] = fake\n"
    "sys.modules['operator'] = types.SimpleNamespace(eq=lambda *a: True)\n"
    "sys.modules['json'] = types.SimpleNamespace(dumps=lambda *a, **k: '3')\n",
    # The test's own helpers and globals, rewritten from the caller's frame at call time.
    "caller's globals": "import sys\ndef _rewrite():\n    frame = sys._getframe(2)\n"
    "    while frame is not None:\n        g = frame.f_globals\n"
    "        g['check_equal'] = lambda *a: None\n        g['check'] = lambda *a: None\n"
    "        frame = frame.f_back\n",
    "gc": "import gc\ndef _rewrite():\n    for o in gc.get_objects():\n"
    "        if isinstance(o, dict) and 'check_equal' in o:\n"
    "            o['check_equal'] = lambda *a: None\n",
}
PATCH_TAIL = "def add(a, b):\n    globals().get('_rewrite', lambda: None)()\n    return 0\n"


def _wrong_not_error(verdict: Any) -> None:
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict
    statuses = {test["status"] for test in verdict.details["tests"]}
    assert "accepted" not in statuses, verdict.details


@pytest.mark.parametrize("mode", MODES)
def test_a_correct_solution_passes_every_form(mode: str) -> None:
    verdict = verify(fenced(CORRECT), MODES[mode], {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize("mode", MODES)
def test_an_object_equal_to_everything_is_a_wrong_answer(mode: str) -> None:
    verdict = verify(fenced(ALWAYS_EQUAL), MODES[mode], {"reward": "fraction"})
    _wrong_not_error(verdict)
    assert any("not plain data" in (t.get("reason") or "") for t in verdict.details["tests"])


@pytest.mark.parametrize("kind", SUBCLASSES)
@pytest.mark.parametrize("mode", MODES)
def test_subclasses_of_builtin_types_are_not_plain_data(mode: str, kind: str) -> None:
    verdict = verify(fenced(SUBCLASSES[kind]), MODES[mode], {"reward": "fraction"})
    _wrong_not_error(verdict)


@pytest.mark.parametrize("patch", PATCHES)
@pytest.mark.parametrize("mode", MODES)
def test_patches_in_the_solution_do_not_reach_test_code(mode: str, patch: str) -> None:
    verdict = verify(fenced(PATCHES[patch] + PATCH_TAIL), MODES[mode], {"reward": "fraction"})
    _wrong_not_error(verdict)


def test_patches_leave_a_correct_answer_correct() -> None:
    # The same patches with the right answer: the tests still pass (nothing of the harness
    # depends on the solution's builtins or modules).
    for patch in PATCHES.values():
        program = "import math\n" + patch
        program += "def add(a, b):\n    globals().get('_rewrite', lambda: None)()\n"
        program += "    return a + b\n"
        verdict = verify(fenced(program), EXEC, {"reward": "fraction"})
        assert verdict.status == "correct", (patch, verdict.details)


IS_EVEN = {
    "language": "python",
    "mode": "assert",
    "tests": ["for n in [2, 4, 10]:\n    assert is_even(n)", "assert is_even(8)"],
}


@pytest.mark.parametrize(
    "program",
    [
        # A class where a function is expected: its objects are truthy in Python.
        "class is_even:\n    def __init__(self, n):\n        self.n = n\n",
        "class T:\n    def __bool__(self): return True\ndef is_even(n):\n    return T()\n",
        "def is_even(n):\n    return is_even\n",
    ],
    ids=["class", "truthy object", "function"],
)
def test_truthy_stand_ins_do_not_pass_truth_tests(program: str) -> None:
    verdict = verify(fenced(program), IS_EVEN, {"reward": "fraction"})
    assert verdict.reward == 0.0 and verdict.status == "incorrect", verdict.details
    assert verify(fenced("def is_even(n):\n    return n % 2 == 0\n"), IS_EVEN, {}).reward == 1.0


FREQUENCIES = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "assert freq([10, 10, 20]) == {10: 2, 20: 1}",
        "for xs in [[1], [2, 2]]:\n    assert freq(xs) == {xs[0]: len(xs)}",
        "assert sorted(evens([1, 2, 3, 4])) == [2, 4]",
        "assert list(evens([6])) == [6] and set(evens([2, 2])) == {2}",
        "from collections import Counter\nassert Counter(evens([2, 2])) == {2: 2}",
    ],
}


@pytest.mark.parametrize(
    "program",
    [
        "from collections import Counter\ndef freq(xs):\n    return Counter(xs)\n",
        "from collections import defaultdict\ndef freq(xs):\n"
        "    d = defaultdict(int)\n    for x in xs:\n        d[x] += 1\n    return d\n",
    ],
    ids=["Counter", "defaultdict"],
)
def test_standard_dicts_and_iterators_are_answers_as_python_sees_them(program: str) -> None:
    """MBPP's freq_count returns a Counter; a generator or ``map`` may be iterated by the test
    (``list(f(x))``, ``sorted(f(x))``), as Python allows."""
    for evens in ("(x for x in xs if x % 2 == 0)", "filter(lambda x: x % 2 == 0, xs)"):
        full = program + f"def evens(xs):\n    return {evens}\n"
        verdict = verify(fenced(full), FREQUENCIES, {"reward": "fraction"})
        assert verdict.status == "correct", verdict.details


@pytest.mark.parametrize(
    "test",
    [
        "assert evens([2]) == [2]",
        "assert evens([2]) != [3]",
        "assert evens([2])",
        "r = evens([2])\nassert r == [2]",
        "assert list(evens([2])) == [2]",
        "assert sorted(freq([1])) == [1]",
    ],
)
def test_an_iterator_is_only_iterated_and_its_items_must_be_plain(test: str) -> None:
    # A generator is not equal to a list in Python either; its truth is no answer (it is always
    # true); its items cross as plain data, so an int equal to everything is still refused.
    program = (
        "class E(int):\n    def __eq__(self, other): return True\n    __hash__ = int.__hash__\n"
        "def evens(xs):\n    return (E(x) for x in xs)\n"
        "def freq(xs):\n    return iter([E(0)])\n"
    )
    ground_truth = {"language": "python", "mode": "assert", "tests": [test]}
    _wrong_not_error(verify(fenced(program), ground_truth, {}))


# An object that is an iterator by its methods (``__iter__``, ``__next__``) and yields nothing,
# but says it holds whatever the test asks for: its ``in`` and ``len()`` passed the test.
LYING_CONTAINER = """
class Lying:
    def __iter__(self): return self
    def __next__(self): raise StopIteration
    def __contains__(self, item): return True
    def __len__(self): return 6
    def __getitem__(self, index): return [1, 2, 3][index % 3]
def permute(xs):
    return Lying()
WORDS = Lying()
"""
HONEST_CONTAINERS = """
import itertools
def permute(xs):
    return itertools.permutations(xs)
class Words:
    def __init__(self, words): self.words = words
    def __iter__(self): return iter(self.words)
    def __contains__(self, word): return word in self.words
    def __len__(self): return len(self.words)
WORDS = Words(['the', 'a', 'an', 'of', 'to', 'in'])
"""
CONTAINER_TESTS = [
    "def check(candidate):\n    r = candidate([1, 2, 3])\n    assert len(r) == 6\n"
    "    for p in [(1, 2, 3), (3, 2, 1)]:\n        assert p in r\ncheck(permute)",
    "r = permute([1, 2, 3])\nassert (2, 1, 3) in r",
    "r = permute([1, 2, 3])\nassert len(r) == 6",
    "r = permute([1, 2, 3])\nassert r[0] == 1 and r[1] == 2",
    "assert 'the' in WORDS and 'an' in WORDS",
]


# A view of the solution's own class (a KeysView subclass) passed for a re-iterable dict view:
# each len(), in and [i] of the test iterated it afresh, and it yielded other items each time.
SHIFTING_VIEW = """
from collections.abc import KeysView, ItemsView
class Shifting(KeysView):
    def __init__(self, scripts):
        self.scripts, self.n = scripts, 0
    def __iter__(self):
        items = self.scripts[min(self.n, len(self.scripts) - 1)]
        self.n += 1
        return iter(items)
    def __len__(self): return 0
    def __contains__(self, item): return False
class ShiftingItems(ItemsView, Shifting):
    pass
def points(n):
    return Shifting([[0] * 6, [(1, 2)]])
def pick(xs):
    return Shifting([[5, 0], [0, 7]])
def counts(s):
    return ShiftingItems([[('a', 1)] * 3, [('b', 2)]])
"""
SHIFTING_TESTS = [
    "r = points(6)\nassert len(r) == 6 and (1, 2) in r",
    "r = pick([5, 7])\nassert r[0] == 5 and r[1] == 7",
    "r = counts('ab')\nassert len(r) == 3 and ('b', 2) in r and ('a', 1) not in r",
]


@pytest.mark.parametrize(
    ("program", "test"),
    [(LYING_CONTAINER, test) for test in CONTAINER_TESTS]
    + [(SHIFTING_VIEW, test) for test in SHIFTING_TESTS],
)
def test_an_object_of_the_solution_does_not_decide_membership_or_its_length(
    program: str, test: str
) -> None:
    # A view of the solution's own class is read once, through one iterator.
    ground_truth = {"language": "python", "mode": "assert", "tests": [test]}
    _wrong_not_error(verify(fenced(program), ground_truth, {}))


def test_a_generator_runs_no_further_than_python_runs_it() -> None:
    # next() and in take one item at a time: the generator's state, side effects and errors
    # come when they would in Python.
    program = (
        "def gen():\n    yield 1\n    yield 2\n    raise ValueError('done')\n"
        "class Box:\n    v = 0\n    def set(self, v): Box.v = v\n"
        "    def values(self):\n        while True:\n            yield Box.v\n"
    )
    tests = [
        "g = gen()\nassert next(g) == 1 and next(g) == 2\ntry:\n    next(g)\n"
        "except ValueError:\n    pass\nelse:\n    assert False",
        "b = Box()\ng = b.values()\nb.set(1)\nassert next(g) == 1\nb.set(2)\nassert next(g) == 2"
        "\nb.set(3)\nassert 3 in g",
    ]
    ground_truth = {"language": "python", "mode": "assert", "tests": tests}
    verdict = verify(fenced(program), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def test_honest_iterators_and_containers_answer_membership_and_length() -> None:
    # As in Python: a generator is consumed up to the item found, and has no length.
    tests = [
        "r = permute([1, 2, 3])\nassert (1, 3, 2) in r and (3, 1, 2) in r and (2, 1, 3) not in r",
        "r = permute([1, 2])\nassert next(r) == (1, 2) and list(r) == [(2, 1)]",
        "try:\n    len(permute([1]))\nexcept TypeError:\n    pass\nelse:\n    assert False",
        "assert len(range_of(3)) == 3 and 2 in range_of(3) and range_of(3)[-1] == 2",
        "assert 4 in evens([4, 5]) and 5 not in evens([4, 5])",
        "assert 'b' in keys({'a': 1, 'b': 2}) and len(keys({'a': 1})) == 1",
        "assert 'the' in WORDS and 'cat' not in WORDS and len(WORDS) == 6",
        "g = naturals()\nassert next(g) == 0 and 100 in g and next(g) == 101",
    ]
    program = HONEST_CONTAINERS + (
        "def naturals():\n    yield from itertools.count()\n"
        "def range_of(n):\n    return range(n)\n"
        "def evens(xs):\n    return (x for x in xs if x % 2 == 0)\n"
        "def keys(d):\n    return d.keys()\n"
    )
    ground_truth = {"language": "python", "mode": "assert", "tests": tests}
    verdict = verify(fenced(program), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


# Lifted asserts over an iterator a call returned, finished on the host over the items the
# sandbox read, as Python would finish them (before, the host refused such an operand as not
# plain data, where the same line written as statements passed).
ITERATOR_OPERANDS = """
import itertools
def evens(n):
    return (i for i in range(0, n, 2))
def naturals():
    return itertools.count()
def then_fails():
    yield 1
    yield 2
    raise ValueError('done')
def span(n):
    return range(0, n, 2)
def keys(d):
    return d.keys()
def items(d):
    return d.items()
"""
WRONG_ITERATOR_OPERANDS = """
import itertools
def evens(n):
    return (i for i in range(1, n, 2))
def naturals():
    return itertools.count(1001)
def then_fails():
    yield 1
    raise ValueError('done')
def span(n):
    return range(1, n, 2)
def keys(d):
    return d.values()
def items(d):
    return d.keys()
"""
ITERATOR_OPERAND_TESTS = [
    "assert 4 in evens(10)",
    "assert 5 not in evens(10)",
    "assert 1000 in naturals()",
    "assert 2 in then_fails()",
    "assert 6 in span(10)",
    "assert keys({'a': 1, 'b': 2}) == {'a', 'b'}",
    "assert ('b', 2) in items({'a': 1, 'b': 2})",
]
# A whole iteration reads a generator ahead in chunks: the items it yielded in the chunk where
# it raised were lost with the chunk, so a loop that catches the exception missed them.
CAUGHT_IN_A_LOOP = (
    "seen = []\ntry:\n    for x in then_fails():\n        seen.append(x)\n"
    "except ValueError:\n    pass\nassert seen == [1, 2]"
)


def test_a_generator_raises_after_the_items_it_yielded() -> None:
    ground_truth = {"language": "python", "mode": "assert", "tests": [CAUGHT_IN_A_LOOP]}
    verdict = verify(fenced(ITERATOR_OPERANDS), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    _wrong_not_error(verify(fenced(WRONG_ITERATOR_OPERANDS), ground_truth, {}))


# True of any generator in Python, right or wrong.
ANY_GENERATOR_TESTS = ["assert evens(10)", "assert evens(10) != [0, 2, 4, 6, 8]"]


def test_an_iterator_returned_to_a_lifted_assert_is_judged_as_python_would() -> None:
    tests = ITERATOR_OPERAND_TESTS + ANY_GENERATOR_TESTS
    ground_truth = {"language": "python", "mode": "assert", "tests": tests}
    verdict = verify(fenced(ITERATOR_OPERANDS), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    assert {test["judged"] for test in verdict.details["tests"]} == {"host"}
    ground_truth["tests"] = ITERATOR_OPERAND_TESTS
    wrong = verify(fenced(WRONG_ITERATOR_OPERANDS), ground_truth, {"reward": "fraction"})
    _wrong_not_error(wrong)


# The standard library's containers cross as themselves. An OrderedDict crossed as a dict, so
# one in the wrong order passed; a Fraction or a deque was no plain data, so a right one failed.
ORDERED = "from collections import OrderedDict\ndef build(pairs):\n    return OrderedDict({})\n"
ORDER_TESTS = [
    "assert build([('a', 1), ('b', 2)]) == OrderedDict([('a', 1), ('b', 2)])",
    "r = build([('a', 1), ('b', 2)])\nassert r == OrderedDict([('a', 1), ('b', 2)])",
]


@pytest.mark.parametrize("tolerance", [None, 1e-6])
@pytest.mark.parametrize("test", ORDER_TESTS, ids=["values", "exec"])
def test_an_ordered_dict_is_equal_only_in_its_order(test: str, tolerance: float | None) -> None:
    ground_truth = {"language": "python", "mode": "assert", "tests": [test]}
    if tolerance is not None:
        ground_truth["float_tolerance"] = tolerance
    _wrong_not_error(verify(fenced(ORDERED.format("reversed(pairs)")), ground_truth, {}))
    assert verify(fenced(ORDERED.format("pairs")), ground_truth, {}).status == "correct"


STANDARD_ANSWERS = """
from collections import Counter, OrderedDict, defaultdict, deque
from fractions import Fraction
def half(n):
    return Fraction(n, 2)
def window(xs):
    return deque(xs, maxlen=2)
def tally(s):
    counts = Counter(s)
    counts['q'] = 0
    return counts
def group(words):
    groups = defaultdict(list)
    for word in words:
        groups[len(word)].append(word)
    return groups
def lru(keys):
    order = OrderedDict()
    for key in keys:
        order[key] = True
        order.move_to_end(key)
    return order
"""
STANDARD_TESTS = [
    "assert half(3) == Fraction(3, 2) and half(4) == 2",
    "assert window([1, 2, 3]) == deque([2, 3])",
    "assert tally('aab') == Counter({'a': 2, 'b': 1})",
    "r = group(['a', 'bb', 'cc'])\nassert r[2] == ['bb', 'cc']\nassert r[5] == []",
    "assert list(lru(['a', 'b', 'a'])) == ['b', 'a']",
    "assert lru(['a', 'b', 'a']) == OrderedDict([('b', True), ('a', True)])",
    "from collections import deque\nassert window([1, 2, 3]).maxlen == 2",
]


def test_the_standard_librarys_containers_are_answers_as_python_sees_them() -> None:
    ground_truth = {"language": "python", "mode": "assert", "tests": STANDARD_TESTS}
    verdict = verify(fenced(STANDARD_ANSWERS), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    function = {
        "language": "python",
        "mode": "function",
        "fn_name": "tally",
        "tests": [{"args": ["ab"], "expected": {"a": 1, "b": 1, "q": 0}}],
    }
    assert verify(fenced(STANDARD_ANSWERS), function, {}).status == "correct"


# Lifted asserts the host finishes with Python's own operators on the values it rebuilt: a
# Fraction was no number to math.isclose or abs, and Counters did not add, so right answers
# failed as runtime errors.
ARITHMETIC = (
    "from collections import Counter\nfrom fractions import Fraction\n"
    "def half():\n    return Fraction(1, 2)\n"
    "def count(s):\n    return Counter(s)\n"
)
ARITHMETIC_TESTS = [
    "assert math.isclose(half(), 0.5)",
    "assert abs(half() - 0.5) < 1e-9",
    "assert count('aab') + count('b') == {'a': 2, 'b': 2}",
    "assert count('ab') - count('b') == count('a')",
]


def test_host_arithmetic_on_standard_values_is_pythons() -> None:
    ground_truth = {"language": "python", "mode": "assert", "tests": ARITHMETIC_TESTS}
    verdict = verify(fenced(ARITHMETIC), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    assert {test["judged"] for test in verdict.details["tests"]} == {"host"}
    wrong = ARITHMETIC.replace("Fraction(1, 2)", "Fraction(1, 3)").replace("(s)", "(s + 'z')")
    _wrong_not_error(verify(fenced(wrong), ground_truth, {"reward": "fraction"}))


# A deque's maxlen is an int, not a count of its items: one over a million was refused as
# malformed, and a right answer failed.
WINDOW = "from collections import deque\ndef window(xs):\n    return deque(xs, maxlen=2_000_000)\n"
WINDOW_TESTS = {
    "function": {"fn_name": "window", "tests": [{"args": [[1, 2]], "expected": [1, 2]}]},
    "values": {"tests": ["assert window([1, 2]) == deque([1, 2])"]},
    "exec": {"tests": ["r = window([1, 2])\nassert r.maxlen == 2_000_000 and list(r) == [1, 2]"]},
}


@pytest.mark.parametrize("mode", WINDOW_TESTS)
def test_a_deque_with_any_maxlen_is_an_answer(mode: str) -> None:
    ground_truth = {"language": "python", "mode": "function" if mode == "function" else "assert"}
    ground_truth.update(WINDOW_TESTS[mode])
    verdict = verify(fenced(WINDOW), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    wrong = verify(fenced(WINDOW.replace("deque(xs,", "deque(xs[1:],")), ground_truth, {})
    _wrong_not_error(wrong)


def test_an_exception_that_would_end_a_loop_early_fails() -> None:
    program = "def add(a, b):\n    raise StopIteration\n"
    verdict = verify(fenced(program), EXEC, {"reward": "fraction"})
    _wrong_not_error(verdict)


def test_exceptions_cross_as_the_test_expects_them() -> None:
    raises = {
        "language": "python",
        "mode": "assert",
        "tests": [
            "try:\n    root(-1)\nexcept ValueError:\n    pass\nelse:\n    assert False",
            "assert root(9) == 3",
        ],
    }
    program = "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n"
    program += "    return int(x ** 0.5)\n"
    assert verify(fenced(program), raises, {}).status == "correct"
    wrong = "def root(x):\n    return int(abs(x) ** 0.5)\n"
    assert verify(fenced(wrong), raises, {}).status == "incorrect"


SOLUTION_CLASS = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "s = Solution()\nassert s.twoSum([2, 7, 11], 9) == [0, 1]",
        "stack = MinStack()\nfor x in [3, 1, 2]:\n    stack.push(x)\n"
        "assert stack.getMin() == 1 and len(stack) == 3 and stack.items == [3, 1, 2]",
    ],
}
SOLUTION_CLASS_PROGRAM = """
class Solution:
    def twoSum(self, nums, target):
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
class MinStack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)
    def getMin(self):
        return min(self.items)
    def __len__(self):
        return len(self.items)
"""


def test_classes_of_the_solution_work_through_proxies() -> None:
    verdict = verify(fenced(SOLUTION_CLASS_PROGRAM), SOLUTION_CLASS, {})
    assert verdict.status == "correct", verdict.details
    # Its objects are not values: comparing one, or testing its truth, fails the test.
    compared = {**SOLUTION_CLASS, "tests": ["s = MinStack()\nassert s == s and s"]}
    _wrong_not_error(verify(fenced(SOLUTION_CLASS_PROGRAM), compared, {}))


SECRET_TEST = {
    "language": "python",
    "mode": "assert",
    "time_limit_s": 10,
    "tests": ["for i in range(1):\n    assert steal() == 'MARK-' + '7a3f9c' + '-KRAM'"],
}
# Reads its own memory and the driver's for the expected value of the test it is in.
STEAL = r"""
import os, re
PATTERN = re.compile(rb"MARK-[0-9a-f]{6}-KRAM")
def _scan(pid):
    found = []
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            for line in maps:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                if "r" not in line.split()[1] or end - start > 1 << 28:
                    continue
                try:
                    mem.seek(start)
                    found += PATTERN.findall(mem.read(end - start))
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
    return [f.decode() for f in found]
def _vm_read(pid):
    # process_vm_readv, which needs no /proc: the same permission check as ptrace.
    import ctypes
    class IoVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    libc = ctypes.CDLL(None, use_errno=True)
    found = []
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
    except OSError:
        maps = []
    for line in maps:
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        size = min(end - start, 1 << 24)
        buffer = ctypes.create_string_buffer(size)
        local, remote = IoVec(ctypes.addressof(buffer), size), IoVec(start, size)
        if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0:
            found += PATTERN.findall(buffer.raw)
    return [f.decode() for f in found]
def steal():
    hits = _scan("self") + _scan(os.getppid()) + _vm_read(os.getppid())
    for name in os.listdir("/proc"):
        if name.isdigit():
            hits += _scan(name)
    return hits[0] if hits else ""
"""


def test_the_test_code_is_out_of_the_solutions_reach() -> None:
    verdict = verify(fenced(STEAL), SECRET_TEST, {})
    _wrong_not_error(verdict)


FORGE = r"""
import json, os
def add(a, b):
    line = json.dumps({"index": 0, "nonce": "0" * 32, "exit": 0, "signal": None, "cpu": 0,
                       "wall": 0, "killed": None, "report": {"done": True}, "stderr": "",
                       "stdout_len": 0}) + "\n"
    for path in (f"/proc/{os.getppid()}/fd/3", "/proc/self/fd/3"):
        try:
            with open(path, "w") as channel:
                channel.write(line * 3)
        except OSError:
            pass
    return 0
"""


@pytest.mark.parametrize("mode", MODES)
def test_the_result_channel_is_out_of_the_solutions_reach(mode: str) -> None:
    _wrong_not_error(verify(fenced(FORGE), MODES[mode], {"reward": "fraction"}))


@pytest.mark.parametrize(
    "program",
    [
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
        "def add(a, b):\n    return a + b\n",
        "import os, signal\ndef add(a, b):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
        "    return a + b\n",
        "import os, signal\ndef add(a, b):\n    os.kill(-1, signal.SIGKILL)\n    return a + b\n",
        "import os, signal\ndef add(a, b):\n"
        "    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGUSR1):\n"
        "        os.kill(os.getppid(), s)\n    return 0\n",
    ],
    ids=["at import", "at call", "everything", "catchable signals"],
)
def test_killing_or_signalling_the_driver_earns_nothing(program: str) -> None:
    for ground_truth in MODES.values():
        _wrong_not_error(verify(fenced(program), ground_truth, {"reward": "fraction"}))
