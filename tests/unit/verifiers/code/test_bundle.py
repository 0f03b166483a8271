"""What the harness ships: every module of the package, as bytecode or as sources."""

from __future__ import annotations

import hashlib
import io
import marshal
import types
import zipfile
import zlib

from service.sandbox import warm_code
from service.verifiers.code import bundle

MODULES = {p.stem for p in bundle.HARNESS_DIR.glob("*.py")}


def test_the_bytecode_holds_every_module_of_the_harness() -> None:
    files = bundle._files(False)
    codes = marshal.loads(zlib.decompress(files[bundle.CODE_NAME]))
    names = {name.rpartition(".")[2] if name != bundle.PACKAGE else "__init__" for name in codes}
    assert names == MODULES
    assert all(isinstance(code, types.CodeType) for code in codes.values())
    assert b"MAGIC_NUMBER" in files[bundle.DRIVER_NAME]


def test_the_sources_hold_every_module_of_the_harness() -> None:
    files = bundle._files(True)
    with zipfile.ZipFile(io.BytesIO(files[bundle.ZIP_NAME])) as archive:
        names = {name.rpartition("/")[2].removesuffix(".py") for name in archive.namelist()}
    assert names == MODULES
    assert b"MAGIC_NUMBER" not in files[bundle.DRIVER_NAME]


def test_a_session_ships_little() -> None:
    # What a session to a server without the warm harness ships (a warm server gets none of
    # it): the compressed bytecode stays small, a guard against the harness growing unnoticed.
    # (56 KiB until code 1.6.0 added the list and tree nodes' module, ~3 KiB; 60 KiB until code
    # 1.7.0 rebuilt the standard library's containers and a returned iterator's items in the
    # receiver, ~4 KiB; 64 KiB until code 1.7.1 ran the unittest classes and the pytest
    # functions a test defines, with a stand-in for pytest, ~16 KiB, told the driver's own
    # MemoryError from the solution's and a module the solution gave from the test's
    # arguments, ~1 KiB, and read a returned iterator for the host as a lifted assert's
    # operand, ~1.5 KiB; 84 KiB until code 1.7.1 raised the solution's exceptions in test code
    # as classes of the driver's with their names and bases, and ended a test whose end test
    # code caught, ~3 KiB; 88 KiB until code 1.7.1 sent back what a call did to the test's
    # lists, dicts, sets and bytearrays, ~4 KiB, with the pytest stand-in's runner, ~5 KiB.)
    assert sum(len(data) for data in bundle._files(False).values()) < 100 << 10


def test_the_whole_harness_is_offered_as_warm_code_under_its_digest() -> None:
    warm = bundle.warm_harness()
    codes = marshal.loads(zlib.decompress(warm.code))
    names = {name.rpartition(".")[2] if name != bundle.PACKAGE else "__init__" for name in codes}
    assert names == MODULES
    assert warm.digest == hashlib.sha256(warm.code).hexdigest()
    assert warm_code._offers["code-harness"] is bundle.warm_harness


def test_the_starter_takes_the_warm_copy_only_under_its_own_digest() -> None:
    for with_sources in (False, True):
        starter = bundle._files(with_sources)[bundle.DRIVER_NAME].decode()
        assert f"'__bundle__', None) != {bundle.warm_harness().digest!r}:" in starter
    # The magic number is checked before the warm copy is considered, not only in the loader.
    starter = bundle._files(False)[bundle.DRIVER_NAME].decode()
    assert starter.index("MAGIC_NUMBER !=") < starter.index("__bundle__")
