"""What the driver writes: one JSON line per test on fd 3 (the run's result channel, which
only the driver holds), a stdio test's output on stdout, and an ``end`` line."""

from __future__ import annotations

import json
import os
from typing import Any

RESULT_FD = 3
HEAD = 4096


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def line(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode() + b"\n"


def text(value: str) -> str:
    """``value`` as text every UTF-8 writer takes. What the solution controls (an exception's
    message, a function's or a class's name, a value an assert message shows) may hold lone
    surrogates, which ``str.encode`` refuses: the harness failed on them, and a wrong answer
    became an error. They are written as their escapes."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def clip(data: bytes) -> bytes:
    """The head says what went wrong first; the tail holds the final traceback line."""
    if len(data) <= 2 * HEAD:
        return data
    return data[:HEAD] + b"\n[...]\n" + data[-HEAD:]


class Records:
    """fd 3 and stdout, within the run's budgets."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.nonce = job["nonce"]
        self.result_left = int(job["result_budget"])
        self.stdout_left = int(job["stdout_budget"])
        self.count = 0

    def emit(self, record: dict[str, Any], stdout: bytes = b"") -> bool:
        """Write one test's record; False (nothing written) if it would overflow a budget and
        is not the run's first (the host runs it again in a fresh run)."""
        data = line({**record, "nonce": self.nonce, "stdout_len": len(stdout)})
        fits = len(data) <= self.result_left and len(stdout) <= self.stdout_left
        if not fits and self.count:
            return False
        if stdout:
            write_all(1, stdout)
        write_all(RESULT_FD, data)
        self.result_left -= len(data)
        self.stdout_left -= len(stdout)
        self.count += 1
        return True

    def end(self, reason: str) -> None:
        write_all(RESULT_FD, line({"nonce": self.nonce, "end": reason}))


def known_failure(record: dict[str, Any]) -> bool:
    """A failure the driver can tell without the expected values (which it never has)."""
    report = record.get("report") or {}
    failed_report = any(key in report for key in ("invalid_result", "assertion_failed"))
    return bool(record["exit"] or record["signal"] or record["killed"] or failed_report)
