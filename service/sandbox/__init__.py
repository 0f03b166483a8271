"""Sandboxes for untrusted programs: one interface, a backend chosen by ``RLVR_SANDBOX_BACKEND``.

``local`` (default): Linux namespaces, rlimits and cgroups on this machine (local.py).
``docker``: a warm pool of locked-down containers, one per submission (docker_backend.py).
A backend whose probe fails refuses every session: there is no fallback to something weaker.
"""

from __future__ import annotations

import atexit
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from service.sandbox.base import (
    Limits,
    ProbeReport,
    RunResult,
    RunSpec,
    SandboxBackend,
    SandboxError,
    SandboxSession,
    SandboxUnavailable,
)

log = logging.getLogger(__name__)
BACKEND_ENV = "RLVR_SANDBOX_BACKEND"
BACKENDS = ("local", "docker")

_backends: dict[int, SandboxBackend] = {}


class _MissingBackend:
    """A configured backend that does not exist (yet): probes fail, sessions refuse."""

    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason

    def probe(self) -> ProbeReport:
        return ProbeReport(self.name, False, (self.reason,))

    @contextmanager
    def session(
        self, files: Mapping[str, bytes], language: str | None = None
    ) -> Iterator[SandboxSession]:
        raise SandboxUnavailable(self.reason)
        yield  # a generator, so that the error comes when the session is entered

    def close(self) -> None:
        return None


def backend_name() -> str:
    from service.settings import get_settings

    return get_settings().sandbox_backend


def make_backend(name: str | None = None) -> SandboxBackend:
    """A new backend instance of the configured (or given) kind."""
    name = name or backend_name()
    if name == "local":
        from service.sandbox.local import LocalBackend

        return LocalBackend()
    if name == "docker":
        from service.sandbox.docker_backend import DockerBackend

        return DockerBackend()
    return _MissingBackend(name, f"unknown sandbox backend {name!r} (choose from {BACKENDS})")


def get_backend() -> SandboxBackend:
    """This process's backend (one warm sandbox server per worker process)."""
    backend = _backends.get(os.getpid())
    if backend is None:
        backend = make_backend()
        _backends[os.getpid()] = backend
        # The server would die with this process anyway (its pipe closes); closing also
        # removes the sandbox's cgroups right away.
        atexit.register(backend.close)
    return backend


def probe_backend() -> ProbeReport:
    """Start and check this process's sandbox now (worker start-up, readiness)."""
    return get_backend().probe()


def start_worker_sandbox() -> ProbeReport:
    """At a worker process's start: probe (and warm) the sandbox before any task arrives, and
    say loudly if it cannot isolate; code items then end as ``error``, never run unisolated."""
    report = probe_backend()
    if report.ok:
        log.info("sandbox %s ready: %s", report.backend, dict(report.facts))
    else:
        log.error("sandbox %s unavailable: %s", report.backend, "; ".join(report.problems))
    return report


def close_backend() -> None:
    """Stop this process's sandbox (its server, or its containers) if one was started."""
    backend = _backends.pop(os.getpid(), None)
    if backend is not None:
        backend.close()


__all__ = [
    "Limits",
    "ProbeReport",
    "RunResult",
    "RunSpec",
    "SandboxBackend",
    "SandboxError",
    "SandboxSession",
    "SandboxUnavailable",
    "backend_name",
    "close_backend",
    "get_backend",
    "make_backend",
    "probe_backend",
    "start_worker_sandbox",
]
