"""One ``docker exec`` as the host runs it: its hijacked stream read to the end under the host's
own clock (``exec_run`` has none), then its exit status from the engine.

Runs do not use it (the supervisor starts them, see channel.py); only the host's last resort
does: when a supervisor does not answer within a run's wall clock and its grace, the host kills
every process of the program's uid through an exec of its own (scripts/kill.sh).
"""

from __future__ import annotations

import contextlib
import select
import socket
import time
from collections.abc import Sequence
from typing import Any

from service.sandbox.base import SandboxError

_INSPECT_S = 5.0


def run_exec(
    api: Any,
    container_id: str,
    argv: Sequence[str],
    *,
    user: int,
    environment: Sequence[str],
    wall_s: float = 10.0,
) -> int | None:
    """Run ``argv`` in the container with no stdin; its exit status (None if it did not end
    within ``wall_s``). Its output is read and dropped."""
    try:
        exec_id = api.exec_create(
            container_id,
            list(argv),
            stdin=False,
            stdout=True,
            stderr=True,
            tty=False,
            user=f"{user}:{user}",
            environment=list(environment),
            workdir="/tmp",
        )["Id"]
        attached = api.exec_start(exec_id, socket=True)
    except Exception as exc:
        raise SandboxError(f"docker exec failed: {exc}") from exc
    raw: socket.socket = getattr(attached, "_sock", attached)
    deadline = time.monotonic() + wall_s
    ended = False
    try:
        raw.setblocking(False)
        while not ended and (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([raw], [], [], left)
            if readable:
                try:
                    ended = not raw.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    ended = True
    finally:
        with contextlib.suppress(OSError):
            attached.close()
            raw.close()
    return _exit_code(api, exec_id) if ended else None


def _exit_code(api: Any, exec_id: str) -> int | None:
    deadline = time.monotonic() + _INSPECT_S
    while True:
        try:
            info = api.exec_inspect(exec_id)
        except Exception as exc:
            raise SandboxError(f"docker exec inspect failed: {exc}") from exc
        if not info.get("Running") or time.monotonic() > deadline:
            code = info.get("ExitCode")
            return None if code is None else int(code)
        time.sleep(0.002)
