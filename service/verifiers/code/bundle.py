"""What the harness ships to ``/work``: its package, and ``driver.py``, which starts it
(``harness/boot.py``).

The package travels as one zlib-compressed marshal of its modules' code, compiled here, and
``driver.py`` imports from it through a finder of its own: no run compiles the harness or
walks the import system's path hooks for it. A sandbox whose Python reads another bytecode
(its magic number differs) says so before anything runs, and from then on that backend gets
the sources, in a zip (``BytecodeMismatch``). All of it is small enough to cross the local
sandbox's pipe in one piece.

The whole package is also offered to the sandbox servers as warm code
(``service.sandbox.warm_code``): a server imports it once, before it forks its run template,
and ``driver.py`` takes that copy when it is this very code (the same digest), instead of
loading the shipped one. The shipped copy stays the fallback (a server started before the
offer, another Python), so the harness's behaviour never depends on the server; a session
whose server reported this very code imported leaves the bytecode out (``warm_files``), since
its runs never read it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import marshal
import zipfile
import zlib
from functools import cache
from pathlib import Path

from service.sandbox import warm_code
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

# Drops what is loaded of a harness that is not this run's (a warm copy of other code).
_PURGE = f"""
for name in [n for n in sys.modules if n == {PACKAGE!r} or n.startswith({PACKAGE + "."!r})]:
    del sys.modules[name]
"""
# Said before anything else: a warm copy is of the server's Python, the shipped one of ours.
_MAGIC_CHECK = f"""
from importlib._bootstrap_external import MAGIC_NUMBER
if MAGIC_NUMBER != {importlib.util.MAGIC_NUMBER!r}:
    import os
    os.write(3, b'{{"setup_error": "{BYTECODE_MISMATCH}"}}\\n')
    os._exit(2)
"""
_FINDER = f"""
from importlib._bootstrap import ModuleSpec
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
    loader = _PURGE + (f"sys.path.insert(0, '/work/{ZIP_NAME}')\n" if with_sources else _FINDER)
    lines = [
        "import gc, sys",
        # Frozen: collections in this process and its forks never write to what the warm
        # interpreter had (each such write costs a copied page).
        "gc.freeze()",
        *([] if with_sources else _MAGIC_CHECK.strip().splitlines()),
        # The server's warm copy of the harness if it is this code, else the shipped one
        # (the loader's text is compiled only then).
        f"if getattr(sys.modules.get({PACKAGE!r}), '__bundle__', None) != {_digest()!r}:",
        f"    exec({loader.strip()!r})",
        f"from {PACKAGE}.boot import main",
        "main(sys.argv)",
    ]
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
def _compiled(stdio: bool = False) -> bytes:
    codes = {}
    for name, source in _modules(stdio):
        path = name.replace(".", "/") + ("/__init__.py" if name == PACKAGE else ".py")
        # optimize=2: no docstrings; the bytes every session ships are the code alone.
        codes[name] = compile(source, f"/work/{path}", "exec", dont_inherit=True, optimize=2)
    return zlib.compress(marshal.dumps(codes), 9)


@cache
def _digest() -> str:
    """The whole harness's name as warm code: the digest of its compiled modules."""
    return hashlib.sha256(_compiled()).hexdigest()


@cache
def warm_harness() -> warm_code.WarmCode:
    """The whole harness, as the sandbox servers import it before they fork their template."""
    return warm_code.WarmCode(importlib.util.MAGIC_NUMBER, _digest(), _compiled())


@cache
def _files(with_sources: bool, stdio: bool = False) -> dict[str, bytes]:
    if with_sources:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
            for name, source in _modules():
                path = name.replace(".", "/") + ("/__init__.py" if name == PACKAGE else ".py")
                archive.writestr(path, source)
        return {ZIP_NAME: buffer.getvalue(), DRIVER_NAME: _bootstrap(True)}
    return {CODE_NAME: _compiled(stdio), DRIVER_NAME: _bootstrap(False)}


def harness_files(backend: str, mode: str) -> dict[str, bytes]:
    """The files a Python session gets besides the program, for the named backend."""
    return _files(backend in _needs_sources, mode == "stdio")


def warm_files(backend: str) -> dict[str, str]:
    """The shipped files a run never reads when its server holds the warm harness (by digest):
    the bytecode, which the starter loads only when the warm copy is not this code."""
    return {} if backend in _needs_sources else {CODE_NAME: _digest()}


def needs_sources(backend: str) -> None:
    """Ship sources to ``backend`` from now on (its Python read another bytecode)."""
    _needs_sources.add(backend)


# Servers started from now on import the harness before they fork their run template.
warm_code.offer("code-harness", warm_harness)
