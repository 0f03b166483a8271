"""Every built-in version keeps its hash: a refactoring that changes one would silently change
what a logged decision names (and the verdict cache it hits)."""

from __future__ import annotations

import pytest

from service.catalog.builtin import BUILTIN_VERIFIERS, resolve_builtin
from service.verifiers.registry import get_kind, version_hash

# name@version → its hash on the pinned libraries of pyproject.toml.
PINNED = {
    "math@1.0.0": "c69becdff8fe0150120d5d6cb530a582e2e6e10854826a2f38fe58c5cac32cdf",
    "ifeval@1.0.0": "97879dc6df32a1296b540f8b6f60a0b9b5fc3f31a32e40df62097d833bb412d2",
    "format@1.0.0": "62a3ecc9c93caa9d78ecfcc2990c66e824d9ed5fc886f4e125158a5eed33c69f",
    "r1_math@1.0.0": "5396ed102b7d12ac3b1286b1504b1dca338fdf5d8a1fb13b89f9d034db414bfc",
}
# The code kind pins the machine's toolchain (or the runner image): its hash is pinned for
# one recorded toolchain, which covers its code version, config and the hashing itself.
CODE_TOOLCHAIN = {"sandbox": "local", "python": "3.11.2", "g++": "12.2.0"}
CODE_HASH = "3f6743aa5005853994d8499387306c2d454d403cab0691f9f6751e8dd50f7db6"


def test_every_builtin_version_is_pinned() -> None:
    listed = {f"{name}@{v}" for name, b in BUILTIN_VERIFIERS.items() for v in b.versions}
    assert listed == {*PINNED, "code@1.0.0"}


@pytest.mark.parametrize("reference", sorted(PINNED))
def test_builtin_version_hash_is_unchanged(reference: str) -> None:
    assert resolve_builtin(reference).version_hash == PINNED[reference]


def test_code_version_hash_is_unchanged_for_a_recorded_toolchain() -> None:
    builtin = BUILTIN_VERIFIERS["code"]
    kind = get_kind(builtin.kind)
    config = kind.validate_config(dict(builtin.versions["1.0.0"]))
    computed = version_hash(
        "code", "1.0.0", builtin.kind, kind.code_version, config, CODE_TOOLCHAIN, None
    )
    assert computed == CODE_HASH
