"""One run: forked from the pristine template, dropped to the sandbox user under limits,
supervised by the server; what is left is killed by the template."""

from __future__ import annotations

import _signal
import base64
import contextlib
import json
import os
import resource
import select
import signal
import time
from typing import Any

from . import seccomp
from .rootfs import MS_NODEV, MS_NOSUID, PR_SET_NO_NEW_PRIVS, check, libc, mount, umount, write_file
from .template import Template
from .wire import CTL_IN, ENV, FAST_PYTHON


class RunPython(BaseException):
    """Raised in a forked, unprivileged child: leave the server loop and run a Python program.

    A BaseException so that no handler of the server's own code can swallow it."""

    def __init__(self, job: dict[str, Any]) -> None:
        super().__init__()
        self.job = job


_tmp_size: int | None = None


def fresh_tmp(size: int) -> None:
    """An empty /tmp of ``size`` bytes for the next run: files never carry over to it, and a
    disk fill stops at the cap (tmpfs pages are also charged to the memory cgroup). A run
    that left nothing behind keeps the mount: replacing one costs more than the run."""
    global _tmp_size
    if _tmp_size == size and not os.listdir("/tmp"):
        return
    if _tmp_size is not None:
        # Detaching drops the whole tree at once, however deep or unreadable it was made.
        umount("/tmp")
        _tmp_size = None
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    _tmp_size = size


def own_work(uid: int) -> None:
    """Hand /work to the sandbox user (compile step) or take it back, stripping special bits."""
    os.chown("/work", uid, uid)
    if uid == 0:
        for top, dirs, files in os.walk("/work"):
            for name in dirs + files:
                path = os.path.join(top, name)
                os.lchown(path, 0, 0)
                if not os.path.islink(path):
                    os.chmod(path, os.lstat(path).st_mode & 0o755)


def is_fast_python(argv: list[str]) -> bool:
    """``python3 -I -S script ...`` (not ``-c`` or other options): served by the warm fork."""
    return len(argv) >= 4 and tuple(argv[:3]) == FAST_PYTHON and not argv[3].startswith("-")


def run(config: dict[str, Any], job: dict[str, Any], template: Template) -> dict[str, Any]:
    """Run one job to completion in a child of the template (never of this server)."""
    if job.get("work_writable"):
        own_work(config["uid"])
    fresh_tmp(int(job["tmp_bytes"]))
    try:
        return run_job(job, template)
    finally:
        if job.get("work_writable"):
            own_work(0)


def run_job(job: dict[str, Any], template: Template) -> dict[str, Any]:
    """The run itself, on both backends: a child of the template reads ``job`` from a pipe and
    runs it; this process feeds its stdin, reads its output under the caps and keeps its wall
    clock; the template reports its end once nothing of it is left."""
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    # Written only if setting up the child fails; closed (EOF, no data) once the program runs.
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    job_r, job_w = os.pipe2(os.O_CLOEXEC)
    child_fds = [stdin_r, out_w, err_w, res_w, status_w, job_r]
    started = time.monotonic()
    try:
        template.start_run(child_fds)
    except BaseException:
        for fd in (stdin_w, out_r, err_r, res_r, status_r, job_w):
            os.close(fd)
        raise
    finally:
        for fd in child_fds:
            os.close(fd)
    # The child reads its job here (stdin goes through its own pipe, fed below).
    _send_job(job_w, {key: value for key, value in job.items() if key != "stdin"})
    supervisor = _Supervisor(job, started, stdin_w, (out_r, err_r, res_r, status_r), template)
    try:
        return supervisor.supervise()
    finally:
        supervisor.end(kill=True)  # a no-op once the run ended; else nothing of it survives
        supervisor.close()


def _send_job(fd: int, job: dict[str, Any]) -> None:
    view = memoryview(json.dumps(job).encode())
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:  # the child failed before reading it: its set-up status says why
        pass
    finally:
        os.close(fd)


