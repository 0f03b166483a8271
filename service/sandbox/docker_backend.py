"""The docker backend: a warm pool of locked-down containers, one container per submission.

Every container is started from the runner image (scripts/build-sandbox-image.sh, or
deploy/Dockerfile.sandbox) with no network, a read-only root, size-capped tmpfs for /work and
/tmp, no capabilities, ``no-new-privileges``, pids/memory/CPU limits and Docker's init as
PID 1. Its idle keeper runs as uid 0 *without capabilities*; every program runs as a non-root
uid of its own (one per container), so a program can neither signal the keeper nor write the
root-owned /work, and ``kill(-1)`` inside reaches only the program's own processes.

A run is one ``docker exec`` of a small shell wrapper that kills and deletes what the previous
run of the same submission left behind, sets the run's rlimits (``prlimit``), runs the
program with fd 3 going to a result file, kills whatever outlived it and appends the result
to stderr behind a per-run marker. ``exec_run`` has no timeout: the host reads the exec's
socket itself, with its own wall clock and byte caps, and ends a run with a second exec that
kills every process of the program's uid. CPU time and OOM kills come from the container's
cgroup on the host, which the program cannot touch.

When a session ends its container is removed and a fresh one started by a background
thread: nothing of one submission is ever visible to the next.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import os
import secrets
import select
import socket
import struct
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.sandbox.base import (
    WORK_DIR,
    Limits,
    ProbeReport,
    RunResult,
    RunSpec,
    SandboxError,
    SandboxUnavailable,
)
from service.sandbox.cgroups import counter
from service.sandbox.probe import check_probe_run, probe_spec
from service.sandbox.server.wire import ENV, FAST_PYTHON

log = logging.getLogger(__name__)

LABEL = "rlvr.sandbox"
_OWNER_LABEL = "rlvr.sandbox.owner"
_KEEPER = ("sleep", "infinity")
_EXEC_ENV = [f"{key}={value}" for key, value in ENV.items()]
_RESULT_FILE = "/tmp/.rlvr-result"
_RETRY_S = 30.0
# Memory of the keeper, the run's wrapper and the page cache of /work beyond the program.
_CGROUP_HEADROOM = 64 << 20
# Kill every other process of the caller's uid (kill(-1) spares the caller and PID 1) until
# /proc shows none, read by the real uid in each status file: a process that made itself
# non-dumpable shows its /proc directory as root's, and a killed one stays until Docker's init
# reaps it. Leaves the number seen at first in $survivors. Builtins only: a fork here would
# count itself.
_KILL_ALL = r"""
uid_of() { u=; { while read -r k v _; do
    if [ "$k" = "Uid:" ]; then u=$v; break; fi; done < "$1/status"; } 2>/dev/null; }
uid_of /proc/self; me=$u
others() { c=0; for p in /proc/[0-9]*; do
    if [ "${p#/proc/}" != "$$" ]; then uid_of "$p"; [ "$u" = "$me" ] && c=$((c + 1)); fi
    done; }
