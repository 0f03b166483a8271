"""LeetCode's ListNode and TreeNode across the harness's process boundary: as graphs of plain
values, rebuilt from the receiver's own class, and only where the caller asks for them."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code.harness import nodes, plain


class ListNode:  # a test's own definition, as LeetCodeDataset's prompts write it
    def __init__(self, val: Any = 0, next: Any = None) -> None:
        self.val = val
        self.next = next
        self.built_by_init = True


class TreeNode:
    def __init__(self, val: Any = 0, left: Any = None, right: Any = None) -> None:
        self.val = val
        self.left = left
        self.right = right


def _linked(values: list[Any]) -> Any:
    head = None
    for value in reversed(values):
        head = ListNode(value, head)
    return head


def _values(head: Any) -> list[Any]:
    out = []
    while head is not None:
        out.append(head.val)
        head = head.next
    return out


def _trip(value: Any, scope: dict[str, Any] | None = None) -> Any:
    wire = plain.loads(plain.dumps(plain.encode(value, nodes=True)))
    return plain.decode(wire, nodes=lambda kind: nodes.class_in(scope or {}, kind))


def test_a_list_crosses_as_its_values_and_is_rebuilt_from_the_receivers_class() -> None:
    sent = _linked([1, "two", [3.0, None], {"k": (4,)}])
    back = _trip(sent, {"ListNode": ListNode})
    assert type(back) is ListNode and back is not sent
    assert _values(back) == [1, "two", [3.0, None], {"k": (4,)}]
    assert type(_values(back)[3]["k"]) is tuple
    # Rebuilt without running the class's __init__ (none of the sender's code runs either).
    assert not hasattr(back, "built_by_init")


def test_without_a_class_of_its_own_the_receiver_gets_leetcodes() -> None:
    back = _trip(_linked([1, 2]))
    assert type(back) is nodes.ListNode and _values(back) == [1, 2]


def test_a_cycle_and_shared_nodes_stay_what_they_were() -> None:
    head = _linked([3, 2, 0, -4])
    head.next.next.next.next = head.next  # LeetCode 141: the tail links back to position 1
    back = _trip(head)
    assert back.next.next.next.next is back.next
    shared = TreeNode(7)
    root = TreeNode(1, shared, TreeNode(2, shared))
    tree = _trip(root, {"TreeNode": TreeNode})
    assert tree.left is tree.right.left and tree.left.val == 7
    assert tree.right.right is None and type(tree) is TreeNode


def test_a_long_list_is_not_limited_by_nesting_depth() -> None:
    back = _trip(_linked(list(range(5000))))
    assert _values(back) == list(range(5000))


def test_nodes_cross_only_where_asked() -> None:
    with pytest.raises(plain.NotPlain, match="ListNode is not plain data"):
        plain.encode(_linked([1]))
    wire = plain.encode(_linked([1]), nodes=True)
    with pytest.raises(ValueError, match="malformed"):
        plain.decode(wire)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ListNode(object()), "is not plain data"),
        (lambda: ListNode(1, "next"), "linked to something other than a ListNode"),
        (lambda: ListNode(1, TreeNode(2)), "linked to something other than a ListNode"),
        (lambda: TreeNode(1, ListNode(2)), "linked to something other than a TreeNode"),
    ],
)
def test_a_node_holding_anything_but_plain_values_and_its_own_kind_is_not_plain(
    build: Any, message: str
) -> None:
    with pytest.raises(plain.NotPlain, match=message):
        plain.encode(build(), nodes=True)


def test_a_node_without_its_fields_is_not_plain() -> None:
    class ListNode:  # named as a node, but holding no val
        next = None

    with pytest.raises(plain.NotPlain, match="without val"):
        plain.encode(ListNode(), nodes=True)


def test_an_always_equal_value_inside_a_node_is_refused() -> None:
    class Anything:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    with pytest.raises(plain.NotPlain):
        plain.encode(_linked([1, Anything()]), nodes=True)


@pytest.mark.parametrize(
    "wire",
    [
        ["N"],
        ["N", "ListNode"],
        ["N", "Other", [1, None]],
        ["N", "ListNode", [1]],
        ["N", "ListNode", [1, None, None]],
        ["N", "ListNode", [1, 1]],
        ["N", "ListNode", [1, -1]],
        ["N", "ListNode", [1, True]],
        ["N", "ListNode", [1, "0"]],
        ["N", "TreeNode", [1, None]],
        ["N", "ListNode", "x"],
        ["N", "ListNode", [["Q"], None]],
    ],
)
def test_malformed_node_wire_forms_are_refused(wire: list[Any]) -> None:
    with pytest.raises(ValueError):
        plain.decode(wire, nodes=lambda kind: nodes.STANDARD[kind])


def test_node_graphs_count_against_the_value_budget() -> None:
    wire = ["N", "ListNode", *([0, i + 1] for i in range(plain.MAX_NODES))]
    wire[-1] = [0, None]
    with pytest.raises(ValueError, match="more than"):
        plain.decode(wire, nodes=lambda kind: nodes.STANDARD[kind])


def test_only_a_plain_class_of_the_right_name_is_used_to_rebuild() -> None:
    class Meta(type):
        pass

    class Odd(int):
        pass

    scopes: list[dict[str, Any]] = [
        {},
        {"ListNode": lambda: None},
        {"ListNode": Meta("ListNode", (), {})},
        {"ListNode": Odd},
    ]
    for scope in scopes:
        assert nodes.class_in(scope, "ListNode") is nodes.ListNode
    assert nodes.class_in({"ListNode": ListNode}, "ListNode") is ListNode


def test_a_class_that_cannot_hold_the_fields_is_malformed_not_a_crash() -> None:
    class ListNode:
        __slots__ = ("value",)

    wire = plain.encode(_linked([1]), nodes=True)
    with pytest.raises(ValueError, match="cannot hold"):
        plain.decode(wire, nodes=lambda kind: ListNode)


def test_standard_classes_fill_only_missing_names() -> None:
    mine = object()
    namespace: dict[str, Any] = {"ListNode": mine}
    nodes.add_standard_classes(namespace)
    assert namespace == {"ListNode": mine, "TreeNode": nodes.TreeNode}
