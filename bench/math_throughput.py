#!/usr/bin/env python
"""Math reward throughput and latency: the service (embedded and deployed) vs Math-Verify.

Run from the repository root, with the virtualenv active::

    python bench/math_throughput.py [--groups 64] [--group-size 16] [--json out.json]

1. Math-Verify baseline: in-process, sequential, on the same items (gold parsed per item, as a
   naive user does, and once per group).
   The service's own math verifier in-process, sequential, in a fresh warmed-up process (as a
   worker process is): its rate times the service's worker processes is the ceiling the service
   figures are read against (the "% ceiling" column).
2. Embedded mode (SQLite + local process pool) over HTTP, two client shapes: one request per group
   with a few in flight, and one request of every item.
3. Deployed mode (Postgres + Redis + a Celery worker), the same two shapes.
4. Latency: p50/p95 round trip of one group request, sent sequentially, in each service mode,
   next to what the same groups cost the verifier alone in-process (p50/p95 per group).
5. Logging: the decision log holds exactly one row per item sent, for every run id.
6. CPU: the service's own processes' CPU time per item in each shape (Linux, from /proc), a
   figure the machine's other load moves far less than items/s or latency.

Every shape runs against a freshly started service with a fresh database, so no shape is served
from the verdict cache of another; duplicates inside the workload are cached, which is the product.
Every subprocess runs in its own process group and is stopped on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

# Run as a script, this file's directory is on sys.path.
from benchkey import AUTH, SERVICE_ENV
from workload import Item, duplicate_count, make_latency_groups, make_workload

REPO_ROOT = Path(__file__).resolve().parents[1]
PG_ADMIN_URL = "postgresql://root@127.0.0.1:5432/postgres"
PG_DB = "rlvr_bench"
PG_URL = f"postgresql://root@127.0.0.1:5432/{PG_DB}"
PG_SQLALCHEMY_URL = f"postgresql+psycopg://root@127.0.0.1:5432/{PG_DB}"
REDIS_URL = "redis://127.0.0.1:6379/14"

STARTUP_TIMEOUT_S = 180.0
MIGRATE_TIMEOUT_S = 180.0
REQUEST_TIMEOUT_S = 600.0
STOP_TIMEOUT_S = 20.0
WARMUP_SEED = 90_001
# The workload has only valid ground truths and cheap answers: these statuses are service problems.
FAILURE_STATUSES = frozenset({"error", "timeout", "invalid"})


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class Row:
    mode: str
    shape: str
    items: int
    seconds: float
    items_per_s: float
    ratio: float | None = None  # vs Math-Verify with gold parsed per item
    of_ceiling: float | None = None  # vs the service's verifier in-process × worker processes
    p50_ms: float | None = None
    p95_ms: float | None = None
    # CPU time of the service's own processes (API, workers, pool processes and their verifying
    # children; not Postgres or Redis) per item: what the machine's other load barely moves.
    cpu_ms_per_item: float | None = None
    logged: int | None = None
    sent: int | None = None
    cached: int | None = None
    expected_cached: int | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    agreement: int | None = None  # items where the service and Math-Verify agree on correctness
    failures: list[dict[str, Any]] = field(default_factory=list)  # error/timeout/invalid results
    runs: list[float] = field(default_factory=list)  # items/s of every repeat


def make_row(mode: str, shape: str, items: int, seconds: list[float]) -> Row:
    """A row whose figure is the median of the repeats."""
    median_s = statistics.median(seconds)
    return Row(mode, shape, items, median_s, items / median_s, runs=[items / s for s in seconds])


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)

    def problem(self, message: str) -> None:
        print(f"!! {message}", file=sys.stderr, flush=True)
        self.problems.append(message)

    def note(self, message: str) -> None:
        print(f"-- {message}", flush=True)
        self.notes.append(message)


def _fmt(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def render_table(rows: list[Row]) -> str:
    header = ["mode", "shape", "items", "items/s", "min–max", "× Math-Verify", "% ceiling"]
    header += ["p50 ms", "p95 ms", "CPU ms/item"]
    header += ["cached", "decisions logged/sent"]
    lines = []
    for row in rows:
        logged = "–" if row.sent is None else f"{row.logged}/{row.sent}"
        cached = "–" if row.cached is None else f"{row.cached}/{row.expected_cached}"
        lines.append(
            [
                row.mode,
                row.shape,
                str(row.items),
                _fmt(row.items_per_s, 1),
                f"{min(row.runs):.0f}–{max(row.runs):.0f}" if len(row.runs) > 1 else "–",
                "–" if row.ratio is None else f"{row.ratio:.2f}×",
                "–" if row.of_ceiling is None else f"{row.of_ceiling:.0%}",
                _fmt(row.p50_ms, 1),
                _fmt(row.p95_ms, 1),
                _fmt(row.cpu_ms_per_item, 2),
                cached,
                logged,
            ]
        )
    widths = [max(len(str(c)) for c in column) for column in zip(header, *lines, strict=True)]
    left = {0, 1}

    def fmt_line(cells: list[str]) -> str:
        return " | ".join(
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    out = [fmt_line(header), "-+-".join("-" * w for w in widths)]
    out += [fmt_line(line) for line in lines]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Math-Verify baseline


def run_math_verify(items: list[Item], repeats: int, report: Report) -> dict[str, bool]:
    """Sequential Math-Verify, gold parsed per item and once per group; verdicts by item id."""
    import math_verify
    from sympy.core.cache import clear_cache

    # Warm up imports and lazily built parser tables on items that are not measured.
    for group in make_latency_groups(2, seed=WARMUP_SEED + 1):
        for item in group[:4]:
            math_verify.verify(
                math_verify.parse("$" + item["ground_truth"] + "$"),
                math_verify.parse(item["completion"]),
            )

    verdicts: dict[str, bool] = {}

    def gold_per_item() -> None:
        for item in items:
            pred = math_verify.parse(item["completion"])
            gold = math_verify.parse("$" + item["ground_truth"] + "$")
            verdicts[item["id"]] = bool(math_verify.verify(gold, pred))

    def gold_per_group() -> None:
        golds: dict[str, Any] = {}
        for item in items:
            gold = golds.get(item["group_id"])
            if gold is None:
                gold = golds[item["group_id"]] = math_verify.parse("$" + item["ground_truth"] + "$")
            math_verify.verify(gold, math_verify.parse(item["completion"]))

    n = len(items)
    for label, variant in (
        ("in-process, gold per item", gold_per_item),
        ("in-process, gold per group", gold_per_group),
    ):
        seconds = []
        for _ in range(repeats):
            clear_cache()  # sympy's cache would otherwise serve later passes
            started = time.perf_counter()
            variant()
            seconds.append(time.perf_counter() - started)
        report.rows.append(make_row("math-verify", label, n, seconds))
    report.note(f"Math-Verify judged {sum(verdicts.values())}/{n} items correct")
    return verdicts


# The service's math verifier alone, in a fresh process warmed up as a worker process is (its
# verifier warm-up, then the items the bench warms the service with); prints the seconds the
# measured items took, verified sequentially as the service verifies them (each call on its
# own, memo and parser tables as a long-lived worker process keeps them).
_CEILING_PROBE = """
import json, sys, time
from service.catalog.builtin import resolve_builtin
from service.execution.bounded import Call, verdict_for
from service.execution.warmup import warm_up_verifiers
warm_up_verifiers()
config = dict(resolve_builtin("math").config)
warm, items = json.load(sys.stdin)
def run(batch):
    for item in batch:
        call = Call("math", item["completion"], item["ground_truth"], config, item["prompt"])
        verdict_for(call)
