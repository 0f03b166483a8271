"""What test code does with the solution's objects, exceptions and its own arguments behaves as
it would in Python, through each real sandbox backend, though the solution runs in a process of
its own: a wrong answer that Python would catch is ``incorrect``, and the right one is
``correct``. Each case here was a wrong answer paid 1.0 or a right answer failed before."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")


def _judge(program: str, test: str) -> Any:
    return verify(fenced(program), {"language": "python", "mode": "assert", "tests": [test]}, {})


def _right(program: str, test: str) -> None:
    verdict = _judge(program, test)
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def _wrong(program: str, test: str) -> None:
    verdict = _judge(program, test)
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details


# -- membership and reversed(): the class's own method answers, as in Python ------------------

BAG = """
class Bag:
    def __init__(self, items):
        self.items = list(items)
    def __iter__(self):
        return iter(self.items)
    def __contains__(self, x):
        return {contains}
"""
BST = """
class Node:
    def __init__(self, key):
        self.key, self.left, self.right = key, None, None
class BST:
    def __init__(self):
        self.root = None
    def insert(self, key):
        if self.root is None:
            self.root = Node(key)
            return
        node = self.root
        while True:
            side = 'left' if key < node.key else 'right'
            if getattr(node, side) is None:
                setattr(node, side, Node(key))
                return
            node = getattr(node, side)
    def __iter__(self):
        def walk(node):
            if node is not None:
                yield from walk(node.left)
                yield node.key
                yield from walk(node.right)
        return walk(self.root)
    def __contains__(self, key):
        node = self.root
        while node is not None:
            if key == node.key:
                return True
            {descend}
        return False
"""
BST_RIGHT = "node = node.left if key < node.key else node.right"
BST_ROOT_ONLY = "return False"
MEMBERSHIP_TEST = (
    "from solution import Bag\n\ndef test_membership():\n    b = Bag([1, 2])\n"
    "    assert 1 in b\n    assert 5 not in b\n"
)
BST_TEST = (
    "from solution import BST\n\ndef test_search():\n    t = BST()\n"
    "    for k in [5, 3, 8, 1]:\n        t.insert(k)\n"
    "    assert all(k in t for k in [5, 3, 8, 1])\n    assert 4 not in t and 9 not in t\n"
)


@pytest.mark.parametrize(
    ("program", "test"),
    [
        (BAG.format(contains="True"), MEMBERSHIP_TEST),
        (BAG.format(contains="x in self.items or x == 5"), MEMBERSHIP_TEST),
        (BST.format(descend=BST_ROOT_ONLY), BST_TEST),
        # Its answer's truth is taken only from plain data.
        (
            BAG.format(contains="type('T', (), {'__bool__': lambda s: x in s.items})()"),
            MEMBERSHIP_TEST,
        ),
    ],
    ids=["always true", "one too many", "bst root only", "not plain"],
)
def test_a_wrong_contains_is_a_wrong_answer(program: str, test: str) -> None:
    _wrong(program, test)


@pytest.mark.parametrize(
    ("program", "test"),
    [
        (BAG.format(contains="x in self.items"), MEMBERSHIP_TEST),
        (BAG.format(contains="[x] if x in self.items else ()"), MEMBERSHIP_TEST),
        (BST.format(descend=BST_RIGHT), BST_TEST),
        # No __contains__: Python looks among the items it iterates, or (no __iter__ either)
        # those __getitem__ gives for 0, 1, 2... up to its IndexError.
        (
            BAG.format(contains="None").replace("    def __contains__", "    def _unused"),
            MEMBERSHIP_TEST,
        ),
        (
            "class Bag:\n    def __init__(self, items):\n        self.items = list(items)\n"
            "    def __getitem__(self, i):\n        return self.items[i]\n",
            MEMBERSHIP_TEST,
        ),
        # A dict-like class with __contains__ and __getitem__ but no __iter__.
        (
            "class Table:\n    def __init__(self):\n        self.d = {}\n"
            "    def __setitem__(self, k, v):\n        self.d[k] = v\n"
            "    def __getitem__(self, k):\n        return self.d[k]\n"
            "    def __contains__(self, k):\n        return k in self.d\n",
            "from solution import Table\nt = Table()\nt['a'] = 1\n"
            "assert 'a' in t and 'b' not in t and t['a'] == 1\n",
        ),
    ],
    ids=["bag", "truthy list", "bst", "iteration", "old protocol", "dict-like"],
)
def test_a_right_contains_is_a_right_answer(program: str, test: str) -> None:
    _right(program, test)


SEQ = """
class Seq:
    def __init__(self, items):
        self.items = list(items)
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        return self.items[i]
    def __reversed__(self):
        return {reversed}
