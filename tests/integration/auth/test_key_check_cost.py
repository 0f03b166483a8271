"""What a key check costs: a scrypt check is ~40 ms of CPU on the API's threads, and a key id is
public, so no caller without a valid key may make the service run one as often as it likes.

- A token that is not a generated key is compared with the configured bootstrap key in memory,
  never run through its scrypt hash.
- A key verified before is re-checked after CHECK_TTL_S with a read of its row alone (a
  revocation still shows), unless the row's hash changed.
- A wrong secret for a key id backs that id off, and all failures together have a budget per
  second: a key not known good is then refused at once (429 + Retry-After), without a scrypt
  or a database read; a key known good is never refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import service.auth.dependencies as auth_dependencies
from service.app import create_app
from service.auth.dependencies import CHECK_TTL_S, Authenticator
from service.auth.keys import key_id_of, key_matches
from service.auth.service import AuthService
from service.auth.throttle import CODE, FAILED_CHECKS_PER_S, backoff_s
from service.db.migrate import upgrade
from service.db.session import session_scope
from service.errors import RateLimited, Unauthorized
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
def settings(tmp_path: Path) -> Settings:
    settings = Settings(data_dir=tmp_path, local_workers=1, bootstrap_admin_key=BOOTSTRAP)
    upgrade(settings.sqlalchemy_url)
    return settings


@pytest.fixture
def now() -> list[float]:
    """The Authenticator's clock, moved by hand."""
    return [1000.0]


@pytest.fixture
def authenticator(settings: Settings, now: list[float]) -> Authenticator:
    authenticator = Authenticator(settings, clock=lambda: now[0])
    authenticator.bootstrap()
    return authenticator


