"""Who is calling, for every protected route: ``Authorization: Bearer <key>`` (or the key as
HTTP Basic's password) → a Principal.

A verified key is remembered for ``CHECK_TTL_S`` seconds per API process, so a training loop
does not pay a database read on every request; a revoked key stops working within that time
everywhere. After that its row is read again, and the scrypt check (~45 ms of CPU) runs again
only if the row's hash is not the one the key matched. A key that never matched here is checked
only as often as ``throttle.FailedChecks`` allows.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool

from service.auth.keys import BOOTSTRAP_KEY_ID, key_id_of, key_matches
from service.auth.service import AuthService, KeyCheck, Principal, bootstrap_keys
from service.auth.throttle import FailedChecks
from service.db.base import utcnow
from service.db.session import session_scope
from service.errors import DependencyUnavailable, Forbidden, Unauthorized
from service.settings import Settings

log = logging.getLogger(__name__)
CHECK_TTL_S = 5.0
MAX_KEY_CHARS = 256
# Keys remembered as verified, and key ids with a lock; past this the oldest are dropped.
MAX_REMEMBERED = 10_000
bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer <key>`.")


@dataclass(frozen=True, slots=True)
class Verified:
    """A key's last successful check: whom it stands for, until when, the stored hash it
    matched (the same hash found again needs no scrypt), and when (``Authenticator``'s clock)."""

    principal: Principal
    expires_at: datetime | None
    secret_hash: str
    checked_at: float


class Authenticator:
    """Checks presented keys against the database, remembering recent answers briefly."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        # sha256(key) → its last successful check, never the key itself; kept past CHECK_TTL_S,
        # least recently checked first: a key in it is known good and never throttled.
        self._verified: dict[str, Verified] = {}
        # key id → the lock held while a key of that id is being checked.
        self._checking: dict[str, threading.Lock] = {}
        self._failures = FailedChecks(clock)
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
        fingerprint = _fingerprint(presented)
        return _unexpired(self._fresh(fingerprint) or self._verify(presented, fingerprint))

    def remembered(self, presented: str) -> Principal | None:
        """``authenticate`` for a key verified within ``CHECK_TTL_S``, with no I/O, so the event
        loop may ask: None when the key must be checked (a read, perhaps a scrypt)."""
        if not presented or len(presented) > MAX_KEY_CHARS:
            return None
        verified = self._fresh(_fingerprint(presented))
        return None if verified is None else _unexpired(verified)

    def known_key_id(self, presented: str) -> str | None:
        """The id of a key verified before in this process, else None: for the admission gate,
        which refuses a request in its key's name before reading its body, and must never do so
        for a key it cannot tell from a guess."""
        with self._lock:
            verified = self._verified.get(_fingerprint(presented))
        return verified.principal.key_id if verified is not None else None

    def _verify(self, presented: str, fingerprint: str) -> Verified:
        """Check a key whose answer is not fresh, one key id at a time: when a busy key's
        answer lapsed, every request in flight missed together and each ran its own check;
        and wrong secrets for one id sent together wait for the first one's failure, which
        then refuses the rest (``FailedChecks``) instead of costing a scrypt each."""
        if self._not_the_bootstrap_key(presented):
            raise Unauthorized("invalid API key")
        key_id = key_id_of(presented)
        with self._lock:
            if len(self._checking) > MAX_REMEMBERED:
                self._checking.clear()
            checking = self._checking.setdefault(key_id, threading.Lock())
        with checking:
            fresh = self._fresh(fingerprint)
            if fresh is not None:  # checked by the request this one waited for
                return fresh
            with self._lock:
                known = self._verified.get(fingerprint)
            if known is None:
                self._failures.admit(key_id)
            return self._check(presented, fingerprint, key_id, known)

    def _check(
        self, presented: str, fingerprint: str, key_id: str, known: Verified | None
    ) -> Verified:
        """The key against its row, read every time (a revocation, an expiry or a new hash
        shows at once); scrypt only if the row's hash is not the one this key matched."""
        checked_at = self._clock()
        found = self._lookup(presented)
        if found is not None and (
            (known is not None and found.secret_hash == known.secret_hash)
            or self._matches(presented, key_id, found)
        ):
            expires_at = found.expires_at
            if expires_at is not None and expires_at.tzinfo is None:  # SQLite drops the zone
                expires_at = expires_at.replace(tzinfo=utcnow().tzinfo)
            verified = Verified(found.principal, expires_at, found.secret_hash, checked_at)
            self._remember(fingerprint, verified)
            return verified
        with self._lock:
            self._verified.pop(fingerprint, None)
        raise Unauthorized("invalid API key")

    def _matches(self, presented: str, key_id: str, found: KeyCheck) -> bool:
        """The scrypt check; a failure backs the key id off."""
        if key_matches(presented, found.secret_hash):
            return True
        self._failures.failed(key_id)
        return False

    def _lookup(self, presented: str) -> KeyCheck | None:
        try:
            self.bootstrap()
            with session_scope(self.settings) as session:
                return AuthService(session).lookup(presented)
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc

    def _fresh(self, fingerprint: str) -> Verified | None:
        with self._lock:
            verified = self._verified.get(fingerprint)
        if verified is None or self._clock() - verified.checked_at >= CHECK_TTL_S:
            return None
        return verified

    def _remember(self, fingerprint: str, verified: Verified) -> None:
        with self._lock:
            self._verified.pop(fingerprint, None)  # to the end: the most recently checked
            self._verified[fingerprint] = verified
            if len(self._verified) > MAX_REMEMBERED:
                del self._verified[next(iter(self._verified))]

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


def _unexpired(verified: Verified) -> Principal:
    if verified.expires_at is not None and verified.expires_at <= utcnow():
        raise Unauthorized("API key expired")
    return verified.principal


def _fingerprint(presented: str) -> str:
    return hashlib.sha256(presented.encode("utf-8", "surrogatepass")).hexdigest()


def presented_key(authorization: str) -> str | None:
    """The key an ``Authorization`` header presents: a bearer token, or HTTP Basic's password."""
    scheme, credentials = get_authorization_scheme_param(authorization)
    if scheme.lower() == "bearer":
        return credentials or None
    return basic_password(authorization)


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


def require(scope: str | None) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's principal, with ``scope`` (or just a valid key if None)."""

    async def dependency(
        request: Request,
        # Declared for the OpenAPI security scheme; the header is read by presented_key.
        _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        presented = presented_key(request.headers.get("authorization", ""))
        if presented is None:
            raise Unauthorized("an API key is required: Authorization: Bearer <key>")
        authenticator: Authenticator = request.app.state.authenticator
        # A key verified lately is known in the event loop; only a check goes to a thread.
        principal = authenticator.remembered(presented)
        if principal is None:
            principal = await run_in_threadpool(authenticator.authenticate, presented)
        if scope is not None and scope not in principal.scopes:
            raise Forbidden(f"this key lacks the scope {scope!r}")
        return principal

    return dependency


def require_operator(scope: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency: a key of the operator's tenant with ``scope`` (what spans every tenant,
    such as /metrics with its per-run gauges, is the operator's to read)."""
    with_scope = require(scope)

    # A default, not Annotated: the annotation is a string FastAPI resolves in this module's
    # globals, where ``with_scope`` is not.
    async def dependency(request: Request, principal: Principal = Depends(with_scope)) -> Principal:  # noqa: B008
        if principal.tenant_id != request.app.state.settings.operator_tenant:
            raise Forbidden("only the operator's keys read what spans every tenant")
        return principal

    return dependency


Caller = Annotated[Principal, Depends(require(None))]
RewardsWriter = Annotated[Principal, Depends(require("rewards:write"))]
AuditReader = Annotated[Principal, Depends(require("audit:read"))]
LabelWriter = Annotated[Principal, Depends(require("labels:write"))]
VerifierAdmin = Annotated[Principal, Depends(require("verifiers:admin"))]
