"""Sandboxes for untrusted programs: one interface, a backend chosen by this process's config.

``local`` (default): Linux namespaces, rlimits and cgroups on this machine (local.py).
``docker``: a warm pool of locked-down containers, one per submission (docker/).
A backend whose probe fails refuses every session: there is no fallback to something weaker.

The config is handed in at the edges (app, worker, pool process) with ``configure_sandbox``;
nothing here reads the service's settings. Without it a process uses ``SandboxConfig()``.
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
from service.sandbox.config import SandboxConfig

log = logging.getLogger(__name__)
BACKENDS = ("local", "docker")

_config = SandboxConfig()
# Per process id (a backend cannot cross fork): the backend, and the config it was built from
# (None: handed in by use_backend).
_backends: dict[int, tuple[SandboxBackend, SandboxConfig | None]] = {}


class _MissingBackend:
    """A configured backend that does not exist (yet): probes fail, sessions refuse."""

    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason

    def probe(self) -> ProbeReport:
        return ProbeReport(self.name, False, (self.reason,))

    @contextmanager
    def session(
        self,
        files: Mapping[str, bytes],
        language: str | None = None,
        warm_files: Mapping[str, str] | None = None,
    ) -> Iterator[SandboxSession]:
        raise SandboxUnavailable(self.reason)
        yield  # a generator, so that the error comes when the session is entered

    def close(self) -> None:
        return None


def make_backend(config: SandboxConfig) -> SandboxBackend:
    """A new backend instance built from ``config`` (not started: its probe starts it)."""
    if config.backend == "local":
        from service.sandbox.local import LocalBackend

        return LocalBackend.from_config(config)
    if config.backend == "docker":
        from service.sandbox.docker import DockerBackend

        return DockerBackend.from_config(config)
    reason = f"unknown sandbox backend {config.backend!r} (choose from {BACKENDS})"
    return _MissingBackend(config.backend, reason)


def configure_sandbox(config: SandboxConfig) -> None:
    """Set this process's sandbox config. A backend this process started from another config
    is closed; the next ``get_backend()`` builds one from the new config."""
    global _config
    _config = config
    current = _backends.get(os.getpid())
    if current is not None and current[1] is not None and current[1] != config:
        close_backend()


def sandbox_config() -> SandboxConfig:
    """This process's sandbox config (``SandboxConfig()`` unless configured)."""
    return _config


def get_backend() -> SandboxBackend:
    """This process's backend (one warm sandbox server per worker process)."""
    current = _backends.get(os.getpid())
    if current is not None:
        return current[0]
    backend = make_backend(_config)
    _backends[os.getpid()] = (backend, _config)
    # The server would die with this process anyway (its pipe closes); closing also removes
    # the sandbox's cgroups right away.
    atexit.register(backend.close)
    return backend


@contextmanager
def use_backend(backend: SandboxBackend) -> Iterator[SandboxBackend]:
    """This process's backend is ``backend`` inside the block (tests, benchmarks); the one
    before is back afterwards. ``backend`` is not closed here."""
    pid = os.getpid()
    previous = _backends.get(pid)
    _backends[pid] = (backend, None)
    try:
        yield backend
    finally:
        if previous is None:
            _backends.pop(pid, None)
        else:
            _backends[pid] = previous


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
    current = _backends.pop(os.getpid(), None)
    if current is not None:
        current[0].close()


__all__ = [
    "Limits",
    "ProbeReport",
    "RunResult",
    "RunSpec",
    "SandboxBackend",
    "SandboxConfig",
    "SandboxError",
    "SandboxSession",
    "SandboxUnavailable",
    "close_backend",
    "configure_sandbox",
    "get_backend",
    "make_backend",
    "probe_backend",
    "sandbox_config",
    "start_worker_sandbox",
    "use_backend",
]
