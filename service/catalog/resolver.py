"""Resolve verifier references for the reward pipeline, with a short-lived cache.

Versions are immutable, aliases move: a cached resolution lives ``ttl_s`` seconds, so an alias
promoted through the API takes effect on every API process within that time, and a hot
training loop does not pay a database round trip per request. A built-in version is recorded
in the database the first time this process resolves it, before anything it decides is logged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from sqlalchemy.exc import OperationalError

from service.catalog.builtin import UnknownVerifier
from service.catalog.service import CatalogService
from service.db.session import session_scope
from service.errors import DependencyUnavailable, InvalidRequest
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec


class VerifierResolver:
    def __init__(self, settings: Settings, ttl_s: float = 1.0) -> None:
        self.settings = settings
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, VerifierVersionSpec]] = {}
        self._lock = threading.Lock()
        self._recorded: set[str] = set()

    def forget(self, name: str) -> None:
        """Drop cached resolutions of ``name`` (this process moved one of its aliases)."""
        with self._lock:
            for reference in [r for r in self._cache if r.strip().partition("@")[0] == name]:
                del self._cache[reference]

    def cached_many(
        self,
        references: Iterable[str],
        adhoc: Mapping[str, VerifierVersionSpec] | None = None,
    ) -> dict[str, VerifierVersionSpec] | None:
        """``resolve_many`` when every reference is resolved lately and recorded, with no I/O
        (the event loop may ask); None when the database must be asked."""
        resolved, missing, unrecorded = self._from_cache(references, adhoc or {}, time.monotonic())
        return None if missing or unrecorded else resolved

    def _from_cache(
        self, references: Iterable[str], adhoc: Mapping[str, VerifierVersionSpec], now: float
    ) -> tuple[dict[str, VerifierVersionSpec], list[str], list[VerifierVersionSpec]]:
        """(what resolves without the database, the references it must resolve, the versions
        it must record)."""
        resolved: dict[str, VerifierVersionSpec] = {}
        missing: list[str] = []
        unrecorded: list[VerifierVersionSpec] = []
        with self._lock:
            for reference in set(references):
                spec = adhoc.get(reference)
                hit = self._cache.get(reference)
                if spec is not None:
                    resolved[reference] = spec
                    if spec.version_hash not in self._recorded:
                        unrecorded.append(spec)
                elif hit is not None and now - hit[0] < self.ttl_s:
                    resolved[reference] = hit[1]
                else:
                    missing.append(reference)
        return resolved, missing, unrecorded

    def resolve_many(
        self,
        references: Iterable[str],
        adhoc: Mapping[str, VerifierVersionSpec] | None = None,
    ) -> dict[str, VerifierVersionSpec]:
        """Resolve each distinct reference once; unknown ones are a 422 naming them.

        ``adhoc``: versions a route built itself and published nowhere (an OpenAI grader run),
        by the reference its items name. They resolve to themselves and, like a built-in
        version, are recorded before anything they decide is logged."""
        now = time.monotonic()
        resolved, missing, unrecorded = self._from_cache(references, adhoc or {}, now)
        if not missing and not unrecorded:
            return resolved
        try:
            with session_scope(self.settings) as session:
                catalog = CatalogService(session)
                for spec in unrecorded:
                    catalog.record(spec)
                for reference in missing:
                    spec = catalog.resolve(reference)
                    if spec.version_hash not in self._recorded:
                        catalog.record(spec)
                    resolved[reference] = spec
        except UnknownVerifier as exc:
            raise InvalidRequest(str(exc), code="unknown_verifier") from exc
        except OperationalError as exc:
            raise DependencyUnavailable("database", type(exc).__name__) from exc
        with self._lock:
            for reference in missing:
                self._cache[reference] = (now, resolved[reference])
                self._recorded.add(resolved[reference].version_hash)
            self._recorded.update(spec.version_hash for spec in unrecorded)
        return resolved
