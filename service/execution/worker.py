"""``rlvr worker``: a Celery consumer per queue, each with capacity of its own.

One Celery worker consuming both queues shares its processes between them: two small code
requests (eight tests sleeping 2.7 s each) held both processes of such a worker and a one-item
math request waited 20.8 s behind them. Asked for several queues, ``run_worker`` runs one
Celery worker per queue instead (the sandbox one with ``RLVR_SANDBOX_WORKERS`` processes, or
as many as the cpu one) and supervises them: a stop signal reaches both, and when one ends,
the other is stopped too, so a process manager sees the whole worker end and restarts it.

The background queues (``shadow`` and ``replay``: experiments and replays) share one consumer
of ``RLVR_BACKGROUND_WORKERS`` processes at niceness ``RLVR_BACKGROUND_NICE`` and in Linux's idle
scheduling class (``RLVR_BACKGROUND_IDLE``): on a busy machine the reward consumers get the CPU
first, and no reward queue ever waits on them.

``python -m service.execution.worker --queues cpu,sandbox --concurrency 4`` does what
``rlvr worker`` with the same options does.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time

from service.execution.priority import lower_priority
from service.execution.routing import BACKGROUND_QUEUES, QUEUES
from service.settings import Settings, get_settings

log = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1
# How long the supervisor lets a consumer finish its tasks once asked to stop.
STOP_GRACE_S = 60.0


def consumer_hostname(hostname: str | None, queue: str) -> str:
    """The Celery node name of a queue's consumer: ``name@host`` with the queue in the name."""
    name, _, host = (hostname or "rlvr@%h").partition("@")
    return f"{name}-{queue}@{host or '%h'}"


def celery_argv(
    queue: str, concurrency: int, hostname: str | None, settings: Settings
) -> list[str]:
    argv = [
        "worker",
        f"--queues={queue}",
        f"--concurrency={concurrency}",
        f"--loglevel={settings.log_level.upper()}",
        "--pool=prefork",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    if hostname:
        argv.append(f"--hostname={hostname}")
    return argv


BACKGROUND = "background"


def consumers(queues: list[str]) -> dict[str, list[str]]:
    """The Celery consumers that serve ``queues``: one per reward queue, one for the
    background queues together."""
    groups: dict[str, list[str]] = {}
    for queue in queues:
        groups.setdefault(BACKGROUND if queue in BACKGROUND_QUEUES else queue, []).append(queue)
    return groups


def run_worker(
    queues: list[str], concurrency: int, hostname: str | None, settings: Settings
) -> int:
    """Consume ``queues``: in this process for one consumer, else a child process each."""
    known = [*QUEUES, *BACKGROUND_QUEUES]
    unknown = sorted(set(queues) - set(known))
    if unknown or not queues:
        print(f"rlvr worker: unknown queues {unknown}; known: {known}", file=sys.stderr)
        return 2
    groups = consumers(queues)
    if len(groups) == 1:
        from service.execution.tasks import app

        ((name, group),) = groups.items()
        if name == BACKGROUND:
            # Inherited by the pool processes and their killable children.
            lower_priority(settings.background_nice, settings.background_idle)
            concurrency = settings.background_workers
        app.worker_main(celery_argv(",".join(group), concurrency, hostname, settings))
        return 0
    sizes = {name: concurrency for name in groups}
    if "sandbox" in sizes and settings.sandbox_workers:
        sizes["sandbox"] = settings.sandbox_workers
    if BACKGROUND in sizes:
        sizes[BACKGROUND] = settings.background_workers
    return _supervise(
        {
            name: _consumer_argv(name, ",".join(groups[name]), size, hostname)
            for name, size in sizes.items()
        }
    )


def _consumer_argv(name: str, queues: str, concurrency: int, hostname: str | None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "service.execution.worker",
        "--queues",
        queues,
        "--concurrency",
        str(concurrency),
        "--hostname",
        consumer_hostname(hostname, name),
    ]


def _die_with_parent() -> None:
    # A supervisor killed outright must not leave its consumers behind: they get SIGTERM,
    # finish their tasks and hand back what they reserved.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _supervise(argvs: dict[str, list[str]]) -> int:
    children = {
        queue: subprocess.Popen(argv, preexec_fn=_die_with_parent) for queue, argv in argvs.items()
    }
    stopping = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, stop)
    code = 0
    while all(child.poll() is None for child in children.values()):
        time.sleep(0.5)
    ended = [queue for queue, child in children.items() if child.poll() is not None]
    if not stopping:
        log.error("the %s consumer ended; stopping the others", ", ".join(ended))
        code = 1
        stop(signal.SIGTERM, None)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children.values():
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        code = code or (child.returncode if child.returncode and child.returncode > 0 else 0)
    return code


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("RLVR_LOG_LEVEL", "info").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    parser = argparse.ArgumentParser(prog="rlvr worker", description=__doc__)
    parser.add_argument("--queues", default=",".join((*QUEUES, *BACKGROUND_QUEUES)))
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--hostname", default=None)
    args = parser.parse_args(argv)
    settings = get_settings()
    if settings.broker_url is None:
        print("rlvr worker needs RLVR_BROKER_URL (a Redis URL)", file=sys.stderr)
        return 2
    queues = [queue.strip() for queue in args.queues.split(",") if queue.strip()]
    return run_worker(queues, args.concurrency, args.hostname, settings)


if __name__ == "__main__":
    raise SystemExit(main())
