"""What makes a server's interpreter warm for ``python3 -I -S`` programs (both backends): the
modules solutions commonly import, loaded once and inherited by every fork, the
``exit()``/``quit()`` builtins that ``-S`` would otherwise leave out, and the host's warm code
(``service/sandbox/warm_code.py``: a verifier's in-sandbox harness), imported before the run
template is forked, so that no run loads it again.

Warm code is the host's code, never a job's: it comes with the server's config, before any
request, and is imported by the server before it forks the template (which must never hold a
job's data; code is not).
"""

from __future__ import annotations

import base64
import marshal
import sys
import zlib
from importlib._bootstrap_external import MAGIC_NUMBER  # (importlib.util: 200 KB more a run)
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # not at run time: importlib.abc pulls pathlib and more into every run
    from importlib.abc import Loader

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


def import_warm_code(bundles: dict[str, Any]) -> dict[str, str]:
    """Import each bundle of the host's warm code (``{"magic": hex, "digest": the host's name
    for this code, "code": base64 of a zlib marshal of {module name: code}}``); what became of
    each, by bundle name: ``imported`` or why not. A bundle compiled for another Python is left
    out: its runs load their own copy."""
    outcome = {}
    for name, bundle in bundles.items():
        if bytes.fromhex(bundle["magic"]) != MAGIC_NUMBER:
            outcome[name] = "skipped: bytecode of another Python"
            continue
        try:
            codes = marshal.loads(zlib.decompress(base64.b64decode(bundle["code"])))
            _import_codes(codes, str(bundle["digest"]))
        except Exception as exc:  # the runs load their own copy, as without warm code
            outcome[name] = f"failed: {type(exc).__name__}: {exc}"[:500]
            continue
        outcome[name] = "imported"
    return outcome


class _WarmCode:
    """A finder and loader of one bundle's modules, only while they are imported here."""

    def __init__(self, codes: dict[str, Any]) -> None:
        self.codes = codes

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name not in self.codes:
            return None
        # A package is a name without a dot whose dotted names are in the bundle too.
        package = any(other.startswith(name + ".") for other in self.codes)
        loader = cast("Loader", self)
        spec = ModuleSpec(name, loader, origin=self.codes[name].co_filename, is_package=package)
        spec.has_location = True  # __file__ is the code's file name, as the runs' loader sets
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: Any) -> None:
        exec(self.codes[module.__name__], module.__dict__)


def _import_codes(codes: dict[str, Any], digest: str) -> None:
    finder = _WarmCode(codes)
    sys.meta_path.insert(0, finder)
    try:
        for name in sorted(codes):
            __import__(name)
    except BaseException:
        for name in codes:  # nothing half-imported stays
            sys.modules.pop(name, None)
        raise
    finally:
        sys.meta_path.remove(finder)
    # Which bundle a package came from: a run's loader uses it only if it is its own.
    for name in codes:
        if "." not in name:
            sys.modules[name].__bundle__ = digest  # type: ignore[attr-defined]


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
