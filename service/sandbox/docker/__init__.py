"""The docker backend: a warm pool of locked-down containers, each run by a supervisor inside.

- containers.py: how a container is started (no network, read-only root, only the
  supervisor's two capabilities, limits, Docker's init, the host masked in /proc), resized and
  removed; one program uid per container.
- channel.py: the host's side of a container's supervisor: its code sent at start, then one
  request and one reply per session step or run, under the host's own clock and caps.
- session.py: a submission's session in a container and how a run becomes a RunResult.
- pool.py: warm containers per image, reused from session to session, replaced by a thread of
  their own when retired; stale ones removed.
- images.py: the reference a verifier version pins; whether an image is there.
- backend.py: DockerBackend, probing the engine and each image before anything runs.
- exec_stream.py, scripts/: the host's last resort (an exec that kills every process of the
  program's uid) when a supervisor does not answer.

The supervisor itself (``service/sandbox/server/supervisor.py``) shares the local server's
template, runner and warm-Python code; it runs on the runner image's own ``python3``. The image
is built by scripts/build-sandbox-image.sh (or deploy/Dockerfile.sandbox).
"""

from __future__ import annotations

from service.sandbox.docker.backend import DockerBackend
from service.sandbox.docker.containers import LABEL
from service.sandbox.docker.images import image_reference
from service.sandbox.docker.session import DockerSession

__all__ = ["LABEL", "DockerBackend", "DockerSession", "image_reference"]
