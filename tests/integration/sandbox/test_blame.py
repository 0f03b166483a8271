"""Attacks on who is blamed and what is charged: a program's output must never turn its own
failure into the sandbox's, and cleaning up after one test must not count against the next."""

from __future__ import annotations

import time

from service.sandbox.base import Limits
from tests.integration.sandbox.conftest import Sandboxed
from tests.integration.sandbox.forged_failures import FORGED_SETUP_FAILURE


def test_a_forged_setup_failure_stays_the_programs_failure(sandbox: Sandboxed) -> None:
    started = time.monotonic()
    forged, after = sandbox.runs([FORGED_SETUP_FAILURE, "print('next test')\n"], wall_s=10.0)
    # Its own failure (the output cap, or its exit status), never a SandboxError; and the next
    # test of the same submission runs as usual.
    assert forged.killed == "stderr_limit" or forged.exit_code == 125, forged
    assert after.stdout == b"next test\n" and after.exit_code == 0
    assert time.monotonic() - started < 15.0


LITTER = "for i in range(1000):\n    open(f'/tmp/t{i}', 'w').close()\nprint('littered')\n"
CORRECT = "print(sum(range(10**5)))\n"


def test_cleaning_up_after_a_test_is_not_charged_to_the_next(sandbox: Sandboxed) -> None:
    littered, correct = sandbox.runs([LITTER, CORRECT], cpu_s=1.0, wall_s=3.0)
    assert littered.stdout == b"littered\n"
    assert correct.stdout == b"4999950000\n"
    assert not correct.exceeded_time(Limits(cpu_s=1.0, wall_s=3.0)), correct
    assert correct.cpu_s < 0.3 and correct.wall_s < 1.0, correct
