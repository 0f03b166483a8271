"""Warm code: the host's code a sandbox server imports before it forks its run template.

A run uses a warm copy only where it is its own code (the same digest); anything else (code of
another Python, code that fails to import, a stale copy) is left out or ignored, and the run
loads what its session ships, as without warm code.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from service.sandbox import warm_code
from service.sandbox.base import Limits, RunSpec
from service.verifiers.code import bundle
from service.verifiers.code.batch import run_batch
from service.verifiers.code.ground_truth import parse_ground_truth
from tests.support import open_sandbox

SOLUTION = "def add(a, b):\n    return a + b\n"
PROBLEM = {
    "language": "python",
    "mode": "function",
    "fn_name": "add",
    "tests": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}],
}
SEES = """
import json, sys
found = {}
for name in ("rlvr_warm_test", "rlvr_warm_foreign", "rlvr_warm_broken"):
    module = sys.modules.get(name)
    found[name] = None if module is None else [module.VALUE, module.__bundle__]
print(json.dumps(found))
"""


def _warm(package: str, sources: dict[str, str], magic: bytes | None = None) -> warm_code.WarmCode:
    codes = {}
    for name, source in sources.items():
        module = package if name == "__init__" else f"{package}.{name}"
        codes[module] = compile(source, f"/warm/{module}.py", "exec")
    code = zlib.compress(marshal.dumps(codes))
    return warm_code.WarmCode(magic or importlib.util.MAGIC_NUMBER, f"digest-of-{package}", code)


OFFERS = {
    # A package of two modules, the package importing the other one.
    "test": _warm(
        "rlvr_warm_test",
        {"__init__": "from .values import VALUE\n", "values": "VALUE = 42\n"},
    ),
    # Compiled for another Python (its magic number is not this one's).
    "foreign": _warm("rlvr_warm_foreign", {"__init__": "VALUE = 1\n"}, magic=b"\x00\x00\r\n"),
    # Fails while it is imported.
    "broken": _warm("rlvr_warm_broken", {"__init__": "VALUE = 1\nraise RuntimeError('no')\n"}),
}


@pytest.fixture(scope="module", params=["local", "docker"])
def warm_backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A sandbox started once the test code and the harness were offered (and still offered
    while the docker pool starts more containers)."""
    offers = {name: (lambda warm=warm: warm) for name, warm in OFFERS.items()}
    offers["code-harness"] = bundle.warm_harness
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(warm_code, "_offers", offers)
        sandbox = open_sandbox(request.param)
        yield sandbox
        sandbox.close()


def _facts(backend: Any) -> dict[str, str]:
    facts: dict[str, str] = backend.probe().facts["warm_code"]
    return facts


def test_offered_code_is_imported_before_any_run_and_every_run_has_it(warm_backend: Any) -> None:
    assert _facts(warm_backend)["test"] == "imported"
    assert _facts(warm_backend)["code-harness"] == "imported"
    with warm_backend.session({"sees.py": SEES.encode()}) as session:
        result = session.run(RunSpec(("python3", "-I", "-S", "/work/sees.py"), b"", Limits()))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rlvr_warm_test"] == [42, "digest-of-rlvr_warm_test"]


def test_code_of_another_python_or_that_fails_to_import_is_left_out(warm_backend: Any) -> None:
    facts = _facts(warm_backend)
    assert facts["foreign"] == "skipped: bytecode of another Python"
    assert facts["broken"].startswith("failed: RuntimeError: no")
    with warm_backend.session({"sees.py": SEES.encode()}) as session:
        result = session.run(RunSpec(("python3", "-I", "-S", "/work/sees.py"), b"", Limits()))
    seen = json.loads(result.stdout)
    assert seen["rlvr_warm_foreign"] is None and seen["rlvr_warm_broken"] is None


def test_the_harness_runs_from_the_warm_copy(warm_backend: Any) -> None:
    # Without the shipped harness (only its starter): the run can only have used the warm copy.
    problem = parse_ground_truth(PROBLEM)
    files = {
        "solution.py": SOLUTION.encode(),
        **bundle.harness_files(warm_backend.name, "function"),
    }
    del files[bundle.CODE_NAME]
    with warm_backend.session(files) as session:
        run = run_batch(session, problem, [0, 1], stop_at_failure=False, left_s=None)
    assert [record.report for record in run.records] == [{"value": 3}, {"value": 10}]


LISTS_WORK = "import os\nprint(sorted(os.listdir('/work')))\n"


def test_a_file_the_warm_code_stands_for_is_left_out_of_work(warm_backend: Any) -> None:
    files = {"ls.py": LISTS_WORK.encode(), "warm.bin": b"w", "cold.bin": b"c"}
    warm = {"warm.bin": "digest-of-rlvr_warm_test", "cold.bin": "digest-of-rlvr_warm_foreign"}
    with warm_backend.session(files, None, warm) as session:
        result = session.run(RunSpec(("python3", "-I", "-S", "/work/ls.py"), b"", Limits()))
    # Held (imported): left out. Offered but skipped (another Python): shipped.
    assert result.stdout.decode().strip() == "['cold.bin', 'ls.py']"


def test_the_code_verifier_leaves_the_harness_bytecode_out_for_a_warm_server(
    warm_backend: Any,
) -> None:
    problem = parse_ground_truth(PROBLEM)
    files = {
        "solution.py": SOLUTION.encode(),
        **bundle.harness_files(warm_backend.name, "function"),
    }
    warm = bundle.warm_files(warm_backend.name)
    assert warm == {bundle.CODE_NAME: bundle.warm_harness().digest}
    with warm_backend.session(files, "python", warm) as session:
        run = run_batch(session, problem, [0, 1], stop_at_failure=False, left_s=None)
        listed = session.run(
            RunSpec(
                ("python3", "-I", "-S", "-c", "import os; print(os.listdir('/work'))"),
                b"",
                Limits(),
            )
        )
    assert [record.report for record in run.records] == [{"value": 3}, {"value": 10}]
    assert bundle.CODE_NAME not in listed.stdout.decode()


def test_a_warm_harness_that_is_not_the_runs_own_is_not_used() -> None:
    # A stale copy under the harness's name: the run drops it and loads what its session ships.
    stale = _warm(
        bundle.PACKAGE, {"__init__": "", "boot": "def main(argv):\n    raise SystemExit(9)\n"}
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(warm_code, "_offers", {"code-harness": lambda: stale})
        sandbox = open_sandbox("local")
    try:
        assert _facts(sandbox)["code-harness"] == "imported"
        problem = parse_ground_truth(PROBLEM)
        files = {"solution.py": SOLUTION.encode(), **bundle.harness_files("local", "function")}
        # Named as left out for a warm server: this one holds another digest, so it is shipped.
        with sandbox.session(files, "python", bundle.warm_files("local")) as session:
            run = run_batch(session, problem, [0, 1], stop_at_failure=False, left_s=None)
        assert [record.report for record in run.records] == [{"value": 3}, {"value": 10}]
    finally:
        sandbox.close()
