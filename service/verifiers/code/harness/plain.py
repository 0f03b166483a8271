"""Plain data across a process boundary: the only values a solution can hand to test code.

Plain data is None, bool, int, float, complex, str, bytes, bytearray, and list, tuple, set,
frozenset and dict of plain data, of exactly those builtin types (a subclass of int or str,
an object with its own ``__eq__`` is not plain), nested at most ``MAX_DEPTH`` deep and at most
``MAX_NODES`` values in all. The wire form is JSON: None, bools, strings, small ints and
floats as themselves, everything else a list whose first element is a tag.

``encode`` runs where the value was made, ``decode`` where it is used; ``decode`` trusts
nothing (only builtin types come out of it, and malformed input raises ``ValueError``).

The standard library's ``OrderedDict``, ``Counter``, ``deque`` and ``Fraction``, and a
``defaultdict`` whose ``default_factory`` is a builtin type (``list``, ``int``, ``set``...) or None,
are plain data too, of exactly those classes: their items (and factory, maxlen, numerator and
denominator) cross, and the receiver rebuilds them from its own standard classes, as it does
list and tree nodes (no code of the sender runs). An ``OrderedDict`` keeps its order, and so
compares with it, as in Python. A value that is an answer (a solution's result, an operand of a
test's comparison) may also be a ``defaultdict`` with another factory: it travels as the dict of
its items (never as an argument, where the receiver would miss its default).
"""

from __future__ import annotations

import base64
import collections
import json
import sys
from typing import Any

from . import nodes as node_graphs

MAX_DEPTH = 100
MAX_NODES = 1_000_000
# Ints as JSON numbers up to this size; beyond it as hex text (JSON readers cap digit counts).
_SMALL_INT = 1 << 62
# A handle to an object that stays in the solution process (arguments only, see proxies.py).
REF = "R"
# A lifted operand that is an iterator (``proxies.operand``): never inside plain data, and
# read by the host alone (``asserts.decode_operand``).
ITERATOR = "IT"
_CONTAINERS: dict[type, str] = {list: "L", tuple: "T", set: "S", frozenset: "F"}
_MAKERS: dict[str, Any] = {"L": list, "T": tuple, "S": set, "F": frozenset}
# A defaultdict's factory crosses by its name, and only these (and None) have one.
_FACTORIES: dict[str, type] = {
    f.__name__: f for f in (list, int, set, dict, str, float, tuple, bool)
}
# A Fraction's numerator and denominator are bounded: rebuilding it takes their gcd, which for
# the largest ints plain data carries (4 million bits) takes half a minute.
_FRACTION_BITS = 100_000


class NotPlain(TypeError):
    """A value that is not plain data (or too big or deep to be sent as such)."""


# The mutable ones: a call's arguments of these kinds are tracked (``track``) and changed in
# the caller's hands as the solution changed them (``mutations.py``).
MUTABLE = frozenset({list, dict, set, bytearray})


class _Walk:
    """One encoding's or decoding's settings and the values it may still take. ``refs``: the
    handle (encoding) or the object (decoding) standing for a value that does not travel as
    itself; ``track``: told of each list, dict, set and bytearray after its items, and of each
    value a handle stands for, so that both sides meet them in the same order."""

    __slots__ = ("answer", "left", "nodes", "refs", "track")

    def __init__(self, refs: Any, answer: bool, nodes: Any, track: Any) -> None:
        self.left = MAX_NODES
        self.refs, self.answer, self.nodes, self.track = refs, answer, nodes, track

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise NotPlain(f"more than {MAX_NODES} values")


def encode(
    value: Any,
    refs: Any = None,
    *,
    answer: bool = False,
    nodes: bool = False,
    track: Any = None,
) -> Any:
    """The wire form of ``value``; NotPlain if it is not plain data. ``refs(value)`` may name
    a handle for a value (a proxy passed back as an argument; a list the other side holds
    already), else None. ``answer``: the standard library's dicts travel as dicts (never for
    arguments, where the receiver would miss the class's methods). ``nodes``: list and tree
    nodes travel as their graphs (between the driver and the solution process only).
    ``track(obj)``: told of each list, dict, set and bytearray, after its items, and of each
    value sent as a handle."""
    return _encode(value, 0, _Walk(refs, answer, nodes, track))


