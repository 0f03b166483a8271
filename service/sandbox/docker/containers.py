"""The docker backend's containers: how one is started (locked down) with its supervisor,
labelled with its owner, resized, checked and removed.

Every container is started from the runner image with no network, a read-only root,
size- and inode-capped tmpfs for /work, /tmp and /dev/shm, ``no-new-privileges``,
pids/memory/CPU limits and Docker's init as PID 1; the host's kernel, hardware, load and boot
id are masked in /proc (and /sys is not there), and its resolver is not in /etc/resolv.conf.
Its main process is the supervisor (channel.py, ``server/supervisor.py``): uid 0 with
``CAP_SETUID`` and ``CAP_SETGID`` and no other capability (no ``CAP_KILL``, no
``CAP_DAC_OVERRIDE``), so that it can start runs as the program's uid. Every program runs as a
non-root uid of its own (one per container) with no capabilities at all, so a program can
neither signal nor read the supervisor nor write the root-owned /work, and ``kill(-1)``
inside reaches only the program's own processes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from service.sandbox import warm_code
from service.sandbox.base import WORK_DIR, SandboxError
from service.sandbox.cgroups import CGROUP_HEADROOM, CgroupAccounting
from service.sandbox.docker import scripts
from service.sandbox.docker.channel import (
    BOOT,
    SOCKET_DIR,
    SOCKET_NAME,
    Channel,
    SocketListener,
    boot_frame,
)
from service.sandbox.docker.exec_stream import run_exec
from service.sandbox.procfs import parent_pid, process_start, process_stat
from service.sandbox.server.wire import ENV

LABEL = "rlvr.sandbox"
OWNER_LABEL = "rlvr.sandbox.owner"
_SUPERVISOR = ("python3", "-I", "-S", "-B", "-c", BOOT)
# What the supervisor needs to start runs as the program's uid; a program gets none of it.
_SUPERVISOR_CAPS = ["SETUID", "SETGID"]
# Starting the supervisor (its modules, the template) on a busy machine.
_BOOT_S = 60.0
_BOOT_REPLY_MAX = 64 << 10
# Docker's own masked paths (setting the list replaces them), then what would tell a program
# about the host: kernel release and build, boot command line and id, symbols, hardware
# (memory, CPU model, devices), host-wide load, uptime and statistics. A masked file reads
# empty, a masked directory is an empty read-only tmpfs. /sys goes whole (hardware, the
# container's cgroup paths). Docker's root is an overlay whose layer paths show in every
# process's mountinfo: that cannot be masked from here.
MASKED_PATHS = (
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    "/sys",
    "/proc/version",
    "/proc/version_signature",
    "/proc/cmdline",
    "/proc/bootconfig",
    "/proc/kallsyms",
    "/proc/modules",
    "/proc/config.gz",
    "/proc/meminfo",
    "/proc/cpuinfo",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/stat",
    "/proc/vmstat",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/pagetypeinfo",
    "/proc/slabinfo",
    "/proc/vmallocinfo",
    "/proc/swaps",
    "/proc/diskstats",
    "/proc/partitions",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/iomem",
    "/proc/ioports",
    "/proc/devices",
    "/proc/misc",
    "/proc/crypto",
    "/proc/locks",
    "/proc/key-users",
    "/proc/consoles",
    "/proc/cgroups",
    "/proc/pressure",
    "/proc/mtrr",
    "/proc/dma",
    "/proc/driver",
    "/proc/tty",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/version",
    "/proc/sys/kernel/random/boot_id",
)
# Inodes of each tmpfs: the clean-up before a run walks every file left in /tmp, so a run
# cannot leave more than this many (a program that litters /tmp with 20,000 files once held
# a worker for 20 s).
_TMP_INODES, _WORK_INODES, _SHM_INODES = 8192, 4096, 1024
# The whole environment of the supervisor and of an exec; a run's program gets only these.
EXEC_ENV = tuple(f"{key}={value}" for key, value in ENV.items())
_uids = itertools.count()  # per process, shared by every backend instance in it


def owner_tag(pid: int) -> str:
    """``host:pid:start time`` of a worker process: what its containers are labelled with."""
    return f"{socket.gethostname()}:{pid}:{process_start(pid)}"


def owner_alive(tag: str) -> bool:
    host, _, rest = tag.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's container: not ours to judge
    return process_start(int(pid)) == started


def _next_uid() -> int:
    # A uid of its own per container (2**30 + pid·256 + n, below Docker's 2**31 bound):
    # RLIMIT_NPROC counts only this container's processes, and leftovers on the host are
    # attributable to it.
    return 0x4000_0000 + ((os.getpid() & 0x3F_FFFF) << 8) + next(_uids) % 256


@dataclass(slots=True)
class Container:
    id: str
    uid: int
    host_pid: int
    cgroup: CgroupAccounting = field(default_factory=CgroupAccounting)
    memory_bytes: int = 0
    # The init's start time when this worker can see the host's processes, else None.
    init_started: str | None = None
    image: str = ""
    channel: Channel | None = None
    # What the supervisor said when it started (its pid, python, whether seccomp is there).
    ready: dict[str, Any] = field(default_factory=dict)
    # Why this container must not serve another session (None: it may).
    broken: str | None = None
    # The warm code its supervisor was given (``warm_code.generation()`` then), and the
    # digests of what it imported (``warm_code.held_digests``).
    warm_generation: int = 0
    warm_digests: frozenset[str] = frozenset()

    def supervisor(self) -> Channel:
        if self.channel is None:
            raise SandboxError("the sandbox container has no supervisor")
        return self.channel


class Engine:
    """This process's side of the docker engine: one client per thread (the pool's thread and
    sessions never share one), and the containers it starts, uses and removes."""

    def __init__(
        self,
        *,
        memory_mb: int,
        cpus: float,
        pids_max: int,
        tmp_mb: int,
        work_mb: int,
        direct_channel: bool = True,
    ):
        self.cpus, self.pids_max = cpus, pids_max
        # Frames on a socket of their own, not through the engine (channel.py).
        self.direct_channel = direct_channel
        self.tmp_mb, self.work_mb = tmp_mb, work_mb
        self._fresh_memory = memory_mb << 20
        self._clients = threading.local()
        self._lock = threading.Lock()
        self._created: set[str] = set()

    def client(self) -> Any:
        """This thread's engine client."""
        client = getattr(self._clients, "client", None)
        if client is None:
            import docker

            client = self._clients.client = docker.from_env(timeout=60)
        return client

    def create(self, image: str) -> Container:
        """A new locked-down container of ``image``, its supervisor started and ready."""
        uid = _next_uid()
        memory = self._fresh_memory
        api = self.client().api
        listener = SocketListener() if self.direct_channel else None
        try:
            return self._create(api, image, uid, memory, listener)
        finally:
            if listener is not None:
                listener.close()

    def _create(
        self, api: Any, image: str, uid: int, memory: int, listener: SocketListener | None
    ) -> Container:
        # Legacy binds create a missing source: an engine that sees another filesystem starts
        # the container anyway, and its supervisor stays on the attach stream.
        binds = {listener.directory: {"bind": SOCKET_DIR, "mode": "ro"}} if listener else None
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={
                "/tmp": f"rw,exec,nosuid,nodev,size={self.tmp_mb}m,nr_inodes={_TMP_INODES},"
                "mode=1777",
                WORK_DIR: f"rw,exec,nosuid,nodev,size={self.work_mb}m,nr_inodes={_WORK_INODES},"
                "mode=0755",
                "/dev/shm": f"rw,noexec,nosuid,nodev,size=16m,nr_inodes={_SHM_INODES},mode=1777",
            },
            cap_drop=["ALL"],
            cap_add=_SUPERVISOR_CAPS,
            security_opt=["no-new-privileges"],
            pids_limit=self.pids_max,
            mem_limit=memory,
            memswap_limit=memory,
            cgroupns="private",
            nano_cpus=int(self.cpus * 1e9),
            init=True,
            log_config={"type": "none"},
            # Not the host's resolver (DNS has nowhere to go without a network anyway).
            dns=["127.0.0.1"],
            dns_search=["."],
            binds=binds,
        )
        host_config["MaskedPaths"] = list(MASKED_PATHS)
        created = api.create_container(
            image,
            list(_SUPERVISOR),
            detach=True,
            stdin_open=True,
            user="0:0",
            host_config=host_config,
            hostname="sandbox",
            environment=list(EXEC_ENV),
            working_dir="/",
            labels={LABEL: "1", OWNER_LABEL: owner_tag(os.getpid())},
        )
        container_id = created["Id"]
        with self._lock:
            self._created.add(container_id)
        channel = None
        try:
            # Attached before it starts: the supervisor's first byte is never missed.
            channel = Channel(
                api.attach_socket(
                    container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
                )
            )
            api.start(container_id)
            host_pid = int(api.inspect_container(container_id)["State"]["Pid"])
            container = Container(
                container_id,
                uid,
                host_pid,
                CgroupAccounting.of_pid(host_pid),
                memory,
                process_start(host_pid),
                image,
                channel,
            )
            container.warm_generation = warm_code.generation()
            container.ready, container.warm_digests = _boot(container, listener)
        except Exception:
            if channel is not None:
                channel.close()
            with contextlib.suppress(Exception):
                api.remove_container(container_id, force=True)
            raise
        return container

    def created(self) -> set[str]:
        """The ids of every container this engine started (removed ones included)."""
        with self._lock:
            return set(self._created)

    def remove(self, container: Container) -> None:
        if container.channel is not None:
            container.channel.close()
        with contextlib.suppress(Exception):
            self.client().api.remove_container(container.id, force=True)

    def running(self, container: Container) -> bool:
        if container.init_started is not None:
            # Race-free where the host's processes are visible: the container's init dies
            # before the kernel tears down the rest of its namespace.
            stat = process_stat(container.host_pid)
            return (
                stat is not None and stat[0] not in ("Z", "X") and stat[1] == container.init_started
            )
        try:
            state = self.client().api.inspect_container(container.id)["State"]
        except Exception:
            return False
        return bool(state.get("Running")) and not state.get("Paused")

    def set_memory(self, container: Container, limit_bytes: int) -> None:
        """The container's memory limit: ``limit_bytes`` plus its own processes' headroom."""
        limit_bytes += CGROUP_HEADROOM
        if container.memory_bytes == limit_bytes:
            return
        try:
            self.client().api.update_container(
                container.id, mem_limit=limit_bytes, memswap_limit=limit_bytes
            )
        except Exception as exc:
            raise SandboxError(f"could not set the container's memory limit: {exc}") from exc
        container.memory_bytes = limit_bytes
        # New containers start with the limit runs use now: most sessions then set none.
        self._fresh_memory = limit_bytes

    def kill_programs(self, container: Container) -> bool:
        """The host's last resort: kill every process of the program's uid through an exec of
        its own (the supervisor did not answer); True if that exec ran to its end."""
        try:
            argv = ["sh", "-c", scripts.as_program("kill")]
            api = self.client().api
            code = run_exec(api, container.id, argv, user=container.uid, environment=EXEC_ENV)
        except SandboxError:
            return False
        return code == 0


