"""What a call of the solution did to the test's lists, dicts, sets and bytearrays.

Arguments cross as plain data, so the solution works on copies. In Python a function that
sorts the list it was given sorts the caller's list: LeetCode's "modify nums in-place" answers
are judged by reading the argument back (``rotate(nums, k)``, then ``nums``), and KodCode's
tests check that a function left its input alone. So the solution process keeps the mutable
containers it decoded for a call, numbered in the order both sides meet them (``plain``'s
``track``), with what each held when it arrived; after the call (returned or raised) it sends
back those whose items changed, each as its new items, an item that is one of those containers
as its number: aliasing between them survives (``a.append(b)`` leaves the test's ``a`` holding
its own ``b``). The driver then sets the test's own containers to those items, in place: they
keep their identity, as in Python, and a row the test holds of a grid sees its change.

Only what changed during the call comes back, within plain data's bounds; a change plain data
cannot carry (an object of the solution's put in the list) is a wrong answer. A container the
solution keeps past the call (``Stack(items)`` storing ``items``) is its copy from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import plain


class Received:
    """The solution process's side: the mutable containers one call's arguments arrived as,
    and the objects of its own that handles in them stood for (numbered too, so that a list
    of them the solution changes comes back holding the test's proxies of them)."""

    def __init__(self) -> None:
        self.known: list[Any] = []
        self.before: list[Any] = []

    def track(self, value: Any) -> None:
        self.known.append(value)

    def seal(self) -> None:
        """Note what each holds, once the arguments are decoded and before the call."""
        self.before = [_held(value) if _mutable(value) else None for value in self.known]

    def changes(self) -> dict[str, Any]:
        """``{"mut": [[number, items], ...]}`` for the containers whose items changed (none:
        ``{}``), or ``{"mut_np": why}`` where plain data cannot carry the change."""
        changed = [
            [number, _items(value)]
            for number, (value, before) in enumerate(zip(self.known, self.before, strict=True))
            if before is not None and _held(value)[0] != before[0]
        ]
        if not changed:
            return {}
        numbers = {id(value): n for n, value in enumerate(self.known)}
        try:
            return {"mut": plain.encode(changed, lambda v: numbers.get(id(v)), nodes=True)}
        except Exception as exc:  # NotPlain, or no memory to say it in
            return {"mut_np": f"the solution changed an argument to hold {exc}"[:300]}


def _mutable(value: Any) -> bool:
    return type(value) in plain.MUTABLE


def _held(container: Any) -> tuple[Any, Any]:
    """What ``container`` holds, by identity (its items themselves, kept so that no new object
    can take an id of theirs): equal values never hide a change of item, and comparing runs no
    ``__eq__`` of the solution's. A set's order is no change."""
    if type(container) is bytearray:
        return bytes(container), None
    items = _items(container)
    ids = list(map(id, items))
    return (frozenset(ids) if type(container) is set else ids), items


def _items(container: Any) -> Any:
    """The items as they travel back: a tuple (a dict's keys and values in turn), or bytes.
    A tuple is never a tracked container itself, so only the containers inside it are
    sent as their numbers."""
    kind = type(container)
    if kind is bytearray:
        return bytes(container)
    if kind is dict:
        return tuple(part for pair in dict.items(container) for part in pair)
    return tuple(container)


def apply(originals: list[Any], wire: Any, nodes: Callable[[str], type]) -> None:
    """The driver's side: set the call's arguments' containers (``originals``, as ``plain``
    tracked them when it encoded the arguments, with the proxies it sent as handles) to the
    items the solution left in them; ValueError if ``wire`` is malformed (then nothing has
    changed)."""

    def original(number: Any) -> Any:
        if type(number) is not int or not 0 <= number < len(originals):
            raise ValueError("malformed change: no such argument")
        return originals[number]

    changes = plain.decode(wire, original, nodes)
    if type(changes) is not list:
        raise ValueError("malformed change")
    updates = [_update(original(change[0]), change[1]) for change in _pairs(changes)]
    for update in updates:
        update()


def _pairs(changes: list[Any]) -> list[Any]:
    if any(type(change) is not list or len(change) != 2 for change in changes):
        raise ValueError("malformed change")
    return changes


def _update(target: Any, items: Any) -> Callable[[], None]:
    """How ``target`` takes ``items`` in place (made before any is applied, so that a
    malformed change leaves every argument as it was)."""
    kind = type(target)
    if not _mutable(target) or type(items) is not (bytes if kind is bytearray else tuple):
        raise ValueError("malformed change")
    if kind in (list, bytearray):
        return lambda: target.__setitem__(slice(None), items)
    try:
        new = dict(zip(items[0::2], items[1::2], strict=True)) if kind is dict else set(items)
    except (TypeError, ValueError):  # an unhashable key, an odd count
        raise ValueError("malformed change") from None

    def replace() -> None:
        target.clear()
        target.update(new)

    return replace
