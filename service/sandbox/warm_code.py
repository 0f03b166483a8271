"""Code the sandbox servers import before they fork their run template: a verifier's harness
that every run of its kind would otherwise load again (about 5 ms a run).

A verifier offers its code here (``offer``); each server started afterwards imports it, as
the host's code and before any request (``server/warm.py``), so every run inherits it. A
server started before an offer (verifiers are imported when first used, often after the
worker's sandbox is up) is replaced once: the local server at the next session, a docker
container when its session ends. A run's own loader uses the warm copy only when its digest
is the one the run was built with, and loads its own copy otherwise (a server not replaced
yet, bytecode of another Python): warm code changes what a run costs, never what it does.

A session may name files that only a run without the warm copy reads (``warm_files``: file
name → digest). The backend leaves such a file out when its server imported warm code of that
digest (``held_digests``: what the server reported imported, of what its config offered), so
the run takes the warm copy, as it would have anyway, and nothing crosses into /work unused.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class WarmCode:
    """Modules as one zlib-compressed marshal of ``{module name: code object}``, compiled for
    the Python of ``magic`` (``importlib.util.MAGIC_NUMBER``), named by ``digest``."""

    magic: bytes
    digest: str
    code: bytes


_offers: dict[str, Callable[[], WarmCode]] = {}
_generation = 0


def offer(name: str, build: Callable[[], WarmCode]) -> None:
    """Have servers started from now on import ``build()`` (called when a server starts)."""
    global _generation
    _offers[name] = build
    _generation += 1


def generation() -> int:
    """How many offers were made: a server started at an older generation lacks some."""
    return _generation


def boot_config() -> dict[str, dict[str, str]]:
    """What a server's config carries of the warm code (``server/warm.import_warm_code``)."""
    config = {}
    for name, build in _offers.items():
        warm = build()
        config[name] = {
            "magic": warm.magic.hex(),
            "digest": warm.digest,
            "code": base64.b64encode(warm.code).decode(),
        }
    return config


def held_digests(
    offered: Mapping[str, Mapping[str, str]], ready: Mapping[str, Any]
) -> frozenset[str]:
    """The digests of the warm code a server holds: of what its config offered (``offered``,
    a ``boot_config()``), what its ready reply says it imported."""
    outcome = ready.get("warm_code") or {}
    return frozenset(
        str(bundle["digest"]) for name, bundle in offered.items() if outcome.get(name) == "imported"
    )


def session_files(
    files: Mapping[str, bytes], warm_files: Mapping[str, str] | None, held: frozenset[str]
) -> Mapping[str, bytes]:
    """``files`` without those that ``warm_files`` names for a digest in ``held``."""
    if not warm_files:
        return files
    return {name: data for name, data in files.items() if warm_files.get(name) not in held}
