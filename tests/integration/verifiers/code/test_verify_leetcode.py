"""LeetCode-style tests through each real sandbox backend: test code builds ``ListNode`` and
``TreeNode`` values (as LeetCodeDataset's helpers do), passes them to ``Solution().method`` and
compares what comes back with its own helpers. Nodes cross as graphs of plain values, so a
right answer is ``correct``, a wrong one ``incorrect`` (never ``error``), and nothing of the
solution's nodes (their class, an always-equal ``val``, a patched standard class) decides a
comparison."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

# The helpers as LeetCodeDataset's prompts define them (written here, not copied).
HELPERS = """
from typing import *
from collections import deque

class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

def list_node(values):
    head = None
    for value in reversed(values):
        head = ListNode(value, head)
    return head

def is_same_list(a, b):
    while a is not None and b is not None:
        if a.val != b.val:
            return False
        a, b = a.next, b.next
    return a is None and b is None

class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right

def tree_node(values):
    if not values:
        return None
    root = TreeNode(values[0])
    queue, i = deque([root]), 1
    while queue and i < len(values):
        node = queue.popleft()
        for side in ("left", "right"):
            if i < len(values) and values[i] is not None:
                child = TreeNode(values[i])
                setattr(node, side, child)
                queue.append(child)
            i += 1
    return root

def is_same_tree(a, b):
    if a is None or b is None:
        return a is b
    return a.val == b.val and is_same_tree(a.left, b.left) and is_same_tree(a.right, b.right)
"""


def _problem(check: str, entry: str) -> dict[str, Any]:
    test = f"{HELPERS}\ndef check(candidate):\n{check}\ncheck(Solution().{entry})\n"
    return {"language": "python", "mode": "assert", "tests": [test]}


REVERSE = _problem(
    "    assert is_same_list(candidate(head=list_node([1, 2, 3, 4, 5])),"
    " list_node([5, 4, 3, 2, 1]))\n"
    "    assert is_same_list(candidate(head=list_node([1, 2])), list_node([2, 1]))\n"
    "    assert candidate(head=list_node([])) is None\n",
    "reverseList",
)
REVERSE_RIGHT = """
class Solution:
    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
        previous = None
        while head:
            head.next, previous, head = previous, head, head.next
        return previous
"""
MERGE = _problem(
    "    assert is_same_list(candidate(list1=list_node([1, 2, 4]), list2=list_node([1, 3, 4])),"
    " list_node([1, 1, 2, 3, 4, 4]))\n"
    "    assert candidate(list1=list_node([]), list2=list_node([])) is None\n",
    "mergeTwoLists",
)
# Uses LeetCode's ListNode without defining it, as answers to LeetCode prompts do.
MERGE_RIGHT = """
class Solution:
    def mergeTwoLists(
        self, list1: Optional[ListNode], list2: Optional[ListNode]
    ) -> Optional[ListNode]:
        tail = dummy = ListNode()
        while list1 and list2:
            if list1.val <= list2.val:
                tail.next, list1 = list1, list1.next
            else:
                tail.next, list2 = list2, list2.next
            tail = tail.next
        tail.next = list1 or list2
        return dummy.next
"""
INVERT = _problem(
    "    assert is_same_tree(candidate(root=tree_node([4, 2, 7, 1, 3, 6, 9])),"
    " tree_node([4, 7, 2, 9, 6, 3, 1]))\n"
    "    assert is_same_tree(candidate(root=tree_node([2, 1, 3])), tree_node([2, 3, 1]))\n"
    "    assert candidate(root=None) is None\n",
    "invertTree",
)
# Defines its own TreeNode, as some answers copy the commented-out definition.
INVERT_RIGHT = """
class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val, self.left, self.right = val, left, right

class Solution:
    def invertTree(self, root):
        if root is not None:
            root.left, root.right = self.invertTree(root.right), self.invertTree(root.left)
        return root
"""
DEPTH = _problem(
    "    assert candidate(root=tree_node([3, 9, 20, None, None, 15, 7])) == 3\n"
    "    assert candidate(root=tree_node([1, None, 2])) == 2\n",
    "maxDepth",
)
DEPTH_RIGHT = """
class Solution:
    def maxDepth(self, root: Optional[TreeNode]) -> int:
        return 0 if root is None else 1 + max(self.maxDepth(root.left), self.maxDepth(root.right))
