"""Warm containers per image, kept by a thread of its own, off the request path.

A session takes a container from its image's pool and gives it back when it ends, once its
supervisor has emptied /work (every run was already killed and cleaned up after as the
program's uid): starting a container costs far more than the runs of a submission. A container
whose supervisor failed, that a run left unclean, that lacks warm code offered since it
started, or that the pool has no room for is retired instead: removed, and a fresh one started
in its place. Containers whose worker died without removing them are stale: the next worker on
the machine removes them when its backend starts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

from service.sandbox import warm_code
from service.sandbox.base import SandboxError
from service.sandbox.docker.containers import (
    LABEL,
    OWNER_LABEL,
    Container,
    Engine,
    owner_alive,
    owner_tag,
)

log = logging.getLogger(__name__)


class WarmPool:
    """``size`` started containers per image in use, and every container handed out."""

    def __init__(self, engine: Engine, size: int, thread_name: str) -> None:
        self.engine, self.size = engine, size
        self._thread_name = thread_name
        self._pools: dict[str, list[Container]] = {}
        self._creating: dict[str, int] = {}
        self._retired: list[Container] = []
        self._in_use: dict[str, Container] = {}
        self._used_uids: set[int] = set()
        self._removing = 0
        self._closing = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    # -- sessions ------------------------------------------------------------------------------

    def keep_warm(self, image: str) -> None:
        """From now on the pool of ``image`` is kept full (once its probe passed)."""
        with self._cond:
            if image not in self._pools:
                self._pools[image] = []
                self._creating[image] = 0
                self._cond.notify_all()

    def take(self, image: str) -> Container:
        """A warm container of ``image``, or a new one if its pool is empty (this waits)."""
        with self._cond:
            pool = self._pools.get(image)
            container = pool.pop() if pool else None  # the one given back last: warm pages
            if container is not None:  # in use at once: never counted as missing
                self._in_use[container.id] = container
                self._used_uids.add(container.uid)
                return container
        try:
            container = self.engine.create(image)
        except Exception as exc:
            raise SandboxError(f"could not start a sandbox container: {exc}") from exc
        with self._cond:
            self._in_use[container.id] = container
            self._used_uids.add(container.uid)
        return container

    def give_back(self, container: Container) -> None:
        """A container whose session ended: warm again if it is sound and its pool has room,
        else retired."""
        with self._cond:
            pool = self._pools.get(container.image)
            stale = container.warm_generation != warm_code.generation()
            if self._closing or container.broken is not None or pool is None or stale:
                keep = False  # (stale: code offered since it started, see ``warm_code``)
            else:
                keep = len(pool) < self.size
            if keep and pool is not None:
                self._in_use.pop(container.id, None)
                pool.append(container)
                self._cond.notify_all()
                return
        self.retire(container)

    def retire(self, container: Container) -> None:
        """A container whose session ended: removed in the background."""
        with self._cond:
            self._in_use.pop(container.id, None)
            self._retired.append(container)
            self._cond.notify_all()

    def remove_now(self, container: Container) -> None:
        """A container removed before its session returns (the probe's, before any pool)."""
        with self._cond:
            self._in_use.pop(container.id, None)
        self.engine.remove(container)

    def drop_dead(self, image: str) -> None:
        """Retire every container of the image's pool that is no longer running (an engine
        restart stops them all; an operator; the OOM killer)."""
        with self._cond:
            pool = self._pools.get(image, [])
            dead = [c for c in pool if not self.engine.running(c)]
            for container in dead:
                pool.remove(container)
                self._retired.append(container)
            self._cond.notify_all()

    def remove_stale(self) -> None:
        """Containers of this machine whose worker died without removing them."""
        client = self.engine.client()
        for info in client.api.containers(all=True, filters={"label": LABEL}):
            owner = info.get("Labels", {}).get(OWNER_LABEL, "")
            if not owner_alive(owner):
                with contextlib.suppress(Exception):
                    client.api.remove_container(info["Id"], force=True)

    # -- evidence for tests and audits ---------------------------------------------------------

    def warm(self) -> dict[str, list[Container]]:
        """The warm containers of each image kept warm."""
        with self._cond:
            return {image: list(pool) for image, pool in self._pools.items()}

    def program_uids(self) -> set[int]:
        with self._cond:
            return set(self._used_uids)

    def stray(self) -> list[str]:
        """Containers this pool's engine started that are neither warm nor in use."""
        listed = self.engine.client().api.containers(
            all=True, filters={"label": f"{OWNER_LABEL}={owner_tag(os.getpid())}"}
        )
        created = self.engine.created()
        with self._cond:
            known = {c.id for pool in self._pools.values() for c in pool} | set(self._in_use)
        return [i["Id"] for i in listed if i["Id"] in created and i["Id"] not in known]

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """True once retired containers are removed, none is starting and every pool is
        full."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while (
                self._retired
                or self._removing
                or any(self._creating.values())
                or any(self._count(image) < self.size for image in self._pools)
            ):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- the thread ----------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._maintain, name=self._thread_name, daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Remove every container (warm, retired or still in use) and stop the thread."""
        with self._cond:
            self._closing = True
            warm = [c for pool in self._pools.values() for c in pool]
            doomed = warm + self._retired + list(self._in_use.values())
            self._pools, self._retired = {}, []
            self._cond.notify_all()
        for container in doomed:
            self.engine.remove(container)
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _maintain(self) -> None:
        """Keep every pool full and remove retired containers."""
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
                self.engine.remove(retired)
                with self._cond:
                    self._removing -= 1
                    self._cond.notify_all()
                continue
            assert image is not None
            try:
                made = self.engine.create(image)
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
                self.engine.remove(made)

    def _short(self) -> str | None:
        """An image with fewer than ``size`` containers (warm, starting or in a session, which
        comes back), if any."""
        for image in self._pools:
            if self._count(image) + self._creating[image] < self.size:
                return image
        return None

    def _count(self, image: str) -> int:
        """Containers of ``image`` warm or in a session."""
        in_use = sum(1 for container in self._in_use.values() if container.image == image)
        return len(self._pools[image]) + in_use
