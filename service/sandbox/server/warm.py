"""What makes a server's interpreter warm for ``python3 -I -S`` programs (both backends): the
modules solutions commonly import, loaded once and inherited by every fork, and the
``exit()``/``quit()`` builtins that ``-S`` would otherwise leave out."""

from __future__ import annotations

# Modules a Python solution commonly imports: loaded once here, inherited by every fork.
WARM_MODULES = [
    "abc",
    "array",
    "bisect",
    "collections",
    "contextlib",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "heapq",
    "io",
    "itertools",
    "json",
    "math",
    "operator",
    "queue",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "threading",
    "time",
    "types",
    "typing",
    "unicodedata",
]


def import_common_modules() -> None:
    """Load ``WARM_MODULES`` and install the quitters."""
    for name in WARM_MODULES:
        __import__(name)
    _install_quitters()


def vm_bytes() -> int:
    """This process's address space: a forked Python run's RLIMIT_AS is on top of it."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _install_quitters() -> None:
    # `-S` keeps site-packages out, but solutions routinely end with exit() or quit(), which
    # only the site module defines: provide those two as site would.
    import _sitebuiltins
    import builtins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
