#!/usr/bin/env python
"""Load and soak: a fixed offered rate of mixed traffic against the deployed stack.

Run from the repository root, with the virtualenv active, Postgres on 127.0.0.1:5432 and Redis
on 127.0.0.1:6379::

    python bench/load.py [--rates 2,4,8,16] [--seconds 60] [--url URL]

Starts the deployed shape (a fresh Postgres database, Redis db 13, one Celery worker with its
default concurrency, one API process) unless ``--url`` names a running service (then
``RLVR_API_KEY`` must hold a key with ``rewards:write`` and ``audit:read``). For each offered
rate (requests per second), for ``--seconds``: an open loop sends requests at fixed arrival
times whatever the answers take — the load a training fleet offers, not a client that slows
down when the service does — drawn from a fixed mix:

- 60 % a 16-item math group (GRPO's shape; a third of each group is duplicated, as sampling at
  low temperature produces),
- 20 % four instruction-following items (IFEval constraints),
- 10 % one code item (a Python stdio program with 3 tests, run in the sandbox),
- 10 % an audit read (a filtered page of decisions).

It reports per rate: requests sent and answered, throughput, p50/p95/p99 of the round trip,
answers by status (only 200, or fast 429/503 with Retry-After past capacity; anything else is
an error), and the RSS of the API and worker process trees sampled every second (first, peak,
last). The capacity is the highest rate answered with no error, no shed request, and p99 under
``--p99-budget`` seconds. Every process this script starts is stopped on exit; every request
goes to 127.0.0.1 and each run stops itself after ``--seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchkey import AUTH, SERVICE_ENV  # noqa: E402
from workload import make_workload  # noqa: E402

from service.db.migrate import upgrade  # noqa: E402
from service.localstack import recreate_database, service_env, start_server, start_worker  # noqa: E402

PG_ADMIN_URL = "postgresql://root@127.0.0.1:5432/postgres"
PG_DB = "rlvr_load"
REDIS_URL = "redis://127.0.0.1:6379/13"
REQUEST_TIMEOUT_S = 60.0
GROUP_SIZE = 16

CODE_PROGRAM = "import sys\nnums = sorted(map(int, sys.stdin.read().split()))\nprint(*nums)\n"
IFEVAL_TEXT = (
    "Here is a short note about rivers. Rivers carry water from the hills to the sea, and "
    "along the way they shape valleys, feed farms and give towns their reason to exist. "
    "A river is never the same twice."
)


# ------------------------------------------------------------------------------------------
# Traffic


def math_requests(count: int) -> list[dict[str, Any]]:
    items = make_workload(count, GROUP_SIZE)
    groups = [items[i : i + GROUP_SIZE] for i in range(0, len(items), GROUP_SIZE)]
    return [
        {
            "verifier": "math",
            "items": [
                {
                    "completion": item["completion"],
                    "ground_truth": item["ground_truth"],
                    "group_id": f"g{index}",
                }
                for item in group
            ],
        }
        for index, group in enumerate(groups)
    ]


def instruction_request(rng: random.Random) -> dict[str, Any]:
    words = rng.randint(10, 80)
    return {
        "verifier": "ifeval",
        "items": [
            {
                "completion": IFEVAL_TEXT + f" Note {n}.",
                "ground_truth": {
                    "instruction_id": ["length_constraints:number_words"],
                    "kwargs": [{"relation": "at least", "num_words": words + n}],
                },
            }
            for n in range(4)
        ],
    }


def code_request(rng: random.Random) -> dict[str, Any]:
    tests = []
    for _ in range(3):
        numbers = [rng.randint(-99, 99) for _ in range(rng.randint(1, 8))]
        tests.append(
            {
                "stdin": " ".join(map(str, numbers)),
                "stdout": " ".join(map(str, sorted(numbers))),
            }
        )
    return {
        "verifier": "code",
        "items": [
            {
                "completion": f"```python\n{CODE_PROGRAM}```",
                "ground_truth": {"language": "python", "mode": "stdio", "tests": tests},
            }
        ],
    }


@dataclass
class Outcome:
    kind: str
    status: int | str
    seconds: float
    retry_after: bool = False
    # The error body's code of a refusal (overloaded, rate_limited, dependency_unavailable...).
    code: str | None = None


@dataclass
class RateResult:
    rate: float
    seconds: float
    sent: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    rss: dict[str, list[float]] = field(default_factory=dict)

    def answered(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == 200]

    def errors(self) -> list[Outcome]:
        # Past capacity the only acceptable refusals are fast 429/503 with Retry-After.
        return [
            o
            for o in self.outcomes
            if o.status != 200 and not (o.status in (429, 503) and o.retry_after)
        ]

    def shed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in (429, 503) and o.retry_after]


async def send(
    client: httpx.AsyncClient, kind: str, body: dict[str, Any] | None, run_id: str
) -> Outcome:
    started = time.perf_counter()
    try:
        if body is None:
            response = await client.get("/v1/decisions", params={"run_id": run_id, "limit": 50})
        else:
            response = await client.post("/v1/rewards", json={**body, "run_id": run_id})
    except httpx.HTTPError as exc:
        return Outcome(kind, type(exc).__name__, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if response.status_code == 200 and body is not None:
        results = response.json()["results"]
        # A service failure must never pass as a reward: count an item error as an error.
        if any(result["status"] == "error" for result in results):
            return Outcome(kind, "item_error", seconds)
    code = None
    if response.status_code != 200:
        try:
            code = response.json()["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = "not_json"
    return Outcome(kind, response.status_code, seconds, "Retry-After" in response.headers, code)


async def offer(base_url: str, rate: float, seconds: float, seed: int) -> RateResult:
    """Open loop: request n leaves at n / rate seconds, whatever earlier ones are doing."""
    rng = random.Random(seed)
    total = int(rate * seconds)
    maths = iter(math_requests(max(1, total)))
    run_id = f"load-{rate:g}-{uuid.uuid4().hex[:8]}"
    result = RateResult(rate, seconds)
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=200)
    async with httpx.AsyncClient(
        base_url=base_url, headers=AUTH, timeout=REQUEST_TIMEOUT_S, limits=limits
    ) as client:
        tasks = []
        start = time.perf_counter()
        for n in range(total):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            draw = rng.random()
            if draw < 0.6:
                kind, body = "math", next(maths)
            elif draw < 0.8:
                kind, body = "ifeval", instruction_request(rng)
            elif draw < 0.9:
                kind, body = "code", code_request(rng)
            else:
                kind, body = "audit", None
            tasks.append(asyncio.create_task(send(client, kind, body, run_id)))
            result.sent += 1
        result.outcomes = list(await asyncio.gather(*tasks))
    return result


# ------------------------------------------------------------------------------------------
# Memory


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
        todo.extend(children.get(current, []))
    return total_kb / 1024


@contextmanager
def sampling(pids: dict[str, int], into: dict[str, list[float]]) -> Iterator[None]:
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            for name, pid in pids.items():
                into.setdefault(name, []).append(tree_rss_mb(pid))
            stop.wait(1.0)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# ------------------------------------------------------------------------------------------
# The stack


@contextmanager
def deployed_stack(log_dir: Path) -> Iterator[tuple[str, dict[str, int]]]:
    database_url = recreate_database(PG_DB, PG_ADMIN_URL)
    redis.Redis.from_url(REDIS_URL).flushdb()
    upgrade(database_url)
    env = service_env(RLVR_DATABASE_URL=database_url, RLVR_BROKER_URL=REDIS_URL, **SERVICE_ENV)
    worker = start_worker(env, log_dir / "worker.log")
    server = None
    try:
        server, base_url = start_server(env, log_dir / "api.log")
        yield base_url, {"api": server.proc.pid, "worker": worker.proc.pid}
    finally:
        if server is not None:
            server.stop()
        worker.stop()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(results: list[RateResult], p99_budget: float) -> float | None:
    print()
    header = (
        f"{'offered/s':>9} {'sent':>6} {'ok':>6} {'ok/s':>7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'p99 ms':>8} {'shed':>5} {'errors':>6}  RSS MB api (first/peak/last) · worker"
    )
    print(header)
    capacity = None
    for result in results:
        answered = result.answered()
        latencies = [o.seconds for o in answered]
        p99 = percentile(latencies, 0.99)
        rss = " · ".join(
            f"{min(v[:1] or [0]):.0f}/{max(v or [0]):.0f}/{(v or [0])[-1]:.0f}"
            for v in (result.rss.get("api", []), result.rss.get("worker", []))
        )
        print(
            f"{result.rate:>9g} {result.sent:>6} {len(answered):>6} "
            f"{len(answered) / result.seconds:>7.1f} {percentile(latencies, 0.5) * 1000:>8.0f} "
            f"{percentile(latencies, 0.95) * 1000:>8.0f} {p99 * 1000:>8.0f} "
            f"{len(result.shed()):>5} {len(result.errors()):>6}  {rss}"
        )
        errors = Counter(str(o.status) for o in result.errors())
        if errors:
            print(f"{'':>9} errors: {dict(errors)}")
        shed = result.shed()
        if shed:
            # A refusal is only worth having if it is fast: how long the shed ones took.
            shed_s = [o.seconds for o in shed]
            codes = Counter(f"{o.status} {o.code}" for o in shed)
            print(
                f"{'':>9} shed answered in p50 {percentile(shed_s, 0.5) * 1000:.0f} ms, "
                f"p99 {percentile(shed_s, 0.99) * 1000:.0f} ms: {dict(codes)}"
            )
        by_kind = {
            kind: percentile([o.seconds for o in answered if o.kind == kind], 0.5) * 1000
            for kind in ("math", "ifeval", "code", "audit")
        }
        print(f"{'':>9} p50 by kind (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in by_kind.items()))
        if not result.errors() and not result.shed() and p99 <= p99_budget:
            capacity = result.rate
    items_per_request = 0.6 * GROUP_SIZE + 0.2 * 4 + 0.1 * 1
    if capacity is not None:
        print(
            f"\ncapacity: {capacity:g} requests/s of this mix (~{capacity * items_per_request:.0f} "
            f"items/s) with no error, nothing shed and p99 ≤ {p99_budget:g} s"
        )
    else:
        print("\ncapacity: no offered rate met the bar")
    return capacity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", default="2,4,8,16", help="offered requests/s, comma-separated")
    parser.add_argument("--seconds", type=float, default=60.0, help="per offered rate")
    parser.add_argument("--p99-budget", type=float, default=2.0, help="seconds")
    parser.add_argument("--url", help="a running service instead of a fresh stack")
    args = parser.parse_args()
    rates = [float(rate) for rate in args.rates.split(",")]

    def run(base_url: str, pids: dict[str, int]) -> None:
        results = []
        for index, rate in enumerate(rates):
            rss: dict[str, list[float]] = {}
            with sampling(pids, rss):
                result = asyncio.run(offer(base_url, rate, args.seconds, seed=index))
            result.rss = rss
            results.append(result)
            answered = result.answered()
            print(
                f"offered {rate:g}/s for {args.seconds:g} s: {len(answered)}/{result.sent} "
                f"answered, median {statistics.median([o.seconds for o in answered] or [0]):.3f} s",
                flush=True,
            )
        report(results, args.p99_budget)

    if args.url:
        run(args.url.rstrip("/"), {})
        return
    with (
        tempfile.TemporaryDirectory(prefix="rlvr-load-") as tmp,
        deployed_stack(Path(tmp)) as (
            base_url,
            pids,
        ),
    ):
        run(base_url, pids)


if __name__ == "__main__":
    main()
