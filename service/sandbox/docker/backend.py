"""DockerBackend: the engine's and each image's probe, sessions, and closing."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from service.sandbox import warm_code
from service.sandbox.base import ProbeReport, SandboxError, SandboxUnavailable
from service.sandbox.config import SandboxConfig
from service.sandbox.docker.containers import Container, Engine
from service.sandbox.docker.images import missing_image
from service.sandbox.docker.pool import WarmPool
from service.sandbox.docker.session import DockerSession
from service.sandbox.probe import ProbeCache, check_probe_run, probe_spec
from service.sandbox.procfs import processes_of_uids

_DEFAULTS = SandboxConfig()
# What a program must not read in a container (the host's paths are not there at all).
_FORBIDDEN = ["/var/run/docker.sock", "/run/docker.sock", "/proc/1/environ", "/etc/shadow"]
_instances = itertools.count()


class DockerBackend:
    """Warm containers of the runner image; one per session, replaced in the background."""

    name = "docker"

    def __init__(
        self,
        image: str = _DEFAULTS.docker_image,
        pool_size: int = _DEFAULTS.docker_pool,
        images: Mapping[str, str] | None = None,
        memory_mb: int = _DEFAULTS.docker_memory_mb,
        cpus: float = _DEFAULTS.docker_cpus,
        pids_max: int = _DEFAULTS.docker_pids,
        tmp_mb: int = 128,
        work_mb: int = 128,
        channel: str = _DEFAULTS.docker_channel,
    ) -> None:
        self.image = image
        # A language may run in an image of its own; each image has its own warm pool,
        # started when the image is first used and probed.
        self.images = dict(images or {})
        self.pool_size = pool_size
        self.memory_mb, self.cpus, self.pids_max = memory_mb, cpus, pids_max
        self.tmp_mb, self.work_mb = tmp_mb, work_mb
        self.instance = next(_instances)
        if channel not in ("socket", "attach"):
            raise ValueError(f"docker channel must be 'socket' or 'attach', not {channel!r}")
        self.channel = channel
        self._engine = Engine(
            memory_mb=memory_mb,
            cpus=cpus,
            pids_max=pids_max,
            tmp_mb=tmp_mb,
            work_mb=work_mb,
            direct_channel=channel == "socket",
        )
        self._pool = WarmPool(self._engine, pool_size, f"rlvr-docker-pool-{self.instance}")
        self._probes = ProbeCache()
        self._image_reports: dict[str, ProbeReport] = {}
        self._probe_lock = threading.Lock()

    @classmethod
    def from_config(cls, config: SandboxConfig) -> DockerBackend:
        return cls(
            image=config.docker_image,
            pool_size=config.docker_pool,
            images=config.docker_images,
            memory_mb=config.docker_memory_mb,
            cpus=config.docker_cpus,
            pids_max=config.docker_pids,
            channel=config.docker_channel,
        )

    # -- probes --------------------------------------------------------------------------------

    def probe(self) -> ProbeReport:
        """Check the engine, the image and the isolation once; then keep the pool warm."""
        with self._probe_lock:
            return self._ensure()

    def _ensure(self) -> ProbeReport:
        self._probes.check_owner()
        if not self._probes.due():
            return self._probes.last
        report = self._probes.record(self._start())
        if report.ok:
            self._image_reports[self.image] = report
            self._pool.start()
        return report

    def _start(self) -> ProbeReport:
        try:
            client = self._engine.client()
            client.ping()
            security = client.info().get("SecurityOptions") or []
        except Exception as exc:
            reason = f"docker engine not available (runner image {self.image!r}): {exc}"
            return ProbeReport(self.name, False, (reason,))
        with contextlib.suppress(Exception):
            self._pool.remove_stale()
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
            cpu_accounting="rusage",
            # Docker's profile, and the sandbox's own filter on top of it in every run.
            seccomp=any("seccomp" in option for option in security) and report.facts["seccomp"],
        )
        return ProbeReport(self.name, True, (), facts)

    def _probe_image(self, image: str) -> ProbeReport:
        """The isolation probe in a container of ``image``; on success its pool is kept warm."""
        problem = missing_image(self._engine.client(), image)
        if problem is not None:
            return ProbeReport(self.name, False, (problem,))
        files, spec = probe_spec(_FORBIDDEN)
        try:
            with self._session(files, image, probing=True) as session:
                result = session.run(spec)
                container = session.container
        except SandboxError as exc:
            return ProbeReport(self.name, False, (f"probe did not run in {image}: {exc}",))
        problems, facts = check_probe_run(result, container.uid, kind="docker")
        if problems:
            return ProbeReport(self.name, False, tuple(problems))
        self._pool.keep_warm(image)
        facts = {key: facts.get(key) for key in ("pids", "uid", "init")}
        facts.update(
            supervisor_python=container.ready.get("python"),
            seccomp=bool(container.ready.get("seccomp")),
            warm_code=container.ready.get("warm_code"),
            channel=container.ready.get("channel"),
        )
        return ProbeReport(self.name, True, (), facts)

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
        if self._probes.owned():
            self._pool.close()

    # -- sessions ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(
        self,
        files: Mapping[str, bytes],
        language: str | None = None,
        warm_files: Mapping[str, str] | None = None,
    ) -> Iterator[DockerSession]:
        """A fresh container of the language's image holding ``files`` in /work (less the
        ``warm_files`` its supervisor's warm code stands for); SandboxUnavailable if the
        engine's or that image's probe failed."""
        image = self.image_for(language)
        report = self._ensure_image(image)
        if not report.ok:
            raise SandboxUnavailable("; ".join(report.problems))
        with self._session(files, image, warm_files=warm_files) as session:
            yield session

    @contextlib.contextmanager
    def _session(
        self,
        files: Mapping[str, bytes],
        image: str,
        probing: bool = False,
        warm_files: Mapping[str, str] | None = None,
    ) -> Iterator[DockerSession]:
        session = self._open(files, image, warm_files)
        try:
            yield session
        finally:
            session.close()
            if probing:  # the probe's own container: removed now, before any pool exists
                self._pool.remove_now(session.container)
            else:
                self._pool.give_back(session.container)

    def _open(
        self, files: Mapping[str, bytes], image: str, warm_files: Mapping[str, str] | None
    ) -> DockerSession:
        """A container from the image's pool with the files in /work. A pooled container that
        died is dropped with every other dead one of its pool, and a fresh one takes its place."""
        for attempt in (1, 2):
            container = self._pool.take(image)
            session = DockerSession(self._engine, container)
            try:
                session.open(warm_code.session_files(files, warm_files, container.warm_digests))
                return session
            except SandboxError:
                self._pool.retire(container)
                if attempt == 2 or self._engine.running(container):
                    raise
                self._pool.drop_dead(image)
        raise AssertionError("unreachable")

    # -- evidence for tests and audits ---------------------------------------------------------

    def client(self) -> Any:
        """This thread's docker engine client."""
        return self._engine.client()

    @property
    def _pools(self) -> dict[str, list[Container]]:
        """The warm containers of each image (a copy)."""
        return self._pool.warm()

    def program_uids(self) -> set[int]:
        """Every uid a program of this backend ran as."""
        return self._pool.program_uids()

    def leftover_processes(self) -> list[int]:
        """Host pids running as any program uid this backend handed out: empty between runs."""
        return processes_of_uids(self.program_uids())

    def stray_containers(self) -> list[str]:
        """Containers this backend started that are neither warm in a pool nor in use."""
        return self._pool.stray()

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """True once retired containers are removed and every pool is full (tests, benchmarks)."""
        return self._pool.wait_idle(timeout_s)
