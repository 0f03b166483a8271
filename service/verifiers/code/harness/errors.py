"""Exceptions the solution raises, across the process boundary, as test code would catch them.

Test code catches what the solution raises by class (``pytest.raises(ValueError)``,
``assertRaises(InsufficientFundsError)``, ``except BadInput``), so an exception must reach it as
an instance of a class that Python's ``except`` matches as it would have matched the solution's:
a builtin class as itself, and any other class (the solution's own ``class BadInput(ValueError)``,
the standard library's ``json.JSONDecodeError``) as a class made here, in the driver, with the
same name, module and bases: the solution's own classes among its bases made so in turn, and
its builtin bases as themselves. One class is made per class of the solution (by its handle),
so ``from solution import BadInput`` in test code binds the very class its exceptions are
raised as. Nothing of the solution's class runs in test code: a made class is ``type(name,
bases, {})`` with no method of the solution's, its instances hold the solution's text, arguments
and attributes as plain data, and the solution's metaclass (an ``__instancecheck__`` that says
True) stays in its process.

``describe`` runs in the solution process, ``Made`` in the driver, which trusts nothing it is
sent: a malformed description is a ValueError.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from collections.abc import Callable
from typing import Any

from . import plain

# The builtin exception classes, taken before any solution runs (it may rebind their names).
_BUILTIN = frozenset(
    value
    for value in vars(builtins).values()
    if isinstance(value, type) and issubclass(value, BaseException)
)
MESSAGE_CHARS = 2000
# What one exception's description holds at most: classes of the solution in its hierarchy,
# JSON characters of its arguments and of each attribute, attributes.
_CLASSES = 32
_ARGUMENT_CHARS = 4 * MESSAGE_CHARS
_ATTRIBUTES = 32
# Exceptions that iteration protocols take as "no more items": as themselves they would end
# the test's loop (``map``, ``filter``, ``iter(f, sentinel)``) early, and the asserts after it
# would never run.
ENDS_ITERATION = (StopIteration, StopAsyncIteration)
# Modules of the standard library whose exception classes test code may catch as its own copy's
# (``pytest.raises(json.JSONDecodeError)``): modules of computation, none of a test runner's
# (``unittest.SkipTest`` raised by the solution must not skip the test).
_STANDARD = frozenset({"json.decoder", "statistics", "decimal", "re"})
# The attribute a made exception keeps the solution's text in (its ``str()`` there).
_TEXT = "_rlvr_text"


class SolutionError(Exception):
    """An exception of the solution's that no class of the driver's can stand for (a
    StopIteration, an exception group), re-raised in test code as this, with its name."""


# -- the solution process's side ----------------------------------------------------------------


def describe(exc: BaseException, where: str, handle: Callable[[Any], int]) -> list[Any]:
    """``exc`` for the driver: ``[class, text, where, arguments, attributes]``. The class is a
    builtin's name or ``[handle, module, qualname, [bases]]`` (a class seen before in the same
    description as ``[handle]``); the arguments and attributes are plain data, or None where
    they are not or are too large to send."""
    try:
        message = str(exc)[:MESSAGE_CHARS]
    except BaseException:
        message = "<unprintable>"
    try:
        kind = describe_class(type(exc), handle)
    except BaseException:  # a class that will not say what it is: a plain Exception's
        kind = "Exception"
    try:
        args = exc.args
    except BaseException:
        args = None
    return [kind, message, where, _small(args), _attributes(exc)]


def describe_class(kind: type, handle: Callable[[Any], int], seen: set[int] | None = None) -> Any:
    """A class of exceptions for the driver to make its own of (see ``describe``)."""
    if kind in _BUILTIN:
        return kind.__name__
    seen = set() if seen is None else seen
    number = handle(kind)
    if number in seen:
        return [number]
    if len(seen) >= _CLASSES:  # a hierarchy this deep: its nearest builtin class stands for it
        return next(base for base in kind.__mro__ if base in _BUILTIN).__name__
    seen.add(number)
    bases = [base for base in kind.__bases__ if issubclass(base, BaseException)]
    names = [name if type(name) is str else "" for name in (kind.__module__, kind.__qualname__)]
    return [
        number,
        *(name[:200] for name in names),
        [describe_class(b, handle, seen) for b in bases],
    ]


def _small(value: Any) -> Any:
    try:
        wire = plain.encode(value)
    except Exception:
        return None
    return wire if len(plain.dumps(wire)) <= _ARGUMENT_CHARS else None


def _attributes(exc: BaseException) -> Any:
    """The attributes ``exc`` holds (``HttpError.code``, ``JSONDecodeError.pos``), those that
    are small plain data."""
    try:
        items = list(vars(exc).items())
    except Exception:
        return None
    found: list[Any] = []
    for key, value in items:
        if type(key) is str and not key.startswith("__") and len(found) < _ATTRIBUTES:
            wire = _small(value)
            if wire is not None and len(key) <= 200:
                found.append([key, wire])
    return found


# -- the driver's side ----------------------------------------------------------------------------


class Made:
    """The driver's classes for one run's exception classes of the solution, by handle."""

    def __init__(self) -> None:
        self.classes: dict[int, type[BaseException]] = {}
        self.handles: dict[type, int] = {}

    def kind(self, described: Any, depth: int = 0) -> type[BaseException]:
        """The class ``described`` (``describe_class``) stands for; ValueError if malformed."""
        if type(described) is str:
            found = getattr(builtins, described, None)
            if isinstance(found, type) and found in _BUILTIN:
                return found
            raise ValueError("not a builtin exception class")
        if type(described) is not list or not described or type(described[0]) is not int:
            raise ValueError("malformed exception class")
        known = self.classes.get(described[0])
        if known is not None:
            return known
        if len(described) != 4 or depth > _CLASSES or type(described[3]) is not list:
            raise ValueError("malformed exception class")
        number, module, qualname, bases = described
        if type(module) is not str or type(qualname) is not str:
            raise ValueError("malformed exception class")
        kinds = [self.kind(base, depth + 1) for base in bases[:_CLASSES]]
        made = _made(module[:200], qualname[:200], kinds)
        self.classes[number], self.handles[made] = made, number
        return made

    def error(self, described: Any) -> BaseException:
        """The exception ``describe`` described, as test code gets it; ValueError if
        malformed. (That it is no ``Exception``, a KeyboardInterrupt, is the caller's.)"""
        if type(described) is not list or len(described) != 5:
            raise ValueError("malformed exception")
        kind = self.kind(described[0])
        message = described[1][:MESSAGE_CHARS] if type(described[1]) is str else ""
        if issubclass(kind, ENDS_ITERATION):
            return SolutionError(f"{kind.__name__}: {message}")
        try:
            error = _instance(kind, message, _decoded(described[3]))
        except (TypeError, ValueError):  # a class that cannot be made without what did not cross
            return SolutionError(f"{kind.__module__}.{kind.__qualname__}: {message}")
        if kind not in _BUILTIN:
            setattr(error, _TEXT, message)
        for key, value in described[4] if type(described[4]) is list else ():
            _set(error, key, value)
        return error


def _made(module: str, qualname: str, kinds: list[type]) -> type[BaseException]:
    """A class of the driver's standing for the solution's: its name, its module, its bases
    (none of them ends iteration: see ENDS_ITERATION), and no method but ``__str__``."""
    bases = [Exception if issubclass(k, ENDS_ITERATION) else k for k in kinds]
    standard = _standard(module, qualname)
    if standard is not None:
        bases.insert(0, standard)
    unique = tuple(dict.fromkeys(bases)) or (Exception,)
    namespace = {"__module__": module, "__qualname__": qualname, "__str__": _told}
    name = qualname.rpartition(".")[2]
    for choice in (unique, unique[:1], (Exception,)):
        try:  # bases Python would not combine here (their layouts, their order): the first
            return type(name, choice, namespace)
        except TypeError:
            continue
    raise ValueError("no class can stand for it")


def _standard(module: str, qualname: str) -> type | None:
    """Test code's own copy of a standard library's exception class of that name, if the
    driver has the module already (test code imported it, or the harness did)."""
    if module not in _STANDARD:
        return None
    found = getattr(sys.modules.get(module), qualname, None)
    if not isinstance(found, type) or not issubclass(found, Exception):
        return None
    return found if (found.__module__, found.__qualname__) == (module, qualname) else None


def _told(self: BaseException) -> str:
    """``str()`` of an exception the solution raised: the text it had there, which its class's
    ``__str__`` made (one test code makes of the class itself: as its bases make it)."""
    text = self.__dict__.get(_TEXT)
    if type(text) is str:
        return text
    base = next(k for k in type(self).__mro__ if vars(k).get("__str__", _told) is not _told)
    return str(vars(base)["__str__"](self))


def _decoded(wire: Any) -> tuple[Any, ...] | None:
    try:
        value = plain.decode(wire) if wire is not None else None
    except ValueError:
        return None
    return tuple(value) if isinstance(value, list | tuple) else None


def _instance(
    kind: type[BaseException], message: str, args: tuple[Any, ...] | None
) -> BaseException:
    """An instance of ``kind`` with the solution's arguments (a KeyError's key: its text is
    then the key's repr once, as in Python), else its text as the one argument, else none
    (a class whose ``__init__`` wants what did not cross, as ``JSONDecodeError``'s)."""
    for attempt in (args, (message,)):
        if attempt is not None:
            try:
                made = kind(*attempt)
            except Exception:
                continue
            if isinstance(made, kind):
                return made
    error: BaseException = kind.__new__(kind)
    error.args = args if args is not None else (message,)
    return error


def _set(error: BaseException, key: Any, wire: Any) -> None:
    if type(key) is not str or key.startswith("__") or key == _TEXT:
        return
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        setattr(error, key, plain.decode(wire))
