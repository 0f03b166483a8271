"""The driver: the sandbox run's own process (started by ``boot``), running the tests.

It runs every test of one submission in this one run, each with its own limits, and writes
one JSON line per test to fd 3 as soon as the test ends (a stdio test's output goes to
stdout, its length in the line). A test that crashes the solution, runs out of time or over
an output cap is recorded, and the run ends there: the host starts a fresh run for the tests
that are left. The job (``<length>\\n<json>`` on stdin) is read only after the solution
process is forked, so no test, and no expected value of a test, is ever in its memory.
"""

from __future__ import annotations

import base64
import io
import json
import os
import resource
import signal
import sys
import time
from typing import Any

from . import cases, numpy_stand_in, osutil, pytest_stand_in
from .link import Link, ProtocolError, TestTimeout
from .output import Output, OutputLimit
from .process import Forked
from .proxies import (
    HarnessLimit,
    NotPlainResult,
    Session,
    SolutionGone,
    SolutionModule,
    raised_in_solution,
)
from .records import HEAD, Records, clip, known_failure, text

_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
_OUT_OF_MEMORY = "MemoryError: the test does not fit in the harness's memory\n"


def _missing_module(exc: ImportError) -> str | None:
    """Why the test cannot run, when its own import failed (MBPP+'s test code starts with
    ``import numpy``, which the sandbox's Python does not have): the ground truth's limit, not
    the solution's failure. An import error the solution raised crosses without a module name,
    and a name the solution lacks (``from solution import f``) is the solution's failure."""
    name = exc.name
    if type(name) is not str or name.partition(".")[0] == "solution":
        return None
    return f"the test imports {name[:100]!r}, which the sandbox's Python cannot import"


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _test_traceback() -> str:
    import traceback

    kind, value, tb = sys.exc_info()
    try:
        # The test's frames only: the harness's (proxies, the driver) are not the test's.
        frames = [f for f in traceback.extract_tb(tb) if not f.filename.startswith(_HARNESS_DIR)]
        lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
        return "".join(lines + traceback.format_exception_only(kind, value))
    except Exception:  # a report, not a reason to lose the test: the exception alone
        return f"{getattr(kind, '__name__', 'exception')}: {value}\n"


class SolutionProcess:
    """The solution process (forked by ``boot``) as the driver handles it."""

    def __init__(self, forked: Forked) -> None:
        self.pid, self.started = forked.pid, forked.started
        output = Output(forked.stdout_fd, forked.stderr_fd)
        self.link = Link(forked.pid, forked.requests_fd, forked.replies_fd, output)
        self.status: int | None = None

    def end(self) -> int:
        """Kill it (if it still runs) and its group; its wait status."""
        if self.status is None:
            osutil.kill_tree(self.pid)
            _, self.status = os.waitpid(self.pid, 0)
            self.link.gone = True
        return self.status


class _Outcome:
    """How one function or assert test ended, as the driver saw it."""

    def __init__(self, killed: str | None = None, abnormal: bool = False) -> None:
        self.report: dict[str, Any] | None = None
        self.exit = 0
        self.killed = killed
        self.abnormal = abnormal
        self.gone = False
        # The driver's own memory ran out during the test (the solution's word never sets it).
        self.memory = False
        self.trace = ""


