"""Who is calling, for every protected route: ``Authorization: Bearer <key>`` (or the key as
HTTP Basic's password) → a Principal.

A verified key is remembered for ``CHECK_TTL_S`` seconds per API process, so a training loop
does not pay a scrypt check and a database read on every request; a revoked key stops working
within that time everywhere.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.exc import OperationalError

from service.auth.keys import BOOTSTRAP_KEY_ID, key_id_of, key_matches
from service.auth.service import AuthService, Principal, bootstrap_keys
from service.db.base import utcnow
from service.db.session import session_scope
from service.errors import DependencyUnavailable, Forbidden, Unauthorized
from service.settings import Settings

log = logging.getLogger(__name__)
CHECK_TTL_S = 5.0
MAX_KEY_CHARS = 256
bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer <key>`.")


class Authenticator:
    """Checks presented keys against the database, remembering recent answers briefly."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        # sha256(key) → (principal, expires_at, checked at): never the key itself.
        self._recent: dict[str, tuple[Principal, datetime | None, float]] = {}
        # sha256(key) → the lock held while that key is being checked.
        self._checking: dict[str, threading.Lock] = {}
        self._bootstrapped = False

    def bootstrap(self) -> None:
        """The configured admin key (or the embedded mode's first key) exists: done at start,
        or at the first check if the database was down then."""
        if self._bootstrapped:
            return
        key = self.settings.bootstrap_admin_key
        with session_scope(self.settings) as session:
            created = bootstrap_keys(
                session,
                key.get_secret_value() if key is not None else None,
                self.settings.operator_tenant,
                self.settings.embedded,
            )
        self._bootstrapped = True
        if created is not None:
            # Shown once, where the operator who ran `make serve` reads it; only its hash is kept.
            log.warning(
                "created an admin API key for tenant %r (shown once, keep it): %s",
                self.settings.operator_tenant,
                created,
            )

    def authenticate(self, presented: str) -> Principal:
        if not presented or len(presented) > MAX_KEY_CHARS:
            raise Unauthorized("invalid API key")
        fingerprint = hashlib.sha256(presented.encode("utf-8", "surrogatepass")).hexdigest()
        hit = self._fresh(fingerprint)
        if hit is None:
            # One check per key at a time: when a busy key's answer lapsed, every request in
            # flight missed together and each ran its own ~40 ms scrypt on the API's threads;
            # at twice the capacity the herd stalled all requests for seconds every 5 s.
            with self._lock:
                if len(self._checking) > 10_000:
                    self._checking.clear()
                checking = self._checking.setdefault(fingerprint, threading.Lock())
            with checking:
                hit = self._fresh(fingerprint)
                if hit is None:
                    now = time.monotonic()
                    hit = self._check(presented)
                    with self._lock:
                        if len(self._recent) > 10_000:
                            self._recent.clear()
                        self._recent[fingerprint] = (*hit, now)
        principal, expires_at = hit
        if expires_at is not None and expires_at <= utcnow():
            raise Unauthorized("API key expired")
        return principal

    def _fresh(self, fingerprint: str) -> tuple[Principal, datetime | None] | None:
        with self._lock:
            hit = self._recent.get(fingerprint)
        if hit is None or time.monotonic() - hit[2] >= CHECK_TTL_S:
            return None
        return hit[0], hit[1]

    def _not_the_bootstrap_key(self, presented: str) -> bool:
        # Every string that is not a generated key is checked against the bootstrap key's
        # scrypt hash: ~40 ms of CPU for any garbage token, sent without a key, as often as
        # a client likes. The configured bootstrap key is in this process: compare first.
        configured = self.settings.bootstrap_admin_key
        if configured is None or key_id_of(presented) != BOOTSTRAP_KEY_ID:
            return False
        encoding = ("utf-8", "surrogatepass")
        return not hmac.compare_digest(
            presented.encode(*encoding), configured.get_secret_value().encode(*encoding)
        )

    def _check(self, presented: str) -> tuple[Principal, datetime | None]:
        if self._not_the_bootstrap_key(presented):
            raise Unauthorized("invalid API key")
        try:
            self.bootstrap()
            with session_scope(self.settings) as session:
                found = AuthService(session).lookup(presented)
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc
        if found is None or not key_matches(presented, found.secret_hash):
            raise Unauthorized("invalid API key")
        expires_at = found.expires_at
        if expires_at is not None and expires_at.tzinfo is None:  # SQLite drops the zone
            expires_at = expires_at.replace(tzinfo=utcnow().tzinfo)
        return found.principal, expires_at


def basic_password(authorization: str) -> str | None:
    """The key sent as HTTP Basic's password (any user name), for clients that can only put
    credentials in a URL (``http://rlvr:<key>@host:port``, as NeMo-Gym's server client does)."""
    scheme, _, encoded = authorization.partition(" ")
    if scheme.lower() != "basic" or not encoded or len(encoded) > 4 * MAX_KEY_CHARS:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    _, separator, password = decoded.partition(":")
    return password if separator else None


def require(scope: str | None) -> Callable[..., Principal]:
    """A dependency: the caller's principal, with ``scope`` (or just a valid key if None)."""

    def dependency(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        presented = credentials.credentials if credentials is not None else None
        if presented is None:
            presented = basic_password(request.headers.get("authorization", ""))
        if presented is None:
            raise Unauthorized("an API key is required: Authorization: Bearer <key>")
        authenticator: Authenticator = request.app.state.authenticator
        principal = authenticator.authenticate(presented)
        if scope is not None and scope not in principal.scopes:
            raise Forbidden(f"this key lacks the scope {scope!r}")
        return principal

    return dependency


def require_operator(scope: str) -> Callable[..., Principal]:
    """A dependency: a key of the operator's tenant with ``scope`` (what spans every tenant,
    such as /metrics with its per-run gauges, is the operator's to read)."""
    with_scope = require(scope)

    # A default, not Annotated: the annotation is a string FastAPI resolves in this module's
    # globals, where ``with_scope`` is not.
    def dependency(request: Request, principal: Principal = Depends(with_scope)) -> Principal:  # noqa: B008
        if principal.tenant_id != request.app.state.settings.operator_tenant:
            raise Forbidden("only the operator's keys read what spans every tenant")
        return principal

    return dependency


Caller = Annotated[Principal, Depends(require(None))]
RewardsWriter = Annotated[Principal, Depends(require("rewards:write"))]
AuditReader = Annotated[Principal, Depends(require("audit:read"))]
LabelWriter = Annotated[Principal, Depends(require("labels:write"))]
VerifierAdmin = Annotated[Principal, Depends(require("verifiers:admin"))]
