"""The solution process (function and assert modes): the solution loaded once, answering
the driver's calls. Everything here runs next to the solution's code, which can change any of
it: the driver takes nothing from this process but plain data, its exit status and the CPU
time the kernel reports.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import types
from collections.abc import ItemsView, Iterator, KeysView, ValuesView
from typing import Any, NoReturn

from . import errors, frames, mutations, nodes, osutil, plain, process


def serve_solution(stdout_fd: int, stderr_fd: int, requests_fd: int, replies_fd: int) -> NoReturn:
    """The solution process: load the solution once, then answer the driver's calls until it
    closes the channel. Stdin is empty, as it was for a function-mode run."""
    null = os.open("/dev/null", os.O_RDONLY)
    process.install_fds([null, stdout_fd, stderr_fd, requests_fd, replies_fd])
    process.become_program()
    # Nothing of the solution runs before the driver has made itself undumpable.
    try:
        go = frames.receive(3)
    except frames.Closed:
        os._exit(0)
    if go != {"op": "go"}:
        os._exit(0)
    # The driver charges each test the CPU time of this process: work done in a child would
    # escape the time limit, so no child may be started. (Where the kernel has no seccomp
    # filters, the run's own filter is missing too, and the sandbox's probe says so.)
    with contextlib.suppress(OSError):
        osutil.forbid_new_processes()
    server = _Server(3, 4)
    try:
        server.load()
    except SystemExit as exc:
        process.finish(process.exit_status(exc))
    except BaseException:
        sys.excepthook(*sys.exc_info())
        process.finish(1)
    server.serve()


class _Server:
    def __init__(self, requests_fd: int, replies_fd: int) -> None:
        self.requests_fd, self.replies_fd = requests_fd, replies_fd
        self.namespace: dict[str, Any] = {}
        self.handles: dict[int, Any] = {}
        self.by_id: dict[int, int] = {}
        self.next_handle = 1
        # The current call's mutable arguments, whose changes go back with its reply.
        self.received: mutations.Received | None = None

    def load(self) -> None:
        module = types.ModuleType("solution")
        module.__file__ = process.SOLUTION_PATH
        # The solution's builtins are a copy: what it patches there (``builtins.type = ...``)
        # is its own, and this server's encoding of its answers keeps working.
        import builtins

        own = types.ModuleType("builtins")
        own.__dict__.update(builtins.__dict__)
        process.add_typing_names(own.__dict__)
        nodes.add_standard_classes(own.__dict__)
        module.__builtins__ = own  # type: ignore[attr-defined]
        sys.modules["builtins"] = own
        sys.modules["solution"] = module
        self.namespace = module.__dict__
        process.own_objects_from_here()
        with open(process.SOLUTION_PATH, "rb") as handle:
            source = handle.read()
        exec(compile(source, process.SOLUTION_PATH, "exec"), self.namespace)
        process.flush()
        frames.send(self.replies_fd, {"ready": True})

    def serve(self) -> NoReturn:
        while True:
            try:
                message = frames.receive(self.requests_fd)
            except frames.Closed:
                process.flush()
                os._exit(0)
            try:
                reply = self.answer(message)
            except SystemExit as exc:
                process.finish(process.exit_status(exc))
            except BaseException as exc:  # the solution raised: the test code gets it back
                reply = {"x": self.exception(exc)}
            if self.received is not None:  # what it did to the arguments, returned or raised
                reply.update(self.received.changes())
                self.received = None
            process.flush()
            try:
                frames.send(self.replies_fd, reply)
            except OSError:
                os._exit(0)

    # -- the operations ---------------------------------------------------------------------

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        for handle in message.get("free", ()):
            obj = self.handles.pop(handle, None)
            self.by_id.pop(id(obj), None)
        op = message["op"]
        if op == "lookup":
            names = {}
            for name in message["names"]:
                if name in self.namespace:
                    names[name] = self.describe(self.namespace[name])
            return {"names": names}
        if op == "entry":
            args = self.arguments(message)
            return self.result(self.entry(message["name"])(*args))
        target = self.handles[message["h"]]
        if op == "call":
            received = mutations.Received()
            args = self.arguments(message, received.track)
            keywords = {k: self.value(v, received.track) for k, v in message.get("kw", ())}
            received.seal()
            self.received = received
            return self.describe(target(*args, **keywords))
        if op == "getattr":
            return self.describe(getattr(target, message["name"]))
        if op == "setattr":
            setattr(target, message["name"], self.value(message["value"]))
            return {"v": None}
        if op == "dunder":
            return self.dunder(target, message["name"], self.arguments(message))
        raise ValueError(f"unknown operation {op!r}")

    def entry(self, name: str) -> Any:
        # As the function-mode driver always did: a top-level function or a Solution method.
        found = self.namespace.get(name)
        if callable(found):
            return found
        holder = self.namespace.get("Solution")
        if isinstance(holder, type) and callable(getattr(holder, name, None)):
            return getattr(holder(), name)
        raise NameError(f"the solution defines no function {name!r}")

    def dunder(self, target: Any, name: str, args: list[Any]) -> dict[str, Any]:
        if name == "__iter__":
            return self.result(list(target))
        if name == "__next__":
            return self.next_items(target, args[0])
        if name == "__len__":
            return self.result(len(target))
        if name == "__getitem__":
            return self.describe(target[args[0]])
        if name == "__setitem__":
            target[args[0]] = args[1]
            return {"v": None}
        if name == "__delitem__":
            del target[args[0]]
            return {"v": None}
        if name == "__str__":
            return self.result(str(target))
        if name == "__contains__":
            return self.contains(target, args[0])
        if name == "__reversed__":
            return self.result(list(reversed(target)))
        raise ValueError(f"unsupported operation {name!r}")

    def contains(self, target: Any, item: Any) -> dict[str, Any]:
        """``item in target`` as Python decides it: by the class's ``__contains__`` (its result
        as data, whose truth the driver takes), or, where the class has none, by the items it
        iterates (``__iter__``, else ``__getitem__``), which the driver compares itself."""
        kind = type(target)
        if any("__contains__" in vars(klass) for klass in kind.__mro__):
            return self.result(kind.__contains__(target, item))
        return {**self.result(list(target)), "items": True}

    def next_items(self, iterator: Any, count: int) -> dict[str, Any]:
        """Up to ``count`` items; where the iterator raised after some, those items and what
        it raised, which the driver raises once test code has consumed them, as in Python."""
        items: list[Any] = []
        try:
            items.extend(itertools.islice(iterator, count))
        except Exception as exc:
            return {**self.result(items), "raised": self.exception(exc)}
        return self.result(items)

    def exception(self, exc: BaseException) -> list[Any]:
        """What the solution raised, for the driver to raise in test code (``errors``)."""
        where = ""
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == process.SOLUTION_PATH:
                where = f"solution.py line {tb.tb_lineno}, in {tb.tb_frame.f_code.co_name}"
            tb = tb.tb_next
        return errors.describe(exc, where, self.handle)

    # -- values ---------------------------------------------------------------------------

    def value(self, data: Any, track: Any = None) -> Any:
        return plain.decode(data, self.handles.__getitem__, self.node_class, track)

    def node_class(self, kind: str) -> type:
        # The solution's own ListNode when it defines one, else LeetCode's.
        return nodes.class_in(self.namespace, kind)

    def arguments(self, message: dict[str, Any], track: Any = None) -> list[Any]:
        return [self.value(item, track) for item in message.get("args", ())]

    def handle(self, obj: Any) -> int:
        known = self.by_id.get(id(obj))
        if known is not None and self.handles.get(known) is obj:
            return known
        handle = self.next_handle
        self.next_handle += 1
        self.handles[handle] = obj
        self.by_id[id(obj)] = handle
        return handle

    def result(self, value: Any) -> dict[str, Any]:
        try:
            return {"v": plain.encode(value, answer=True, nodes=True)}
        except plain.NotPlain as exc:
            return {"np": str(exc)}

    def describe(self, value: Any) -> dict[str, Any]:
        """Plain data as itself; anything else as a handle of its kind."""
        try:
            return {"v": plain.encode(value, answer=True, nodes=True)}
        except plain.NotPlain as exc:
            reason = str(exc)
        if isinstance(value, types.ModuleType):
            return {"m": str(getattr(value, "__name__", ""))}
        if isinstance(value, type):
            if issubclass(value, BaseException):  # made a class of the driver's (``errors``)
                with contextlib.suppress(Exception):  # else a class like any other
                    return {
                        "c": self.handle(value),
                        "exc": errors.describe_class(value, self.handle),
                    }
            return {"c": self.handle(value), "np": reason}
        if isinstance(value, _ROUTINES):
            return {"f": self.handle(value), "np": reason}
        if isinstance(value, _ITERABLES):
            kind = _REITERABLE.get(type(value))
            if kind is not None:
                handle = self.handle(value)
                return {"o": handle, "np": reason, "it": True, "once": False, "kind": kind}
            # Anything else is read once, through one iterator taken here: a class of the
            # solution (a KeysView subclass, an iterator whose __iter__ starts afresh) could
            # yield other items to each len(), in and [i] of the test.
            try:
                items = iter(value)
            except Exception:
                return {"o": self.handle(value), "np": reason}
            return {"o": self.handle(items), "np": reason, "it": True, "once": True}
        # An instance of a class with __call__ is an object with methods and state that can be
        # called too (test code makes ``Multiplier(3)`` and calls it), not a bare function.
        return {
            "o": self.handle(value),
            "np": reason,
            **({"call": True} if callable(value) else {}),
        }


# Functions and methods, of Python or C: callable and nothing else (an instance of a class with
# ``__call__`` is an object that can be called, described as an object).
_ROUTINES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
# Results test code may iterate (``list(f(x))``, ``set(f(x))``, ``sorted(f(x))``), as it could a
# generator or ``map`` in Python: they stay here, and only their items cross, as plain data.
_ITERABLES = (Iterator, range, KeysView, ValuesView, ItemsView)
# Iterated afresh each time, with a length and (range) items by index: exactly these builtin
# types, whose items no code of the solution decides; the host rebuilds one that is an operand
# of a lifted assert from its items as this kind.
_REITERABLE = {
    range: "range",
    type({}.keys()): "keys",
    type({}.values()): "values",
    type({}.items()): "items",
}
