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
import mmap
import os
import resource
import select
import signal
import struct
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


def astuple(call: Call) -> tuple[str, str, Any, dict[str, Any], str | None]:
    """The call as the child receives it (``dataclasses.astuple`` would copy every value)."""
    return call.kind, call.completion, call.ground_truth, call.config, call.prompt


# A verdict as the child sends it: reward, status, components, details, milliseconds.
Answer = tuple[float | None, str, dict[str, float], dict[str, Any], float]


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


# What the child is verifying, shared with its parent: (the call's place in its batch, when it
# started on the monotonic clock, the child's CPU time then; both in ns, -1 until the child
# takes up the batch). The parent keeps each call's clock from this, so the child can hold its
# answers back and send a batch's verdicts in a few messages.
_PROGRESS = struct.Struct("qqq")
_NOT_STARTED = -1
# A call's limit is on the CPU time it uses: a call that waits for a core on a loaded machine is
# not charged for the wait (a wall-clock limit turned load into 0.0 rewards). The wall clock
# still ends any call at WALL_FACTOR times its limit plus WALL_SLACK_S, the bound the sandbox
# puts on a test.
WALL_FACTOR = 2.0
WALL_SLACK_S = 1.0


def wall_bound_s(limit_s: float) -> float:
    """The longest a call with a CPU-time limit of ``limit_s`` can take on the wall clock."""
    return WALL_FACTOR * limit_s + WALL_SLACK_S


_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# A child sends the answers it holds once the oldest is this old (and at the end of a batch):
# a call killed for overrunning loses at most this much of its batch's finished work, which
# then runs again in the fresh child.
ANSWER_EVERY_S = 0.05


def _child_main(
    conn: Connection, memory_limit_bytes: int, progress: mmap.mmap, answer_every_s: float
) -> None:
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
            # A batch of calls in one message, and their verdicts back in as few: a chunk of
            # cheap checks pays two messages, not one per call.
            # Plain tuples each way: a slotted dataclass pickles through Python code per field.
            calls = [Call(*fields) for fields in conn.recv()]
        except (EOFError, OSError):
            return
        held: list[Answer] = []
        oldest = 0.0
        for index, call in enumerate(calls):
            started = time.perf_counter()
            _PROGRESS.pack_into(progress, 0, index, time.monotonic_ns(), time.process_time_ns())
            verdict = verdict_for(call)
            finished = time.perf_counter()
            if not held:
                oldest = finished
            held.append((*_fields(verdict), (finished - started) * 1000.0))
            if index == len(calls) - 1 or finished - oldest >= answer_every_s:
                _answer(conn, held)
                held = []


def _fields(verdict: Verdict) -> tuple[float | None, str, dict[str, float], dict[str, Any]]:
    return verdict.reward, verdict.status, verdict.components, verdict.details


def _answer(conn: Connection, answers: list[Answer]) -> None:
    try:
        conn.send(answers)
    except MemoryError:
        # One verdict too big to send under the memory limit: that one is the timeout.
        for answer in answers:
            try:
                conn.send([answer])
            except MemoryError:
                memory = Verdict(0.0, "timeout", {}, {"reason": "memory limit exceeded"})
                conn.send([(*_fields(memory), 0.0)])