def _encode(value: Any, depth: int, walk: _Walk) -> Any:
    walk.take()
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -_SMALL_INT < value < _SMALL_INT else ["I", format(value, "x")]
    if kind is float:
        return value
    if depth >= MAX_DEPTH:
        raise NotPlain(f"nested more than {MAX_DEPTH} deep")
    if kind in MUTABLE:
        handle = walk.refs(value) if walk.refs is not None else None
        if handle is not None:
            return [REF, handle]
        wire = _mutable(value, kind, depth, walk)
        if walk.track is not None:
            walk.track(value)
        return wire
    tag = _CONTAINERS.get(kind)
    if tag is not None:
        return [tag, *(_encode(item, depth + 1, walk) for item in value)]
    standard = _standard(value, kind, depth, walk)
    if standard is not None:
        return standard
    if kind is bytes:
        return ["B", base64.b64encode(value).decode("ascii")]
    if kind is complex:
        return ["C", value.real, value.imag]
    handle = walk.refs(value) if walk.refs is not None else None
    if handle is not None:
        if walk.track is not None:
            walk.track(value)
        return [REF, handle]
    node_kind = node_graphs.kind_of(value) if walk.nodes else None
    if node_kind is not None:
        try:
            return node_graphs.encode(
                value, node_kind, lambda val: _encode(val, depth + 1, walk), walk.take
            )
        except TypeError as exc:  # NotPlain is one too
            raise NotPlain(str(exc)) from None
    raise NotPlain(f"{_type_name(value)} is not plain data")


def _mutable(value: Any, kind: type, depth: int, walk: _Walk) -> list[Any]:
    if kind is dict:
        return ["D", *_pairs(dict.items(value), depth, walk)]
    if kind is bytearray:
        return ["BA", base64.b64encode(value).decode("ascii")]
    return [_CONTAINERS[kind], *(_encode(item, depth + 1, walk) for item in value)]


def _pairs(items: Any, depth: int, walk: _Walk) -> Any:
    for key, item in items:
        yield _encode(key, depth + 1, walk)
        yield _encode(item, depth + 1, walk)


def _standard(value: Any, kind: type, depth: int, walk: _Walk) -> list[Any] | None:
    """The wire form of one of the standard library's containers, or None for any other."""
    if kind is collections.OrderedDict:
        # Its own order: move_to_end does not reorder the dict beneath it.
        return ["OD", *_pairs(collections.OrderedDict.items(value), depth, walk)]
    if kind is collections.Counter:
        return ["CT", *_pairs(dict.items(value), depth, walk)]
    if kind is collections.defaultdict:
        factory = value.default_factory
        name = next((n for n, f in _FACTORIES.items() if factory is f), None)
        if factory is not None and name is None:
            if not walk.answer:
                raise NotPlain("a defaultdict whose default_factory is not a builtin type")
            return ["D", *_pairs(dict.items(value), depth, walk)]
        return ["DD", name, *_pairs(dict.items(value), depth, walk)]
    if kind is collections.deque:
        return ["DQ", value.maxlen, *(_encode(v, depth + 1, walk) for v in value)]
    fractions = sys.modules.get("fractions")  # imported by whoever made one
    if fractions is not None and kind is fractions.Fraction:
        parts = value.numerator, value.denominator
        if any(type(part) is not int or part.bit_length() > _FRACTION_BITS for part in parts):
            raise NotPlain(f"a Fraction of more than {_FRACTION_BITS} bits")
        return ["Q", *(_encode(part, depth + 1, walk) for part in parts)]
    return None


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", "object")
    if not isinstance(module, str) or not isinstance(name, str):
        return "an object"
    return f"a {name}" if module == "builtins" else f"a {module}.{name}"


def decode(data: Any, refs: Any = None, nodes: Any = None, track: Any = None) -> Any:
    """Plain data from its wire form (as ``json.loads`` made it); ValueError if malformed.
    ``refs(handle)`` resolves a handle; without it a handle is malformed. ``nodes(kind)`` is
    the class a list or tree node is rebuilt from; without it a node is malformed.
    ``track(obj)``: told of each list, dict, set and bytearray made, after its items, and of
    each object a handle stood for (the order ``encode`` met them in)."""
    return _decode(data, 0, _Walk(refs, False, nodes, track))


def _take(walk: _Walk) -> None:
    try:
        walk.take()
    except NotPlain as exc:
        raise ValueError(str(exc)) from None


def _decode(data: Any, depth: int, walk: _Walk) -> Any:
    _take(walk)
    kind = type(data)
    if data is None or kind is bool or kind is str or kind is int or kind is float:
        return data
    if kind is not list or not data or type(data[0]) is not str:
        raise ValueError("malformed value")
    if depth >= MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} deep")
    try:
        value = _decode_tagged(data, depth, walk)
    except TypeError as exc:  # an unhashable item of a set or a dict key
        raise ValueError(f"malformed value: {exc}") from None
    if walk.track is not None and (type(value) in MUTABLE or data[0] == REF):
        walk.track(value)
    return value


