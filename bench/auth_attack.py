#!/usr/bin/env python
"""What guessing a key's secret costs the service, and its legitimate client.

Run from the repository root, with the virtualenv active::

    python bench/auth_attack.py [--seconds 10] [--attack-rps 100] [--legit-rps 10]
                                [--tree PATH] [--json out.json]

Key ids are public (a verifier's history shows them), and before each failed check was throttled
every ``rlvr_<id>_<wrong secret>`` cost the API a database read and a ~45 ms scrypt on its
threads. This starts an embedded service (SQLite, one local worker, 127.0.0.1 only) from
``--tree`` (default: this checkout; give another checkout to measure it before a change),
creates a key with ``rewards:write`` and runs two phases of ``--seconds`` each:

1. quiet: a legitimate client sends one-item math reward requests at ``--legit-rps``;
2. attack: the same, while an attacker sends ``--attack-rps`` requests a second, each with a new
   random secret for the legitimate client's own key id (the worst case: the id is in use).

Per phase it reports the CPU seconds of the API process (user + system from /proc, the process
itself: the local worker pool's processes verify the items and are not counted), the legitimate
client's p50/p99 round trip and statuses, and the attacker's statuses (401, or 429 once
throttled) and p50. Both clients send at fixed times whatever the answers take (open loop), with
at most ``MAX_IN_FLIGHT`` requests each in flight (later ones are counted as not sent).

Against a service of your own: ``--service-url`` with ``--api-key`` (a key with rewards:write
whose id is attacked) and optionally ``--api-pid`` for the CPU figure. Every process this
script starts is stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchkey import KEY  # noqa: E402

from service.localstack import free_port, service_env, wait_until  # noqa: E402

MAX_IN_FLIGHT = 256
STARTUP_TIMEOUT_S = 180.0
REQUEST_TIMEOUT_S = 30.0
KEY_LINE = re.compile(r"^rlvr_([a-z0-9]{12})_\S+$", re.MULTILINE)


@dataclass
class Traffic:
    """What one client saw in one phase."""

    sent: int = 0
    not_sent: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    latencies_s: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "not_sent": self.not_sent,
            "statuses": dict(self.statuses),
            "p50_ms": percentile_ms(self.latencies_s, 0.50),
            "p99_ms": percentile_ms(self.latencies_s, 0.99),
        }


@dataclass
class Phase:
    name: str
    seconds: float
    api_cpu_s: float | None
    legit: dict[str, Any]
    attack: dict[str, Any] | None


def percentile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 1)


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of one process (all its threads), from /proc."""
    if pid is None:
        return None
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# The service


