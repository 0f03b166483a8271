"""The killable child: limits hold even for work that never releases the interpreter lock."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from service.execution.bounded import WALL_FACTOR, WALL_SLACK_S, BoundedRunner, Call
from service.verifiers.base import InvalidGroundTruth, Verdict
from service.verifiers.registry import VerifierKind, register_kind


def _behave(
    completion: str, ground_truth: Any, config: Mapping[str, Any], prompt: str | None = None
) -> Verdict:
    if completion == "gil-bound":
        # One C-level big-int operation: holds the GIL, ignores signals, runs for minutes.
        _ = 10 ** (10**9)
    elif completion == "memory":
        _ = bytearray(8 * 1024**3)
    elif completion == "crash":
        os.kill(os.getpid(), 11)
    elif completion == "bug":
        raise ZeroDivisionError("a verifier bug")
    elif completion == "bad-truth":
        raise InvalidGroundTruth("ground truth is empty")
    elif completion == "sleep":
        time.sleep(float(config["sleep_s"]))
    elif completion == "spin":
        until = time.process_time() + float(config["cpu_s"])
        while time.process_time() < until:
            pass
    elif completion == "deep":

        def nest(n: int) -> int:
            return nest(n + 1)

        nest(0)
    elif completion == "gc-state":
        return Verdict(0.0, "incorrect", {}, {"frozen": gc.get_freeze_count()})
    ok = completion == ground_truth
    return Verdict(1.0 if ok else 0.0, "correct" if ok else "incorrect", {"accuracy": float(ok)})


register_kind(
    VerifierKind(
        kind="test-behaviour",
        verify=_behave,
        code_version="0",
        library_versions={},
        validate_config=dict,
    )
)


@pytest.fixture
def runner() -> Iterator[BoundedRunner]:
    bounded = BoundedRunner(timeout_s=1.0, memory_mb=256)
    yield bounded
    bounded.close()


def call(completion: str, ground_truth: str = "x") -> Call:
    return Call("test-behaviour", completion, ground_truth, {}, None)


def test_ordinary_calls_reuse_one_child(runner: BoundedRunner) -> None:
    assert runner.call(call("x"))[0].status == "correct"
    assert runner.call(call("y"))[0].status == "incorrect"
    assert runner.restarts == 0


def test_child_collector_skips_the_inherited_heap_and_the_worker_keeps_its_own(
    runner: BoundedRunner,
) -> None:
    assert gc.get_freeze_count() == 0
    verdict, _ = runner.call(call("gc-state"))
    # Objects the child inherited are frozen (never traversed, never copied by the collector).
    assert verdict.details["frozen"] > 1000
    assert gc.get_freeze_count() == 0


def test_gil_bound_work_is_killed_at_the_time_limit(runner: BoundedRunner) -> None:
    started = time.monotonic()
    verdict, elapsed_ms = runner.call(call("gil-bound"))
    assert verdict.status == "timeout" and verdict.reward == 0.0
    assert time.monotonic() - started < 3.0
    assert elapsed_ms >= 1000.0
    # The next call gets a fresh child and a normal verdict.
    assert runner.call(call("x"))[0].status == "correct"
    assert runner.restarts == 1


def test_memory_bomb_hits_the_memory_limit(runner: BoundedRunner) -> None:
    verdict, _ = runner.call(call("memory"))
    assert verdict.status == "timeout"
    assert "memory" in verdict.details["reason"]
    assert runner.call(call("x"))[0].status == "correct"


def test_crash_is_an_error_with_null_reward(runner: BoundedRunner) -> None:
    verdict, _ = runner.call(call("crash"))
    assert verdict.status == "error" and verdict.reward is None
    assert runner.call(call("x"))[0].status == "correct"


def test_verifier_bug_is_an_error_not_zero(runner: BoundedRunner) -> None:
    verdict, _ = runner.call(call("bug"))
    assert verdict.status == "error" and verdict.reward is None
    assert "ZeroDivisionError" in verdict.details["reason"]
    assert runner.restarts == 0


def test_invalid_ground_truth_is_invalid(runner: BoundedRunner) -> None:
    verdict, _ = runner.call(call("bad-truth"))
    assert verdict.status == "invalid" and verdict.reward is None
    assert "empty" in verdict.details["reason"]


def test_runaway_recursion_is_incorrect(runner: BoundedRunner) -> None:
    verdict, _ = runner.call(call("deep"))
    assert verdict.status == "incorrect" and verdict.reward == 0.0


def test_child_dies_with_its_owner(runner: BoundedRunner) -> None:
    runner.call(call("x"))
    child = runner._pid
    assert child is not None
    runner.close()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_a_batch_goes_on_past_an_overrun_and_a_crash(runner: BoundedRunner) -> None:
    # One message for the chunk; each call keeps its own clock, and what kills or outlasts
    # the child costs only that call: the rest are verdicts from a fresh child.
    batch = [call("x"), call("gil-bound"), call("y"), call("crash"), call("x"), call("bug")]
    results = runner.call_many(batch)
    statuses = [verdict.status for verdict, _ in results]
    assert statuses == ["correct", "timeout", "incorrect", "error", "correct", "error"]
    assert results[3][0].reward is None and results[1][0].reward == 0.0
    assert runner.restarts == 2
    assert results[1][1] >= 1000.0
    # Every other call is timed on its own, not charged the overrun's second.
    assert all(ms < 1000.0 for i, (_, ms) in enumerate(results) if i != 1)


def test_each_call_of_a_batch_has_the_whole_limit(runner: BoundedRunner) -> None:
    # Three calls that each take 0.6 s of a 1 s limit: 1.8 s in all, none of them over.
    slow = Call("test-behaviour", "sleep", "x", {"sleep_s": 0.6}, None)
    results = runner.call_many([slow, slow, slow])
    assert [verdict.status for verdict, _ in results] == ["incorrect"] * 3
    assert runner.restarts == 0


def test_held_back_answers_never_stretch_a_calls_clock() -> None:
    # The child holds its answers for 5 s here, so the parent hears nothing for 1.6 s: each
    # call is still judged by its own 0.4 s, not by the silence.
    bounded = BoundedRunner(timeout_s=1.0, memory_mb=256, answer_every_s=5.0)
    try:
        slow = Call("test-behaviour", "sleep", "x", {"sleep_s": 0.4}, None)
        results = bounded.call_many([slow, slow, slow, slow])
        assert [verdict.status for verdict, _ in results] == ["incorrect"] * 4
        assert all(400.0 <= ms < 1000.0 for _, ms in results)
        assert bounded.restarts == 0
    finally:
        bounded.close()


@pytest.mark.parametrize("failure", ["gil-bound", "crash"])
def test_answers_held_when_the_child_fails_are_verified_again(failure: str) -> None:
    # The calls before the failing one were answered inside the child but not yet sent: the
    # failure is charged to the call that caused it, and the others get their own verdicts.
    bounded = BoundedRunner(timeout_s=1.0, memory_mb=256, answer_every_s=5.0)
    try:
        batch = [call("x"), call("y"), call("x"), call(failure), call("y")]
        statuses = [verdict.status for verdict, _ in bounded.call_many(batch)]
        failed = "timeout" if failure == "gil-bound" else "error"
        assert statuses == ["correct", "incorrect", "correct", failed, "incorrect"]
        assert bounded.restarts == 1
    finally:
        bounded.close()


def test_a_call_is_not_charged_for_time_without_the_cpu(runner: BoundedRunner) -> None:
    # The limit is on CPU time: a child stopped for 1.5 s (as a loaded machine can leave it
    # waiting for a core) while it does 0.6 s of work is not over its 1 s limit.
    spin = Call("test-behaviour", "spin", "x", {"cpu_s": 0.6}, None)
    runner.call(call("x"))  # the child exists
    assert runner._pid is not None
    child = runner._pid

    def starve() -> None:
        time.sleep(0.05)
        os.kill(child, signal.SIGSTOP)
        time.sleep(1.5)
        os.kill(child, signal.SIGCONT)

    starver = threading.Thread(target=starve)
    starver.start()
    try:
        verdict, ms = runner.call(spin)
    finally:
        starver.join()
    assert verdict.status == "incorrect", verdict.details
    assert ms >= 1500.0
    assert runner.restarts == 0


def test_cpu_spent_past_the_limit_is_a_timeout_that_names_the_cpu(runner: BoundedRunner) -> None:
    verdict, ms = runner.call(Call("test-behaviour", "spin", "x", {"cpu_s": 30.0}, None))
    assert verdict.status == "timeout" and verdict.reward == 0.0
    assert "CPU time" in verdict.details["reason"]
    # Stopped by its CPU time, not by the wall clock's bound (3 s for a 1 s limit).
    assert 1000.0 <= ms < WALL_FACTOR * 1000.0 + WALL_SLACK_S * 1000.0
    assert runner.restarts == 1


def test_the_wall_clock_still_ends_a_call_that_uses_no_cpu(runner: BoundedRunner) -> None:
    verdict, ms = runner.call(Call("test-behaviour", "sleep", "x", {"sleep_s": 60.0}, None))
    assert verdict.status == "timeout" and verdict.reward == 0.0
    assert verdict.details["reason"] == "verification took more than 3 s"
    assert ms >= (WALL_FACTOR * 1.0 + WALL_SLACK_S) * 1000.0
    assert runner.restarts == 1
    assert runner.call(call("x"))[0].status == "correct"
