"""Run a program's tests in a sandbox session and judge each on the host.

Python tests run in batches (``batch.py``): one sandbox run holds every test that is left,
each with its own limits, each reported as soon as it ends. A test that crashes the run or
goes over a limit is recorded for that test, and a fresh run takes the tests after it.
C++ programs run once per test.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from service.sandbox.base import RunSpec, SandboxSession

from .batch import run_batch
from .bundle import harness_files
from .ground_truth import CodeProblem, StdioTest
from .judge import (
    ACCEPTED,
    COMPILE_ERROR,
    MEMORY_LIMIT,
    OUTPUT_LIMIT,
    TIME_LIMIT,
    run_failure,
)
from .outcomes import (
    HARNESS_LIMIT,
    TestOutcome,
    expected_bytes,
    judge_record,
    judge_stdio,
    outcome_of,
    test_limits,
)

__all__ = ["Execution", "TestOutcome", "execute", "item_budget_s", "session_files", "test_limits"]

# Engine and process overhead per run on top of its wall clock (docker exec, interpreter).
_RUN_OVERHEAD_S = 1.0


def item_budget_s(problem: CodeProblem) -> float:
    """The longest one item may take: compile plus every test at its wall clock (and a run's
    overhead each, as if each test needed a run of its own)."""
    compile_limits = problem.language.compile_limits
    total = compile_limits.wall_s + _RUN_OVERHEAD_S if compile_limits is not None else 0.0
    per_test = test_limits(problem).wall_s + _RUN_OVERHEAD_S
    return total + per_test * len(problem.tests)


@dataclass(slots=True)
class Execution:
    tests: list[TestOutcome] = field(default_factory=list)
    compile: TestOutcome | None = None
    # Set when the tests cannot be judged at all: the ground truth asks to send the solution
    # what plain data cannot carry.
    harness_limit: str | None = None


def _stdio_run(
    session: SandboxSession, problem: CodeProblem, test: StdioTest, index: int
) -> TestOutcome:
    limits = test_limits(problem, expected_bytes(test))
    stdin = test.stdin.encode("utf-8", "replace")
    result = session.run(RunSpec(problem.language.run_argv, stdin, limits))
    return judge_stdio(problem, test, index, result, limits)


def _compile(session: SandboxSession, problem: CodeProblem) -> TestOutcome | None:
    language = problem.language
    if language.compile_argv is None or language.compile_limits is None:
        return None
    limits = language.compile_limits
    result = session.run(RunSpec(language.compile_argv, b"", limits, work_writable=True))
    failure = run_failure(result, limits)
    if failure is None:
        return outcome_of(-1, result, ACCEPTED, None)
    status, reason = failure
    if status not in (TIME_LIMIT, MEMORY_LIMIT, OUTPUT_LIMIT):
        status, reason = COMPILE_ERROR, result.stderr[:2000].decode("utf-8", "replace") or reason
    return outcome_of(-1, result, status, f"compile: {reason}")


def execute(
    session: SandboxSession,
    problem: CodeProblem,
    stop_at_failure: bool,
    budget_s: float | None = None,
) -> Execution:
    """Compile if the language needs it, then run the tests in order; with ``budget_s``, what
    is left once that many seconds are spent is a time limit without running."""
    execution = Execution(compile=_compile(session, problem))
    if execution.compile is not None and execution.compile.status != ACCEPTED:
        return execution
    if problem.language.name == "python":
        _run_batches(session, problem, stop_at_failure, budget_s, execution)
        return execution
    for index, test in enumerate(problem.tests):
        assert isinstance(test, StdioTest)
        outcome = _stdio_run(session, problem, test, index)
        execution.tests.append(outcome)
        if stop_at_failure and outcome.status != ACCEPTED:
            break
    return execution


def _run_batches(
    session: SandboxSession,
    problem: CodeProblem,
    stop_at_failure: bool,
    budget_s: float | None,
    execution: Execution,
) -> None:
    deadline = None if budget_s is None else time.monotonic() + budget_s
    pending = list(range(len(problem.tests)))
    one_at_a_time = False

    def add(outcome: TestOutcome) -> bool:
        """Record an outcome; False when no more tests should run."""
        if outcome.status == HARNESS_LIMIT:
            execution.harness_limit = outcome.reason
            return False
        execution.tests.append(outcome)
        return not (stop_at_failure and outcome.status != ACCEPTED)

    while pending:
        left_s = None if deadline is None else deadline - time.monotonic()
        if left_s is not None and left_s <= 0:
            for index in pending:
                if not add(TestOutcome(index, TIME_LIMIT, "the item's time budget was spent")):
                    return
            return
        batch = pending[:1] if one_at_a_time else pending
        run = run_batch(session, problem, batch, stop_at_failure, left_s)
        for record in run.records:
            if not add(judge_record(problem, problem.tests[record.index], record)):
                return
        pending = pending[len(run.records) :]
        if run.missing is not None:
            # The run ended without a word on this test: it is charged with what ended the
            # run, and a fresh run goes on after it.
            if not add(run.missing):
                return
            pending = pending[1:]
            # Only a harness the solution stopped meets the run's own wall clock: from then on
            # one test per run, so that each is bounded by its own clock.
            one_at_a_time = one_at_a_time or run.result.killed == "wall"


def session_files(problem: CodeProblem, program: str, backend: str) -> dict[str, bytes]:
    """The program, and for Python the harness as ``backend`` reads it."""
    files = {problem.language.source_file: program.encode("utf-8", "replace")}
    if problem.language.name == "python":
        files.update(harness_files(backend, problem.mode))
    return files