"""
CYCLE = _problem(
    "    def with_loop(values, pos):\n"
    "        head = list_node(values)\n"
    "        node, target = head, None\n"
    "        for i in range(len(values)):\n"
    "            if i == pos:\n"
    "                target = node\n"
    "            if node.next is None:\n"
    "                node.next = target\n"
    "                break\n"
    "            node = node.next\n"
    "        return head\n"
    "    assert candidate(head=with_loop([3, 2, 0, -4], 1)) is True\n"
    "    assert candidate(head=with_loop([1, 2], 0)) is True\n"
    "    assert candidate(head=with_loop([1], -1)) is False\n",
    "hasCycle",
)
CYCLE_RIGHT = """
class Solution:
    def hasCycle(self, head: Optional[ListNode]) -> bool:
        slow = fast = head
        while fast and fast.next:
            slow, fast = slow.next, fast.next.next
            if slow is fast:
                return True
        return False
"""
# A list of lists in, and (LeetCode 109) a list in and a tree out.
MERGE_K = _problem(
    "    lists = [list_node([1, 4, 5]), list_node([1, 3, 4]), list_node([2, 6])]\n"
    "    assert is_same_list(candidate(lists=lists), list_node([1, 1, 2, 3, 4, 4, 5, 6]))\n"
    "    assert candidate(lists=[]) is None and candidate(lists=[None]) is None\n",
    "mergeKLists",
)
MERGE_K_RIGHT = """
import heapq
class Solution:
    def mergeKLists(self, lists: List[Optional[ListNode]]) -> Optional[ListNode]:
        values = sorted(v for head in lists for v in self.walk(head))
        head = None
        for value in reversed(values):
            head = ListNode(value, head)
        return head

    def walk(self, node):
        while node:
            yield node.val
            node = node.next
"""
TO_TREE = _problem(
    "    assert is_same_tree(candidate(head=list_node([-10, -3, 0, 5, 9])),"
    " tree_node([0, -3, 9, -10, None, 5]))\n",
    "sortedListToBST",
)
TO_TREE_RIGHT = """
class Solution:
    def sortedListToBST(self, head: Optional[ListNode]) -> Optional[TreeNode]:
        values = []
        while head:
            values.append(head.val)
            head = head.next
        def build(lo, hi):
            if lo >= hi:
                return None
            mid = (lo + hi) // 2
            return TreeNode(values[mid], build(lo, mid), build(mid + 1, hi))
        return build(0, len(values))
"""
RIGHT = {
    "reverse": (REVERSE, REVERSE_RIGHT),
    "merge": (MERGE, MERGE_RIGHT),
    "invert": (INVERT, INVERT_RIGHT),
    "depth": (DEPTH, DEPTH_RIGHT),
    "cycle": (CYCLE, CYCLE_RIGHT),
    "merge k": (MERGE_K, MERGE_K_RIGHT),
    "list to tree": (TO_TREE, TO_TREE_RIGHT),
}
WRONG = {
    "reverse": (REVERSE, REVERSE_RIGHT.replace("return previous", "return head")),
    "merge": (MERGE, MERGE_RIGHT.replace("<=", ">")),
    "invert": (INVERT, INVERT_RIGHT.replace("self.invertTree(root.right), ", "root.right, ")),
    "depth": (DEPTH, DEPTH_RIGHT.replace("1 + max", "max")),
    "cycle": (CYCLE, CYCLE_RIGHT.replace("return True", "return False")),
    "merge k": (MERGE_K, MERGE_K_RIGHT.replace("sorted(v", "list(v")),
    "list to tree": (
        TO_TREE,
        TO_TREE_RIGHT.replace("build(lo, mid), build", "build(mid + 1, hi), build"),
    ),
}

ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    __hash__ = object.__hash__
"""
HACKS = {
    # Its own ListNode whose values are equal to everything: not plain data.
    "always-equal val": ALWAYS_EQUAL + "class Solution:\n    def reverseList(self, head):\n"
    "        out = None\n        for _ in range(5):\n"
    "            out = ListNode(Anything(), out)\n        return out\n",
    # A node class that answers every attribute (val and next) with an always-equal object.
    "node of attributes": ALWAYS_EQUAL
    + "class ListNode:\n    def __getattr__(self, name): return Anything()\n"
    "class Solution:\n    def reverseList(self, head):\n        return ListNode()\n",
    # LeetCode's own class patched to compare equal: stays in the solution's process.
    "patched standard class": "import builtins\n"
    "builtins.ListNode.__eq__ = lambda self, other: True\n"
    "builtins.ListNode.__ne__ = lambda self, other: False\n"
    "class Solution:\n    def reverseList(self, head):\n        return ListNode(0)\n",
    # A node that links to a non-node.
    "link to a string": "class Solution:\n    def reverseList(self, head):\n"
    "        return ListNode(5, 'the rest')\n",
    # The answer loops back on itself: the test's walk never ends on its own.
    "cyclic answer": "class Solution:\n    def reverseList(self, head):\n"
    "        node = ListNode(5)\n        node.next = node\n        return node\n",
}