run(warm)
started = time.perf_counter()
run(items)
print(time.perf_counter() - started)
"""
# The verifier alone on each latency group: its distinct items one after another, in ms.
_GROUP_PROBE = """
import json, sys, time
from service.catalog.builtin import resolve_builtin
from service.execution.bounded import Call, verdict_for
from service.execution.warmup import warm_up_verifiers
warm_up_verifiers()
config = dict(resolve_builtin("math").config)
warm, groups = json.load(sys.stdin)
def run(batch):
    distinct = {(i["completion"], i["ground_truth"], i["prompt"]): i for i in batch}
    for item in distinct.values():
        verdict_for(Call("math", item["completion"], item["ground_truth"], config, item["prompt"]))
run(warm)
costs = []
for group in groups:
    started = time.perf_counter()
    run(group)
    costs.append((time.perf_counter() - started) * 1000)
print(json.dumps(costs))
"""
# Worker processes of the service modes below (the embedded pool and the Celery worker).
SERVICE_PROCESSES = 2


def run_ceiling(items: list[Item], repeats: int, report: Report) -> Row:
    """The service's verifier in-process on one core, a fresh process per repeat."""
    warm = [
        item for group in make_latency_groups(3, group_size=8, seed=WARMUP_SEED) for item in group
    ]
    payload = json.dumps([warm, items])
    seconds = []
    for _ in range(repeats):
        result = subprocess.run(
            [sys.executable, "-c", _CEILING_PROBE],
            cwd=REPO_ROOT,
            input=payload,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"in-process probe failed:\n{result.stderr[-2000:]}")
        seconds.append(float(result.stdout.strip().splitlines()[-1]))
    row = make_row("service verifier", "in-process, sequential, 1 core", len(items), seconds)
    report.rows.append(row)
    cores = min(SERVICE_PROCESSES, os.cpu_count() or 1)
    report.note(
        f"ceiling: the service's verifier in-process does {row.items_per_s:,.0f} items/s on one "
        f"core; × {cores} worker processes = {row.items_per_s * cores:,.0f} items/s"
    )
    return row