def _decode_tagged(data: list[Any], depth: int, walk: _Walk) -> Any:
    tag, inner = data[0], lambda val: _decode(val, depth + 1, walk)
    maker = _MAKERS.get(tag)
    if maker is not None:
        return maker(inner(item) for item in data[1:])
    if tag in ("D", "OD", "CT"):
        if len(data) % 2 != 1:
            raise ValueError("malformed dict")
        items = [inner(item) for item in data[1:]]
        pairs = dict(zip(items[0::2], items[1::2], strict=True))
        if tag == "D":
            return pairs
        return collections.OrderedDict(pairs) if tag == "OD" else collections.Counter(pairs)
    if tag in ("DD", "DQ") and len(data) >= 2:
        return _decode_standard(data, inner)
    if tag == "Q" and len(data) == 3:
        return _decode_fraction(data, inner)
    if tag == "I" and len(data) == 2 and type(data[1]) is str and len(data[1]) < 1 << 20:
        return int(data[1], 16)
    if tag in ("B", "BA") and len(data) == 2 and type(data[1]) is str:
        raw = base64.b64decode(data[1], validate=True)
        return raw if tag == "B" else bytearray(raw)
    if tag == "C" and len(data) == 3 and all(type(x) in (int, float) for x in data[1:]):
        return complex(data[1], data[2])
    if tag == REF and walk.refs is not None and len(data) == 2 and type(data[1]) is int:
        return walk.refs(data[1])
    if tag == node_graphs.TAG and walk.nodes is not None:
        return node_graphs.decode(data, inner, lambda: _take(walk), walk.nodes)
    raise ValueError(f"malformed value (tag {tag[:10]!r})")


def _decode_standard(data: list[Any], decode: Any) -> Any:
    tag, setting, rest = data[0], data[1], data[2:]
    if tag == "DD":
        if len(rest) % 2 or not (
            setting is None or (type(setting) is str and setting in _FACTORIES)
        ):
            raise ValueError("malformed defaultdict")
        items = [decode(item) for item in rest]
        factory = None if setting is None else _FACTORIES[setting]
        return collections.defaultdict(factory, zip(items[0::2], items[1::2], strict=True))
    # A maxlen is an int, not a count of values (the items are counted): any a deque can have.
    if not (setting is None or (type(setting) is int and 0 <= setting <= sys.maxsize)):
        raise ValueError("malformed deque")
    return collections.deque((decode(item) for item in rest), setting)


def _decode_fraction(data: list[Any], decode: Any) -> Any:
    import fractions

    numerator, denominator = decode(data[1]), decode(data[2])
    parts = (numerator, denominator)
    if any(type(part) is not int or part.bit_length() > _FRACTION_BITS for part in parts):
        raise ValueError("malformed Fraction")
    if denominator <= 0:
        raise ValueError("malformed Fraction")
    return fractions.Fraction(numerator, denominator)


def dumps(value: Any) -> bytes:
    """JSON bytes of a wire form (NaN and infinities included, as Python's json writes them)."""
    return json.dumps(value, separators=(",", ":")).encode()


def loads(data: bytes) -> Any:
    """The wire form from JSON bytes; ValueError if they are not JSON."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None


def to_json(value: Any, depth: int = 0) -> Any:
    """Plain data as strict JSON data, as ``json.dumps`` would write it (tuples as lists,
    scalar dict keys as strings); NotPlain for sets, bytes and complex numbers."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if depth >= MAX_DEPTH:
        raise NotPlain("result nested too deeply")
    if kind in (list, tuple, collections.deque):
        return [to_json(item, depth + 1) for item in value]
    if kind in _JSON_OBJECTS:
        return {_json_key(key): to_json(item, depth + 1) for key, item in value.items()}
    raise NotPlain(f"result is not JSON data: {kind.__name__}")


# As json.dumps writes them: the standard dicts are JSON objects (a function's expected value
# is JSON data, and MBPP's freq_count returns a Counter).
_JSON_OBJECTS = (dict, collections.OrderedDict, collections.Counter, collections.defaultdict)


def _json_key(key: Any) -> str:
    kind = type(key)
    if kind is str:
        return str(key)
    if kind in (int, float, bool) or key is None:
        return json.dumps(key)
    raise NotPlain(f"result has a key of type {kind.__name__}")