"""
REVERSED_TEST = (
    "from solution import Seq\n\ndef test_reversed():\n"
    "    assert list(reversed(Seq([1, 2, 3]))) == [3, 2, 1]\n"
)


def test_a_wrong_reversed_is_a_wrong_answer() -> None:
    _wrong(SEQ.format(reversed="iter(self.items)"), REVERSED_TEST)


@pytest.mark.parametrize(
    "program",
    [
        SEQ.format(reversed="iter(self.items[::-1])"),
        SEQ.format(reversed="(self.items[i] for i in range(len(self.items) - 1, -1, -1))"),
        # Without __reversed__, reversed() reads __len__ and __getitem__, as in Python.
        SEQ.format(reversed="None").replace("    def __reversed__", "    def _unused"),
    ],
    ids=["iterator", "generator", "sequence protocol"],
)
def test_a_right_reversed_is_a_right_answer(program: str) -> None:
    _right(program, REVERSED_TEST)


def test_an_iterator_a_call_returned_is_still_its_items() -> None:
    # The defence of code 1.7.0 stands: a returned iterator's (or an object that is an iterator
    # by its methods) membership and reversal come from what it yields, never its own methods.
    program = (
        "class Lying:\n    def __iter__(self): return self\n"
        "    def __next__(self): raise StopIteration\n"
        "    def __contains__(self, item): return True\n"
        "    def __reversed__(self): return iter([3, 2, 1])\n"
        "def gen():\n    return Lying()\nWORDS = Lying()\n"
    )
    for test in [
        "assert 5 in gen()",
        "assert 'the' in WORDS",
        "assert list(reversed(gen())) == [3, 2, 1]",
        "r = Lying()\nassert 4 in r",
    ]:
        _wrong(program, test)


# -- an instance of a class with __call__ ------------------------------------------------------

CALLABLE = """
class Multiplier:
    def __init__(self, n):
        self.n = n
        self.calls = 0
    def __call__(self, x):
        self.calls += 1
        return x * self.n{wrong}
    def evens(self, k):
        return (i * self.n for i in range(0, k, 2))
"""
CALLABLE_TESTS = [
    "from solution import Multiplier\n\ndef test_call():\n    m = Multiplier(3)\n"
    "    assert m.n == 3 and m(4) == 12 and m(0) == 0 and m.calls == 2\n"
    "    assert callable(m) and list(m.evens(5)) == [0, 6, 12]\n",
    "import unittest\nfrom solution import Multiplier\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_call(self):\n        self.assertEqual(Multiplier(2)(5), 10)\n",
]


@pytest.mark.parametrize("test", CALLABLE_TESTS, ids=["pytest", "unittest"])
def test_an_instance_of_a_class_with_call_can_be_made_and_called(test: str) -> None:
    _right(CALLABLE.format(wrong=""), test)
    _wrong(CALLABLE.format(wrong=" + 1"), test)


def test_an_object_without_call_is_not_callable() -> None:
    _right(BAG.format(contains="x in self.items"), "b = Bag([1])\nassert not callable(b)")


# -- exceptions: their builtin bases, the solution's own classes, their text ------------------

ERRORS = """
import json, statistics
class AppError(Exception):
    pass