def verifier_group_costs(groups: list[list[Item]]) -> list[float]:
    """What each latency group costs the verifier alone (ms), in a fresh process; empty when the
    probe cannot run (the latency figures stand without it)."""
    warm = [
        item for group in make_latency_groups(3, group_size=8, seed=WARMUP_SEED) for item in group
    ]
    result = subprocess.run(
        [sys.executable, "-c", _GROUP_PROBE],
        cwd=REPO_ROOT,
        input=json.dumps([warm, groups]),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        return []
    costs: list[float] = json.loads(result.stdout.strip().splitlines()[-1])
    return costs


# --------------------------------------------------------------------------------------------
# Subprocesses


class Proc:
    """A subprocess in its own process group, with its output in a log file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log: TextIO = self.log_path.open("w")
        self.popen = subprocess.Popen(
            argv,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def stop(self) -> None:
        if self.alive():
            self._signal_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(timeout=STOP_TIMEOUT_S)
        # Whatever the leader left behind in its group (pool workers, verifier children).
        self._signal_group(signal.SIGKILL)
        self._log.close()


class Processes:
    """Every subprocess started, so that all of them are stopped whatever happens."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: list[Proc] = []
        self._counter = Counter[str]()

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> Proc:
        self._counter[name] += 1
        proc = Proc(f"{name}-{self._counter[name]}", argv, env, self.log_dir)
        self.running.append(proc)
        return proc

    def stop_all(self) -> None:
        while self.running:
            proc = self.running.pop()
            try:
                proc.stop()
            except Exception as exc:  # keep stopping the others
                print(f"!! could not stop {proc.name}: {exc}", file=sys.stderr)


def rlvr_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "service.cli", *args]


def service_env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
    env.update(settings)
    env.update(SERVICE_ENV)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def migrate(env: dict[str, str], log_dir: Path, label: str) -> None:
    result = subprocess.run(
        rlvr_argv("migrate"),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=MIGRATE_TIMEOUT_S,
        start_new_session=True,
        check=False,
    )
    (log_dir / f"migrate-{label}.log").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"rlvr migrate failed ({result.returncode}):\n{result.stderr[-3000:]}")


