"""Run verifier calls in a forked child that can be killed: the hard bound on time and memory.

Threads and signals cannot stop ``9^{9^{9^9}}``: sympy and big-int arithmetic hold the
interpreter lock inside C code. A child process can always be killed. The child is forked from
a worker that has already imported the verifiers, so it starts in milliseconds, and it stays
alive across calls; only a call that overruns costs a kill and a fresh fork.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import gc
import logging
import math
import os
import resource
import select
import signal
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any

from service.execution.warmup import warm_up_verifiers
from service.verifiers.base import InvalidGroundTruth, Verdict
from service.verifiers.registry import get_kind

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class Call:
    kind: str
    completion: str
    ground_truth: Any
    config: dict[str, Any]
    prompt: str | None


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _die_with_parent() -> None:
    # If the worker is killed the child must not linger, even while stuck in C code.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def verdict_for(call: Call) -> Verdict:
    """Run one call and map every failure to its status (invalid, timeout, error)."""
    try:
        impl = get_kind(call.kind)
    except KeyError:
        return Verdict(None, "invalid", details={"reason": f"unknown verifier kind {call.kind!r}"})
    try:
        return impl.verify(call.completion, call.ground_truth, call.config, call.prompt)
    except InvalidGroundTruth as exc:
        return Verdict(None, "invalid", details={"reason": str(exc)[:500]})
    except MemoryError:
        return Verdict(0.0, "timeout", {}, {"reason": "memory limit exceeded while verifying"})
    except RecursionError:
        # Deeply nested model output: the content is at fault, not the service.
        return Verdict(0.0, "incorrect", {}, {"reason": "answer nested too deeply to parse"})
    except Exception as exc:  # a verifier bug: reported as error, never as 0.0
        return Verdict(
            None,
            "error",
            details={
                "reason": f"verifier raised {type(exc).__name__}",
                "traceback": traceback.format_exc(limit=6)[-2000:],
            },
        )


def _child_main(conn: Connection, memory_limit_bytes: int) -> None:
    _die_with_parent()
    # A crash is reported to the parent as an error verdict; a dump of every thread is noise.
    faulthandler.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    limit = _vm_size_bytes() + memory_limit_bytes
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        try:
            # A batch of calls in one message: a chunk of cheap checks pays one round trip,
            # while each verdict still goes back on its own, so the parent times each call.
            calls: list[Call] = conn.recv()
        except (EOFError, OSError):
            return
        for call in calls:
            started = time.perf_counter()
            verdict = verdict_for(call)
            elapsed_ms = (time.perf_counter() - started) * 1000.0
            try:
                conn.send((verdict.to_dict(), elapsed_ms))
            except MemoryError:
                conn.send(
                    (
                        Verdict(0.0, "timeout", {}, {"reason": "memory limit exceeded"}).to_dict(),
                        0.0,
                    )
                )


class BoundedRunner:
    """One killable child process that verifies calls in order, each within limits."""

    def __init__(self, timeout_s: float, memory_mb: int) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._pid: int | None = None
        self._conn: Connection | None = None
        # Readiness of the child's answers, registered once per child: ``Connection.poll``
        # builds and tears down a selector for every verdict.
        self._answers: select.poll | None = None
        self._owner_pid = os.getpid()
        self.restarts = 0

    def _spawn(self) -> None:
        parent_conn, child_conn = Pipe(duplex=True)
        # The child's garbage collector leaves alone what it inherits (the worker's modules,
        # parser tables, caches: ~400k objects): collecting them would walk, and through the
        # copy-on-write of every object header copy, the whole inherited heap again and again,
        # which made a verification in the child cost ~1.7x its time in the worker itself.
        frozen_already = gc.get_freeze_count() > 0
        gc.freeze()
        pid = os.fork()
        if pid != 0 and not frozen_already:
            gc.unfreeze()  # the worker's own collector stays as it was
        if pid == 0:  # child
            code = 0
            try:
                parent_conn.close()
                _child_main(child_conn, self.memory_mb * 1024 * 1024)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        child_conn.close()
        self._pid, self._conn = pid, parent_conn
        self._answers = select.poll()
        self._answers.register(parent_conn.fileno(), select.POLLIN)

    def _reap(self, kill: bool) -> int | None:
        """Stop the child; return the signal that ended it, if any."""
        pid, conn = self._pid, self._conn
        self._pid, self._conn, self._answers = None, None, None
        if conn is not None:
            conn.close()
        if pid is None:
            return None
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None
        return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None

    def call(self, call: Call, timeout_s: float | None = None) -> tuple[Verdict, float]:
        """Verify one call; returns the verdict and the wall time in milliseconds."""
        return self.call_many([call], timeout_s)[0]

    def call_many(
        self, calls: Sequence[Call], timeout_s: float | None = None
    ) -> list[tuple[Verdict, float]]:
        """Verify calls in order, each within the time limit of its own; returns each verdict
        and its time in milliseconds. The calls go to the child in one message; a call that
        overruns or kills the child costs a fresh child, and the rest go on in it."""
        if os.getpid() != self._owner_pid:  # inherited across a fork: never share a child
            self._pid, self._conn, self._answers = None, None, None
            self._owner_pid = os.getpid()
        limit = self.timeout_s if timeout_s is None else timeout_s
        results: list[tuple[Verdict, float]] = []
        while len(results) < len(calls):
            if self._conn is None:
                self._spawn()
            assert self._conn is not None
            started = time.perf_counter()
            try:
                self._conn.send(list(calls[len(results) :]))
                while len(results) < len(calls):
                    if not self._answered(limit - (time.perf_counter() - started)):
                        results.append(self._overran(limit, started))
                        break
                    verdict_dict, elapsed_ms = self._conn.recv()
                    results.append((Verdict.from_dict(verdict_dict), elapsed_ms))
                    started = time.perf_counter()
            except (EOFError, OSError, BrokenPipeError):
                results.append(self._died(started))
        return results

    def _answered(self, timeout_s: float) -> bool:
        """Whether the child has something to read (an answer, or its end) within
        ``timeout_s``, rounded as ``Connection.poll`` rounds it."""
        assert self._answers is not None
        return bool(self._answers.poll(max(0, math.ceil(timeout_s * 1000.0))))

    def _overran(self, limit: float, started: float) -> tuple[Verdict, float]:
        self._reap(kill=True)
        self.restarts += 1
        elapsed = (time.perf_counter() - started) * 1000.0
        reason = f"verification exceeded the time limit of {limit:g} s"
        return Verdict(0.0, "timeout", {}, {"reason": reason}), elapsed

    def _died(self, started: float) -> tuple[Verdict, float]:
        term_signal = self._reap(kill=False)
        self.restarts += 1
        elapsed = (time.perf_counter() - started) * 1000.0
        # Memory bombs end as MemoryError under RLIMIT_AS (a "timeout" verdict above); a child
        # that dies on its own — a crash, the OOM killer, an operator's kill — is the service
        # failing, so the item gets no reward rather than a 0.0.
        reason = f"verifier process died (signal {term_signal})"
        log.error("bounded verifier crashed: %s", reason)
        return Verdict(None, "error", details={"reason": reason}), elapsed

    def close(self) -> None:
        if self._pid is not None and os.getpid() == self._owner_pid:
            self._reap(kill=True)


_runners: dict[int, BoundedRunner] = {}


def get_runner(timeout_s: float, memory_mb: int) -> BoundedRunner:
    """The bounded runner of this process (one child per worker process)."""
    runner = _runners.get(os.getpid())
    if runner is None:
        # Load parsers here, once, so the forked child (and every re-fork after a kill) starts
        # warm instead of spending its first time limit importing sympy.
        warm_up_verifiers()
        runner = BoundedRunner(timeout_s, memory_mb)
        _runners[os.getpid()] = runner
    runner.timeout_s, runner.memory_mb = timeout_s, memory_mb
    return runner
