"""Test code's view of the solution: proxies that marshal calls to the solution process.

Test code runs in the driver and never in the same interpreter as the solution, so nothing the
solution does to builtins, ``math``, ``operator``, ``json``, ``sys.modules`` or its own globals
reaches it. The solution's names are bound to proxies: calling one sends the name's handle and
plain-data arguments to the solution process and gets back plain data (``plain.py``) and only
plain data: any other result fails the test as a wrong answer, however the test handles it,
except an iterator (a generator, ``map``, ``filter``, ``range``, a dict view), which test code
may iterate as in Python, and only iterate: its items come as plain data, and its length,
membership and items by index are computed here from them. Calling a class of the solution
gives an opaque object proxy (``Solution().method(...)``); an object proxy cannot be compared,
hashed by value or tested for truth, so no object of the solution ever decides a comparison.
``x in obj`` and ``reversed(obj)`` are the class's own ``__contains__`` and ``__reversed__`` when
it defines them, as in Python (a BST's search is what a test checks), their results as plain
data; an iterator is only its items, wherever test code got it.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Any

from . import errors, mutations, nodes, plain


class SolutionGone(BaseException):
    """The solution process ended (or broke the protocol) during a test."""


class NotPlainResult(BaseException):
    """The solution handed test code something that is not plain data: a wrong answer.

    A BaseException, so that ``except Exception`` in test code cannot swallow it; the session
    remembers it anyway, so that a bare ``except:`` cannot either."""


class HarnessLimit(BaseException):
    """The test passes the solution something plain data cannot carry (a lambda, its own
    objects): the ground truth's limit, not the solution's failure."""


_BUILTIN_NAMES = frozenset(dir(builtins))
# Standard modules test code may take from a solution's imports (its own fresh copy): ones
# without side effects on import. Others already imported by the driver qualify as well.
_PURE_MODULES = frozenset(
    {
        "array",
        "bisect",
        "cmath",
        "collections",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "random",
        "re",
        "statistics",
        "string",
        "textwrap",
        "typing",
        "unicodedata",
    }
)


class Session:
    """One run's link to the solution process, and what the current test has seen."""

    def __init__(self, link: Any) -> None:
        self.link = link
        self.invalid: str | None = None
        self.free: list[int] = []
        self.expected: set[str] = set()
        self.described: dict[str, dict[str, Any] | None] = {}
        # Handles of the solution's module-level names: never released, shared by the tests.
        self.permanent: set[int] = set()
        # The current test's namespace: list and tree nodes from the solution are rebuilt
        # from its classes of those names.
        self.scope: dict[str, Any] = {}
        # The current test reached the solution: took a value of its data, or asked it anything
        # but a lookup (a call, an attribute). A whole test that passes without either judged
        # nothing: binding a function it never calls is not reaching it.
        self.touched = False
        # Modules the solution's names and attributes stood for in the current test.
        self.modules: list[Any] = []
        # The driver's classes standing for the solution's exception classes.
        self.made = errors.Made()
        # The lists, dicts, sets and bytearrays among the arguments being sent (``mutations``).
        self.sent: list[Any] = []

    def begin_test(self) -> None:
        self.invalid = None
        self.touched = False
        self.modules = []

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        sent, self.sent = self.sent, []
        if message.get("op") != "lookup":
            self.touched = True
        if self.free:
            message["free"], self.free = self.free, []
        reply = self.link.call(message)
        if type(reply) is not dict:
            self.fail("the solution process sent a malformed reply")
        if "mut" in reply or "mut_np" in reply:
            self.mutated(reply, sent)
        if "x" in reply:
            raise self.exception(reply["x"])
        return reply

    def mutated(self, reply: dict[str, Any], sent: list[Any]) -> None:
        """The test's own arguments changed in place as the solution changed them in the call
        (``mutations``), before its result or exception is seen, as in Python; a change plain
        data cannot carry is a wrong answer."""
        if "mut_np" in reply:
            why = reply["mut_np"]
            self.fail(why[:300] if type(why) is str else "a malformed change of an argument")
        try:
            mutations.apply(sent, reply["mut"], self.node_class)
        except ValueError as exc:
            self.fail(f"the solution process sent a malformed change of an argument: {exc}")

    def exception(self, described: Any) -> BaseException:
        """An exception the solution raised, as test code gets it (``errors``): caught as
        Python would catch the solution's. One that is no ``Exception`` (KeyboardInterrupt,
        GeneratorExit) would end a test run in Python, never answer one: here it fails the
        test as a wrong answer, which ``except Exception`` or a bare ``except`` cannot catch."""
        try:
            error = self.made.error(described)
        except ValueError:
            return SolutionGone("the solution process sent a malformed reply")
        if not isinstance(error, Exception):
            self.fail(f"the solution raised {type(error).__name__}, which ends a test run")
        where = described[2]
        if type(where) is str and where:
            error.add_note(f"(raised in the solution: {where[:200]})")
        setattr(error, _FROM_SOLUTION, True)
        return error

    def fail(self, reason: str) -> Any:
        self.invalid = self.invalid or reason
        raise NotPlainResult(reason)

    # -- values crossing from the solution --------------------------------------------------

    def data(self, reply: dict[str, Any]) -> Any:
        """The plain data of a call's reply; any other kind of result fails the test."""
        if "v" not in reply:
            self.fail(_not_plain(reply))
        try:
            return plain.decode(reply["v"], nodes=self.node_class)
        except ValueError as exc:
            return self.fail(f"malformed result: {exc}")

    def returned(self, reply: dict[str, Any], name: str) -> Any:
        """A call's result: plain data, or an iterator of the solution's that test code may
        iterate (``list(f(x))``), never compare or test for truth; anything else fails."""
        if "v" not in reply and reply.get("it") is True and type(reply.get("o")) is int:
            return self.instance(reply, f"iterator from {name}")
        return self.data(reply)

    def attribute(self, reply: dict[str, Any], name: str) -> Any:
        """An attribute or a module-level name: plain data, a function, a class, or (only for
        names and attributes, never a call's result) an opaque object."""
        if "v" in reply:
            return self.data(reply)
        if type(reply.get("c")) is int and "exc" in reply:
            return self.error_class(reply["exc"])
        for key, kind in (("f", FunctionProxy), ("c", ClassProxy)):
            if key in reply and type(reply[key]) is int:
                return kind(self, reply[key], name)
        if type(reply.get("o")) is int:
            return self.instance(reply, name)
        if "m" in reply and type(reply["m"]) is str:
            module = _module(reply["m"], name)
            self.modules.append(module)
            return module
        return self.fail(_not_plain(reply))

    def error_class(self, described: Any) -> type:
        """A class of exceptions of the solution's, as test code binds it: the class its
        exceptions are raised as in test code (``pytest.raises(InsufficientFundsError)``)."""
        try:
            return self.made.kind(described)
        except ValueError:
            return self.fail("the solution process sent a malformed reply")

    def instance(self, reply: dict[str, Any], name: str) -> Any:
        """An object of the solution (``reply["o"]`` its handle). One the solution process
        found to be an iterator (``__next__``, or a dict view) is its items wherever it comes
        from, as a returned one is: its own ``__contains__`` or ``__len__`` never answers."""
        if reply.get("it") is True:
            kind = reply.get("kind") if type(reply.get("kind")) is str else None
            return IteratorProxy(self, reply["o"], name, reply.get("once") is True, kind)
        if reply.get("call") is True:
            return CallableObjectProxy(self, reply["o"], name)
        return ObjectProxy(self, reply["o"], name)

    def node_class(self, kind: str) -> type:
        return nodes.class_in(self.scope, kind)

    def arguments(self, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        # Its lists, dicts, sets and bytearrays, as plain meets them: the solution process
        # decodes them in the same order, and says which it changed by their numbers.
        sent: list[Any] = []
        self.sent = sent
        try:
            return {
                "args": [
                    plain.encode(a, self._handle, nodes=True, track=sent.append) for a in args
                ],
                "kw": [
                    [k, plain.encode(v, self._handle, nodes=True, track=sent.append)]
                    for k, v in kwargs.items()
                ],
            }
        except plain.NotPlain as exc:
            raise HarnessLimit(f"the test passes the solution {exc}") from None

    def _handle(self, value: Any) -> int | None:
        """An argument's handle, if it is a proxy. A module the solution handed test code (its
        ``inf = math``, which the test passes on) is the solution's doing, a wrong answer: as
        the ground truth's limit it would make the item an error, a null the solution chose."""
        if value is _SKIP or any(value is module for module in self.modules):
            self.fail("a module the solution gave is not plain data")
        if isinstance(value, type):  # a class made for one of the solution's: that class
            return self.made.handles.get(value)
        return _handle_of(value)

    def released(self, handle: int) -> None:
        if handle not in self.permanent:
            self.free.append(handle)

    # -- names ------------------------------------------------------------------------------

    def expect(self, names: set[str]) -> None:
        """Names the run's tests will ask for: looked up together, with the first test's."""
        self.expected |= {n for n in names if _bindable(n)}

    def bind(self, names: set[str], namespaces: AbstractSet[str] = frozenset()) -> dict[str, Any]:
        """The solution's values for those of ``names`` it defines (builtins excluded: a
        solution's ``sorted`` or ``isinstance`` never replaces the test's). Functions and
        classes are the same handles in every test; data is a fresh copy for each.

        A name in ``namespaces`` (the test reads its attributes) that names a standard module
        is that module (a fresh copy) whatever the solution bound to it: ``math = Fake()``
        with an ``isclose`` that says True never stands in for ``math``."""
        standard = {n for n in names & namespaces if n in sys.stdlib_module_names}
        wanted = sorted(n for n in names if _bindable(n) and n not in standard)
        missing = [n for n in sorted(self.expected | set(wanted)) if n not in self.described]
        if missing:
            reply = self.request({"op": "lookup", "names": missing[:2000]})
            found = reply.get("names")
            if type(found) is not dict:
                return self.fail("the solution process sent a malformed reply")
            for name in missing:
                description = found.get(name)
                self.described[name] = description if type(description) is dict else None
                for key in ("f", "c", "o"):
                    if description is not None and type(description.get(key)) is int:
                        self.permanent.add(description[key])
        bound = {}
        for name in wanted:
            description = self.described.get(name)
            if description is not None:
                value = self.attribute(description, name)
                if value is not _SKIP:
                    bound[name] = value
                    # Its data is in the test now; a function or class is reached when used.
                    proxied = isinstance(value, _Proxy | types.ModuleType | type)
                    self.touched = self.touched or not proxied
        for name in standard:
            module = _module(name, name)
            if module is not _SKIP:
                bound[name] = module
        return bound

    def entry(self, name: str, args: list[Any]) -> Any:
        """Function mode: the solution's ``name`` (or ``Solution().name``) called with args."""
        message = {"op": "entry", "name": name, **self.arguments(args, {})}
        return self.data(self.request(message))


_SKIP = object()


def _bindable(name: str) -> bool:
    # ListNode and TreeNode in test code are the test's own or LeetCode's, never the
    # solution's: nodes cross as data and are rebuilt from them.
    return name not in _BUILTIN_NAMES and not name.startswith("__") and name not in nodes.LINKS


def _module(name: str, bound_as: str) -> Any:
    # The test gets its own, untouched copy of a standard module the solution imported (tests
    # often use the solution's ``import math``); anything else stays unbound.
    top = name.partition(".")[0]
    known = name in sys.modules or top in _PURE_MODULES
    if not known or top not in sys.stdlib_module_names or bound_as.startswith("_"):
        return _SKIP
    try:
        return importlib.import_module(name)
    except Exception:
        return _SKIP


def _not_plain(reply: dict[str, Any]) -> str:
    reason = reply.get("np")
    if type(reason) is str:
        return reason[:200]
    for key, what in (("f", "a function"), ("c", "a class"), ("o", "an object"), ("m", "a module")):
        if key in reply:
            return f"{what} is not plain data"
    return "the solution process sent a malformed reply"


# Marks an exception that stands for one the solution raised (``Session.exception``).
_FROM_SOLUTION = "_rlvr_from_solution"


def raised_in_solution(exc: BaseException) -> bool:
    """Whether ``exc`` stands for an exception the solution raised, not one of the driver's own:
    the driver's MemoryError is a fact (its memory ran out), the solution's only its word."""
    return getattr(exc, _FROM_SOLUTION, False) is True


def _handle_of(value: Any) -> int | None:
    if isinstance(value, _Proxy):
        handle: int = object.__getattribute__(value, "_handle")
        return handle
    return None


class _Proxy:
    """What every proxy shares: attributes forwarded, no value semantics of its own."""

    __slots__ = ("_handle", "_name", "_session")

    def __init__(self, session: Session, handle: int, name: str) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_name", name)

    def _ask(self, op: str, **fields: Any) -> dict[str, Any]:
        session: Session = object.__getattribute__(self, "_session")
        handle = object.__getattribute__(self, "_handle")
        return session.request({"op": op, "h": handle, **fields})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        session: Session = object.__getattribute__(self, "_session")
        return session.attribute(self._ask("getattr", name=name), name)

    def __setattr__(self, name: str, value: Any) -> None:
        session: Session = object.__getattribute__(self, "_session")
        arguments = session.arguments([value], {})
        self._ask("setattr", name=name, value=arguments["args"][0])

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            object.__getattribute__(self, "_session").released(self._handle)

    def __repr__(self) -> str:
        kind = type(self).__name__.replace("Proxy", "").lower()
        return f"<solution {kind} {object.__getattribute__(self, '_name')}>"

    def _refuse(self, *args: Any) -> Any:
        raise TypeError(f"{self!r} is not plain data: it cannot be compared or tested for truth")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = _refuse
    __hash__ = object.__hash__


class FunctionProxy(_Proxy):
    """A function or method of the solution: called, it returns plain data or fails."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        session: Session = object.__getattribute__(self, "_session")
        reply = self._ask("call", **session.arguments(args, kwargs))
        return session.returned(reply, object.__getattribute__(self, "_name"))


class ClassProxy(_Proxy):
    """A class of the solution: called, it makes an object that stays in the solution."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        session: Session = object.__getattribute__(self, "_session")
        reply = self._ask("call", **session.arguments(args, kwargs))
        if "o" in reply and type(reply["o"]) is int:
            return session.instance(reply, object.__getattribute__(self, "_name"))
        return session.data(reply)


class ObjectProxy(_Proxy):
    """An object of the solution: its methods and attributes, its length, items, membership,
    reversal and iteration (as plain data); never its equality or truth."""

    __slots__ = ()

    def _dunder(self, name: str, *args: Any) -> dict[str, Any]:
        session: Session = object.__getattribute__(self, "_session")
        return self._ask("dunder", name=name, **session.arguments(args, {}))

    def _data(self, name: str, *args: Any) -> Any:
        session: Session = object.__getattribute__(self, "_session")
        return session.data(self._dunder(name, *args))

    def __len__(self) -> int:
        length = self._data("__len__")
        if type(length) is not int:
            raise TypeError("the solution's __len__ did not return an int")
        return length

    def _items(self) -> list[Any]:
        items = self._data("__iter__")
        if type(items) is not list:
            raise TypeError("the solution's iteration did not give a list of items")
        return items

    def __iter__(self) -> Any:
        return iter(self._items())

    def __contains__(self, item: Any) -> bool:
        """As Python's ``in``: the class's own ``__contains__`` when it defines one (a BST's
        search is the answer under test), whose result must be plain data for its truth to
        be taken here; else a comparison made here, over the plain items the object iterates."""
        session: Session = object.__getattribute__(self, "_session")
        reply = self._dunder("__contains__", item)
        found = session.data(reply)
        if reply.get("items") is not True:
            return bool(found)
        if type(found) is not list:
            raise TypeError("the solution's iteration did not give a list of items")
        return item in found

    def __reversed__(self) -> Any:
        # The class's own __reversed__ when it defines one, else its length and items by index,
        # as Python's reversed(): run in the solution process, the items crossing as data.
        items = self._data("__reversed__")
        if type(items) is not list:
            raise TypeError("the solution's reversed() did not give a list of items")
        return iter(items)

    def __getitem__(self, key: Any) -> Any:
        session: Session = object.__getattribute__(self, "_session")
        return session.attribute(self._dunder("__getitem__", key), "item")

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dunder("__setitem__", key, value)

    def __delitem__(self, key: Any) -> None:
        self._dunder("__delitem__", key)

    def __str__(self) -> str:
        text = self._data("__str__")
        if type(text) is not str:
            raise TypeError("the solution's __str__ did not return a str")
        return text


class CallableObjectProxy(ObjectProxy):
    """An object of a class with ``__call__`` (a multiplier, a memoizer): an object that is
    called as a function of the solution is. Other objects are not callable, as in Python."""

    __slots__ = ()

    __call__ = FunctionProxy.__call__


class IteratorProxy(ObjectProxy):
    """An iterator a call of the solution returned: an answer made of the items it yields, and
    nothing else. Membership, length and items by index are those of its items, found here: a
    class of the solution with ``__next__`` could say it holds six items and yield none.

    A one-pass iterator (a generator, ``map``) is read in growing chunks into the items test
    code has not consumed yet, and behaves as in Python: ``x in it`` consumes it up to ``x``,
    ``next(it)`` takes one item, it has no length or index, and it may be endless. ``range``
    and dict views are iterated afresh each time."""

    __slots__ = ("_chunk", "_ended", "_kind", "_left", "_once", "_raised")

    def __init__(
        self, session: Session, handle: int, name: str, once: bool, kind: str | None = None
    ) -> None:
        super().__init__(session, handle, name)
        for slot, value in (("_once", once), ("_left", collections.deque()), ("_ended", False)):
            object.__setattr__(self, slot, value)
        object.__setattr__(self, "_chunk", 1)
        object.__setattr__(self, "_kind", "once" if once else kind)
        object.__setattr__(self, "_raised", None)

    def _pull(self, ahead: bool = True) -> bool:
        """More items of a one-pass iterator into those left; False at its end. Only a whole
        iteration reads ahead (in growing chunks): ``next()`` and ``in`` take one item at a
        time, so the solution's generator runs no further than Python would run it (its side
        effects and its exceptions come when they would: what it raised after a chunk's items
        once those are consumed)."""
        if object.__getattribute__(self, "_ended"):
            raised = object.__getattribute__(self, "_raised")
            if raised is not None:  # once the items before it are consumed
                object.__setattr__(self, "_raised", None)
                raise object.__getattribute__(self, "_session").exception(raised)
            return False
        chunk: int = object.__getattribute__(self, "_chunk") if ahead else 1
        reply = self._dunder("__next__", chunk)
        items = object.__getattribute__(self, "_session").data(reply)
        if type(items) is not list or len(items) > chunk:
            raise TypeError("the solution's iterator did not give a list of items")
        object.__getattribute__(self, "_left").extend(items)
        object.__setattr__(self, "_raised", reply.get("raised"))
        object.__setattr__(self, "_ended", len(items) < chunk or "raised" in reply)
        if ahead:
            object.__setattr__(self, "_chunk", min(chunk * 2, _MAX_CHUNK))
        return bool(items) or self._pull(ahead)

    def _once_left(self) -> collections.deque[Any] | None:
        if not object.__getattribute__(self, "_once"):
            return None
        left: collections.deque[Any] = object.__getattribute__(self, "_left")
        return left

    def __iter__(self) -> Any:
        left = self._once_left()
        return iter(self._items()) if left is None else self._consume(left)

    def _consume(self, left: collections.deque[Any], ahead: bool = True) -> Iterator[Any]:
        while left or self._pull(ahead):
            yield left.popleft()

    def __next__(self) -> Any:
        left = self._once_left()
        if left is None:
            raise TypeError(f"{self!r} is not an iterator")
        if not left and not self._pull(ahead=False):
            raise StopIteration
        return left.popleft()

    def __contains__(self, item: Any) -> bool:
        left = self._once_left()
        if left is None:
            return item in self._items()
        return any(value is item or value == item for value in self._consume(left, ahead=False))

    def __len__(self) -> int:
        if self._once_left() is not None:
            raise TypeError(f"{self!r} has no len()")
        return len(self._items())

    def __getitem__(self, key: Any) -> Any:
        if self._once_left() is not None:
            raise TypeError(f"{self!r} is not subscriptable")
        return self._items()[key]

    def __reversed__(self) -> Any:
        if self._once_left() is not None:
            raise TypeError(f"{self!r} is not reversible")
        return reversed(self._items())


# Items of a one-pass iterator asked for at once, at most: few calls for a long one, few items
# made ahead of need for an endless one.
_MAX_CHUNK = 4096
# Items of a one-pass iterator read for the host, at most (an endless one is "cut" there).
OPERAND_ITEMS = 100_000
_KINDS = frozenset({"once", "range", "keys", "values", "items"})


def operand(value: Any) -> Any:
    """A lifted assert's operand for the host: plain data as itself; an iterator a call of the
    solution returned as ``[plain.ITERATOR, kind, ending, message, items]``. The host cannot ask
    it for more, so a one-pass iterator is read here to its end, its exception ("raised", with
    its message) or OPERAND_ITEMS items ("cut"), and the host consumes those as Python would."""
    if not isinstance(value, IteratorProxy):
        return plain.encode(value, answer=True)
    kind = object.__getattribute__(value, "_kind")
    if kind not in _KINDS:
        raise plain.NotPlain("an iterator of no known kind is not plain data")
    if kind != "once":
        return [plain.ITERATOR, kind, "end", "", plain.encode(value._items(), answer=True)]
    left: collections.deque[Any] = object.__getattribute__(value, "_left")
    ending, message = "end", ""
    try:
        while len(left) < OPERAND_ITEMS and value._pull():
            pass
    except Exception as exc:
        if not raised_in_solution(exc):
            raise  # the driver's own (its memory), or the solution process's broken reply
        ending, message = "raised", f"{type(exc).__name__}: {exc}"[:200]
    if ending == "end" and not object.__getattribute__(value, "_ended"):
        ending = "cut"
    return [plain.ITERATOR, kind, ending, message, plain.encode(list(left), answer=True)]


class SolutionModule(types.ModuleType):
    """``import solution`` / ``from solution import f`` in test code: the same proxies."""

    session: Session | None = None

    def __getattr__(self, name: str) -> Any:
        session = SolutionModule.session
        if session is None or name.startswith("__"):
            raise AttributeError(name)
        bound = session.bind({name})
        if name not in bound:
            raise AttributeError(f"the solution defines no {name!r}")
        return bound[name]
