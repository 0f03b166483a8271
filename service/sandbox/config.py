"""What a sandbox backend is built from: handed in at the edges (app, worker, pool process).

Nothing under ``service.sandbox`` reads the service's settings; ``service.execution``
converts them (``sandbox_setup.sandbox_config``) and calls ``configure_sandbox``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

BackendName = Literal["local", "docker"]


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """One process's sandbox. The defaults are the service's defaults (local namespaces)."""

    # "local": namespaces on this machine, a warm fork server; "docker": warm containers.
    backend: BackendName = "local"
    # Interpreter for Python programs in the local sandbox; None: the system python3.
    python: str | None = None
    # The docker backend: runner image, per-language images, warm containers per process,
    # a new container's memory limit (each run then sets its own), CPUs and pids.
    docker_image: str = "rlvr-sandbox:bookworm"
    # Left out of the hash (a dict has none); equality still compares it.
    docker_images: Mapping[str, str] = field(default_factory=dict, hash=False)
    docker_pool: int = 2
    docker_memory_mb: int = 1536
    docker_cpus: float = 1.0
    docker_pids: int = 64
    # "socket": frames to a container's supervisor on a unix socket bound into it (the attach
    # stream where that cannot be reached); "attach": always through the engine.
    docker_channel: Literal["socket", "attach"] = "socket"

    def __post_init__(self) -> None:
        # A copy of its own: the caller's dict changing later must not change this config.
        object.__setattr__(self, "docker_images", dict(self.docker_images))
