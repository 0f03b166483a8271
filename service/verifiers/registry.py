"""Kinds, versions and their hashes. Pure: no web, queue or database imports.

A *kind* is code (``math``); a *version* is a kind plus a config, frozen. Its hash pins the
code version, the config and the versions of the libraries that decide verdicts, so a past
decision names exactly what made it. Which versions exist (built-in or published) is the
catalogue's business (``service.catalog``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from service.verifiers.base import VerifyFunction


@dataclass(frozen=True, slots=True)
class VerifierKind:
    """The code behind a family of verifiers."""

    kind: str
    verify: VerifyFunction
    code_version: str
    library_versions: Mapping[str, str]
    validate_config: Callable[[Mapping[str, Any]], dict[str, Any]]
    # Kinds that parse model output with heavy libraries run in a killable child process.
    isolated: bool = True
    # Celery queue: cheap CPU work and sandboxed code execution never share workers.
    queue: str = "cpu"
    # Seconds one item may need when the kind bounds itself (code: its tests' wall clocks);
    # None: the service's per-verification timeout bounds it.
    budget_s: Callable[[Any], float] | None = None


@dataclass(frozen=True, slots=True)
class VerifierVersionSpec:
    """An immutable, resolved verifier version."""

    name: str
    version: str
    kind: str
    config: Mapping[str, Any]
    code_version: str
    library_versions: Mapping[str, str]
    version_hash: str = field(default="")
    # Group-level shaping (service.verifiers.group_shaping); part of the version and its hash.
    group_shaping: Mapping[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """Plain data (JSON for Celery, a database row's columns): one entry per field."""
        payload: dict[str, Any] = {}
        for name in _SPEC_FIELDS:
            value = getattr(self, name)
            payload[name] = dict(value) if isinstance(value, Mapping) else value
        return payload

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> VerifierVersionSpec:
        """The inverse of ``to_payload``; extra keys (a row's id, timestamps) are ignored."""
        fields = {name: payload[name] for name in _SPEC_FIELDS if name in payload}
        return cls(**{**fields, "group_shaping": dict(fields.get("group_shaping") or {})})


_SPEC_FIELDS = tuple(VerifierVersionSpec.__dataclass_fields__)


# Made once: ``json.dumps`` with arguments builds an encoder per call, a third of its time on
# the small values hashed per item. The same text.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def version_hash(
    name: str,
    version: str,
    kind: str,
    code_version: str,
    config: Mapping[str, Any],
    library_versions: Mapping[str, str],
    group_shaping: Mapping[str, Any] | None = None,
) -> str:
    payload: dict[str, Any] = {
        "name": name,
        "version": version,
        "kind": kind,
        "code_version": code_version,
        "config": dict(config),
        "library_versions": dict(library_versions),
    }
    if group_shaping:  # absent when unused, so versions without shaping keep their hash
        payload["group_shaping"] = dict(group_shaping)
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


# kind → module exposing verify, CODE_VERSION, LIBRARY_VERSIONS (or library_versions()),
# validate_config
_KIND_MODULES: dict[str, str] = {
    "math": "service.verifiers.math",
    "ifeval": "service.verifiers.ifeval",
    "format": "service.verifiers.r1format",
    "composite": "service.verifiers.composite",
    "code": "service.verifiers.code",
    "grader": "service.verifiers.grader",
}


_registered_kinds: dict[str, VerifierKind] = {}


def register_kind(impl: VerifierKind) -> None:
    """Add a kind from code outside this package (plugins; verifiers made up by tests)."""
    _registered_kinds[impl.kind] = impl


@cache
def _module_kind(kind: str) -> VerifierKind:
    module_name = _KIND_MODULES.get(kind)
    if module_name is None:
        raise KeyError(kind)
    module = importlib.import_module(module_name)
    # A kind whose versions cost a subprocess (code) computes them when first asked.
    versions = getattr(module, "library_versions", None)
    return VerifierKind(
        kind=kind,
        verify=module.verify,
        code_version=module.CODE_VERSION,
        library_versions=dict(versions() if versions is not None else module.LIBRARY_VERSIONS),
        validate_config=module.validate_config,
        isolated=getattr(module, "ISOLATED", True),
        queue=getattr(module, "QUEUE", "cpu"),
        budget_s=getattr(module, "budget_s", None),
    )


def get_kind(kind: str) -> VerifierKind:
    """The implementation of a kind; KeyError if there is none."""
    registered = _registered_kinds.get(kind)
    return registered if registered is not None else _module_kind(kind)


def known_kinds() -> list[str]:
    return sorted(_KIND_MODULES)


def build_version(
    name: str,
    version: str,
    kind: str,
    config: Mapping[str, Any] | None = None,
    group_shaping: Mapping[str, Any] | None = None,
) -> VerifierVersionSpec:
    """Freeze a kind and a config into a version; bad config raises InvalidGroundTruth."""
    from service.verifiers.group_shaping import validate_group_shaping

    impl = get_kind(kind)
    full_config = impl.validate_config(dict(config or {}))
    shaping = validate_group_shaping(group_shaping)
    return VerifierVersionSpec(
        name=name,
        version=version,
        kind=kind,
        config=full_config,
        code_version=impl.code_version,
        library_versions=impl.library_versions,
        version_hash=version_hash(
            name, version, kind, impl.code_version, full_config, impl.library_versions, shaping
        ),
        group_shaping=shaping,
    )
