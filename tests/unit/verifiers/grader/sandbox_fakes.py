"""A sandbox backend that answers every run with one canned result (or refuses sessions), and
run results to answer with: python graders without a sandbox."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from service.sandbox import ProbeReport, RunResult, RunSpec


def run_result(**changes: Any) -> RunResult:
    fields: dict[str, Any] = {
        "exit_code": 0,
        "term_signal": None,
        "cpu_s": 0.01,
        "wall_s": 0.02,
        "stdout": b"",
        "stderr": b"",
        "result": b"",
    }
    fields.update(changes)
    return RunResult(**fields)


class FakeSandbox:
    """A sandbox backend that answers every run with one result, or refuses sessions."""

    name = "fake"

    def __init__(self, result: RunResult | None = None, refuse: Exception | None = None) -> None:
        self.result, self.refuse = result, refuse
        self.files: Mapping[str, bytes] = {}
        self.specs: list[RunSpec] = []

    def probe(self) -> ProbeReport:
        return ProbeReport(self.name, True)

    @contextmanager
    def session(
        self,
        files: Mapping[str, bytes],
        language: str | None = None,
        warm_files: Mapping[str, str] | None = None,
    ) -> Iterator[Any]:
        if self.refuse is not None:
            raise self.refuse
        self.files = files
        yield self

    def run(self, spec: RunSpec) -> RunResult:
        self.specs.append(spec)
        assert self.result is not None
        return self.result

    def close(self) -> None:
        return None