@contextlib.contextmanager
def embedded_service(tree: Path, log_dir: Path) -> Iterator[tuple[str, str, int]]:
    """An embedded service run from ``tree``: (base URL, a rewards:write key, API pid)."""
    env = service_env(
        RLVR_DATA_DIR=str(log_dir / "data"),
        RLVR_BOOTSTRAP_ADMIN_KEY=KEY,
        RLVR_LOCAL_WORKERS="1",
        PYTHONPATH=str(tree),
    )
    cli = [sys.executable, "-m", "service.cli"]
    subprocess.run([*cli, "migrate"], cwd=tree, env=env, check=True, capture_output=True)
    port = free_port()
    with (log_dir / "api.log").open("wb") as log:
        server = subprocess.Popen(
            [*cli, "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=tree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            wait_until(lambda: ready(base_url, server), STARTUP_TIMEOUT_S, "/readyz 200")
            if server.poll() is not None:
                raise RuntimeError(f"the service died; see {log_dir / 'api.log'}")
            created = subprocess.run(
                [*cli, "keys", "create", "--tenant", "bench", "--scopes", "rewards:write"],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
            )
            match = KEY_LINE.search(created.stdout)
            if match is None:
                raise RuntimeError(f"`rlvr keys create` gave no key: {created.stderr[-2000:]}")
            yield base_url, match.group(0), server.pid
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(30)


def ready(base_url: str, server: subprocess.Popen[bytes]) -> bool:
    if server.poll() is not None:
        return True
    try:
        return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


# --------------------------------------------------------------------------------------------
# The clients


def math_body(n: int) -> dict[str, Any]:
    # A new answer each time: every item is verified, none served from the verdict cache.
    return {
        "verifier": "math",
        "items": [{"completion": f"\\boxed{{{n}}}", "ground_truth": str(n)}],
    }


async def send_at_rate(
    client: httpx.AsyncClient,
    rps: float,
    seconds: float,
    key_of: Callable[[], str],
    into: Traffic,
) -> None:
    """Open loop: request n starts at n / rps seconds whatever the earlier ones take."""
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    start = time.monotonic()
    tasks: list[asyncio.Task[None]] = []

    async def one(n: int) -> None:
        began = time.monotonic()
        try:
            response = await client.post(
                "/v1/rewards",
                json=math_body(n),
                headers={"Authorization": f"Bearer {key_of()}"},
            )
            into.statuses[str(response.status_code)] += 1
        except httpx.HTTPError as exc:
            into.statuses[type(exc).__name__] += 1
        finally:
            into.latencies_s.append(time.monotonic() - began)
            slots.release()

    n = 0
    while (due := start + n / rps) < start + seconds:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        if slots.locked():
            into.not_sent += 1
        else:
            await slots.acquire()
            into.sent += 1
            tasks.append(asyncio.create_task(one(n)))
        n += 1
    await asyncio.gather(*tasks)


async def run_phase(
    base_url: str,
    key: str,
    args: argparse.Namespace,
    api_pid: int | None,
    attack: bool,
) -> Phase:
    key_id = KEY_LINE.match(key)
    if key_id is None:
        raise SystemExit("--api-key must be a generated key (rlvr_<id>_<secret>)")
    guesses = f"rlvr_{key_id.group(1)}_"
    limits = httpx.Limits(max_connections=2 * MAX_IN_FLIGHT)
    legit, attacker = Traffic(), Traffic()
    async with httpx.AsyncClient(
        base_url=base_url, timeout=REQUEST_TIMEOUT_S, limits=limits
    ) as client:
        # Verified before the phase, as a training job's key is after its first request.
        (
            await client.post("/v1/rewards", json=math_body(0), headers=bearer(key))
        ).raise_for_status()
        cpu_before = cpu_seconds(api_pid)
        clients = [send_at_rate(client, args.legit_rps, args.seconds, lambda: key, legit)]
        if attack:
            clients.append(
                send_at_rate(
                    client,
                    args.attack_rps,
                    args.seconds,
                    lambda: guesses + secrets.token_urlsafe(32),
                    attacker,
                )
            )
        await asyncio.gather(*clients)
        cpu_after = cpu_seconds(api_pid)
    used = None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 2)
    return Phase(
        "attack" if attack else "quiet",
        args.seconds,
        used,
        legit.summary(),
        attacker.summary() if attack else None,
    )


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def report(phases: list[Phase]) -> None:
    print(f"{'phase':<8} {'API CPU s':>9}  legit p50/p99 ms   legit statuses        attacker")
    for phase in phases:
        legit = phase.legit
        attacker = (
            f"{phase.attack['sent']} sent, {phase.attack['statuses']}, "
            f"p50 {phase.attack['p50_ms']} ms"
            if phase.attack
            else "-"
        )
        print(
            f"{phase.name:<8} {phase.api_cpu_s!s:>9}  "
            f"{legit['p50_ms']!s:>7} / {legit['p99_ms']!s:<7}  "
            f"{json.dumps(legit['statuses']):<20}  {attacker}"
        )


async def measure(base_url: str, key: str, args: argparse.Namespace, pid: int | None) -> None:
    phases = [
        await run_phase(base_url, key, args, pid, attack=False),
        await run_phase(base_url, key, args, pid, attack=True),
    ]
    report(phases)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(phase) for phase in phases], indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per phase")
    parser.add_argument("--attack-rps", type=float, default=100.0)
    parser.add_argument("--legit-rps", type=float, default=10.0)
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout to serve")
    parser.add_argument("--service-url", help="a running service instead (127.0.0.1 only)")
    parser.add_argument("--api-key", help="with --service-url: a key with rewards:write")
    parser.add_argument("--api-pid", type=int, help="with --service-url: its API process")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    if not 0 < args.seconds <= 120:
        parser.error("--seconds must be in (0, 120]")
    if args.service_url:
        if not args.service_url.startswith(("http://127.0.0.1:", "http://localhost:")):
            parser.error("--service-url must be on 127.0.0.1")
        if not args.api_key:
            parser.error("--service-url needs --api-key")
        asyncio.run(measure(args.service_url, args.api_key, args, args.api_pid))
        return
    tree = args.tree.resolve()
    with (
        tempfile.TemporaryDirectory(prefix="rlvr-auth-attack-") as directory,
        embedded_service(tree, Path(directory)) as (base_url, key, pid),
    ):
        print(f"serving {tree} at {base_url} (API pid {pid})")
        asyncio.run(measure(base_url, key, args, pid))


if __name__ == "__main__":
    main()