def wait_until(
    condition: Any, what: str, timeout_s: float, watch: list[Proc], interval_s: float = 0.25
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        for proc in watch:
            if not proc.alive():
                raise RuntimeError(
                    f"{proc.name} exited ({proc.popen.returncode}) while waiting for {what}:\n"
                    f"{proc.tail()}"
                )
        if condition():
            return
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.tail()}" for p in watch)
            raise TimeoutError(f"{what} not reached within {timeout_s:.0f} s\n{tails}")
        time.sleep(interval_s)


def http_ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=5.0).status_code == 200
    except httpx.HTTPError:
        return False


# --------------------------------------------------------------------------------------------
# Clients


def _payload(items: list[Item], run_id: str) -> dict[str, Any]:
    return {"verifier": "math", "run_id": run_id, "step": 0, "advantage": "grpo", "items": items}


def _check_response(response: httpx.Response, items: list[Item]) -> list[dict[str, Any]]:
    if response.status_code != 200:
        raise RuntimeError(f"POST /v1/rewards → {response.status_code}: {response.text[:2000]}")
    results: list[dict[str, Any]] = response.json()["results"]
    if [r["id"] for r in results] != [item["id"] for item in items]:
        raise RuntimeError("response results do not match the items sent")
    return results


async def _post_groups(
    base_url: str, groups: list[list[Item]], run_id: str, concurrency: int
) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    semaphore = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(
        base_url=base_url, headers=AUTH, timeout=REQUEST_TIMEOUT_S, limits=limits
    ) as client:

        async def one(group: list[Item]) -> list[dict[str, Any]]:
            async with semaphore:
                response = await client.post("/v1/rewards", json=_payload(group, run_id))
            return _check_response(response, group)

        answers = await asyncio.gather(*(one(group) for group in groups))
    return [result for answer in answers for result in answer]


def post_groups(
    base_url: str, groups: list[list[Item]], run_id: str, concurrency: int
) -> tuple[list[dict[str, Any]], float]:
    started = time.perf_counter()
    results = asyncio.run(_post_groups(base_url, groups, run_id, concurrency))
    return results, time.perf_counter() - started


def post_all(base_url: str, items: list[Item], run_id: str) -> tuple[list[dict[str, Any]], float]:
    with httpx.Client(base_url=base_url, headers=AUTH, timeout=REQUEST_TIMEOUT_S) as client:
        started = time.perf_counter()
        response = client.post("/v1/rewards", json=_payload(items, run_id))
        results = _check_response(response, items)
        return results, time.perf_counter() - started


def measure_latency(
    base_url: str, groups: list[list[Item]], run_id: str
) -> tuple[list[float], list[dict[str, Any]], float]:
    latencies: list[float] = []
    results: list[dict[str, Any]] = []
    with httpx.Client(base_url=base_url, headers=AUTH, timeout=REQUEST_TIMEOUT_S) as client:
        total_started = time.perf_counter()
        for group in groups:
            started = time.perf_counter()
            response = client.post("/v1/rewards", json=_payload(group, run_id))
            latencies.append((time.perf_counter() - started) * 1000.0)
            results.extend(_check_response(response, group))
        return latencies, results, time.perf_counter() - total_started


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(sorted(values), n=100, method="inclusive")[int(q) - 1]


def split_groups(items: list[Item]) -> list[list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item["group_id"], []).append(item)
    return list(groups.values())


def service_cpu_ms(procs: list[Proc]) -> float:
    """CPU time so far of every process in these processes' groups (each started in a session of
    its own), children that ended included: user + system, in ms."""
    if not os.path.isdir("/proc"):
        return math.nan  # Linux only
    groups = {proc.popen.pid for proc in procs}
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[2]) in groups:  # pgrp; then utime, stime, cutime, cstime
            ticks += sum(int(value) for value in fields[11:15])
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# Service modes


@dataclass
class Instance:
    """One started service: its URL and how to count its decision log."""

    base_url: str
    count_decisions: Any  # (run_id) -> int
    procs: list[Proc]
    sent: Counter[str] = field(default_factory=Counter)


