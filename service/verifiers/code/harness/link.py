"""The driver's end of the solution process: calls with a deadline, its output, its CPU time.

Every wait on the solution watches the current test's wall clock and CPU time (read from
/proc by the driver, never reported by the solution) and collects what the solution prints,
up to the test's caps; it raises TestTimeout, OutputLimit or SolutionGone instead of waiting
past them.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

from . import frames, osutil
from .output import Output, OutputLimit
from .proxies import SolutionGone

_CPU_CHECK_S = 0.05


class TestTimeout(BaseException):
    """The test ran past its wall clock or its CPU time."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class ProtocolError(SolutionGone):
    """The solution process answered what no request asked for (a wrong answer)."""


class Clock:
    """The current test's limits as the driver keeps them."""

    def __init__(self) -> None:
        self.deadline = 0.0
        self.cpu_limit = 0.0
        self.started = 0.0

    def start(self, started: float, wall_s: float, cpu_s: float) -> None:
        self.started, self.deadline, self.cpu_limit = started, started + wall_s, cpu_s

    def left(self) -> float:
        return self.deadline - time.monotonic()


class Link:
    """Requests to the solution process and its replies, supervised."""

    def __init__(self, pid: int, requests_fd: int, replies_fd: int, output: Output) -> None:
        self.pid, self.requests_fd, self.replies_fd = pid, requests_fd, replies_fd
        self.output = output
        self.clock = Clock()
        self.ready = False
        self.gone = False
        self.cpu_base = self.cpu_last = 0.0
        # What ended the current test (its clocks, an output cap, the solution gone): test code
        # may catch it (a bare ``except:``), and the driver then raises it again.
        self.ended: BaseException | None = None
        self.cpu_clock = osutil.cpu_clock(pid)
        os.set_blocking(replies_fd, False)

    # -- CPU ---------------------------------------------------------------------------------

    def cpu_now(self) -> float | None:
        """The solution process's CPU seconds so far, from the kernel (never from it)."""
        if self.cpu_clock is not None:
            try:
                self.cpu_last = time.clock_gettime(self.cpu_clock)
                return self.cpu_last
            except OSError:  # it has ended: its last reading stands
                return self.cpu_last
        return None

    def begin(self, started: float, wall_s: float, cpu_s: float, first: bool) -> None:
        self.clock.start(started, wall_s, cpu_s)
        self.ended = None
        # The first test pays for loading the solution, as each run used to.
        now = self.cpu_now()
        self.cpu_base = 0.0 if first or now is None else now

    def cpu_used(self) -> float:
        """The solution's CPU seconds in this test (its wall clock if the kernel would not
        say: never less than it used)."""
        now = self.cpu_now()
        if now is None:
            return max(0.0, time.monotonic() - self.clock.started)
        return max(0.0, now - self.cpu_base)

    def _check_cpu(self) -> None:
        if self.cpu_used() > self.clock.cpu_limit:
            raise TestTimeout("cpu")

    # -- calls ---------------------------------------------------------------------------------

    def call(self, message: Any) -> Any:
        """Send one request and return its reply (after the solution's "ready", first)."""
        try:
            return self._exchange(message)
        except (TestTimeout, SolutionGone, OutputLimit) as exc:
            self.end_test(exc)
            raise

    def end_test(self, exc: BaseException) -> None:
        """Remember what ended the test, the first such thing, whoever catches it."""
        self.ended = self.ended or exc

    def _exchange(self, message: Any) -> Any:
        if self.gone:
            raise SolutionGone("the solution process has ended")
        os.set_blocking(self.requests_fd, False)
        pending = memoryview(frames.pack(message))
        wanted = 1 if self.ready else 2
        replies: list[Any] = []
        received = bytearray()
        poller = select.poll()
        poller.register(self.replies_fd, select.POLLIN)
        poller.register(self.requests_fd, select.POLLOUT)
        for fd in self.output.open:
            poller.register(fd, select.POLLIN)
        last_cpu_check = time.monotonic()
        while len(replies) < wanted:
            left = self.clock.left()
            if left <= 0:
                raise TestTimeout("wall")
            events = poller.poll(max(1, int(min(left, _CPU_CHECK_S) * 1000)))
            for fd, _event in events:
                if fd == self.requests_fd:
                    pending = self._write(pending)
                    if not pending:
                        poller.unregister(fd)
                elif fd == self.replies_fd:
                    self._read_replies(received, replies, wanted)
                else:
                    self.output.read(fd)
                    if fd not in self.output.open:
                        poller.unregister(fd)
            if self.output.exceeded:
                raise OutputLimit(self.output.exceeded)
            if time.monotonic() - last_cpu_check >= _CPU_CHECK_S:
                last_cpu_check = time.monotonic()
                self._check_cpu()
        if not self.ready:
            if replies[0] != {"ready": True}:
                raise ProtocolError("the solution process sent a malformed reply")
            self.ready = True
        return replies[-1]

    def _write(self, pending: memoryview) -> memoryview:
        try:
            return pending[os.write(self.requests_fd, pending) :]
        except BlockingIOError:
            return pending
        except OSError:  # EPIPE: the solution process is gone; its replies pipe says so
            return pending[:0]

    def _read_replies(self, received: bytearray, replies: list[Any], wanted: int) -> None:
        try:
            chunk = os.read(self.replies_fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            self.gone = True
            raise SolutionGone("the solution process ended")
        received += chunk
        while len(received) >= frames.HEADER.size:
            (size,) = frames.HEADER.unpack_from(received)
            if size > frames.MAX_FRAME:
                raise ProtocolError("the solution process sent an oversized reply")
            end = frames.HEADER.size + size
            if len(received) < end:
                return
            try:
                replies.append(json.loads(bytes(received[frames.HEADER.size : end])))
            except (ValueError, RecursionError):
                raise ProtocolError("the solution process sent a malformed reply") from None
            del received[:end]
        if len(replies) > wanted or (len(replies) == wanted and received):
            raise ProtocolError("the solution process sent more than it was asked")
