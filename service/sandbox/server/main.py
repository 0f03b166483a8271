"""Entry point of the server: namespaces, the request loop, sessions.

The keeper process joins the sandbox's cgroups, unshares a PID namespace and forks PID 1,
which builds the root filesystem, pre-imports the common modules and the host's warm code,
forks the pristine run template (template.py), reports and then serves requests one at a
time. PID 1 dies with the keeper (parent-death signal) and exits when the host's pipe
closes; either way the kernel kills everything in its namespace.

The config (uid, cgroup directories, the paths of the root, the warm code) comes as the first
frame on the control pipe, not on the command line.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import traceback
from typing import Any

from . import pyfast, runner, seccomp, warm, wire
from .rootfs import (
    CLONE_NEWPID,
    MS_NODEV,
    MS_NOSUID,
    PR_SET_PDEATHSIG,
    build_root,
    check,
    libc,
    mount,
    umount,
    write_file,
)
from .template import Template


def _keeper(config: dict[str, Any]) -> None:
    for directory in config["cgroups"]:
        write_file(os.path.join(directory, "cgroup.procs"), str(os.getpid()))
    check(libc.unshare(CLONE_NEWPID), "unshare pid")
    pid = os.fork()
    if pid == 0:
        _init(config)
        os._exit(0)
    # The keeper leaves the sandbox's cgroups so they count only the sandbox (pids.max). It
    # stays in the host's mount namespace: PID 1's pivot_root must not move its root.
    for directory in config["cgroups"]:
        write_file(os.path.join(os.path.dirname(directory), "cgroup.procs"), str(os.getpid()))
    for fd in (0, 1, wire.CTL_IN, wire.CTL_OUT):
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _init(config: dict[str, Any]) -> None:
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    try:
        build_root(config)
        # The OOM killer must prefer the run (+1000) to the server; lowering our own score
        # needs CAP_SYS_RESOURCE, which some hosts withhold even from root.
        with contextlib.suppress(PermissionError):
            write_file("/proc/self/oom_score_adj", "-1000")
        os.environ.clear()
        os.environ.update(wire.ENV)
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 3):  # runs get fresh pipes on 0-3; the server's own are harmless
            os.dup2(null, fd)
        os.close(null)
        warm.import_common_modules()
        warm_code = warm.import_warm_code(config.pop("warm_code", {}))
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        with open("/proc/self/net/dev") as net:
            interfaces = [line.split(":")[0].strip() for line in net.readlines()[2:]]
        config["vm_bytes"] = warm.vm_bytes()
        ready = {"ready": True, "pid": os.getpid(), "pids": pids, "interfaces": interfaces}
        ready["warm_code"] = warm_code
        seccomp.prepare()
        ready["seccomp"] = seccomp.available()
        ready["proc"] = config.pop("proc_view")
        # What a run needs of the config, and nothing of the host (cgroup paths, the root's
        # host paths): the template, and so every run, holds only this.
        config = {"uid": config["uid"], "vm_bytes": config["vm_bytes"]}
    except Exception as exc:  # reported to the host, which then refuses to run anything
        where = " | ".join(traceback.format_exc(limit=-2).strip().splitlines()[-3:])
        wire.send({"ready": False, "error": f"{type(exc).__name__}: {exc} ({where})"})
        os._exit(1)
    # Forked before any request is read: no job ever reaches the template's memory.
    template = Template(lambda fds: runner.start_child(config, fds))
    wire.send(ready)
    _serve(config, template)


def _serve(config: dict[str, Any], template: Template) -> None:
    while True:
        request = wire.receive()
        if request is None:  # the host closed the pipe or died: the namespace ends with us
            os._exit(0)
        op = request.get("op")
        try:
            if op == "open":
                reply = _open_session(request)
            elif op == "close":
                _close_session()
                reply = {"ok": True}
            elif op == "run":
                reply = runner.run(config, request, template)
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # a bad request or a failed mount: the host decides
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        wire.send(reply)


def _open_session(request: dict[str, Any]) -> dict[str, Any]:
    _close_session()
    size = int(request["work_bytes"])
    mount("tmpfs", "/work", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=0755")
    for name, data in request["files"].items():
        path = os.path.join("/work", os.path.basename(name))
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))
        os.chmod(path, 0o644)
    return {"ok": True}


def _close_session() -> None:
    if os.path.ismount("/work"):
        umount("/work")


def boot() -> None:
    """``python3 -I -S -B -c <boot> rlvr-sandbox-zygote``, the config as the first frame on
    stdin; never returns."""
    os.dup2(0, wire.CTL_IN)
    os.dup2(1, wire.CTL_OUT)
    config = wire.receive()
    if config is None:
        os._exit(1)
    job = None
    try:
        _keeper(config)
    except runner.RunPython as child:  # a forked run child, already unprivileged
        job = child.job
    if job is not None:  # outside the handler: the program's errors chain to nothing of ours
        pyfast.run_python(job)
    os._exit(0)
