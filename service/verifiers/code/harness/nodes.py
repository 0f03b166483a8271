"""LeetCode's linked-list and tree nodes across the process boundary, as data.

LeetCode-style suites (LeetCodeDataset and the sets built from it) pass a solution a
``ListNode`` or a ``TreeNode`` built by test code (``candidate(head=list_node([1, 2, 3]))``) and
compare what it returns with test helpers that walk ``val`` and ``next`` (``is_same_list``,
``is_same_tree``). Such a node crosses as its graph of plain values: every node reachable
through its links, each as its ``val`` (plain data) and the indices of the nodes its links
point to. Shared nodes and cycles (a list with a loop, as LeetCode 141 builds) stay what they
were. The receiver rebuilds the graph from its own class of that name, without running any of
the sender's code: test code gets its own ``ListNode`` (or this module's, when it defines none)
holding plain values, so an object of the solution never decides a comparison, as with any
other value.

A node is an object whose class is named ``ListNode`` or ``TreeNode`` (the class's
``__name__``), whose ``val`` is plain data and whose links are None or nodes of the same
class name. The solution's process gets these standard definitions as builtins, as LeetCode's
judge provides them, so a solution that uses ``ListNode`` without defining it is not a
NameError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ListNode:
    def __init__(self, val: Any = 0, next: Any = None) -> None:
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val: Any = 0, left: Any = None, right: Any = None) -> None:
        self.val = val
        self.left = left
        self.right = right


# Each kind's link attributes, in wire order.
LINKS: dict[str, tuple[str, ...]] = {"ListNode": ("next",), "TreeNode": ("left", "right")}
STANDARD: dict[str, type] = {"ListNode": ListNode, "TreeNode": TreeNode}
TAG = "N"


def kind_of(value: Any) -> str | None:
    """The node kind of ``value`` (its class's name), or None for anything else."""
    name = type(value).__name__
    return name if type(name) is str and name in LINKS else None


def add_standard_classes(namespace: dict[str, Any]) -> None:
    """The standard node classes, where ``namespace`` (a builtins dict) has none of its own."""
    for name, cls in STANDARD.items():
        namespace.setdefault(name, cls)


def encode(root: Any, kind: str, value: Callable[[Any], Any], take: Callable[[], None]) -> Any:
    """The wire form of the node graph at ``root``: ``["N", kind, node, ...]``, node 0 the root,
    each node ``[val, link index or None, ...]``. ``value`` encodes a ``val`` (raising NotPlain
    for anything else), ``take`` counts one node against the sender's budget. A link to
    anything but None or a node of the same kind raises ``TypeError``; so does a node without
    ``val`` or a link attribute."""
    links = LINKS[kind]
    index: dict[int, int] = {id(root): 0}
    order = [root]
    wire: list[Any] = [TAG, kind]
    position = 0
    while position < len(order):
        node = order[position]
        position += 1
        take()
        try:
            fields = [node.val, *(getattr(node, name) for name in links)]
        except AttributeError as exc:
            raise TypeError(f"a {kind} without {exc.name or 'its fields'}") from None
        entry = [value(fields[0])]
        for target in fields[1:]:
            if target is None:
                entry.append(None)
                continue
            if kind_of(target) != kind:
                raise TypeError(f"a {kind} linked to something other than a {kind} or None")
            known = index.get(id(target))
            if known is None:
                known = index[id(target)] = len(order)
                order.append(target)
            entry.append(known)
        wire.append(entry)
    return wire


def decode(
    data: list[Any],
    value: Callable[[Any], Any],
    take: Callable[[], None],
    classes: Callable[[str], type],
) -> Any:
    """The root of the node graph ``data`` describes, built from ``classes(kind)`` without
    calling its ``__init__``; ValueError if ``data`` is malformed."""
    if len(data) < 3 or type(data[1]) is not str or data[1] not in LINKS:
        raise ValueError("malformed node")
    kind, entries = data[1], data[2:]
    width = 1 + len(LINKS[kind])
    cls = classes(kind)
    nodes: list[Any] = []
    for entry in entries:
        take()
        if type(entry) is not list or len(entry) != width:
            raise ValueError(f"malformed {kind}")
        nodes.append(object.__new__(cls))
    for node, entry in zip(nodes, entries, strict=True):
        fields = {"val": value(entry[0])}
        for name, target in zip(LINKS[kind], entry[1:], strict=True):
            if target is not None and (type(target) is not int or not 0 <= target < len(nodes)):
                raise ValueError(f"malformed {kind} link")
            fields[name] = None if target is None else nodes[target]
        for name, field in fields.items():
            try:
                object.__setattr__(node, name, field)
            except (AttributeError, TypeError) as exc:  # __slots__ without the field
                raise ValueError(f"{kind} cannot hold {name!r}: {exc}") from None
    return nodes[0]


def class_in(namespace: dict[str, Any], kind: str) -> type:
    """The class a receiver builds ``kind`` nodes from: a plain class of that name defined in
    ``namespace`` (the test's, or the solution's), else the standard one."""
    found = namespace.get(kind)
    if isinstance(found, type) and type(found) is type and found.__new__ is object.__new__:
        return found
    return STANDARD[kind]