@contextlib.contextmanager
def embedded_instance(processes: Processes, label: str) -> Iterator[Instance]:
    with tempfile.TemporaryDirectory(prefix=f"rlvr-bench-{label}-") as data_dir:
        env = service_env(RLVR_DATA_DIR=data_dir, RLVR_LOCAL_WORKERS=str(SERVICE_PROCESSES))
        migrate(env, processes.log_dir, label)
        port = free_port()
        serve = processes.start(
            f"serve-{label}", rlvr_argv("serve", "--host", "127.0.0.1", "--port", str(port)), env
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: http_ready(base_url), "/readyz 200", STARTUP_TIMEOUT_S, [serve])
            db_path = Path(data_dir) / "rlvr.db"

            def count(run_id: str) -> int:
                with contextlib.closing(sqlite3.connect(db_path, timeout=30)) as connection:
                    row = connection.execute(
                        "SELECT count(*) FROM decisions WHERE run_id = ?", (run_id,)
                    ).fetchone()
                return int(row[0])

            yield Instance(base_url, count, [serve])
        finally:
            serve.stop()
            with contextlib.suppress(ValueError):
                processes.running.remove(serve)


def reset_postgres_and_redis() -> None:
    import redis

    from service.localstack import recreate_database

    recreate_database(PG_DB, PG_ADMIN_URL)
    client = redis.Redis.from_url(REDIS_URL, socket_timeout=10)
    try:
        client.flushdb()
    finally:
        client.close()