others; survivors=$c; r=0
while [ $c -gt 0 ] && [ $r -lt 2000 ]; do kill -9 -1 2>/dev/null; r=$((r + 1)); others; done
"""

# Before every run: nothing of the previous one left, and the program there to start. A
# failure prints a "setup" trailer and exits 125 ($mark and "$1", the program, are set).
_SETUP = rf"""
{_KILL_ALL}
for f in /tmp/* /tmp/.[!.]* /tmp/..?* /dev/shm/* /dev/shm/.[!.]* /dev/shm/..?*; do
    if [ -L "$f" ]; then rm -f "$f"; elif [ -e "$f" ]; then chmod -R u+rwx "$f"; rm -rf "$f"; fi
done 2>/dev/null
ipcrm --all 2>/dev/null
for f in /tmp/* /tmp/.[!.]* /tmp/..?* /dev/shm/* /dev/shm/.[!.]* /dev/shm/..?*; do
    if [ -e "$f" ] || [ -L "$f" ]; then
        printf '\n%s setup %s could not be removed\n' "$mark" "$f" >&2
        exit 125
    fi
done
if ! command -v "$1" >/dev/null 2>&1; then
    printf '\n%s setup no program %s\n' "$mark" "$1" >&2
    exit 125
fi
"""

# The wrapper of every run (dash). Arguments: marker, then rlimits, then the program's argv.
_WRAPPER = rf"""
mark=$1 cpu=$2 mem=$3 fsize=$4 nofile=$5 nproc=$6 stack=$7
shift 7
{_SETUP}
# fd 3 (the drivers' result channel) is a file no program can see by name: unlinked at once,
# read back afterwards through this shell's own descriptor.
exec 3>{_RESULT_FILE} && rm -f {_RESULT_FILE}
env -i {" ".join(_EXEC_ENV)} prlimit --cpu=$cpu:$((cpu + 1)) --as=$mem --fsize=$fsize \
    --nofile=$nofile --nproc=$nproc --stack=$stack --core=0 --memlock=0 --msgqueue=0 \
    -- "$@"
rc=$?
{_KILL_ALL}
printf '\n%s ran %d %d\n' "$mark" "$rc" "$survivors" >&2
cat /proc/$$/fd/3 >&2
exit $rc
"""

# The host's own check of a failure claimed from inside a run (marker, program): the program
# shares the wrapper's uid and could fake a "setup" trailer or exit status to turn its 0.0
# into an error, so a claim counts only if the set-up fails again without the program.
_CHECK = f"""
mark=$1
shift 1
{_SETUP}
"""

# /work belongs to root (the exec user 0 has no capabilities, but owns the tmpfs): programs
# may read it, never change it. A compile step gets it writable (sticky: the sources stay)
# and afterwards root takes every file back as a root-owned copy, as the local backend does.
_OPEN_WORK = f"tar -x -C {WORK_DIR} -f - --no-same-owner && chmod 0755 {WORK_DIR}"
_LEND_WORK = f"chmod 1777 {WORK_DIR}"
_TAKE_BACK_WORK = rf"""
cd {WORK_DIR} || exit 1
for f in * .[!.]* ..?*; do
    if [ -L "$f" ]; then rm -f "$f"
    elif [ -f "$f" ] && [ ! -O "$f" ]; then
        cp "$f" .rlvr-copy && rm -f "$f" && mv .rlvr-copy "$f" && chmod go-w "$f" || exit 1
    elif [ -d "$f" ] && [ ! -O "$f" ]; then rm -rf "$f" 2>/dev/null
    fi
done
chmod 0755 {WORK_DIR}
"""

_instances = itertools.count()
_uids = itertools.count()  # per process, shared by every backend instance in it


def _process_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid``: the start time tells a live process from a reused pid."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], fields[19]
    except (OSError, IndexError):
        return None


def _process_start(pid: int) -> str | None:
    stat = _process_stat(pid)
    return None if stat is None else stat[1]


def _owner_tag(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def _owner_alive(tag: str) -> bool:
    host, _, rest = tag.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's container: not ours to judge
    return _process_start(int(pid)) == started


def image_reference(image: str | None = None) -> str:
    """``name@<image id>`` of the runner image (what a verifier version pins), or
    ``name@unavailable`` when no engine answers here."""
    from service.settings import get_settings

    name = image or get_settings().sandbox_docker_image
    try:
        import docker

        client = docker.from_env(timeout=5)
        try:
            return f"{name}@{client.images.get(name).id}"
        finally:
            client.close()
    except Exception:
        return f"{name}@unavailable"


@dataclass(slots=True)
class _Cgroup:
    """The container's CPU and memory accounting files on the host (v1 or v2), if visible."""

    cpu_file: Path | None = None
    oom_file: Path | None = None

    @classmethod
    def of_pid(cls, pid: int) -> _Cgroup:
        found = cls()
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return found
        root = Path("/sys/fs/cgroup")
        for line in lines:
            _, controllers, path = line.split(":", 2)
            relative = path.lstrip("/")
            names = controllers.split(",")
            if "cpuacct" in names and (root / "cpuacct" / relative / "cpuacct.usage").exists():
                found.cpu_file = root / "cpuacct" / relative / "cpuacct.usage"
            if "memory" in names and (root / "memory" / relative / "memory.oom_control").exists():
                found.oom_file = root / "memory" / relative / "memory.oom_control"
            if controllers == "" and (root / relative / "cpu.stat").exists():  # cgroup v2
                found.cpu_file = found.cpu_file or root / relative / "cpu.stat"
                found.oom_file = found.oom_file or root / relative / "memory.events"
        return found

    def cpu_seconds(self) -> float | None:
        if self.cpu_file is None:
            return None
        if self.cpu_file.name == "cpuacct.usage":
            try:
                return int(self.cpu_file.read_text()) / 1e9
            except (OSError, ValueError):
                return None
        usec = counter(self.cpu_file, "usage_usec")
        return None if usec is None else usec / 1e6

    def oom_kills(self) -> int:
        return 0 if self.oom_file is None else counter(self.oom_file, "oom_kill") or 0


@dataclass(slots=True)
class _Container:
    id: str
    uid: int
    host_pid: int
    cgroup: _Cgroup = field(default_factory=_Cgroup)
    memory_bytes: int = 0
    # The init's start time when this worker can see the host's processes, else None.
    init_started: str | None = None


@dataclass(slots=True)
class _Exec:
    """One exec's outcome as the host saw it."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    wall_s: float
    killed: str | None


class DockerBackend:
    """Warm containers of the runner image; one per session, replaced in the background."""

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        pool_size: int | None = None,
        images: Mapping[str, str] | None = None,
        memory_mb: int | None = None,
        cpus: float | None = None,
        pids_max: int | None = None,
        tmp_mb: int = 128,
        work_mb: int = 128,
    ) -> None:
        from service.settings import get_settings

        settings = get_settings()
        self.image = image or settings.sandbox_docker_image
        # A language may run in an image of its own (RLVR_SANDBOX_DOCKER_IMAGES); each image
        # has its own warm pool, started when the image is first used and probed.
        self.images = dict(settings.sandbox_docker_images if images is None else images)
        self.pool_size = settings.sandbox_docker_pool if pool_size is None else pool_size
        self.memory_mb = memory_mb or settings.sandbox_docker_memory_mb
        self._fresh_memory = self.memory_mb << 20
        self.cpus = cpus or settings.sandbox_docker_cpus
        self.pids_max = pids_max or settings.sandbox_docker_pids
        self.tmp_mb, self.work_mb = tmp_mb, work_mb
        self.instance = next(_instances)
        self.owner_pid = os.getpid()
        self._clients = threading.local()
        self._pools: dict[str, list[_Container]] = {}
        self._image_reports: dict[str, ProbeReport] = {}
        self._retired: list[_Container] = []
        self._in_use: dict[str, _Container] = {}
        self._used_uids: set[int] = set()
        self._created: set[str] = set()
        self._creating: dict[str, int] = {}
        self._removing = 0
        self._closing = False
        self._report: ProbeReport | None = None
        self._failed_at: float | None = None
        self._cond = threading.Condition()
        self._probe_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- docker plumbing ---------------------------------------------------------------------

    def _docker(self) -> Any:
        """This thread's engine client (the pool's thread and sessions never share one)."""
        client = getattr(self._clients, "client", None)
        if client is None:
            import docker

            client = self._clients.client = docker.from_env(timeout=60)
        return client

    def _next_uid(self) -> int:
        # A uid of its own per container (2**30 + pid·256 + n, below Docker's 2**31 bound):
        # RLIMIT_NPROC counts only this container's processes, and leftovers on the host are
        # attributable to it.
        return 0x4000_0000 + ((os.getpid() & 0x3F_FFFF) << 8) + next(_uids) % 256

    def _create(self, image: str) -> _Container:
        uid = self._next_uid()
        memory = self._fresh_memory
        client = self._docker()
        container = client.containers.run(
            image,
            list(_KEEPER),
            detach=True,
            user="0:0",
            network_mode="none",
            read_only=True,
            tmpfs={
                "/tmp": f"rw,exec,nosuid,nodev,size={self.tmp_mb}m,mode=1777",
                WORK_DIR: f"rw,exec,nosuid,nodev,size={self.work_mb}m,mode=0755",
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=self.pids_max,
            mem_limit=memory,
            memswap_limit=memory,
            shm_size="16m",
            cgroupns="private",
            nano_cpus=int(self.cpus * 1e9),
            init=True,
            hostname="sandbox",
            environment=_EXEC_ENV,
            working_dir="/tmp",
            log_config={"type": "none"},
            labels={LABEL: "1", _OWNER_LABEL: _owner_tag(os.getpid())},
        )
        with self._cond:
            self._created.add(container.id)
        try:
            container.reload()
            host_pid = int(container.attrs["State"]["Pid"])
        except Exception:
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise
        return _Container(
            container.id,
            uid,
            host_pid,
            _Cgroup.of_pid(host_pid),
            memory,
            _process_start(host_pid),
        )

    def _remove(self, container: _Container) -> None:
        with contextlib.suppress(Exception):
            self._docker().api.remove_container(container.id, force=True)

    def _remove_stale(self) -> None:
        """Containers of this machine whose worker died without removing them."""
        client = self._docker()
        for info in client.api.containers(all=True, filters={"label": LABEL}):
            owner = info.get("Labels", {}).get(_OWNER_LABEL, "")
            if not _owner_alive(owner):
                with contextlib.suppress(Exception):
                    client.api.remove_container(info["Id"], force=True)

    def _exec(
        self,
        container: _Container,
        argv: list[str],
        *,
        user: int,
        stdin: bytes = b"",
        wall_s: float = 30.0,
        caps: tuple[int, int] = (1 << 20, 1 << 20),
        stop_on_overrun: bool = True,
    ) -> _Exec:
        """Run ``argv`` in ``container``; feed stdin, read both streams under caps and a clock."""
        api = self._docker().api
        try:
            exec_id = api.exec_create(
                container.id,
                argv,
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                user=f"{user}:{user}",
                environment=_EXEC_ENV,
                workdir="/tmp",
            )["Id"]
            attached = api.exec_start(exec_id, socket=True)
        except Exception as exc:
            raise SandboxError(f"docker exec failed: {exc}") from exc
        raw: socket.socket = getattr(attached, "_sock", attached)
        stream = _Stream(raw, stdin, caps)
        started = time.monotonic()
        stopper: threading.Thread | None = None
        try:
            killed = stream.pump(started + wall_s)
            wall = time.monotonic() - started
            if stream.open and stop_on_overrun:
                # Over the clock or a cap: end the program from inside (the same uid), and
                # read on meanwhile so that Docker's copy of the output never blocks.
                stopper = threading.Thread(target=self._kill_programs, args=(container,))
                stopper.start()
                stream.drain(time.monotonic() + 15.0)
        finally:
            if stopper is not None:
                stopper.join()
            with contextlib.suppress(OSError):
                attached.close()
                raw.close()
        if stream.open:
            raise SandboxError("the program could not be stopped")
        return _Exec(self._exit_code(exec_id), stream.stdout(), stream.stderr(), wall, killed)

    def _exit_code(self, exec_id: str) -> int | None:
        api = self._docker().api
        deadline = time.monotonic() + 5.0
        while True:
            try:
                info = api.exec_inspect(exec_id)
            except Exception as exc:
                raise SandboxError(f"docker exec inspect failed: {exc}") from exc
            if not info.get("Running") or time.monotonic() > deadline:
                code = info.get("ExitCode")
                return None if code is None else int(code)
            time.sleep(0.002)

    def _kill_programs(self, container: _Container) -> None:
        """Kill every process of the program's uid (a failure shows as a stream left open)."""
        with contextlib.suppress(SandboxError):
            argv = ["sh", "-c", _KILL_ALL]
            self._exec(container, argv, user=container.uid, wall_s=10.0, stop_on_overrun=False)

    def _running(self, container: _Container) -> bool:
        if container.init_started is not None:
            # Race-free where the host's processes are visible: the container's init dies
            # before the kernel tears down the rest of its namespace.
            stat = _process_stat(container.host_pid)
            return (
                stat is not None and stat[0] not in ("Z", "X") and stat[1] == container.init_started
            )
        try:
            state = self._docker().api.inspect_container(container.id)["State"]
        except Exception:
            return False
        return bool(state.get("Running")) and not state.get("Paused")

    def _set_memory(self, container: _Container, limit_bytes: int) -> None:
        limit_bytes += _CGROUP_HEADROOM
        if container.memory_bytes == limit_bytes:
            return
        try:
            self._docker().api.update_container(
                container.id, mem_limit=limit_bytes, memswap_limit=limit_bytes
            )
        except Exception as exc:
            raise SandboxError(f"could not set the container's memory limit: {exc}") from exc
        container.memory_bytes = limit_bytes
        # New containers start with the limit runs use now: most sessions then set none.
        self._fresh_memory = limit_bytes

    def _root(self, container: _Container, script: str, stdin: bytes = b"") -> None:
        result = self._exec(container, ["sh", "-c", script], user=0, stdin=stdin, wall_s=20.0)
        if result.exit_code != 0 or result.killed:
            detail = result.stderr[-300:].decode("utf-8", "replace")
            raise SandboxError(f"sandbox set-up step failed ({result.exit_code}): {detail}")

    # -- the pool ------------------------------------------------------------------------------

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._maintain, name=f"rlvr-docker-pool-{self.instance}", daemon=True
            )
            self._thread.start()

    def _maintain(self) -> None:
        """Keep ``pool_size`` warm containers and remove retired ones, off the request path."""
        while True:
            with self._cond:
                while not self._closing and not self._retired and self._short() is None:
                    self._cond.wait()
                if self._closing:
                    return
                image = self._short()
                retired = None if image is not None else self._retired.pop()
                if image is not None:
                    self._creating[image] += 1
                else:
                    self._removing += 1
            if retired is not None:
                self._remove(retired)
                with self._cond:
                    self._removing -= 1
                    self._cond.notify_all()
                continue
            assert image is not None
            try:
                made = self._create(image)
            except Exception as exc:  # the engine went away: retry; sessions start their own
                log.warning("could not start a sandbox container: %s: %s", type(exc).__name__, exc)
                with self._cond:
                    self._creating[image] -= 1
                    self._cond.wait(1.0)
                continue
            with self._cond:
                self._creating[image] -= 1
                if self._closing:
                    self._retired.append(made)
                else:
                    self._pools[image].append(made)
                self._cond.notify_all()
            if self._closing:
                self._remove(made)

    def _short(self) -> str | None:
        """An image whose pool is below its size (counting starts in progress), if any."""
        for image, pool in self._pools.items():
            if len(pool) + self._creating[image] < self.pool_size:
                return image
        return None

    def _keep_warm(self, image: str) -> None:
        with self._cond:
            if image not in self._pools:
                self._pools[image] = []
                self._creating[image] = 0
                self._cond.notify_all()

    def _take(self, image: str) -> _Container:
        with self._cond:
            pool = self._pools.get(image)
            if pool:
                container = pool.pop(0)
                self._cond.notify_all()
                return container
        try:
            return self._create(image)  # the pool is empty: this request waits for a start
        except Exception as exc:
            raise SandboxError(f"could not start a sandbox container: {exc}") from exc

    def _retire(self, container: _Container) -> None:
        with self._cond:
            self._in_use.pop(container.id, None)
            self._retired.append(container)
            self._cond.notify_all()

    # -- lifecycle -----------------------------------------------------------------------------

    def _start(self) -> ProbeReport:
        try:
            client = self._docker()
            client.ping()
            security = client.info().get("SecurityOptions") or []
        except Exception as exc:
            reason = f"docker engine not available (runner image {self.image!r}): {exc}"
            return ProbeReport(self.name, False, (reason,))
        with contextlib.suppress(Exception):
            self._remove_stale()
        report = self._probe_image(self.image)
        if not report.ok:
            return report
        facts = dict(report.facts)
        facts.update(
            image=self.image,
            images=self.images,
            pool_size=self.pool_size,
            memory_limit="cgroup",
            process_limit="cgroup",
            cpu_accounting="cgroup" if self._cpu_visible else "wall clock",
            seccomp=any("seccomp" in option for option in security),
        )
        return ProbeReport(self.name, True, (), facts)

    _cpu_visible = False

    def _probe_image(self, image: str) -> ProbeReport:
        """The isolation probe in a container of ``image``; on success its pool is kept warm."""
        try:
            self._docker().images.get(image)
        except Exception as exc:
            reason = f"runner image {image!r} not available: {exc}"
            if "No such image" in str(exc) or "not found" in str(exc).lower():
                reason += " (build it with scripts/build-sandbox-image.sh)"
            return ProbeReport(self.name, False, (reason,))
        forbidden = ["/var/run/docker.sock", "/run/docker.sock", "/proc/1/environ", "/etc/shadow"]
        files, spec = probe_spec(forbidden)
        try:
            with self._session(files, image, probing=True) as session:
                self._cpu_visible = session.container.cgroup.cpu_file is not None
                result = session.run(spec)
                uid = session.container.uid
        except SandboxError as exc:
            return ProbeReport(self.name, False, (f"probe did not run in {image}: {exc}",))
        problems, facts = check_probe_run(result, uid, kind="docker")
        if problems:
            return ProbeReport(self.name, False, tuple(problems))
        self._keep_warm(image)
        facts = {key: facts.get(key) for key in ("pids", "uid", "init")}
        return ProbeReport(self.name, True, (), facts)

    def probe(self) -> ProbeReport:
        """Check the engine, the image and the isolation once; then keep the pool warm."""
        with self._probe_lock:
            return self._ensure()

    def _ensure(self) -> ProbeReport:
        if os.getpid() != self.owner_pid:
            raise SandboxError("a sandbox backend cannot be shared across fork")
        retry = self._failed_at is None or time.monotonic() - self._failed_at > _RETRY_S
        if self._report is None or (not self._report.ok and retry):
            self._report = self._start()
            self._failed_at = None if self._report.ok else time.monotonic()
            if self._report.ok:
                self._image_reports[self.image] = self._report
                self._start_thread()
        return self._report

    def image_for(self, language: str | None) -> str:
        return self.images.get(language or "", self.image)

    def _ensure_image(self, image: str) -> ProbeReport:
        """The engine's probe, then (once per image) the probe in that image."""
        with self._probe_lock:
            report = self._ensure()
            if not report.ok:
                return report
            known = self._image_reports.get(image)
            if known is None or not known.ok:
                known = self._image_reports[image] = self._probe_image(image)
            return known

    def close(self) -> None:
        if os.getpid() != self.owner_pid:
            return
        with self._cond:
            self._closing = True
            warm = [c for pool in self._pools.values() for c in pool]
            doomed = warm + self._retired + list(self._in_use.values())
            self._pools, self._retired = {}, []
            self._cond.notify_all()
        for container in doomed:
            self._remove(container)
        if self._thread is not None:
            self._thread.join(timeout=30)

    # -- sessions ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(
        self, files: Mapping[str, bytes], language: str | None = None
    ) -> Iterator[DockerSession]:
        """A fresh container of the language's image holding ``files`` in /work;
        SandboxUnavailable if the engine's or that image's probe failed."""
        image = self.image_for(language)
        report = self._ensure_image(image)
        if not report.ok:
            raise SandboxUnavailable("; ".join(report.problems))
        with self._session(files, image) as session:
            yield session

    @contextlib.contextmanager
    def _session(
        self, files: Mapping[str, bytes], image: str, probing: bool = False
    ) -> Iterator[DockerSession]:
        container = self._open(_tar(files), image)
        try:
            yield DockerSession(self, container)
        finally:
            if probing:  # the probe's own container: removed now, before any pool exists
                with self._cond:
                    self._in_use.pop(container.id, None)
                self._remove(container)
            else:
                self._retire(container)

    def _open(self, archive: bytes, image: str) -> _Container:
        """A container from the image's pool with the files in /work. A pooled container that
        died (an engine restart stops them all; an operator; the OOM killer) is dropped with
        every other dead one of its pool, and a fresh container takes its place."""
        for attempt in (1, 2):
            container = self._take(image)
            with self._cond:
                self._in_use[container.id] = container
                self._used_uids.add(container.uid)
            try:
                self._root(container, _OPEN_WORK, archive)
                return container
            except SandboxError:
                self._retire(container)
                if attempt == 2 or self._running(container):
                    raise
                self._drop_dead(image)
        raise AssertionError("unreachable")

    def _drop_dead(self, image: str) -> None:
        with self._cond:
            pool = self._pools.get(image, [])
            dead = [c for c in pool if not self._running(c)]
            for container in dead:
                pool.remove(container)
                self._retired.append(container)
            self._cond.notify_all()

    # -- evidence for tests and audits ---------------------------------------------------------

    def program_uids(self) -> set[int]:
        """Every uid a program of this backend ran as."""
        with self._cond:
            return set(self._used_uids)

    def leftover_processes(self) -> list[int]:
        """Host pids running as any program uid this backend handed out: empty between runs."""
        from service.sandbox.local import processes_of_uids

        return processes_of_uids(self.program_uids())

    def stray_containers(self) -> list[str]:
        """Containers this backend started that are neither warm in a pool nor in use."""
        owner = _owner_tag(os.getpid())
        listed = self._docker().api.containers(
            all=True, filters={"label": f"{_OWNER_LABEL}={owner}"}
        )
        with self._cond:
            known = {c.id for pool in self._pools.values() for c in pool} | set(self._in_use)
            created = set(self._created)
        return [i["Id"] for i in listed if i["Id"] in created and i["Id"] not in known]

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """True once retired containers are removed and every pool is full (tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (
                self._retired
                or self._removing
                or any(len(pool) < self.pool_size for pool in self._pools.values())
            ):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True


class DockerSession:
    """One submission's container; runs execute one at a time."""

    def __init__(self, backend: DockerBackend, container: _Container) -> None:
        self.backend, self.container = backend, container

    def run(self, spec: RunSpec) -> RunResult:
        limits = spec.limits
        backend, container = self.backend, self.container
        # The container's memory cgroup bounds the run as a whole (all its processes and its
        # files in /tmp); RLIMIT_AS bounds each process. Changed only when the limit changes.
        backend._set_memory(container, (limits.memory_mb + backend.tmp_mb) << 20)
        if spec.work_writable:
            backend._root(container, _LEND_WORK)
        marker = secrets.token_hex(16)
        cpu = max(1, int(limits.cpu_s + 0.999))
        argv = [
            "sh",
            "-c",
            _WRAPPER,
            "rlvr-run",  # $0
            marker,
            str(cpu),
            str(limits.memory_mb << 20),
            str(limits.file_size_mb << 20),
            str(limits.open_files),
            str(limits.processes),
            str(limits.stack_mb << 20),
            *_argv(spec.argv),
        ]
        cpu_before = container.cgroup.cpu_seconds()
        oom_before = container.cgroup.oom_kills()
        caps = (limits.stdout_bytes, limits.stderr_bytes + limits.result_bytes + 256)
        done = backend._exec(
            container,
            argv,
            user=container.uid,
            stdin=spec.stdin,
            wall_s=limits.wall_s,
            caps=caps,
        )
        cpu_after = container.cgroup.cpu_seconds()
        _, trailer, _ = _split_trailer(done.stderr, marker.encode())
        if not trailer and not backend._running(container):
            # No trailer because the container itself went away (engine, OOM of its init,
            # an operator): the sandbox failed, not the program.
            raise SandboxError("the sandbox container stopped during the run")
        claims_setup = trailer.startswith(b"setup ") and done.exit_code == 125
        # 126/127 without a trailer: the runtime could not start the wrapper at all.
        claims_start = not trailer and done.exit_code in (126, 127) and not done.killed
        if claims_setup or claims_start:
            self._confirm_failure(spec.argv[0], done)
        if spec.work_writable:
            backend._root(container, _TAKE_BACK_WORK)
        return _result(done, marker.encode(), limits, cpu_before, cpu_after, oom_before, container)

    def _confirm_failure(self, program: str, done: _Exec) -> None:
        """Raise SandboxError if the set-up really fails; return if the program faked it."""
        check = ["sh", "-c", _CHECK, "rlvr-check", secrets.token_hex(16), program]
        checked = self.backend._exec(self.container, check, user=self.container.uid, wall_s=20)
        if checked.exit_code != 0 or checked.killed:
            said = (checked.stderr or done.stdout or done.stderr)[-300:]
            reason = said.decode("utf-8", "replace").strip().split(" ", 1)[-1]
            raise SandboxError(f"sandbox could not start the program: {reason}")


def _argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """``python3 -I -S script`` runs as ``python3 -I script``: a fresh interpreter of the image,
    whose site module gives ``exit()``/``quit()`` as the local fork server provides them."""
    if len(argv) >= 4 and argv[:3] == FAST_PYTHON and not argv[3].startswith("-"):
        return (argv[0], "-I", *argv[3:])
    return argv


def _result(
    done: _Exec,
    marker: bytes,
    limits: Limits,
    cpu_before: float | None,
    cpu_after: float | None,
    oom_before: int,
    container: _Container,
) -> RunResult:
    stderr, trailer, result = _split_trailer(done.stderr, marker)
    killed = done.killed
    if killed is None and len(stderr) > limits.stderr_bytes:
        killed = "stderr_limit"
    if killed is None and len(result) > limits.result_bytes:
        killed = "result_limit"
    survivors = 0
    parts = trailer.split()
    if len(parts) == 3 and parts[0] == b"ran" and parts[2].isdigit():
        survivors = int(parts[2])
    code = done.exit_code
    if code is None:
        raise SandboxError("docker reported no exit status for the run")
    term_signal = code - 128 if code is not None and 128 < code < 160 else None
    cpu = done.wall_s if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return RunResult(
        exit_code=None if term_signal is not None else code,
        term_signal=term_signal,
        cpu_s=max(0.0, cpu),
        wall_s=done.wall_s,
        stdout=done.stdout[: limits.stdout_bytes],
        stderr=stderr[: limits.stderr_bytes],
        result=result[: limits.result_bytes],
        killed=killed,
        memory_exceeded=container.cgroup.oom_kills() > oom_before,
        survivors_killed=survivors,
    )


def _split_trailer(stderr: bytes, marker: bytes) -> tuple[bytes, bytes, bytes]:
    """(program stderr, trailer line, result) — the wrapper's trailer follows the last marker."""
    at = stderr.rfind(b"\n" + marker + b" ")
    if at < 0:
        return stderr, b"", b""
    line_end = stderr.find(b"\n", at + 1)
    line_end = len(stderr) if line_end < 0 else line_end
    trailer = stderr[at + 1 + len(marker) + 1 : line_end]
    return stderr[:at], trailer, stderr[line_end + 1 :]


def _tar(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(os.path.basename(name))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class _Stream:
    """The host side of one exec's hijacked connection: Docker's 8-byte framed stdout/stderr."""

    def __init__(self, raw: socket.socket, stdin: bytes, caps: tuple[int, int]) -> None:
        self.raw, self.caps = raw, caps
        self.pending = memoryview(stdin)
        self.buffer = bytearray()
        self.out = (bytearray(), bytearray())
        self.open = True
        self.writing = True
        raw.setblocking(False)
        if not self.pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        self.writing = False
        with contextlib.suppress(OSError):
            self.raw.shutdown(socket.SHUT_WR)

    def pump(self, deadline: float) -> str | None:
        """Until EOF (None), the wall clock ("wall") or a cap ("stdout_limit"/"stderr_limit")."""
        while self.open:
            left = deadline - time.monotonic()
            if left <= 0:
                return "wall"
            writers = [self.raw] if self.writing else []
            readable, writable, _ = select.select([self.raw], writers, [], left)
            if writable:
                try:
                    sent = self.raw.send(self.pending[: 1 << 16])
                    self.pending = self.pending[sent:]
                except BlockingIOError:
                    pass
                except OSError:  # the program closed its stdin
                    self.pending = self.pending[:0]
                if not self.pending:
                    self._close_stdin()
            if readable and (over := self._receive()):
                return over
        return None

    def drain(self, deadline: float) -> None:
        """After a kill: read what is left until EOF, ignoring caps, briefly."""
        self.caps = (1 << 62, 1 << 62)
        while self.open and time.monotonic() < deadline:
            readable, _, _ = select.select([self.raw], [], [], deadline - time.monotonic())
            if readable:
                self._receive(keep=False)

    def _receive(self, keep: bool = True) -> str | None:
        try:
            chunk = self.raw.recv(1 << 16)
        except BlockingIOError:
            return None
        except OSError:
            chunk = b""
        if not chunk:
            self.open = False
            return None
        if not keep:
            return None
        self.buffer += chunk
        while len(self.buffer) >= 8:
            kind, size = self.buffer[0], struct.unpack(">I", self.buffer[4:8])[0]
            if len(self.buffer) < 8 + size:
                break
            payload = self.buffer[8 : 8 + size]
            del self.buffer[: 8 + size]
            if kind in (1, 2):
                target = self.out[kind - 1]
                target += payload
                if len(target) > self.caps[kind - 1]:
                    del target[self.caps[kind - 1] :]
                    return "stdout_limit" if kind == 1 else "stderr_limit"
        return None

    def stdout(self) -> bytes:
        return bytes(self.out[0])

    def stderr(self) -> bytes:
        return bytes(self.out[1])
