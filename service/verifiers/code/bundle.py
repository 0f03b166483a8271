"""What the harness ships to ``/work``: its package, and ``driver.py``, which starts it
(``harness/boot.py``).

The package travels as one zlib-compressed marshal of its modules' code, compiled here, and
``driver.py`` imports from it through a finder of its own: no run compiles the harness or
walks the import system's path hooks for it. A sandbox whose Python reads another bytecode
(its magic number differs) says so before anything runs, and from then on that backend gets
the sources, in a zip (``BytecodeMismatch``). Every byte is shipped with every session: small
enough to cross the local sandbox's pipe in one piece.
"""

from __future__ import annotations

import importlib.util
import io
import marshal
import zipfile
import zlib
from functools import cache
from pathlib import Path

from service.sandbox.base import SandboxError

from .languages import PYTHON_RUN

HARNESS_DIR = Path(__file__).parent / "harness"
PACKAGE = "rlvr_harness"
CODE_NAME = "harness.bin"
ZIP_NAME = "harness.zip"
DRIVER_NAME = "driver.py"
DRIVER_ARGV = (*PYTHON_RUN, f"/work/{DRIVER_NAME}")
BYTECODE_MISMATCH = "harness bytecode of another Python"
# Backends whose Python did not read our bytecode: they get sources.
_needs_sources: set[str] = set()

_FINDER = f"""
from importlib._bootstrap import ModuleSpec
from importlib._bootstrap_external import MAGIC_NUMBER
if MAGIC_NUMBER != {importlib.util.MAGIC_NUMBER!r}:
    import os
    os.write(3, b'{{"setup_error": "{BYTECODE_MISMATCH}"}}\\n')
    os._exit(2)
import marshal, zlib
with open('/work/{CODE_NAME}', 'rb') as handle:
    CODES = marshal.loads(zlib.decompress(handle.read()))
class Harness:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in CODES:
            return None
        origin = CODES[name].co_filename
        spec = ModuleSpec(name, Harness, origin=origin, is_package=name == {PACKAGE!r})
        spec.has_location = True
        return spec
    @staticmethod
    def create_module(spec):
        return None
    @staticmethod
    def exec_module(module):
        exec(CODES[module.__name__], module.__dict__)
sys.meta_path.insert(0, Harness)
"""


class BytecodeMismatch(SandboxError):
    """The sandbox's Python cannot read the harness's bytecode (the item is run again with
    the sources)."""


def _bootstrap(with_sources: bool) -> bytes:
    lines = [
        "import gc, sys",
        # Frozen: collections in this process and its forks never write to what the warm
        # interpreter had (each such write costs a copied page).
        "gc.freeze()",
    ]
    if with_sources:
        lines.append(f"sys.path.insert(0, '/work/{ZIP_NAME}')")
    else:
        lines.append(_FINDER.strip())
    lines += [f"from {PACKAGE}.boot import main", "main(sys.argv)"]
    return ("\n".join(lines) + "\n").encode()


# What a stdio run loads: it has no solution process, no proxies, no test code of its own.
_STDIO_MODULES = {
    "__init__",
    "boot",
    "frames",
    "osutil",
    "output",
    "process",
    "programs",
    "records",
}


def _modules(stdio: bool = False) -> list[tuple[str, bytes]]:
    found = []
    for path in sorted(HARNESS_DIR.glob("*.py")):
        if stdio and path.stem not in _STDIO_MODULES:
            continue
        name = PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"
        found.append((name, path.read_bytes()))
    return found


@cache
def _files(with_sources: bool, stdio: bool = False) -> dict[str, bytes]:
    if with_sources:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
            for name, source in _modules():
                path = name.replace(".", "/") + ("/__init__.py" if name == PACKAGE else ".py")
                archive.writestr(path, source)
        return {ZIP_NAME: buffer.getvalue(), DRIVER_NAME: _bootstrap(True)}
    codes = {}
    for name, source in _modules(stdio):
        path = name.replace(".", "/") + ("/__init__.py" if name == PACKAGE else ".py")
        # optimize=2: no docstrings; the bytes every session ships are the code alone.
        codes[name] = compile(source, f"/work/{path}", "exec", dont_inherit=True, optimize=2)
    return {CODE_NAME: zlib.compress(marshal.dumps(codes), 9), DRIVER_NAME: _bootstrap(False)}


def harness_files(backend: str, mode: str) -> dict[str, bytes]:
    """The files a Python session gets besides the program, for the named backend."""
    return _files(backend in _needs_sources, mode == "stdio")


def needs_sources(backend: str) -> None:
    """Ship sources to ``backend`` from now on (its Python read another bytecode)."""
    _needs_sources.add(backend)
