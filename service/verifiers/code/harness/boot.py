"""The run's first steps: fork the solution process, harden this one, read the job.

Only what the solution process needs is imported before the fork: the rest of the harness
is loaded by the driver alone, so neither process copies pages of what the other uses.
"""

from __future__ import annotations

import gc
import json
import os
import time
from typing import Any

from . import frames, osutil, records
from .process import Forked


def _fork_solution() -> Forked:
    """The solution process, forked before the job is read. It waits for "go" (sent once this
    process cannot be read or written through /proc any more) before it runs any code of the
    solution."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    from . import solution_side  # what it will run, loaded before it is forked

    started = time.monotonic()
    gc.freeze()  # what both processes share stays shared: no collection writes to it
    pid = os.fork()
    if pid == 0:
        try:
            solution_side.serve_solution(out_w, err_w, req_r, rep_w)
        finally:
            os._exit(127)
    for fd in (out_w, err_w, req_r, rep_w):
        os.close(fd)
    return Forked(pid, started, req_w, rep_r, out_r, err_r)


def _read_job() -> dict[str, Any]:
    header = bytearray()
    while not header.endswith(b"\n"):
        chunk = os.read(0, 1)
        if not chunk:
            raise EOFError("no job")
        header += chunk
    left = int(header)
    chunks = []
    while left:
        chunk = os.read(0, min(left, 1 << 20))
        if not chunk:
            raise EOFError("job truncated")
        chunks.append(chunk)
        left -= len(chunk)
    job: dict[str, Any] = json.loads(b"".join(chunks))
    return job


def main(argv: list[str]) -> None:
    """``/work/driver.py <mode>``; never returns."""
    try:
        mode = argv[1]
        forked = _fork_solution() if mode in ("function", "assert") else None
        osutil.harden_driver()
        if forked is not None:
            frames.send(forked.requests_fd, {"op": "go"})
        job = _read_job()
    except Exception as exc:
        # Before any test: the sandbox failed, not the solution (which cannot reach this).
        message = f"{type(exc).__name__}: {exc}"[:2000]
        records.write_all(records.RESULT_FD, records.line({"setup_error": message}))
        os._exit(2)
    try:
        # Each mode loads only what it uses, after the solution process is forked.
        if forked is None:
            from . import programs

            programs.run(job)
        else:
            from . import driver

            driver.run(job, forked)
    except Exception:
        import traceback

        failure = {"driver_error": traceback.format_exc()[-4000:]}
        records.write_all(records.RESULT_FD, records.line(failure))
        os._exit(3)
    os._exit(0)