class BadInput(AppError, ValueError):
    pass
class InsufficientFundsError(AppError):
    pass
class HttpError(Exception):
    def __init__(self, code):
        super().__init__(f"HTTP {{code}}")
        self.code = code
def check(x):
    if x < 0:
        {bad_input}
    return x
def withdraw(balance, amount):
    if amount > balance:
        {insufficient}
    return balance - amount
def fetch(code):
    {http}
def parse(text):
    return json.loads(text)
def mean(xs):
    return statistics.mean(xs)
def lookup(d, key):
    return d[key]
"""
RIGHT_ERRORS = {
    "bad_input": "raise BadInput('negative')",
    "insufficient": "raise InsufficientFundsError('Insufficient funds')",
    "http": "raise HttpError(code)",
}
# Each raises what the test does not expect, or nothing.
WRONG_ERRORS = {
    "bad_input": "return None",
    "insufficient": "raise ValueError('Insufficient funds')",
    "http": "raise HttpError(500)",
}
ERROR_TESTS = {
    "builtin base, pytest": "import pytest\nfrom solution import check\n\n"
    "def test_negative():\n    with pytest.raises(ValueError, match='negative'):\n"
    "        check(-1)\n",
    "builtin base, except": "try:\n    check(-1)\nexcept ValueError as e:\n"
    "    assert str(e) == 'negative' and e.args == ('negative',)\nelse:\n    assert False\n",
    "own class, pytest": "import pytest\nfrom solution import withdraw, InsufficientFundsError\n"
    "\ndef test_too_much():\n"
    "    with pytest.raises(InsufficientFundsError, match=r'^Insufficient funds$'):\n"
    "        withdraw(10, 100)\n",
    "own base class, pytest": "import pytest\nfrom solution import check, withdraw, AppError\n\n"
    "def test_errors():\n    with pytest.raises(AppError):\n        withdraw(10, 100)\n"
    "    with pytest.raises(AppError) as info:\n        check(-1)\n"
    "    assert str(info.value) == 'negative'\n",
    "own class, unittest": "import unittest\n"
    "from solution import withdraw, InsufficientFundsError\n\n"
    "class TestCases(unittest.TestCase):\n    def test_too_much(self):\n"
    "        with self.assertRaises(InsufficientFundsError):\n            withdraw(10, 100)\n"
    "        self.assertRaises(InsufficientFundsError, withdraw, 1, 2)\n",
    "own class, except": "from solution import withdraw, InsufficientFundsError\n"
    "try:\n    withdraw(10, 100)\nexcept InsufficientFundsError as e:\n"
    "    assert str(e) == 'Insufficient funds'\nelse:\n    assert False\n",
    "its attributes": "import pytest\nfrom solution import fetch, HttpError\n\n"
    "def test_code():\n    with pytest.raises(HttpError) as info:\n        fetch(404)\n"
    "    assert info.value.code == 404 and str(info.value) == 'HTTP 404'\n",
}


@pytest.mark.parametrize("test", ERROR_TESTS)
def test_the_solutions_exceptions_are_caught_as_python_catches_them(test: str) -> None:
    _right(ERRORS.format(**RIGHT_ERRORS), ERROR_TESTS[test])
    _wrong(ERRORS.format(**WRONG_ERRORS), ERROR_TESTS[test])


STANDARD_ERROR_TESTS = [
    # json.JSONDecodeError and statistics.StatisticsError are ValueErrors of the standard
    # library's: caught as their builtin base, and as themselves.
    "import pytest\nfrom solution import parse\n\ndef test_bad():\n"
    "    with pytest.raises(ValueError):\n        parse('{')\n",
    "import json\nimport pytest\nfrom solution import parse\n\ndef test_bad():\n"
    "    with pytest.raises(json.JSONDecodeError) as info:\n        parse('{')\n"
    "    assert info.value.pos == 1\n",
    "import statistics\nimport unittest\nfrom solution import mean\n\n"
    "class TestCases(unittest.TestCase):\n    def test_empty(self):\n"
    "        self.assertRaises(statistics.StatisticsError, mean, [])\n"
    "        self.assertRaises(ValueError, mean, [])\n",
    # A KeyError's text is the repr of its key, once, and its key is its argument.
    "import pytest\nfrom solution import lookup\n\ndef test_missing():\n"
    "    with pytest.raises(KeyError, match=r\"^'missing'$\") as info:\n"
    "        lookup({}, 'missing')\n    assert info.value.args[0] == 'missing'\n",
]


@pytest.mark.parametrize("test", STANDARD_ERROR_TESTS, ids=["json", "json's", "statistics", "key"])
def test_the_standard_librarys_exceptions_are_caught_as_python_catches_them(test: str) -> None:
    _right(ERRORS.format(**RIGHT_ERRORS), test)
    wrong = ERRORS.format(**RIGHT_ERRORS).replace("return json.loads(text)", "return None")
    wrong = wrong.replace("statistics.mean(xs)", "0").replace("return d[key]", "return 0")
    _wrong(wrong, test)


# What a solution's exception class does in its own process stays there: no metaclass of its
# makes test code catch what it did not raise.
CATCH_ALL = """
class Meta(type):
    def __instancecheck__(cls, other): return True
    def __subclasscheck__(cls, other): return True
