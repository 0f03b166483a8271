"""Which Celery workers are alive, which queues they consume and which tasks they hold.

Each worker's main process registers itself in Redis and beats every ``worker_heartbeat_s``;
it notes each task message it reserves. A worker whose main process is killed stops beating,
and the messages it held would stay unacknowledged for the broker's visibility timeout (an
hour): the request waited ten minutes and got a 503. Instead every live worker sweeps at each
beat: a registered worker silent for ``MISSED_BEATS`` beats is dead, and the messages it held
go back to their queues at once. A chunk that ran twice logs nothing twice (chunk.py).

The same registry tells the API which queues have a consumer (``/readyz``).

Keys (the broker's Redis):
- ``rlvr:workers``: hash, incarnation → {"hostname", "pid", "queues"} as JSON;
- ``rlvr:worker:<incarnation>:alive``: set at each beat, expires after ``MISSED_BEATS`` beats;
- ``rlvr:worker:<incarnation>:held``: hash, delivery tag → {"task", "at"} as JSON.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

REGISTRY = "rlvr:workers"
MISSED_BEATS = 3
# A held tag is dropped when the worker no longer reserves it; not before this many seconds,
# so a message received a moment before the worker counts it as reserved is not dropped.
HELD_GRACE_S = 10.0


def alive_key(incarnation: str) -> str:
    return f"rlvr:worker:{incarnation}:alive"


def held_key(incarnation: str) -> str:
    return f"rlvr:worker:{incarnation}:held"


def new_incarnation() -> str:
    """One per worker main process: a restarted worker with the same hostname is another one,
    and what its predecessor held is still recovered."""
    return uuid.uuid4().hex


class WorkerPresence:
    """A worker main process's registration, heartbeat and sweep (a daemon thread)."""

    def __init__(
        self,
        client: Any,
        incarnation: str,
        hostname: str,
        queues: Iterable[str],
        heartbeat_s: float,
        restore: Callable[[str], None],
        reserved_tags: Callable[[], set[str] | None],
        processes: int = 1,
    ) -> None:
        self.client = client
        self.incarnation = incarnation
        self.hostname = hostname
        self.queues = sorted(queues)
        self.processes = max(1, processes)
        self.heartbeat_s = heartbeat_s
        self.restore = restore
        self.reserved_tags = reserved_tags
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Register (before the worker says it is ready) and keep beating on a thread."""
        try:
            self._beat()
        except Exception:  # the thread tries again at every beat
            log.warning("could not register this worker", exc_info=True)
        self._thread = threading.Thread(target=self._run, name="rlvr-heartbeat", daemon=True)
        self._thread.start()

    def hold(self, delivery_tag: str, task_id: str) -> None:
        """A task message this worker reserved: handed back if the worker dies."""
        entry = json.dumps({"task": task_id, "at": time.time()})
        self.client.hset(held_key(self.incarnation), delivery_tag, entry)

    def stop(self) -> None:
        """A clean stop: Celery hands back what it reserved itself; nothing is left to sweep."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.heartbeat_s + 5)
        pipe = self.client.pipeline()
        pipe.hdel(REGISTRY, self.incarnation)
        pipe.delete(held_key(self.incarnation), alive_key(self.incarnation))
        pipe.execute()

    def _run(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                self._beat()
                self._prune_held()
                recovered = sweep_dead_workers(self.client, self.restore, self.incarnation)
                if recovered:
                    log.warning("handed back %d task(s) held by dead workers", recovered)
            except Exception:  # a Redis outage must not end the heartbeat thread
                log.warning("worker heartbeat failed", exc_info=True)

    def _beat(self) -> None:
        # Registered again at each beat: a worker taken for dead after a long pause (and
        # swept) shows up again as soon as it beats.
        info = {
            "hostname": self.hostname,
            "pid": os.getpid(),
            "queues": self.queues,
            "processes": self.processes,
        }
        pipe = self.client.pipeline()
        pipe.set(alive_key(self.incarnation), "1", px=int(self.heartbeat_s * MISSED_BEATS * 1000))
        pipe.hset(REGISTRY, self.incarnation, json.dumps(info))
        pipe.execute()

    def _prune_held(self) -> None:
        # Tags read before the reserved set: a message received in between is in neither
        # snapshot's difference, so it is never dropped while still held.
        held = self.client.hgetall(held_key(self.incarnation))
        reserved = self.reserved_tags()
        if reserved is None:
            return
        cutoff = time.time() - HELD_GRACE_S
        done = []
        for tag, entry in held.items():
            name = tag.decode() if isinstance(tag, bytes) else tag
            if name not in reserved and json.loads(entry).get("at", 0) < cutoff:
                done.append(tag)
        if done:
            self.client.hdel(held_key(self.incarnation), *done)


def sweep_dead_workers(client: Any, restore: Callable[[str], None], me: str | None = None) -> int:
    """Hand back every message held by a registered worker that stopped beating; returns how
    many were handed back. Safe to run from several workers at once: a message leaves the
    broker's unacknowledged set in one transaction, so it is restored once."""
    recovered = 0
    for raw in client.hkeys(REGISTRY):
        incarnation = raw.decode() if isinstance(raw, bytes) else raw
        if incarnation == me or client.exists(alive_key(incarnation)):
            continue
        for tag in client.hkeys(held_key(incarnation)):
            restore(tag.decode() if isinstance(tag, bytes) else tag)
            recovered += 1
        pipe = client.pipeline()
        pipe.delete(held_key(incarnation))
        pipe.hdel(REGISTRY, incarnation)
        pipe.execute()
    return recovered


@dataclass(frozen=True, slots=True)
class QueueConsumers:
    workers: int  # live workers that consume the queue
    processes: int  # their pool processes, in all


async def queue_consumers(client: Any) -> dict[str, QueueConsumers]:
    """Live workers per queue, and their pool processes, from the registry (an async Redis
    client). A queue no live worker consumes is absent."""
    registry = await client.hgetall(REGISTRY)
    if not registry:
        return {}
    incarnations = list(registry)
    pipe = client.pipeline()
    for incarnation in incarnations:
        name = incarnation.decode() if isinstance(incarnation, bytes) else incarnation
        pipe.exists(alive_key(name))
    flags = await pipe.execute()
    live = [i for i, flag in zip(incarnations, flags, strict=True) if flag]
    workers: dict[str, int] = {}
    processes: dict[str, int] = {}
    for incarnation in live:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            info = json.loads(registry[incarnation])
            size = info.get("processes", 1)
            size = size if isinstance(size, int) and not isinstance(size, bool) else 1
            for queue in info.get("queues", []):
                workers[queue] = workers.get(queue, 0) + 1
                processes[queue] = processes.get(queue, 0) + max(1, size)
    return {queue: QueueConsumers(workers[queue], processes[queue]) for queue in workers}
