"""The sandbox's config from the service's settings: built at the edges (app, worker, pool
process) and handed to ``service.sandbox``, which never reads settings itself."""

from __future__ import annotations

from service.sandbox import SandboxConfig, configure_sandbox
from service.settings import Settings


def sandbox_config(settings: Settings) -> SandboxConfig:
    return SandboxConfig(
        backend=settings.sandbox_backend,
        python=settings.sandbox_python,
        docker_image=settings.sandbox_docker_image,
        docker_images=settings.sandbox_docker_images,
        docker_pool=settings.sandbox_docker_pool,
        docker_memory_mb=settings.sandbox_docker_memory_mb,
        docker_cpus=settings.sandbox_docker_cpus,
        docker_pids=settings.sandbox_docker_pids,
        docker_channel=settings.sandbox_docker_channel,
    )


def configure_sandbox_from(settings: Settings) -> None:
    """This process's sandbox is the one the settings describe (started on first use)."""
    configure_sandbox(sandbox_config(settings))