class AnyError(Exception, metaclass=Meta):
    def __eq__(self, other): return True
    __hash__ = Exception.__hash__
def check(x):
    return 1 // x
"""


@pytest.mark.parametrize(
    "test",
    [
        "import pytest\nfrom solution import check, AnyError\n\ndef test_zero():\n"
        "    with pytest.raises(AnyError):\n        check(0)\n",
        "from solution import check, AnyError\ntry:\n    check(0)\nexcept AnyError:\n    pass\n",
        "from solution import AnyError\nassert issubclass(ValueError, AnyError)\n"
        "assert AnyError('a') == AnyError('b')\n",
    ],
    ids=["pytest", "except", "compared"],
)
def test_a_solutions_exception_class_decides_nothing_in_test_code(test: str) -> None:
    _wrong(CATCH_ALL, test)


@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "SystemExit(1)", "GeneratorExit"])
@pytest.mark.parametrize(
    "test",
    [
        "import pytest\nfrom solution import parse_positive\n\ndef test_bad():\n"
        "    with pytest.raises(Exception):\n        parse_positive('-5')\n",
        "try:\n    parse_positive('-5')\nexcept Exception:\n    pass\n",
        "try:\n    parse_positive('-5')\nexcept BaseException:\n    pass\n",
    ],
    ids=["pytest", "except Exception", "except BaseException"],
)
def test_an_exception_that_ends_a_run_is_a_wrong_answer(test: str, raised: str) -> None:
    program = f"def parse_positive(s):\n    n = int(s)\n    if n < 0:\n        raise {raised}\n"
    _wrong(program + "    return n\n", test)


# -- what the solution does to the test's lists, dicts, sets and bytearrays --------------------

IN_PLACE = """
def sorted_copy(xs):
    {sorted_copy}
def rotate(nums, k):
    k %= len(nums)
    {rotate}
class Solution:
    def moveZeroes(self, nums):
        {move_zeroes}
def fill(grid, value):
    {fill}
def tally(words, counts):
    for w in words:
        counts[w] = counts.get(w, 0) + 1
def visit(n, seen):
    seen.update(range(n + 1))
def upper(buf):
    buf[:] = buf.upper()
def attach(a, b):
    a.append(b)
def pop_then_fail(xs):
    xs.pop(0)
    raise ValueError('after popping')
class Stack:
    def __init__(self, items):
        items.append('base')
        self.items = items
class Job:
    def __init__(self, cost):
        self.cost = cost
def by_cost(jobs):
    jobs.sort(key=lambda job: job.cost)
