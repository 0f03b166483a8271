"""The docker backend's supervisor: one per warm container, starting every run itself.

It is the container's main process (under Docker's init), root with only ``CAP_SETUID`` and
``CAP_SETGID`` (to hand runs the program's uid), started as ``python3 -I -S -B`` of the runner
image with this package's sources on its stdin (``service.sandbox.docker.channel``): nothing of
it is baked into the image. Its stdin and stdout are the container's attach stream, the
channel to the host (4-byte length + JSON frames, as the local server's pipe), unless the boot
frame names the host's socket (``channel.py``): then it connects to that before anything else
and speaks there. Before reading any request it loads the common modules and the host's warm
code (``warm.py``) and forks the pristine run template (``template.py``); every run is a child
of the template that reads its own job, drops to the program's uid under its limits and the
seccomp filter (``runner.start_child``, as locally), and runs the program, a ``python3 -I -S``
script in the warm interpreter.

A program can do nothing to it: a different uid (no signals, no ptrace, no /proc/<pid>/mem,
environ or fd of it), no capabilities, and no descriptor of the channel (a run's child keeps
only its own pipes). Between runs the template's helpers kill everything of the program's uid
and clean up as it (``reaper.py``); between sessions the supervisor empties /work. A run that
leaves what cannot be removed marks the container unclean: it refuses every later run, and the
host removes it.

Requests: ``open`` (a session's files into /work), ``run`` (as the local server's), ``close``.
"""

from __future__ import annotations

import base64
import os
import platform
import secrets
import socket
import stat
import traceback
from typing import Any

from . import pyfast, reaper, runner, seccomp, warm, wire
from .template import Template

WORK = reaper.WORK_DIR
_WORK_MODE, _LENT_MODE = 0o755, 0o1777


def boot(config: dict[str, Any]) -> None:
    """Entered from the boot loader with the host's config (the program uid); never returns."""
    job = None
    try:
        _start(config)
    except runner.RunPython as child:  # a forked run child, already unprivileged
        job = child.job
    if job is not None:  # outside the handler: the program's errors chain to nothing of ours
        pyfast.run_python(job)
    os._exit(0)


def _start(config: dict[str, Any]) -> None:
    channel = _connect(config.get("channel"))
    try:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 3):  # runs get fresh pipes on 0-3
            os.dup2(null, fd)
        os.close(null)
        os.chdir("/")
        os.umask(0o022)
        os.environ.clear()
        os.environ.update(wire.ENV)
        warm.import_common_modules()
        warm_code = warm.import_warm_code(config.get("warm_code", {}))
        seccomp.prepare()
        uid = int(config["uid"])
        if uid <= 0:
            raise ValueError(f"bad program uid {uid}")
        # What a run needs of the config: the template, and so every run, holds only this.
        run_config = {"uid": uid, "vm_bytes": warm.vm_bytes()}
        _wipe_work()
        empty = reaper.empty_sizes()
        ready = {
            "ready": True,
            "pid": os.getpid(),
            "seccomp": seccomp.available(),
            "python": platform.python_version(),
            "clean_check": "sizes" if empty else "helper",
            "channel": channel,
            "warm_code": warm_code,
        }
    except Exception as exc:  # reported to the host, which then refuses to run anything
        where = " | ".join(traceback.format_exc(limit=-2).strip().splitlines()[-3:])
        wire.send({"ready": False, "error": f"{type(exc).__name__}: {exc} ({where})"})
        os._exit(1)
    # Forked before any request is read: no job ever reaches the template's memory.
    template = Template(
        lambda fds: runner.start_child(run_config, fds), reaper.ProgramReaper(uid, empty)
    )
    wire.send(ready)
    _serve(template)


def _connect(path: Any) -> str:
    """The channel to the host on ``wire.CTL_IN``/``CTL_OUT``: the host's socket at ``path``
    when it can be reached (the host then hears nothing more on the attach stream but this
    process's stderr), else stdin and stdout, the attach stream; which one, and why."""
    if isinstance(path, str) and path:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError as exc:
            sock.close()
            reason = f"attach ({type(exc).__name__}: {exc.strerror or exc})"
        else:
            fd = sock.detach()
            os.dup2(fd, wire.CTL_IN)
            os.dup2(fd, wire.CTL_OUT)
            os.close(fd)
            return "socket"
    else:
        reason = "attach"
    os.dup2(0, wire.CTL_IN)
    os.dup2(1, wire.CTL_OUT)
    return reason


def _serve(template: Template) -> None:
    unclean: str | None = None
    while True:
        request = wire.receive()
        if request is None:  # the host closed the channel: the container ends with us
            os._exit(0)
        op = request.get("op")
        try:
            if unclean is not None and op in ("open", "run"):
                reply = {"ok": False, "error": f"the container is unclean: {unclean}"}
            elif op == "open":
                _open_session(request["files"])
                reply = {"ok": True}
            elif op == "close":
                _wipe_work()
                reply = {"ok": True}
            elif op == "run":
                reply = _run(request, template)
                if reply.get("unclean"):
                    unclean = str(reply["unclean"])
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # a bad request or a failed clean-up: the host decides
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        wire.send(reply)


def _run(job: dict[str, Any], template: Template) -> dict[str, Any]:
    lent = bool(job.get("work_writable"))
    if lent:  # a compile step writes /work; sticky: the sources stay
        os.chmod(WORK, _LENT_MODE)
    try:
        return runner.run_job(job, template)
    finally:
        if lent:
            _take_back_work()


def _open_session(files: dict[str, str]) -> None:
    """A session's files in an empty /work, root's, readable by the program."""
    _wipe_work()
    for name, data in files.items():
        base = os.path.basename(name)
        if base in ("", ".", "..") or "\0" in base:
            raise ValueError(f"bad file name {name!r}")
        fd = os.open(
            os.path.join(WORK, base), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644
        )
        try:
            _write_all(fd, base64.b64decode(data))
        finally:
            os.close(fd)


def _wipe_work() -> None:
    """Empty /work: root's files, and the (already emptied) directories of a compile step."""
    os.chmod(WORK, _WORK_MODE)
    for entry in os.scandir(WORK):
        if entry.is_dir(follow_symlinks=False):
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _take_back_work() -> None:
    """After a compile step: every file the program made in /work becomes a root-owned copy
    (links and everything else go), as the local backend does. The template's helper already
    emptied the program's directories and made its files readable."""
    os.chmod(WORK, _WORK_MODE)
    for entry in os.scandir(WORK):
        info = entry.stat(follow_symlinks=False)
        if info.st_uid == 0:
            continue
        if stat.S_ISREG(info.st_mode):
            _copy_as_root(entry.path, stat.S_IMODE(info.st_mode) & 0o755)
        elif stat.S_ISDIR(info.st_mode):
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _copy_as_root(path: str, mode: int) -> None:
    # No process of the program exists now; the copy replaces the original in one rename.
    copy = os.path.join(WORK, f".copy-{secrets.token_hex(8)}")
    source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        target = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            while chunk := os.read(source, 1 << 20):
                _write_all(target, chunk)
            os.fchmod(target, mode)
        finally:
            os.close(target)
    finally:
        os.close(source)
    os.replace(copy, path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
