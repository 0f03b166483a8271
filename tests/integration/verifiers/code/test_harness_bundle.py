"""The harness as each real backend receives it: bytecode compiled on the host, or the
sources when the sandbox's Python reads other bytecode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.verifiers.code import bundle, verify
from service.verifiers.code.batch import run_batch
from service.verifiers.code.execute import session_files
from service.verifiers.code.ground_truth import parse_ground_truth

pytestmark = pytest.mark.usefixtures("each_sandbox")

PROBLEM = {"language": "python", "mode": "assert", "tests": ["assert f(2) == 4"]}
PROGRAM = "def f(x):\n    return x * x\n"


def test_another_pythons_magic_number_is_said_before_anything_runs(each_sandbox: Any) -> None:
    problem = parse_ground_truth(PROBLEM)
    files = session_files(problem, PROGRAM, each_sandbox.name)
    # The bootstrap as a host with another Python would have written it.
    files["driver.py"] = files["driver.py"].replace(b"MAGIC_NUMBER != b'", b"MAGIC_NUMBER != b'X")
    session = each_sandbox.session(files, language="python")
    with session as opened, pytest.raises(bundle.BytecodeMismatch):
        run_batch(opened, problem, [0], stop_at_failure=True, left_s=None)


@pytest.fixture
def sources_only(each_sandbox: Any) -> Iterator[None]:
    bundle.needs_sources(each_sandbox.name)
    try:
        yield
    finally:
        bundle._needs_sources.discard(each_sandbox.name)


def test_the_sources_run_where_the_bytecode_would_not(sources_only: None) -> None:
    assert verify(f"```python\n{PROGRAM}```", PROBLEM, {}).status == "correct"
    wrong = verify("```python\ndef f(x):\n    return x\n```", PROBLEM, {})
    assert wrong.status == "incorrect"