"""
RIGHT_IN_PLACE = {
    "sorted_copy": "return sorted(xs)",
    "rotate": "nums[:] = nums[-k:] + nums[:-k]",
    "move_zeroes": "nums.sort(key=lambda x: x == 0)",
    "fill": "for row in grid:\n        row[:] = [value] * len(row)",
}
WRONG_IN_PLACE = {
    "sorted_copy": "xs.sort()\n    return xs",
    "rotate": "nums = nums[-k:] + nums[:-k]",
    "move_zeroes": "nums = sorted(nums, key=lambda x: x == 0)",
    "fill": "grid[:] = [[value] * len(row) for row in grid]",
}
IN_PLACE_TESTS = {
    "left alone": "from solution import sorted_copy\n\ndef test_input_not_modified():\n"
    "    data = [3, 1, 2]\n    assert sorted_copy(data) == [1, 2, 3]\n"
    "    assert data == [3, 1, 2]\n",
    "rotated": "nums = [1, 2, 3, 4, 5, 6, 7]\nrotate(nums, 3)\n"
    "assert nums == [5, 6, 7, 1, 2, 3, 4]\n",
    "leetcode": "def check(candidate):\n    nums = [0, 1, 0, 3, 12]\n    candidate(nums)\n"
    "    assert nums == [1, 3, 12, 0, 0]\ncheck(Solution().moveZeroes)\n",
    # The rows are the test's own lists, changed in place: one the test holds sees it.
    "nested": "grid = [[1, 2], [3, 4]]\nrow = grid[0]\nfill(grid, 0)\n"
    "assert grid == [[0, 0], [0, 0]] and row == [0, 0] and grid[0] is row\n",
}


@pytest.mark.parametrize("test", IN_PLACE_TESTS)
def test_a_mutable_argument_is_changed_in_place_as_in_python(test: str) -> None:
    _right(IN_PLACE.format(**RIGHT_IN_PLACE), IN_PLACE_TESTS[test])
    _wrong(IN_PLACE.format(**WRONG_IN_PLACE), IN_PLACE_TESTS[test])


def test_every_mutable_kind_and_how_it_is_shared_come_back() -> None:
    tests = [
        "counts = {'z': 0}\ntally(['a', 'b', 'a'], counts)\n"
        "assert counts == {'z': 0, 'a': 2, 'b': 1}",
        "seen = {0}\nvisit(3, seen)\nassert seen == {0, 1, 2, 3}",
        "buf = bytearray(b'abc')\nupper(buf)\nassert buf == b'ABC' and type(buf) is bytearray",
        "a, b = [1], [2]\nattach(a, b)\nb.append(3)\nassert a == [1, [2, 3]] and a[1] is b",
        "data = [1, 2, 3]\ntry:\n    pop_then_fail(data)\nexcept ValueError:\n    pass\n"
        "assert data == [2, 3]",
        "items = [1]\ns = Stack(items)\nassert items == [1, 'base'] and s.items == [1, 'base']",
        # A list of the solution's objects, sorted in place: the test's own objects again.
        "jobs = [Job(3), Job(1), Job(2)]\ncheapest = jobs[1]\nby_cost(jobs)\n"
        "assert [job.cost for job in jobs] == [1, 2, 3] and jobs[0] is cheapest",
    ]
    ground_truth = {"language": "python", "mode": "assert", "tests": tests}
    program = IN_PLACE.format(**RIGHT_IN_PLACE)
    verdict = verify(fenced(program), ground_truth, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize(
    "change",
    [
        "xs.append(object())",
        "class E(int):\n        def __eq__(self, o): return True\n    xs[:] = [E(1)]",
        "xs.extend(range(1_100_000))",
    ],
    ids=["an object", "always equal", "too many values"],
)
def test_a_change_plain_data_cannot_carry_is_a_wrong_answer(change: str) -> None:
    program = f"def f(xs):\n    {change}\n    return 0\n"
    _wrong(program, "xs = [1]\nassert f(xs) == 0 and len(xs) >= 1")
