"""The shell the backend runs inside its containers (``scripts/*.sh``, package data), each as
one ``sh -c`` text: read from the package once, when first used."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def _read(name: str) -> str:
    return resources.files("service.sandbox.docker").joinpath("scripts", f"{name}.sh").read_text()


@cache
def as_program(name: str) -> str:
    """``kill``: run as the program's uid, after lib.sh's functions."""
    return _read("lib") + "\n" + _read(name)
