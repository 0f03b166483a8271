"""Maps ``name@version`` to an implementation. Pure: no web, queue or database imports.

A *kind* is code (``math``); a *version* is a kind plus a config, frozen. Its hash pins the
code version, the config and the versions of the libraries that decide verdicts, so a past
decision names exactly what made it.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from service.verifiers.base import InvalidGroundTruth, VerifyFunction

DEFAULT_ALIAS = "stable"


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
        return {
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "config": dict(self.config),
            "code_version": self.code_version,
            "library_versions": dict(self.library_versions),
            "version_hash": self.version_hash,
            "group_shaping": dict(self.group_shaping),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> VerifierVersionSpec:
        return cls(
            name=payload["name"],
            version=payload["version"],
            kind=payload["kind"],
            config=dict(payload["config"]),
            code_version=payload["code_version"],
            library_versions=dict(payload["library_versions"]),
            version_hash=payload["version_hash"],
            group_shaping=dict(payload.get("group_shaping") or {}),
        )


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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


# kind → module exposing verify, CODE_VERSION, LIBRARY_VERSIONS, validate_config
_KIND_MODULES: dict[str, str] = {
    "math": "service.verifiers.math",
    "ifeval": "service.verifiers.ifeval",
    "format": "service.verifiers.r1format",
    "composite": "service.verifiers.composite",
    "code": "service.verifiers.code",
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
    return VerifierKind(
        kind=kind,
        verify=module.verify,
        code_version=module.CODE_VERSION,
        library_versions=dict(module.LIBRARY_VERSIONS),
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


@dataclass(frozen=True, slots=True)
class BuiltinVerifier:
    name: str
    kind: str
    versions: Mapping[str, Mapping[str, Any]]  # version → config
    aliases: Mapping[str, str]
    description: str


BUILTIN_VERIFIERS: dict[str, BuiltinVerifier] = {
    "math": BuiltinVerifier(
        name="math",
        kind="math",
        versions={"1.0.0": {}},
        aliases={"stable": "1.0.0", "latest": "1.0.0"},
        description="Final-answer extraction and exact symbolic equivalence for math problems.",
    ),
    "ifeval": BuiltinVerifier(
        name="ifeval",
        kind="ifeval",
        versions={"1.0.0": {}},
        aliases={"stable": "1.0.0", "latest": "1.0.0"},
        description="Verifiable instruction following: IFEval, IFEvalG and IFBench constraints.",
    ),
    "format": BuiltinVerifier(
        name="format",
        kind="format",
        versions={"1.0.0": {}},
        aliases={"stable": "1.0.0", "latest": "1.0.0"},
        description="R1-Zero structure: <think>...</think><answer>...</answer>, once each.",
    ),
    "r1_math": BuiltinVerifier(
        name="r1_math",
        kind="composite",
        versions={
            "1.0.0": {
                "components": [
                    {
                        "name": "accuracy",
                        "kind": "math",
                        "config": {},
                        "weight": 1.0,
                        "ground_truth": "self",
                        "input": "after_think",
                    },
                    {
                        "name": "format",
                        "kind": "format",
                        "config": {},
                        "weight": 0.1,
                        "ground_truth": None,
                    },
                ]
            }
        },
        aliases={"stable": "1.0.0", "latest": "1.0.0"},
        description="DeepSeek-R1-Zero reward: math accuracy + 0.1 x R1 format.",
    ),
    "code": BuiltinVerifier(
        name="code",
        kind="code",
        versions={"1.0.0": {"reward": "all"}},
        aliases={"stable": "1.0.0", "latest": "1.0.0"},
        description="Runs the completion's program against hidden tests in the sandbox.",
    ),
}


class UnknownVerifier(LookupError):
    """No verifier, version or alias of that name."""


def parse_reference(reference: str) -> tuple[str, str]:
    """Split ``name``, ``name@1.2.0`` or ``name@alias`` into (name, version-or-alias)."""
    name, sep, version = reference.strip().partition("@")
    if not name or (sep and not version):
        raise UnknownVerifier(f"malformed verifier reference {reference!r}")
    return name, version or DEFAULT_ALIAS


@cache
def resolve_builtin(reference: str) -> VerifierVersionSpec:
    """Resolve a reference against the built-in verifiers."""
    name, wanted = parse_reference(reference)
    builtin = BUILTIN_VERIFIERS.get(name)
    if builtin is None:
        raise UnknownVerifier(f"unknown verifier {name!r}")
    version = builtin.aliases.get(wanted, wanted)
    config = builtin.versions.get(version)
    if config is None:
        raise UnknownVerifier(f"verifier {name!r} has no version or alias {wanted!r}")
    try:
        return build_version(name, version, builtin.kind, config)
    except InvalidGroundTruth as exc:  # a built-in config is code: fail loudly
        raise RuntimeError(f"built-in verifier {name}@{version} has a bad config: {exc}") from exc