@contextlib.contextmanager
def deployed_instance(processes: Processes, label: str) -> Iterator[Instance]:
    import psycopg

    reset_postgres_and_redis()
    env = service_env(RLVR_DATABASE_URL=PG_SQLALCHEMY_URL, RLVR_BROKER_URL=REDIS_URL)
    migrate(env, processes.log_dir, label)
    worker = processes.start(f"worker-{label}", _worker_argv("cpu", SERVICE_PROCESSES), env)
    # /readyz wants a consumer on every queue; code items never reach this one here.
    sandbox_worker = processes.start(f"sandbox-worker-{label}", _worker_argv("sandbox", 1), env)
    workers = [worker, sandbox_worker]
    port = free_port()
    serve = processes.start(
        f"serve-{label}", rlvr_argv("serve", "--host", "127.0.0.1", "--port", str(port)), env
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        for proc in workers:
            wait_until(
                lambda proc=proc: "ready." in proc.log_text(),
                f"{proc.name} ready.",
                STARTUP_TIMEOUT_S,
                [proc],
            )
        wait_until(
            lambda: http_ready(base_url), "/readyz 200", STARTUP_TIMEOUT_S, [serve, *workers]
        )

        def count(run_id: str) -> int:
            with psycopg.connect(PG_URL, connect_timeout=10) as connection:
                row = connection.execute(
                    "SELECT count(*) FROM decisions WHERE run_id = %s", (run_id,)
                ).fetchone()
            return int(row[0]) if row else 0

        yield Instance(base_url, count, [serve, *workers])
    finally:
        for proc in (serve, *workers):
            proc.stop()
            with contextlib.suppress(ValueError):
                processes.running.remove(proc)


def _worker_argv(queue: str, concurrency: int) -> list[str]:
    hostname = f"bench-{queue}-{uuid.uuid4().hex[:8]}@%h"
    return rlvr_argv(
        "worker", "--queues", queue, "--concurrency", str(concurrency), "--hostname", hostname
    )


def warm_up(instance: Instance, run_id: str) -> None:
    """A few small requests of items that are not measured: every worker process gets one."""
    groups = make_latency_groups(3, group_size=8, seed=WARMUP_SEED)
    post_groups(instance.base_url, groups[:2], run_id, concurrency=2)
    post_all(instance.base_url, groups[2], run_id)
    instance.sent[run_id] += sum(len(group) for group in groups)


def summarize(
    row: Row, results: list[dict[str, Any]], items: list[Item], verdicts: dict[str, bool] | None
) -> None:
    row.statuses = dict(Counter(result["status"] for result in results))
    row.failures = [
        {"id": result["id"], "status": result["status"], "details": result["details"]}
        for result in results
        if result["status"] in FAILURE_STATUSES
    ]
    row.cached = sum(bool(result["cached"]) for result in results)
    row.expected_cached = duplicate_count(items)
    if verdicts is not None:
        row.agreement = sum(
            (result["reward"] == 1.0) == verdicts[result["id"]]
            for result in results
            if result["id"] in verdicts
        )


def report_failures(row: Row, report: Report) -> None:
    if not row.failures:
        return
    reasons = Counter(str(f["details"].get("reason", "?"))[:200] for f in row.failures)
    first = row.failures[0]
    trace = str(first["details"].get("traceback", ""))[-1500:]
    report.problem(
        f"{row.mode} / {row.shape}: {len(row.failures)} results with status "
        f"{sorted({f['status'] for f in row.failures})}; reasons {dict(reasons)}; "
        f"first: item {first['id']}" + (f", traceback:\n{trace}" if trace else "")
    )


def check_logging(instance: Instance, mode: str, report: Report, rows: dict[str, Row]) -> None:
    for run_id, sent in instance.sent.items():
        logged = instance.count_decisions(run_id)
        row = rows.get(run_id)
        if row is not None:
            row.logged = (row.logged or 0) + logged
            row.sent = (row.sent or 0) + sent
        status = "ok" if logged == sent else "MISMATCH"
        print(f"   decisions for run {run_id}: {logged} logged / {sent} sent  [{status}]")
        if logged != sent:
            report.problem(f"{mode}: run {run_id} logged {logged} decisions for {sent} items sent")


def scan_logs(procs: list[Proc], mode: str, report: Report) -> None:
    for proc in procs:
        lines = proc.log_text().splitlines()
        bad = [
            line for line in lines if " ERROR " in line or "Traceback" in line or "CRITICAL" in line
        ]
        if bad:
            report.problem(
                f"{mode}: {len(bad)} error line(s) in {proc.log_path}, first: {bad[0][:300]}"
            )


def run_service_mode(
    mode: str,
    start: Any,
    processes: Processes,
    items: list[Item],
    verdicts: dict[str, bool],
    args: argparse.Namespace,
    report: Report,
    latency_seed: int,
) -> None:
    groups = split_groups(items)
    n = len(items)
    tag = uuid.uuid4().hex[:8]
    shapes = [
        ("per-group", f"{len(groups)}×{len(groups[0])} req, {args.concurrency} in flight"),
        ("single", f"1×{n} req"),
    ]
    latency_row: Row | None = None
    for shape_index, (shape, label) in enumerate(shapes):
        seconds: list[float] = []
        cpu_per_item: list[float] = []
        row: Row | None = None
        for run in range(1, args.repeats + 1):
            print(f"== {mode}: {label}, run {run}/{args.repeats} (fresh service and database)")
            with start(processes, f"{mode}-{shape}-{run}") as instance:
                warm_up(instance, f"bench-{tag}-{mode}-{shape}-{run}-warmup")
                run_id = f"bench-{tag}-{mode}-{shape}-{run}"
                cpu_before = service_cpu_ms(instance.procs)
                if shape == "per-group":
                    results, elapsed = post_groups(
                        instance.base_url, groups, run_id, args.concurrency
                    )
                else:
                    results, elapsed = post_all(instance.base_url, items, run_id)
                cpu_per_item.append((service_cpu_ms(instance.procs) - cpu_before) / n)
                instance.sent[run_id] += n
                seconds.append(elapsed)
                run_row = make_row(mode, label, n, [elapsed])
                summarize(run_row, results, items, verdicts)
                print(f"   {n / elapsed:.1f} items/s, statuses {run_row.statuses}", flush=True)
                report_failures(run_row, report)
                if run_row.cached != run_row.expected_cached:
                    report.problem(
                        f"{mode} / {label} run {run}: {run_row.cached} items answered from "
                        f"cache, {run_row.expected_cached} duplicates expected"
                    )
                if row is None:
                    row = run_row
                else:
                    merge_run(row, run_row, report)
                tracked = {run_id: row}

                last = shape_index == len(shapes) - 1 and run == args.repeats
                if last and args.latency_requests > 0:
                    latency_row = run_latency(instance, mode, tag, args, latency_seed, report)
                    tracked[f"bench-{tag}-{mode}-latency"] = latency_row

                check_logging(instance, mode, report, tracked)
                scan_logs(instance.procs, mode, report)
        assert row is not None
        final = make_row(mode, label, n, seconds)
        row.seconds, row.items_per_s, row.runs = final.seconds, final.items_per_s, final.runs
        row.cpu_ms_per_item = statistics.median(cpu_per_item)
        report.rows.append(row)
    if latency_row is not None:
        report.rows.append(latency_row)


def run_latency(
    instance: Instance,
    mode: str,
    tag: str,
    args: argparse.Namespace,
    seed: int,
    report: Report,
) -> Row:
    groups = make_latency_groups(args.latency_requests, group_size=args.group_size, seed=seed)
    run_id = f"bench-{tag}-{mode}-latency"
    cpu_before = service_cpu_ms(instance.procs)
    latencies, results, elapsed = measure_latency(instance.base_url, groups, run_id)
    cpu_ms = service_cpu_ms(instance.procs) - cpu_before
    sent = sum(len(group) for group in groups)
    instance.sent[run_id] += sent
    row = make_row(
        mode, f"latency: {len(groups)}×{args.group_size} req, sequential", sent, [elapsed]
    )
    row.p50_ms, row.p95_ms = percentile(latencies, 50), percentile(latencies, 95)
    row.cpu_ms_per_item = cpu_ms / sent
    summarize(row, results, [item for group in groups for item in group], None)
    print(f"   latency p50 {row.p50_ms:.1f} ms, p95 {row.p95_ms:.1f} ms", flush=True)
    alone = verifier_group_costs(groups)
    if alone:
        # The groups differ: a few hold answers that take the verifier itself milliseconds,
        # so part of p95 - p50 is theirs, whatever the service around it costs.
        floor = f"p50 {percentile(alone, 50):.1f} ms, p95 {percentile(alone, 95):.1f} ms"
        print(f"   the verifier alone on the same groups (in-process): {floor}", flush=True)
        report.note(f"{mode} latency groups, the verifier alone in-process: {floor}")
    report_failures(row, report)
    return row


def merge_run(row: Row, run_row: Row, report: Report) -> None:
    """Fold a repeat into its row: counts add up; verdicts must be the same every time."""
    if run_row.statuses != row.statuses:
        report.problem(
            f"{row.mode} / {row.shape}: verdicts differ between repeats: "
            f"{row.statuses} vs {run_row.statuses}"
        )
    row.cached = (row.cached or 0) + (run_row.cached or 0)
    row.expected_cached = (row.expected_cached or 0) + (run_row.expected_cached or 0)
    row.failures.extend(run_row.failures)


def math_verifier_available() -> str | None:
    """None when the service's math verifier imports; otherwise why not."""
    probe = "from service.verifiers.math import verify, CODE_VERSION, LIBRARY_VERSIONS"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode == 0:
        return None
    return (result.stderr.strip().splitlines() or ["unknown error"])[-1]


# --------------------------------------------------------------------------------------------
# Main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--groups", type=int, default=64)
    parser.add_argument("--group-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight")
    parser.add_argument("--latency-requests", type=int, default=60)
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="passes per throughput figure, each on a fresh service and database; median shown",
    )
    parser.add_argument("--skip-embedded", action="store_true")
    parser.add_argument("--skip-deployed", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    parser.add_argument(
        "--max-minutes", type=float, default=45.0, help="hard bound on the whole run"
    )
    return parser.parse_args(argv)


def _on_sigterm(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGINT may be ignored when started in the background; the watchdog below relies on it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_sigterm)
    # A watchdog sends SIGINT to the main thread, interrupting even a blocking read, so the
    # finally below still stops everything.
    main_thread = threading.main_thread().ident or 0
    watchdog = threading.Timer(
        args.max_minutes * 60.0, signal.pthread_kill, (main_thread, signal.SIGINT)
    )
    watchdog.daemon = True
    watchdog.start()

    report = Report()
    report.environment = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "groups": args.groups,
        "group_size": args.group_size,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "repeats": args.repeats,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    log_dir = Path(tempfile.mkdtemp(prefix="rlvr-bench-logs-"))
    processes = Processes(log_dir)
    items = make_workload(args.groups, args.group_size, args.seed)
    sizes = sorted(len(item["completion"]) for item in items)
    print(
        f"workload: {len(items)} items in {args.groups} groups of {args.group_size}, "
        f"{duplicate_count(items)} in-group duplicates, completion median {sizes[len(sizes) // 2]}"
        f" chars (max {sizes[-1]}); load average {report.environment['load_average_at_start']};"
        f" logs in {log_dir}",
        flush=True,
    )
    interrupted = False
    ceiling: Row | None = None
    try:
        print("== Math-Verify baseline (in-process, sequential)", flush=True)
        verdicts = run_math_verify(items, args.repeats, report)
        if math_verifier_available() is None:
            print("== the service's verifier in-process (the ceiling)", flush=True)
            ceiling = run_ceiling(items, args.repeats, report)

        modes = []
        if not args.skip_embedded:
            modes.append(("embedded", embedded_instance, 1))
        if not args.skip_deployed:
            modes.append(("deployed", deployed_instance, 2))
        if modes:
            missing = math_verifier_available()
            if missing is not None:
                report.problem(
                    f"service math verifier unavailable, service modes skipped: {missing}"
                )
                modes = []
        for mode, start, latency_seed in modes:
            try:
                run_service_mode(
                    mode, start, processes, items, verdicts, args, report, latency_seed
                )
            except (RuntimeError, TimeoutError, httpx.HTTPError, OSError) as exc:
                report.problem(f"{mode} mode failed: {type(exc).__name__}: {exc}")
    except KeyboardInterrupt:
        interrupted = True
        report.problem("interrupted (Ctrl-C, SIGTERM or --max-minutes): results are partial")
    finally:
        processes.stop_all()
        watchdog.cancel()

    if report.rows and report.rows[0].mode == "math-verify":
        baseline = report.rows[0].items_per_s
        for row in report.rows:
            row.ratio = row.items_per_s / baseline
    if ceiling is not None:
        cores = min(SERVICE_PROCESSES, os.cpu_count() or 1)
        for row in report.rows:
            if row.mode in ("embedded", "deployed") and row.p50_ms is None:
                row.of_ceiling = row.items_per_s / (ceiling.items_per_s * cores)
    print()
    print(render_table(report.rows))
    print()
    print("× Math-Verify: items/s relative to in-process Math-Verify with gold parsed per item.")
    print(
        f"% ceiling: items/s relative to the service's verifier in-process on one core × "
        f"{SERVICE_PROCESSES} worker processes (at most the machine's cores)."
    )
    print("cached: items answered from the verdict cache / duplicates inside the workload.")
    print(
        "CPU ms/item: CPU time of the service's processes (API, workers, pool processes, "
        "verifying children; not Postgres or Redis) per item, median of the repeats."
    )
    for row in report.rows:
        if row.statuses:
            agreement = ""
            if row.agreement is not None:
                agreement = f", agrees with Math-Verify on {row.agreement}/{row.items}"
            print(f"{row.mode} / {row.shape}: statuses {row.statuses}{agreement}")
    for note in report.notes:
        print(f"note: {note}")
    for problem in report.problems:
        print(f"PROBLEM: {problem}")
    if args.json is not None:
        payload = {
            "environment": report.environment,
            "rows": [asdict(row) for row in report.rows],
            "notes": report.notes,
            "problems": report.problems,
            "logs": str(log_dir),
        }
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False))
        print(f"wrote {args.json}")
    if interrupted:
        return 130
    return 1 if report.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
