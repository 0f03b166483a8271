"""What a key check costs an anonymous caller: a token that is not a generated key is compared
with the configured bootstrap key in memory, never run through its scrypt hash (~40 ms of CPU
per request, for any garbage token). The bootstrap key itself still works."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import service.auth.dependencies as auth_dependencies
from service.auth.dependencies import Authenticator
from service.auth.keys import key_matches
from service.db.migrate import upgrade
from service.errors import Unauthorized
from service.settings import Settings

BOOTSTRAP = "operator-key-0123456789abcdefABCDEF"


@pytest.fixture
def scrypt_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every stored hash a presented key is checked against (the real check still runs)."""
    checked: list[str] = []

    def counted(key: str, stored: str) -> Any:
        checked.append(stored)
        return key_matches(key, stored)

    monkeypatch.setattr(auth_dependencies, "key_matches", counted)
    return checked


@pytest.fixture
def authenticator(tmp_path: Path) -> Authenticator:
    settings = Settings(data_dir=tmp_path, local_workers=1, bootstrap_admin_key=BOOTSTRAP)
    upgrade(settings.sqlalchemy_url)
    return Authenticator(settings)


@pytest.mark.parametrize(
    "token",
    ["garbage", "operator-key-0123456789abcdefABCDEX", "rlvr_../../_x", "\udcff" * 40],
)
def test_a_token_that_is_neither_kind_of_key_costs_no_hash(
    authenticator: Authenticator, scrypt_checks: list[str], token: str
) -> None:
    with pytest.raises(Unauthorized):
        authenticator.authenticate(token)
    assert scrypt_checks == []


def test_the_bootstrap_key_is_still_checked_against_its_hash(
    authenticator: Authenticator, scrypt_checks: list[str]
) -> None:
    principal = authenticator.authenticate(BOOTSTRAP)
    assert "verifiers:admin" in principal.scopes
    assert len(scrypt_checks) == 1