def _boot(
    container: Container, listener: SocketListener | None
) -> tuple[dict[str, Any], frozenset[str]]:
    """Start the supervisor: its code and config, its channel, then its "ready" and the
    digests of the warm code it holds."""
    channel = container.supervisor()
    offered = warm_code.boot_config()
    config: dict[str, Any] = {"uid": container.uid, "warm_code": offered}
    if listener is not None:
        config["channel"] = f"{SOCKET_DIR}/{SOCKET_NAME}"
    deadline = time.monotonic() + _BOOT_S
    channel.send(boot_frame(config), _BOOT_S)
    if listener is not None and channel.await_connection(listener, deadline):
        conn, pid, peer_uid = listener.accept()
        if not _supervisor_peer(container, pid, peer_uid):
            conn.close()
            channel.fail("a stranger connected")
            raise SandboxError(
                f"the sandbox's channel was reached by pid {pid} uid {peer_uid}, "
                "not by the container's supervisor"
            )
        channel.adopt(conn)
    reply = channel.receive(deadline, _BOOT_REPLY_MAX)
    if reply is None:
        channel.fail("no reply in time")
        raise SandboxError(f"the sandbox's supervisor did not answer in {_BOOT_S:.0f} s")
    if not reply.get("ready"):
        channel.fail("did not start")
        raise SandboxError(f"the sandbox's supervisor did not start: {reply.get('error')}")
    return reply, warm_code.held_digests(offered, reply)


def _supervisor_peer(container: Container, pid: int, uid: int) -> bool:
    """Whether the process at the socket's other end is the container's supervisor: uid 0
    and, where this worker sees the host's processes, a child of the container's init."""
    if uid != 0:
        return False
    if container.init_started is None:
        return True  # the directory's mode is then the only guard (only root could reach it)
    return pid > 0 and parent_pid(pid) == container.host_pid