class Driver:
    """Function and assert tests against the solution process."""

    def __init__(self, job: dict[str, Any], solution: SolutionProcess) -> None:
        self.job, self.solution = job, solution
        self.records = Records(job)
        self.session = Session(solution.link)
        self.active = False
        self.codes: dict[int, list[Any]] = {}
        self.uncompiled: dict[int, str] = {}
        osutil.set_handler(signal.SIGALRM, self._alarm)

    def _alarm(self, signum: int, frame: Any) -> None:
        # Only while a test runs, and only at its deadline: a SIGALRM the solution sends
        # changes nothing.
        if self.active and self.solution.link.clock.left() <= 0.001:
            self.active = False
            expired = TestTimeout("wall")
            self.solution.link.end_test(expired)
            raise expired

    def run(self) -> None:
        tests = self.job["tests"]
        SolutionModule.session = self.session
        sys.modules["solution"] = SolutionModule("solution")
        numpy_stand_in.install()
        pytest_stand_in.install()
        # Compiled before the first test (which the solution's loading is charged to), so
        # that one lookup binds the names of every test.
        for spec in tests:
            try:
                self.codes[spec["index"]] = cases.compiled(spec)
            except (SyntaxError, ValueError, OverflowError, RecursionError) as exc:
                self.uncompiled[spec["index"]] = f"{type(exc).__name__}: {exc}"
        self.session.expect(cases.names([c for codes in self.codes.values() for c in codes]))
        for position, spec in enumerate(tests):
            out_of_memory = False
            try:
                record, abnormal = self.solution_test(spec, first=position == 0)
                emitted = self._emit(spec, record)
            except MemoryError:
                # The frames holding what did not fit are gone once this clause ends.
                out_of_memory = True
            if out_of_memory:
                record, abnormal = self._out_of_memory(spec), True
                emitted = self.records.emit(record)
            if not emitted:
                self._stop("budget")
                return
            if abnormal:
                if not self.solution.link.ready:
                    # The solution never loaded: every test fails the same way.
                    for later in tests[position + 1 :]:
                        if not self.records.emit({**record, "index": later["index"]}):
                            break
                self.records.end("abnormal")
                return
            if self.job.get("stop_at_failure") and known_failure(record):
                self._stop("failed")
                return
        self._stop("done")

    def _emit(self, spec: dict[str, Any], record: dict[str, Any]) -> bool:
        report = record.get("report")
        if report is not None:
            # Why a test failed may name what the solution made (its class's name).
            for key in ("invalid_result", "harness_limit"):
                if type(report.get(key)) is str:
                    report[key] = text(report[key])
        if report is not None and len(json.dumps(report)) > spec["result_cap"]:
            record.update(report=None, killed="result_limit")
        return self.records.emit(record)

    def _out_of_memory(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The test's record when what the solution handed over (a value within plain data's
        bounds) does not fit in this process's memory: the test's memory limit, never the
        sandbox's failure (a null reward the solution could choose over its 0.0). The record
        says so in its own field: the host reads no limit from text."""
        link = self.solution.link
        cpu = link.cpu_used()
        self.solution.end()
        message = b"MemoryError: the test's result does not fit in the harness's memory\n"
        return {
            "index": spec["index"],
            "exit": 1,
            "signal": None,
            "memory": True,
            "cpu": cpu,
            "wall": time.monotonic() - link.clock.started,
            "killed": None,
            "report": None,
            "stdout_head": "",
            "stderr": base64.b64encode(message).decode(),
        }

    def _stop(self, reason: str) -> None:
        self.solution.end()
        self.records.end(reason)

    # -- function and assert tests -----------------------------------------------------------

    def solution_test(self, spec: dict[str, Any], first: bool) -> tuple[dict[str, Any], bool]:
        solution, session, link = self.solution, self.session, self.solution.link
        started = solution.started if first else time.monotonic()
        link.begin(started, spec["wall_s"], spec["cpu_s"], first)
        link.output.reset({"stdout": spec["stdout_cap"], "stderr": spec["stderr_cap"]})
        session.begin_test()
        own_cpu = _self_cpu()
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()  # what test code prints is not the solution's
        try:
            outcome = self._guarded(spec)
        except TestTimeout:  # the alarm came between the test's end and its disarming
            outcome = _Outcome(killed="wall", abnormal=True)
        finally:
            sys.stdout, sys.stderr = saved
        if session.invalid:
            outcome.report = {"invalid_result": session.invalid}
        link.output.drain()
        if link.output.exceeded and not outcome.abnormal:
            outcome.killed, outcome.abnormal = link.output.exceeded, True
        cpu = link.cpu_used() + max(0.0, _self_cpu() - own_cpu)
        record: dict[str, Any] = {"index": spec["index"], "exit": outcome.exit, "signal": None}
        if outcome.memory:
            record["memory"] = True
        if outcome.abnormal:
            status = solution.end()
            if outcome.gone:
                # It ended by itself (an exit, a crash, the OOM killer): its status decides.
                exited = os.WIFEXITED(status)
                record["exit"] = os.WEXITSTATUS(status) if exited else None
                record["signal"] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        out, err = link.output.buffers["stdout"], link.output.stderr()
        record.update(
            cpu=cpu,
            wall=time.monotonic() - started,
            killed=outcome.killed,
            report=outcome.report,
            stdout_head=base64.b64encode(bytes(out[:HEAD])).decode(),
            stderr=base64.b64encode(clip(err + text(outcome.trace).encode())).decode(),
        )
        return record, outcome.abnormal

    def _guarded(self, spec: dict[str, Any]) -> _Outcome:
        outcome = _Outcome()
        left = self.solution.link.clock.left()
        if left <= 0:
            return _Outcome(killed="wall", abnormal=True)
        self.active = True
        signal.setitimer(signal.ITIMER_REAL, left)
        try:
            report = self.run_case(spec)
            ended = self.solution.link.ended
            if ended is not None:
                # What ends a test, caught by test code (``try: f() except: pass`` around a
                # solution that sleeps or exits), ends it all the same, as in Python.
                raise ended
            outcome.report = report
        except TestTimeout as exc:
            outcome.killed = "wall" if exc.why == "wall" else None
            outcome.abnormal = True
        except OutputLimit as exc:
            outcome.killed, outcome.abnormal = exc.which, True
        except ProtocolError as exc:
            outcome.report, outcome.abnormal = {"invalid_result": str(exc)}, True
        except SolutionGone:
            outcome.abnormal = outcome.gone = True
        except NotPlainResult:
            pass  # the session holds the reason
        except HarnessLimit as exc:
            outcome.report = {"harness_limit": str(exc)}
        except AssertionError:
            outcome.report, outcome.trace = {"assertion_failed": True}, _test_traceback()
        except ImportError as exc:
            missing = _missing_module(exc)
            if missing is not None:
                outcome.report = {"harness_limit": missing}
            else:
                outcome.exit, outcome.trace = 1, _test_traceback()
        except MemoryError as exc:
            if raised_in_solution(exc):
                outcome.exit, outcome.trace = 1, _test_traceback()  # its word: a crash
            else:
                # This process's own memory ran out (the solution's data, the test's work):
                # the test's memory limit. Nothing is built here, where memory is short.
                outcome.exit, outcome.trace = 1, _OUT_OF_MEMORY
                outcome.memory = outcome.abnormal = True
        except BaseException:
            outcome.exit, outcome.trace = 1, _test_traceback()
        finally:
            self.active = False
            signal.setitimer(signal.ITIMER_REAL, 0)
        return outcome

    def run_case(self, spec: dict[str, Any]) -> dict[str, Any]:
        kind = spec["kind"]
        if spec["index"] in self.uncompiled:
            why = self.uncompiled[spec["index"]]
            raise HarnessLimit(f"the test does not compile in the sandbox's Python: {why}")
        if kind == "function":
            return cases.run_function(self.session, spec, self.job["fn_name"])
        namespaces = spec.get("namespaces", [])
        if kind == "values":
            return cases.run_values(self.session, self.codes[spec["index"]], namespaces)
        return cases.run_exec(self.session, self.codes[spec["index"]], namespaces)


def run(job: dict[str, Any], forked: Forked) -> None:
    """Every test of the job."""
    Driver(job, SolutionProcess(forked)).run()
