"""Length-prefixed JSON frames between the driver and the solution process (two pipes)."""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
# Taken before any solution runs: a solution that patches ``json`` patches its own copy only.
_dumps, _loads = json.dumps, json.loads
# A reply larger than this is not plain data the harness accepts (see plain.MAX_NODES).
MAX_FRAME = 16 << 20


class Closed(Exception):
    """The other side closed its end (or sent a frame that cannot be one)."""


def pack(message: Any) -> bytes:
    data = _dumps(message, separators=(",", ":")).encode()
    return HEADER.pack(len(data)) + data


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise Closed("end of channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd: int) -> Any:
    """The next frame's JSON (blocking); Closed at the end of the channel."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size))
    if size > MAX_FRAME:
        raise Closed("oversized frame")
    try:
        return _loads(_read_exact(fd, size))
    except (ValueError, RecursionError) as exc:
        raise Closed(f"malformed frame: {exc}") from None


def send(fd: int, message: Any) -> None:
    write_all(fd, pack(message))