def start_child(config: dict[str, Any], fds: list[int]) -> None:
    """In a fresh child of the template: read the job, drop privileges, run it. Returns only
    by raising RunPython (a Python program, run by this interpreter)."""
    stdin_r, out_w, err_w, res_w, status_w, job_r = fds
    # Passed over a socket, the descriptors lost their close-on-exec flag: the set-up status
    # must close (EOF, no data) once the program starts.
    os.set_inheritable(status_w, False)
    try:
        chunks = []
        while chunk := os.read(job_r, 1 << 16):
            chunks.append(chunk)
        os.close(job_r)
        job = json.loads(b"".join(chunks))
        fast = is_fast_python(job["argv"])
        _child_setup(config, job, (stdin_r, out_w, err_w, res_w), status_w)
        if not fast:
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; C does not
                _signal.signal(sig, _signal.SIG_DFL)  # (without the module's enum wrappers)
            os.execvpe(job["argv"][0], job["argv"], ENV)
        os.close(status_w)
    except BaseException as exc:
        os.write(status_w, f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(127)
    raise RunPython(job)


def _child_setup(
    config: dict[str, Any], job: dict[str, Any], fds: tuple[int, ...], status_w: int
) -> None:
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    # The control pipe and every other descriptor of the server are closed before user code.
    os.closerange(4, status_w)
    os.closerange(status_w + 1, 65536)
    cpu = max(1, int(job["cpu_s"] + 0.999))
    memory = int(job["memory_bytes"]) + (config["vm_bytes"] if is_fast_python(job["argv"]) else 0)
    limits = {
        resource.RLIMIT_CPU: (cpu, cpu + 1),  # busy loops: SIGXCPU, then SIGKILL
        resource.RLIMIT_AS: (memory, memory),  # memory bombs fail even without cgroups
        resource.RLIMIT_FSIZE: (job["fsize_bytes"], job["fsize_bytes"]),  # disk fill
        resource.RLIMIT_NOFILE: (job["open_files"], job["open_files"]),
        resource.RLIMIT_NPROC: (job["processes"], job["processes"]),  # fork and thread bombs
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_STACK: (job["stack_bytes"], job["stack_bytes"]),
        resource.RLIMIT_MEMLOCK: (0, 0),
        resource.RLIMIT_MSGQUEUE: (0, 0),
    }
    for which, value in limits.items():
        resource.setrlimit(which, value)
    write_file("/proc/self/oom_score_adj", "1000")  # the OOM killer takes the run first
    os.chdir("/tmp")
    # A uid of its own and no capabilities: no mounts, no writes outside /tmp, no signals to
    # the server (PID 1, root) and nothing outside the namespace to see at all.
    os.setgroups([])
    os.setresgid(config["uid"], config["uid"], config["uid"])
    os.setresuid(config["uid"], config["uid"], config["uid"])
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    seccomp.install()


# Stderr past its cap, for a run that asks to keep going (``stderr_keeps_tail``): its head, this
# mark and its last bytes, all within the cap; the rest is read and dropped.
STDERR_MARK = b"\n[...]\n"
STDERR_TAIL = 4096


class _Supervisor:
    """Feeds stdin, collects output up to the caps, enforces the wall clock, reaps the run."""

    def __init__(
        self,
        job: dict[str, Any],
        started: float,
        stdin_w: int,
        fds: tuple[int, ...],
        template: Template,
    ) -> None:
        self.job, self.started, self.template = job, started, template
        self.ended: dict[str, Any] | None = None
        out_r, err_r, res_r, status_r = fds
        self.names = {out_r: "stdout", err_r: "stderr", res_r: "result", status_r: "setup"}
        self.caps = {out_r: job["stdout_cap"], err_r: job["stderr_cap"], res_r: job["result_cap"]}
        self.buffers: dict[int, bytearray] = {fd: bytearray() for fd in self.names}
        # Stderr's last bytes once past its cap, when the run keeps going then (else None).
        self.err_fd = err_r
        self.keeps_tail = bool(job.get("stderr_keeps_tail"))
        self.stderr_tail: bytearray | None = None
        self.open_fds = set(self.names)
        self.stdin_w: int | None = stdin_w
        self.pending = memoryview(base64.b64decode(job.get("stdin", "")))
        self.poller = select.poll()

    def end(self, kill: bool) -> dict[str, Any]:
        """The run's outcome, as the template reports it once the run and everything it left
        are gone (asking it to kill them first if ``kill``); once per run."""
        if self.ended is None:
            self.ended = self.template.kill_run() if kill else self.template.outcome()
            if "status" not in self.ended:
                raise RuntimeError(f"the run template failed: {self.ended.get('error')}")
        return self.ended

    def _close_stdin(self) -> None:
        if self.stdin_w is not None:
            self.poller.unregister(self.stdin_w)
            os.close(self.stdin_w)
            self.stdin_w = None

    def _feed(self) -> None:
        assert self.stdin_w is not None
        try:
            self.pending = self.pending[os.write(self.stdin_w, self.pending[: 1 << 16]) :]
        except BlockingIOError:
            return
        except BrokenPipeError:  # the program closed its stdin: the rest is not wanted
            self.pending = self.pending[:0]
        if not self.pending:
            self._close_stdin()

    def _read(self, fd: int) -> str | None:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            self.poller.unregister(fd)
            self.open_fds.discard(fd)
            return None
        buffer = self.buffers[fd]
        if fd == self.err_fd and self.keeps_tail:
            self._keep_stderr(buffer, chunk)
            return None
        buffer += chunk
        cap = self.caps.get(fd)
        if cap is not None and len(buffer) > cap:
            del buffer[cap:]
            return f"{self.names[fd]}_limit"  # endless output: stop reading, kill the run
        return None

    def _keep_stderr(self, buffer: bytearray, chunk: bytes) -> None:
        """Stderr within its cap as it came; past it, its head, STDERR_MARK and its tail (all
        within the cap together), the rest dropped: chatter there runs into the wall clock."""
        cap = self.caps[self.err_fd]
        tail_size = min(STDERR_TAIL, max(0, cap - len(STDERR_MARK)))
        if self.stderr_tail is None:
            buffer += chunk
            if len(buffer) <= cap:
                return
            head = max(0, cap - len(STDERR_MARK) - tail_size)
            self.stderr_tail = bytearray(buffer[head:])
            del buffer[head:]
        else:
            self.stderr_tail += chunk
        del self.stderr_tail[: max(0, len(self.stderr_tail) - tail_size)]

    def supervise(self) -> dict[str, Any]:
        for fd in self.names:
            self.poller.register(fd, select.POLLIN)
        # The run is the template's child, not ours: the template says when it ended.
        self.poller.register(self.template.fileno(), select.POLLIN)
        self.poller.register(CTL_IN, 0)  # POLLHUP only: the host went away
        assert self.stdin_w is not None
        os.set_blocking(self.stdin_w, False)
        self.poller.register(self.stdin_w, select.POLLOUT)
        if not self.pending:
            self._close_stdin()
        deadline = self.started + self.job["wall_s"]
        killed: str | None = None
        while killed is None and (self.open_fds or self.ended is None):
            left = deadline - time.monotonic()
            if left <= 0:
                killed = "wall"  # sleepers and blocked programs: the wall clock ends them
                break
            for fd, _ in self.poller.poll(max(1, int(left * 1000))):
                if fd == CTL_IN:
                    os._exit(0)  # the host is gone; the namespace dies with us
                elif fd == self.template.fileno():
                    self.poller.unregister(fd)
                    # The program is done and the template killed what it left behind
                    # (daemons, a double fork): the pipes those held close, reading ends.
                    self.end(kill=False)
                elif fd == self.stdin_w:
                    self._feed()
                else:
                    killed = killed or self._read(fd)
        ended = self.end(kill=True)
        status = int(ended["status"])
        return {
            "ok": True,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu_s": ended["cpu_s"],
            "max_rss_kb": ended["max_rss_kb"],
            "wall_s": time.monotonic() - self.started,
            "killed": killed,
            "survivors_killed": ended["survivors"],
            "setup_error": self._bytes("setup").decode("utf-8", "replace") or None,
            "unclean": ended.get("unclean"),
            **{name: base64.b64encode(self._bytes(name)).decode() for name in self.caps_names()},
        }

    @staticmethod
    def caps_names() -> tuple[str, ...]:
        return ("stdout", "stderr", "result")

    def _bytes(self, name: str) -> bytes:
        fd = next(fd for fd, known in self.names.items() if known == name)
        if fd == self.err_fd and self.stderr_tail is not None:
            return bytes(self.buffers[fd]) + STDERR_MARK + bytes(self.stderr_tail)
        return bytes(self.buffers[fd])

    def close(self) -> None:
        for fd in (*self.names, self.stdin_w):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