def _cpu_ns(pid: int | None) -> int | None:
    """The CPU time (user and system) process ``pid`` has used, ns; None if it is gone."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # After the command name (which may hold spaces and parentheses) the fields are
            # numbered from 3 (state); utime and stime are fields 14 and 15, in clock ticks.
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // _TICKS_PER_S


class BoundedRunner:
    """One killable child process that verifies calls in order, each within limits."""

    def __init__(
        self, timeout_s: float, memory_mb: int, answer_every_s: float = ANSWER_EVERY_S
    ) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.answer_every_s = answer_every_s
        self._pid: int | None = None
        self._conn: Connection | None = None
        self._progress: mmap.mmap | None = None
        # Readiness of the child's answers, registered once per child: ``Connection.poll``
        # builds and tears down a selector for every verdict.
        self._answers: select.poll | None = None
        self._owner_pid = os.getpid()
        self.restarts = 0

    def _spawn(self) -> None:
        parent_conn, child_conn = Pipe(duplex=True)
        progress = mmap.mmap(-1, _PROGRESS.size)  # shared with the child across the fork
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
                _child_main(child_conn, self.memory_mb * 1024 * 1024, progress, self.answer_every_s)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        child_conn.close()
        self._pid, self._conn, self._progress = pid, parent_conn, progress
        self._answers = select.poll()
        self._answers.register(parent_conn.fileno(), select.POLLIN)

    def _reap(self, kill: bool) -> int | None:
        """Stop the child; return the signal that ended it, if any."""
        pid, conn, progress = self._pid, self._conn, self._progress
        self._pid, self._conn, self._answers, self._progress = None, None, None, None
        if conn is not None:
            conn.close()
        if progress is not None:
            progress.close()
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
        and its time in milliseconds. The calls go to the child in one message and their
        verdicts come back in a few; a call that overruns or kills the child costs a fresh
        child, in which the calls not answered yet go on."""
        if os.getpid() != self._owner_pid:  # inherited across a fork: never share a child
            self._pid, self._conn, self._answers, self._progress = None, None, None, None
            self._owner_pid = os.getpid()
        limit = self.timeout_s if timeout_s is None else timeout_s
        results: dict[int, tuple[Verdict, float]] = {}
        while len(results) < len(calls):
            batch = [position for position in range(len(calls)) if position not in results]
            if self._conn is None:
                self._spawn()
            self._run_batch(calls, batch, limit, results)
        return [results[position] for position in range(len(calls))]

    def _run_batch(
        self,
        calls: Sequence[Call],
        batch: list[int],
        limit: float,
        results: dict[int, tuple[Verdict, float]],
    ) -> None:
        """Send ``batch`` (positions in ``calls``) to the child and collect its answers until
        all came back, or one call overran or killed the child: that call is answered with
        its timeout or its error, the child is gone, and the calls it had not answered (held
        back, or not reached) stay unanswered."""
        assert self._conn is not None and self._progress is not None
        _PROGRESS.pack_into(self._progress, 0, _NOT_STARTED, time.monotonic_ns(), _NOT_STARTED)
        answered = 0
        try:
            self._conn.send([astuple(calls[position]) for position in batch])
            while answered < len(batch):
                current = self._current()
                # A call the child has not started yet is on the clock of the one before it.
                if not self._answered(self._time_left(limit, current)):
                    if self._current() != current or self._time_left(limit, current) > 0:
                        # The child went on to the next call (that one's clock now), or this
                        # call has had the wall time but not the CPU time of its limit.
                        continue
                    index, started_ns, _ = current
                    culprit = batch[max(index, answered)]
                    results[culprit] = self._overran(limit, started_ns)
                    return
                for reward, status, components, details, elapsed_ms in self._conn.recv():
                    results[batch[answered]] = (
                        Verdict(reward, status, components, details),
                        elapsed_ms,
                    )
                    answered += 1
        except (EOFError, OSError, BrokenPipeError):
            index, started_ns, _ = self._current()
            results[batch[max(index, answered)]] = self._died(started_ns)

    def _current(self) -> tuple[int, int, int]:
        """(the call the child is on, its place in the batch; when it started, ns; the child's
        CPU time then, ns)."""
        assert self._progress is not None
        while True:
            first = _PROGRESS.unpack_from(self._progress, 0)
            if _PROGRESS.unpack_from(self._progress, 0) == first:  # not read mid-write
                return first

    def _time_left(self, limit: float, current: tuple[int, int, int]) -> float:
        """Seconds before the call in ``current`` can be over its limit: it has used ``limit``
        seconds of CPU, or had the wall clock's bound."""
        _, started_ns, started_cpu_ns = current
        wall_s = (time.monotonic_ns() - started_ns) / 1e9
        if wall_s < limit:
            return limit - wall_s  # it cannot have used more CPU than it had wall time
        wall_left = wall_bound_s(limit) - wall_s
        cpu_ns = _cpu_ns(self._pid) if started_cpu_ns != _NOT_STARTED else None
        if cpu_ns is None:
            return max(0.0, wall_left)
        return max(0.0, min(limit - (cpu_ns - started_cpu_ns) / 1e9, wall_left))

    def _answered(self, timeout_s: float) -> bool:
        """Whether the child has something to read (an answer, or its end) within
        ``timeout_s``, rounded as ``Connection.poll`` rounds it."""
        assert self._answers is not None
        return bool(self._answers.poll(max(0, math.ceil(timeout_s * 1000.0))))

    def _overran(self, limit: float, started_ns: int) -> tuple[Verdict, float]:
        # Which bound it met is read before the kill: reaping the child takes time of its own.
        elapsed = (time.monotonic_ns() - started_ns) / 1e6
        self._reap(kill=True)
        self.restarts += 1
        if elapsed < wall_bound_s(limit) * 1000.0:
            reason = f"verification used more than its limit of {limit:g} s of CPU time"
        else:
            reason = f"verification took more than {wall_bound_s(limit):g} s"
        return Verdict(0.0, "timeout", {}, {"reason": reason}), elapsed

    def _died(self, started_ns: int) -> tuple[Verdict, float]:
        term_signal = self._reap(kill=False)
        self.restarts += 1
        elapsed = (time.monotonic_ns() - started_ns) / 1e6
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
