#!/usr/bin/env python
"""Audit at the size of real runs: seed a million decisions in Postgres and time the audit API.

Run from the repository root, with the virtualenv active and Postgres on 127.0.0.1:5432::

    python bench/audit_scale.py [--decisions 1000000] [--keep] [--reuse]

(``--keep`` leaves the seeded database; ``--reuse`` then measures it again without seeding.)

1. Seeds a fresh database (``rlvr_audit_scale``) through COPY: several runs of 500 steps,
   64-item groups, 1–3 KB completions, two verifier versions per run (a mid-run change), a few
   flagged decisions. The rows are copied into the schema of revision 0006, then the database
   is migrated to head, as an existing deployment would be: that builds the run rollups (0007)
   from the rows, so the summaries read what the service keeps as it writes.
2. Starts the service on it (migrated, with an admin key) and times, over HTTP:
   a filtered decision list (p50 over varied filters), one decision by id, a run's summary
   (``GET /v1/runs/{run_id}``) and its health, and an export of 100k decisions
   (``GET /v1/decisions/export``), sampling the API process's RSS while it streams.
3. Prints each figure next to its target.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from service.db.migrate import upgrade  # noqa: E402
from service.localstack import recreate_database, service_env, start_server  # noqa: E402

ADMIN_DSN = "postgresql://root@127.0.0.1:5432/postgres"
DATABASE = "rlvr_audit_scale"
KEY = "audit-scale-admin-key-0123456789abcdef"
STEPS = 500
GROUP = 64
# The schema the rows are copied into; migrating from it to head builds the rollups.
SEEDED_REVISION = "0006"
WORDS = (
    "so",
    "we",
    "compute",
    "the",
    "value",
    "then",
    "check",
    "each",
    "case",
    "carefully",
    "and",
    "the",
    "answer",
    "follows",
    "from",
    "the",
    "identity",
    "above",
    "because",
    "both",
    "sides",
    "agree",
    "after",
    "simplification",
    "therefore",
)
COLUMNS = (
    "id, tenant_id, request_id, item_index, item_id, group_id, run_id, step, verifier_name, "
    "verifier_version, version_hash, prompt, prompt_hash, completion, completion_hash, "
    "completion_chars, ground_truth, ground_truth_hash, metadata, reward, status, components, "
    "details, cached, duration_ms, flagged, worker_id, created_at"
)


def _recreate() -> str:
    url = recreate_database(DATABASE, ADMIN_DSN)
    upgrade(url, SEEDED_REVISION)
    return url


def _seeded_url(decisions: int) -> str | None:
    """The database a --keep run left, if it holds ``decisions`` decisions at head."""
    url = f"postgresql+psycopg://root@127.0.0.1:5432/{DATABASE}"
    try:
        with psycopg.connect(f"{ADMIN_DSN.rsplit('/', 1)[0]}/{DATABASE}") as connection:
            row = connection.execute("SELECT count(*) FROM decisions").fetchone()
    except psycopg.Error:
        return None
    if row is None or int(row[0]) != decisions:
        return None
    upgrade(url)  # a no-op when the kept database is at head already
    return url


def _completion(rng: random.Random, answer: int, correct: bool) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(180, 540))]
    final = answer if correct else answer + rng.choice((1, -1, 10))
    return " ".join(words) + f" so the answer is \\boxed{{{final}}}."


def _rows(total: int, runs: int, seed: int) -> Any:
    """Decision rows in COPY text format, run by run, step by step, group by group."""
    rng = random.Random(seed)
    per_step = math.ceil(total / (runs * STEPS))
    start = datetime(2026, 11, 1, tzinfo=UTC)
    made = 0
    for run in range(runs):
        run_id = f"run-{run}"
        for step in range(STEPS):
            version, version_hash = ("1.0.0", "a" * 64) if step < 300 else ("1.0.1", "b" * 64)
            request_id = uuid.uuid4().hex
            created = start + timedelta(hours=run, seconds=step * 7)
            for index in range(per_step):
                if made >= total:
                    return
                group = index // GROUP
                answer = 1000 + step * 10 + group
                correct = rng.random() < 0.4 + 0.3 * step / STEPS
                completion = _completion(rng, answer, correct)
                reward = 1.0 if correct else 0.0
                status = "correct" if correct else "incorrect"
                details = {"extracted": str(answer if correct else answer + 1), "reason": "ok"}
                flagged = rng.random() < 0.002
                if flagged:
                    details["answer_leak"] = True
                yield (
                    str(uuid.uuid4()),
                    "default",
                    request_id,
                    index,
                    str(index),
                    f"{run_id}-{step}-{group}",
                    run_id,
                    step,
                    "math",
                    version,
                    version_hash,
                    f"What is the value in case {group} of step {step}?",
                    hashlib.sha256(f"{group}-{step}".encode()).hexdigest(),
                    completion,
                    hashlib.sha256(completion.encode()).hexdigest(),
                    len(completion),
                    orjson.dumps(str(answer)).decode(),
                    hashlib.sha256(str(answer).encode()).hexdigest(),
                    "{}",
                    reward,
                    status,
                    orjson.dumps({"accuracy": reward}).decode(),
                    orjson.dumps(details).decode(),
                    rng.random() < 0.2,
                    round(rng.uniform(0.5, 20.0), 3),
                    flagged,
                    "bench:1",
                    created + timedelta(microseconds=index),
                )
                made += 1


def seed(url: str, total: int, runs: int) -> float:
    """COPY the rows in; returns seconds taken (including the indexes' upkeep)."""
    started = time.perf_counter()
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as connection, connection.cursor() as cursor:
        with cursor.copy(f"COPY decisions ({COLUMNS}) FROM STDIN") as copy:
            for row in _rows(total, runs, seed=0):
                copy.write_row(row)
        cursor.execute("ANALYZE decisions")
    return time.perf_counter() - started


def _analyze(url: str) -> None:
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("ANALYZE")


def _timed(client: httpx.Client, path: str, **params: Any) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = client.get(path, params=params)
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return elapsed, response


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _label_some(client: httpx.Client, rng: random.Random, runs: int) -> None:
    """Labels on a few decisions of each run (some saying the verifier was wrong)."""
    for run in range(runs):
        page = client.get("/v1/decisions", params={"run_id": f"run-{run}", "limit": 500})
        for decision in rng.sample(page.json()["decisions"], 5):
            verdict = rng.choice(("correct", "incorrect"))
            labelled = client.post(
                f"/v1/decisions/{decision['id']}/labels", json={"verdict": verdict}
            )
            labelled.raise_for_status()


def _new_filters(rng: random.Random, runs: int) -> list[dict[str, Any]]:
    """Step ranges, flags, cache and duration, labels and free text, each within a run."""
    found = []
    for _ in range(10):
        run = {"run_id": f"run-{rng.randrange(runs)}", "limit": 100}
        first = rng.randrange(STEPS - 50)
        found += [
            {**run, "step_from": first, "step_to": first + 50},
            {**run, "flagged": True},
            {**run, "cached": True, "min_duration_ms": 15},
            {**run, "labelled": True},
            {**run, "disagrees_with_label": True},
            {**run, "q": str(1000 + first * 10)},
        ]
    return found


def measure(
    base_url: str, server_pid: int, runs: int, export_rows: int
) -> list[tuple[str, str, str]]:
    headers = {"Authorization": f"Bearer {KEY}"}
    figures: list[tuple[str, str, str]] = []
    rng = random.Random(1)
    with httpx.Client(base_url=base_url, headers=headers, timeout=300) as client:
        lists = []
        for _ in range(60):
            filters: dict[str, Any] = {"run_id": f"run-{rng.randrange(runs)}", "limit": 100}
            choice = rng.randrange(3)
            if choice == 0:
                filters["status"] = "incorrect"
            elif choice == 1:
                filters["step"] = rng.randrange(STEPS)
            lists.append(_timed(client, "/v1/decisions", **filters)[0])
        figures.append(("filtered list, p50", f"{statistics.median(lists):.1f} ms", "≤ 50 ms"))
        _label_some(client, rng, runs)
        others = [_timed(client, "/v1/decisions", **f)[0] for f in _new_filters(rng, runs)]
        figures.append(
            ("list by the newer filters, p50", f"{statistics.median(others):.1f} ms", "≤ 50 ms")
        )
        figures.append(("list by the newer filters, max", f"{max(others):.1f} ms", "—"))
        page = client.get("/v1/decisions", params={"limit": 1000}).json()["decisions"]
        ids = [d["id"] for d in page]
        singles = [_timed(client, f"/v1/decisions/{rng.choice(ids)}")[0] for _ in range(100)]
        figures.append(("one decision, p50", f"{statistics.median(singles):.1f} ms", "≤ 20 ms"))
        summaries = [_timed(client, "/v1/runs/run-0")[0] for _ in range(3)]
        figures.append(
            ("run summary (one run), p50", f"{statistics.median(summaries):.0f} ms", "≤ 1 s")
        )
        healths = [_timed(client, "/v1/runs/run-0/health")[0] for _ in range(3)]
        figures.append(("run health, p50", f"{statistics.median(healths):.0f} ms", "—"))

        samples: list[float] = []
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                samples.append(_rss_mb(server_pid))
                time.sleep(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        rss_before = _rss_mb(server_pid)
        sampler.start()
        cpu_before = _cpu_seconds(server_pid)
        started = time.perf_counter()
        rows = 0
        try:
            with client.stream(
                "GET", "/v1/decisions/export", params={"run_id": "run-0", "limit": export_rows}
            ) as response:
                if response.status_code in (404, 422):  # no export route in this version
                    figures.append(("export", "route not available", "≥ 20k rows/s"))
                    return figures
                response.raise_for_status()
                # A lean consumer (as `curl > file` is): the service's pace, not a client's
                # line splitting, is what this measures. The last line is checked whole.
                tail = b""
                for chunk in response.iter_raw():
                    rows += chunk.count(b"\n")
                    tail = (tail + chunk)[-65536:]
                last = orjson.loads(tail.rstrip(b"\n").rsplit(b"\n", 1)[-1])
                assert last["run_id"] == "run-0" and last["cursor"], last
        finally:
            done.set()
            sampler.join()
        seconds = time.perf_counter() - started
        figures.append(
            (f"export of {rows:,} decisions", f"{rows / seconds:,.0f} rows/s", "≥ 20k rows/s")
        )
        # What the API spends per decision, whatever else the machine is doing: the pace one
        # core would give it alone.
        per_row = (_cpu_seconds(server_pid) - cpu_before) / max(rows, 1)
        figures.append(
            (
                "export, API CPU per decision",
                f"{per_row * 1e6:.0f} µs (≈{1 / per_row:,.0f}/s a core)",
                "—",
            )
        )
        peak = max(samples, default=rss_before)
        figures.append(("API RSS during export", f"{rss_before:.0f} → peak {peak:.0f} MB", "flat"))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--export-rows", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the database an earlier --keep run left (same --decisions), no seeding",
    )
    args = parser.parse_args()

    url = _seeded_url(args.decisions) if args.reuse else None
    if url is None:
        url = _recreate()
        seconds = seed(url, args.decisions, args.runs)
        rate = args.decisions / seconds
        print(f"seeded {args.decisions:,} decisions in {seconds:.0f} s ({rate:,.0f}/s)")
        started = time.perf_counter()
        upgrade(url)
        _analyze(url)
        print(f"migrated to head (indexes, run rollups) in {time.perf_counter() - started:.0f} s")
    else:
        print(f"reusing {DATABASE}: {args.decisions:,} decisions seeded by an earlier run")
    env = service_env(RLVR_DATABASE_URL=url, RLVR_BOOTSTRAP_ADMIN_KEY=KEY, RLVR_LOCAL_WORKERS="1")
    with tempfile.TemporaryDirectory() as logs:
        server, base_url = start_server(env, Path(logs) / "api.log", timeout_s=120)
        try:
            figures = measure(base_url, server.proc.pid, args.runs, args.export_rows)
        finally:
            server.stop()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nload average after the measures: {load} on {os.cpu_count()} CPUs")
    width = max(len(name) for name, _, _ in figures)
    print(f"\n{'measure':<{width}} | {'measured':>24} | target")
    for name, value, target in figures:
        print(f"{name:<{width}} | {value:>24} | {target}")
    if not args.keep:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')


if __name__ == "__main__":
    main()
