"""Stdio tests: each program forked from the driver, run as ``__main__`` with its test's
stdin, supervised against the test's wall clock and output caps."""

from __future__ import annotations

import base64
import contextlib
import os
import resource
import select
import signal
import time
from typing import Any

from . import osutil, process
from .output import Output
from .records import Records, clip, known_failure


class Retry(Exception):
    """This test cannot start in this run (resources an earlier test left behind)."""


def stdio_test(spec: dict[str, Any]) -> tuple[dict[str, Any], bytes, bool]:
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    cpu_limit = max(1, int(spec["cpu_s"] + 0.999))
    started = time.monotonic()
    try:
        pid = os.fork()
    except OSError as exc:  # out of processes: strays of an earlier test hold them
        for fd in (stdin_r, stdin_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        raise Retry(str(exc)) from exc
    if pid == 0:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 1))
            process.run_program(stdin_r, out_w, err_w)
        finally:
            os._exit(127)
    for fd in (stdin_r, out_w, err_w):
        os.close(fd)
    output = Output(out_r, err_r)
    output.reset({"stdout": spec["stdout_cap"], "stderr": spec["stderr_cap"]})
    try:
        status, cpu, killed = _supervise(pid, stdin_w, output, spec, started)
    finally:
        output.close()
    record = {
        "index": spec["index"],
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu": cpu,
        "wall": time.monotonic() - started,
        "killed": killed,
        "report": None,
        "stderr": base64.b64encode(clip(output.stderr())).decode(),
    }
    if killed is not None:
        record["signal"] = None  # ours, not the program's
    # A test this run killed, or one killed by SIGKILL (perhaps the OOM killer, which the
    # host sees only for the run as a whole) ends the run here.
    abnormal = killed is not None or record["signal"] == signal.SIGKILL
    return record, bytes(output.buffers["stdout"]), abnormal


def _supervise(
    pid: int, stdin_w: int, output: Output, spec: dict[str, Any], started: float
) -> tuple[int, float, str | None]:
    pending = memoryview(spec["stdin"].encode("utf-8", "surrogateescape"))
    os.set_blocking(stdin_w, False)
    poller = select.poll()
    for fd in output.open:
        poller.register(fd, select.POLLIN)
    stdin_open = True
    if pending:
        poller.register(stdin_w, select.POLLOUT)
    else:
        os.close(stdin_w)
        stdin_open = False
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
        poller.register(pidfd, select.POLLIN)
    deadline = started + spec["wall_s"]
    killed: str | None = None
    status: int | None = None
    usage = None
    try:
        while status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                killed = "wall"
                break
            timeout = left if pidfd is not None else min(left, 0.005)
            for fd, _ in poller.poll(max(1, int(timeout * 1000))):
                if fd == stdin_w and stdin_open:
                    try:
                        pending = pending[os.write(stdin_w, pending[: 1 << 16]) :]
                    except BlockingIOError:
                        pass
                    except OSError:  # the program closed its stdin: the rest is not wanted
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(stdin_w)
                        os.close(stdin_w)
                        stdin_open = False
                elif fd in output.fds:
                    output.read(fd)
                    if fd not in output.open:
                        poller.unregister(fd)
            if output.exceeded:
                killed = output.exceeded
                break
            reaped, raw, usage = os.wait4(pid, os.WNOHANG)
            if reaped:
                status = raw
    finally:
        if stdin_open:
            os.close(stdin_w)
        if pidfd is not None:
            os.close(pidfd)
    if status is None:
        osutil.kill_tree(pid)
        _, status, usage = os.wait4(pid, 0)
    else:
        osutil.kill_tree(pid)  # what it left in its group
    cpu = usage.ru_utime + usage.ru_stime if usage is not None else 0.0
    cpu += osutil.kill_strays(set())
    output.drain()
    if killed is None and output.exceeded:
        killed = output.exceeded
    return status, cpu, killed


def run(job: dict[str, Any]) -> None:
    """Every test of the job, each in a program process of its own."""
    records = Records(job)
    for spec in job["tests"]:
        try:
            record, stdout, abnormal = stdio_test(spec)
        except Retry:
            if not records.count:
                raise  # a fresh run cannot start a program: the sandbox's failure
            records.end("retry")  # what an earlier test left: a fresh run
            return
        if not records.emit(record, stdout):
            records.end("budget")
            return
        if abnormal:
            records.end("abnormal")
            return
        if job.get("stop_at_failure") and known_failure(record):
            records.end("failed")
            return
    records.end("done")