@pytest.mark.parametrize("name", RIGHT)
def test_a_right_answer_to_a_leetcode_style_problem_is_correct(name: str) -> None:
    problem, program = RIGHT[name]
    verdict = verify(fenced(program), problem, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_answer_to_a_leetcode_style_problem_is_incorrect(name: str) -> None:
    problem, program = WRONG[name]
    verdict = verify(fenced(program), problem, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["tests"][0]["status"] != "accepted"


@pytest.mark.parametrize("name", HACKS)
def test_a_nodes_hack_earns_nothing_and_is_a_wrong_answer(name: str) -> None:
    verdict = verify(fenced(HACKS[name]), {**REVERSE, "time_limit_s": 1.0}, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["tests"][0]["status"] != "accepted"


def test_the_solution_gets_copies_so_the_tests_nodes_stay_its_own() -> None:
    # The test keeps its list after the call: what the solution does to its copy (here
    # rewriting every value to the expected answer) does not reach it.
    problem = _problem(
        "    head = list_node([1, 2, 3])\n"
        "    assert candidate(head=head) is None\n"
        "    assert is_same_list(head, list_node([1, 2, 3]))\n",
        "scramble",
    )
    program = (
        "class Solution:\n    def scramble(self, head):\n"
        "        while head:\n            head.val = 0\n            head = head.next\n"
    )
    verdict = verify(fenced(program), problem, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def test_a_test_without_node_classes_of_its_own_gets_leetcodes() -> None:
    problem = {
        "language": "python",
        "mode": "assert",
        "tests": [
            "head = solve(ListNode(1, ListNode(2)))\n"
            "assert type(head).__name__ == 'ListNode'\n"
            "assert (head.val, head.next.val, head.next.next) == (2, 1, None)",
            "assert solve(None) is None",
        ],
    }
    program = (
        "def solve(head):\n    previous = None\n    while head:\n"
        "        head.next, previous, head = previous, head, head.next\n    return previous\n"
    )
    verdict = verify(fenced(program), problem, {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


# LeetCodeDataset's prompts open with imports and ``inf`` that its answers use unimported (the
# suite runs prompt + answer + test): the ground truth's prelude is that prompt code.
PROMPT_CODE = "from collections import *\nfrom heapq import *\nfrom math import *\n" + HELPERS
NETWORK_DELAY = _problem(
    "    assert candidate(times=[[2, 1, 1], [2, 3, 1], [3, 4, 1]], n=4, k=2) == 2\n"
    "    assert candidate(times=[[1, 2, 1]], n=2, k=1) == 1\n"
    "    assert candidate(times=[[1, 2, 1]], n=2, k=2) == -1\n",
    "networkDelayTime",
)
NETWORK_DELAY_RIGHT = """
from __future__ import annotations

class Solution:
    def networkDelayTime(self, times: List[List[int]], n: int, k: int) -> int:
        graph = defaultdict(list)
        for u, v, w in times:
            graph[u].append((v, w))
        dist = [inf] * (n + 1)
        dist[k] = 0
        heap = [(0, k)]
        while heap:
            d, u = heappop(heap)
            if d > dist[u]:
                continue
            for v, w in graph[u]:
                if d + w < dist[v]:
                    dist[v] = d + w
                    heappush(heap, (d + w, v))
        worst = max(dist[1:])
        return -1 if worst == inf else worst
"""


def test_an_answer_that_uses_the_prompts_imports_is_right_with_the_prelude() -> None:
    # Its ``from __future__`` import still opens the program, above the prelude.
    with_prelude = {**NETWORK_DELAY, "prelude": PROMPT_CODE}
    verdict = verify(fenced(NETWORK_DELAY_RIGHT), with_prelude, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    # Without it the names are missing, as they would be after the answer alone.
    verdict = verify(fenced(NETWORK_DELAY_RIGHT), NETWORK_DELAY, {})
    assert verdict.status == "incorrect"
    assert "NameError" in str(verdict.details)
    # A wrong answer stays wrong with it.
    wrong = NETWORK_DELAY_RIGHT.replace("return -1 if worst == inf else worst", "return worst")
    verdict = verify(fenced(wrong), with_prelude, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