@pytest.fixture
def key_reads(authenticator: Authenticator, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per database session the Authenticator opens (a key's row read)."""
    opened: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened.append(1)
        return session_scope(*args, **kwargs)

    monkeypatch.setattr(auth_dependencies, "session_scope", counted)
    return opened


def _new_key(settings: Settings) -> str:
    with session_scope(settings) as session:
        _, key = AuthService(session).create_key("team-k", ["rewards:write"])
    return key


def _wrong(key: str, n: int = 0) -> str:
    """A key of the same (public) id with a guessed secret."""
    return f"rlvr_{key_id_of(key)}_{'guess' * 8}{n}"


def _refused(authenticator: Authenticator, key: str) -> RateLimited:
    with pytest.raises(RateLimited) as refused:
        authenticator.authenticate(key)
    assert refused.value.status_code == 429 and refused.value.code == CODE
    return refused.value


def _invalid(authenticator: Authenticator, key: str) -> None:
    with pytest.raises(Unauthorized):
        authenticator.authenticate(key)


@pytest.mark.parametrize(
    "token",
    ["garbage", "operator-key-0123456789abcdefABCDEX", "rlvr_../../_x", "\udcff" * 40],
)
def test_a_token_that_is_neither_kind_of_key_costs_no_hash(
    authenticator: Authenticator, scrypt_checks: list[str], token: str
) -> None:
    for _ in range(3):  # nor is it ever throttled: it costs nothing
        _invalid(authenticator, token)
    assert scrypt_checks == []


def test_the_bootstrap_key_is_still_checked_against_its_hash(
    authenticator: Authenticator, scrypt_checks: list[str]
) -> None:
    principal = authenticator.authenticate(BOOTSTRAP)
    assert "verifiers:admin" in principal.scopes
    assert len(scrypt_checks) == 1


def test_a_recheck_reads_the_row_without_a_scrypt_and_sees_a_revocation(
    settings: Settings,
    authenticator: Authenticator,
    now: list[float],
    scrypt_checks: list[str],
    key_reads: list[int],
) -> None:
    key = _new_key(settings)
    principal = authenticator.authenticate(key)
    now[0] += CHECK_TTL_S
    assert authenticator.authenticate(key) == principal
    assert (len(scrypt_checks), len(key_reads)) == (1, 2)
    with session_scope(settings) as session:
        AuthService(session).revoke(principal.key_id)
    now[0] += CHECK_TTL_S
    _invalid(authenticator, key)
    assert len(scrypt_checks) == 1


def test_a_row_with_a_new_hash_is_checked_with_scrypt_again(
    settings: Settings, authenticator: Authenticator, now: list[float], scrypt_checks: list[str]
) -> None:
    authenticator.authenticate(BOOTSTRAP)
    with session_scope(settings) as session:
        AuthService(session).ensure_bootstrap_key("operator-key-rotated-9876543210zyx", "ops")
    now[0] += CHECK_TTL_S
    _invalid(authenticator, BOOTSTRAP)
    assert len(scrypt_checks) == 2 and scrypt_checks[0] != scrypt_checks[1]


def test_wrong_secrets_for_a_key_id_cost_one_scrypt_then_a_429_at_once(
    settings: Settings,
    authenticator: Authenticator,
    scrypt_checks: list[str],
    key_reads: list[int],
) -> None:
    key = _new_key(settings)
    _invalid(authenticator, _wrong(key))
    for n in range(1, 4):
        refused = _refused(authenticator, _wrong(key, n))
        assert refused.headers() == {"Retry-After": "1"}
    assert (len(scrypt_checks), len(key_reads)) == (1, 1)


def test_the_real_key_verified_before_works_through_the_attack(
    settings: Settings, authenticator: Authenticator, now: list[float], scrypt_checks: list[str]
) -> None:
    key = _new_key(settings)
    principal = authenticator.authenticate(key)
    for failures in range(1, 4):  # back-offs of 1, 2, 4 s, each waited out
        _invalid(authenticator, _wrong(key))
        now[0] += backoff_s(failures)
    _invalid(authenticator, _wrong(key))  # now 8 s: longer than the key's answer is kept
    now[0] += CHECK_TTL_S
    _refused(authenticator, _wrong(key))
    assert authenticator.authenticate(key) == principal
    assert len(scrypt_checks) == 1 + 4


def test_a_key_not_verified_yet_waits_out_its_ids_back_off(
    settings: Settings, authenticator: Authenticator, now: list[float], scrypt_checks: list[str]
) -> None:
    key = _new_key(settings)
    _invalid(authenticator, _wrong(key))
    # The real key, never verified in this process, cannot be told from a guess: a 429,
    # which clients retry after Retry-After.
    _refused(authenticator, key)
    now[0] += backoff_s(1)
    principal = authenticator.authenticate(key)
    assert principal.key_id == key_id_of(key)
    _invalid(authenticator, _wrong(key))  # checked again, and the back-off doubles
    assert _refused(authenticator, _wrong(key)).retry_after_s == backoff_s(2)
    assert len(scrypt_checks) == 3


def test_failures_over_many_key_ids_are_capped_per_process(
    settings: Settings, authenticator: Authenticator, now: list[float], scrypt_checks: list[str]
) -> None:
    budget = int(FAILED_CHECKS_PER_S)
    *attacked, spared, in_use = [_new_key(settings) for _ in range(budget + 2)]
    principal = authenticator.authenticate(in_use)
    now[0] += CHECK_TTL_S
    for key in attacked:
        _invalid(authenticator, _wrong(key))
    _refused(authenticator, _wrong(spared))
    assert authenticator.authenticate(in_use) == principal  # re-checked, never refused
    assert len(scrypt_checks) == 1 + budget
    now[0] += 1 / FAILED_CHECKS_PER_S
    _invalid(authenticator, _wrong(spared))
    assert len(scrypt_checks) == 2 + budget


def test_the_refusal_is_a_429_with_retry_after_over_http(
    settings: Settings, now: list[float]
) -> None:
    app = create_app(settings)
    app.state.authenticator = Authenticator(settings, clock=lambda: now[0])
    key = _new_key(settings)
    with TestClient(app) as client:
        first = client.get("/v1/verifiers", headers={"Authorization": f"Bearer {_wrong(key)}"})
        assert first.status_code == 401
        again = client.get("/v1/verifiers", headers={"Authorization": f"Bearer {_wrong(key, 1)}"})
        assert again.status_code == 429
        assert again.headers["Retry-After"] == "1"
        assert again.json()["error"]["code"] == CODE
