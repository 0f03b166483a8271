"""One test's stdout and stderr as the harness collects them: up to their caps."""

from __future__ import annotations

import contextlib
import os


class OutputLimit(BaseException):
    """The test's stdout or stderr went past its cap."""

    def __init__(self, which: str) -> None:
        super().__init__(which)
        self.which = which


# What is kept of stderr past its cap: the end, where the final traceback line is.
_STDERR_TAIL = 4096


class Output:
    """One test's stdout and stderr of a process, with caps. Stdout past its cap is an output
    limit. Stderr past its cap is not: judges ignore a program's stderr, and a right answer
    with debug lines there keeps its reward. The head and the tail of stderr are kept and the
    rest is read and dropped, so a flood there runs into the test's clock instead."""

    def __init__(self, stdout_fd: int, stderr_fd: int) -> None:
        self.fds = {stdout_fd: "stdout", stderr_fd: "stderr"}
        self.open = set(self.fds)
        for fd in self.fds:
            os.set_blocking(fd, False)
        self.buffers = {"stdout": bytearray(), "stderr": bytearray()}
        self.caps = {"stdout": 1 << 20, "stderr": 64 << 10}
        self.stderr_tail = bytearray()
        self.exceeded: str | None = None

    def reset(self, caps: dict[str, int]) -> None:
        self.caps = caps
        for buffer in self.buffers.values():
            buffer.clear()
        self.stderr_tail.clear()
        self.exceeded = None

    def read(self, fd: int) -> None:
        """Read what ``fd`` holds now; over its cap, remember which one (OutputLimit later)."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.open.discard(fd)
            return
        name = self.fds[fd]
        buffer = self.buffers[name]
        if name == "stderr":
            room = max(0, self.caps[name] - len(buffer))
            buffer += chunk[:room]
            if len(chunk) > room:
                self.stderr_tail += chunk[room:]
                del self.stderr_tail[:-_STDERR_TAIL]
            return
        room = self.caps[name] + 1 - len(buffer)
        buffer += chunk[: max(0, room)]
        if len(buffer) > self.caps[name] and self.exceeded is None:
            self.exceeded = f"{name}_limit"

    def stderr(self) -> bytes:
        """Stderr as kept: all of it under its cap, else its head, a mark, and its tail."""
        head = bytes(self.buffers["stderr"])
        return head + b"\n[...]\n" + bytes(self.stderr_tail) if self.stderr_tail else head

    def drain(self) -> None:
        for fd in list(self.open):
            while fd in self.open:
                before = sum(len(b) for b in self.buffers.values())
                self.read(fd)
                if sum(len(b) for b in self.buffers.values()) == before:
                    break

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
