#!/usr/bin/env python
"""Experiments and replays, measured on the deployed stack (Postgres, Redis, Celery workers).

Run from the repository root, with the virtualenv active, Postgres on 127.0.0.1:5432 and Redis
on 127.0.0.1:6379 (database 14 is flushed)::

    python bench/experiments.py [--requests 200] [--decisions 100000] [--json out.json]

(a) Shadow: p50/p95 of one 16-item group request, sequential, with a shadow experiment taking
    the request vs without, side by side in one run (alternating blocks of requests, the shadow
    backlog handed over and drained before each block without). The API defers shadow work to
    gaps between requests for up to RLVR_SHADOW_DEFER_S (2 s): blocks shorter than that
    measure a trainer's bursts, longer blocks (or ``--shadow-defer 0``) the service that never
    pauses.
(b) Replay: math decisions re-scored per second by the background worker (one niced process),
    and reward p50 while a replay of ``--decisions`` logged decisions runs vs idle (idle blocks
    before and after, the replay block in between).
(c) Report: GET /v1/experiments/{id}/report of a shadow and of a split experiment over
    ``--decisions`` decisions (seeded by COPY, like bench/audit_scale.py), p50 and worst.

Every figure is printed next to its target; fresh database, fresh Redis database.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import orjson
import psycopg
import redis

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchkey import AUTH, KEY  # noqa: E402
from workload import make_latency_groups, make_workload  # noqa: E402

from service.catalog.builtin import resolve_builtin  # noqa: E402
from service.db.migrate import upgrade  # noqa: E402
from service.localstack import (  # noqa: E402
    ManagedProcess,
    recreate_database,
    service_env,
    start_server,
    start_worker,
    wait_until,
)

ADMIN_DSN = "postgresql://root@127.0.0.1:5432/postgres"
DATABASE = "rlvr_bench_experiments"
DSN = f"postgresql://root@127.0.0.1:5432/{DATABASE}"
REDIS_URL = "redis://127.0.0.1:6379/14"
TENANT = "default"  # the operator's tenant: the bench key's
TOLERANT = {"version": "1.1.0", "kind": "math", "config": {"rel_tol": 0.01}}
DECISION_COLUMNS = (
    "id, tenant_id, request_id, item_index, item_id, group_id, run_id, step, verifier_name, "
    "verifier_version, version_hash, prompt, prompt_hash, completion, completion_hash, "
    "completion_chars, ground_truth, ground_truth_hash, metadata, reward, status, components, "
    "details, cached, duration_ms, flagged, worker_id, created_at"
)
SHADOW_COLUMNS = (
    "id, experiment_id, tenant_id, control_decision_id, request_id, group_id, control_reward, "
    "control_status, control_cached, control_duration_ms, verifier_name, verifier_version, "
    "version_hash, reward, status, components, details, cached, duration_ms, worker_id, "
    "created_at"
)
ASSIGNMENT_COLUMNS = (
    "experiment_id, decision_id, tenant_id, arm, request_id, group_id, reward, status, cached, "
    "duration_ms, created_at"
)


def _recreate() -> str:
    url = recreate_database(DATABASE, ADMIN_DSN)
    upgrade(url)
    redis.Redis.from_url(REDIS_URL).flushdb()
    return url


@contextmanager
def stack(url: str, logs: Path, shadow_defer_s: float | None = None) -> Iterator[str]:
    """A cpu worker, the background worker (shadow, replay) and the API, all stopped after."""
    env = service_env(
        RLVR_DATABASE_URL=url, RLVR_BROKER_URL=REDIS_URL, RLVR_BOOTSTRAP_ADMIN_KEY=KEY
    )
    if shadow_defer_s is not None:
        env["RLVR_SHADOW_DEFER_S"] = str(shadow_defer_s)
    started: list[ManagedProcess] = []
    try:
        started.append(start_worker(env, logs / "worker.log"))
        background = ManagedProcess(
            [
                sys.executable,
                "-m",
                "service.cli",
                "worker",
                "--queues",
                "shadow,replay",
                "--hostname",
                f"bench-background-{uuid.uuid4().hex[:6]}@%h",
            ],
            env,
            logs / "background.log",
        )
        started.append(background)
        wait_until(lambda: "ready." in background.log_tail(), 90, "the background worker")
        server, base_url = start_server(env, logs / "api.log", timeout_s=120)
        started.append(server)
        yield base_url
    finally:
        for process in reversed(started):
            process.stop()


def _post_group(client: httpx.Client, run_id: str, group: list[dict[str, str]]) -> float:
    started = time.perf_counter()
    response = client.post(
        "/v1/rewards", json={"verifier": "math", "run_id": run_id, "items": group}
    )
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return elapsed


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _shadow_decided(experiment_id: str) -> int:
    with psycopg.connect(DSN) as connection:
        row = connection.execute(
            "SELECT count(*) FROM shadow_decisions WHERE experiment_id = %s", (experiment_id,)
        ).fetchone()
    return int(row[0]) if row else 0


def bench_shadow(client: httpx.Client, requests: int, block: int) -> dict[str, Any]:
    """(a) The same kind of request with and without a shadow experiment taking it."""
    created = client.post(
        "/v1/experiments",
        json={
            "name": "bench-shadow",
            "verifier": "math",
            "control": "1.0.0",
            "treatment": "1.1.0",
            "mode": "shadow",
            "filter": {"run_id": "bench-shadow-on"},
        },
    )
    created.raise_for_status()
    experiment = created.json()["id"]
    groups = make_latency_groups(requests + 10, seed=7)
    for group in groups[:10]:  # warm-up, both ways
        _post_group(client, "bench-shadow-warm", group)
    latencies: dict[str, list[float]] = {"off": [], "on": []}
    position = 10
    offered = 0  # items of the "on" run: each is shadowed (sent) or dropped, sooner or later
    for index in range(requests // block):
        arm = "off" if index % 2 == 0 else "on"
        if arm == "off":
            # The "without" block starts with no shadow work left from the one before: every
            # item offered is handed over (the API defers it to a gap) and decided.
            def drained(offered: int = offered) -> bool:
                shadow = client.get(f"/v1/experiments/{experiment}").json()["shadow"]
                handed = shadow["sent"] + shadow["dropped"] >= offered
                return handed and _shadow_decided(experiment) >= shadow["sent"]

            wait_until(drained, 300, "the shadow backlog to drain")
        run_id = "bench-shadow-on" if arm == "on" else "bench-shadow-off"
        for group in groups[position : position + block]:
            latencies[arm].append(_post_group(client, run_id, group))
            offered += len(group) if arm == "on" else 0
        position += block
    client.post(f"/v1/experiments/{experiment}/stop")
    shadow = client.get(f"/v1/experiments/{experiment}").json()["shadow"]
    figures: dict[str, Any] = {
        arm: {"p50_ms": statistics.median(values), "p95_ms": _p(values, 0.95), "n": len(values)}
        for arm, values in latencies.items()
    }
    figures["ratio_p50"] = figures["on"]["p50_ms"] / figures["off"]["p50_ms"]
    figures["ratio_p95"] = figures["on"]["p95_ms"] / figures["off"]["p95_ms"]
    figures["shadow"] = shadow
    return figures


def _stable_unit(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


class Seeded(NamedTuple):
    """A seeded decision: what the comparison rows copy of it."""

    id: str
    request_id: str
    group_id: str
    status: str
    reward: float
    duration_ms: float


def seed_decisions(total: int, run_id: str) -> list[Seeded]:
    """COPY ``total`` logged math decisions (the bench workload's completions, 16-item
    groups)."""
    spec = resolve_builtin("math@1.0.0")
    items = make_workload(groups=max(1, total // 16), group_size=16, seed=3)[:total]
    rng = random.Random(5)
    start = datetime.now(UTC) - timedelta(hours=2)
    made: list[Seeded] = []
    with psycopg.connect(DSN) as connection, connection.cursor() as cursor:
        with cursor.copy(f"COPY decisions ({DECISION_COLUMNS}) FROM STDIN") as copy:
            for index, item in enumerate(items):
                request_id = f"{run_id}-step-{index // 1024}"
                status = "correct" if rng.random() < 0.45 else "incorrect"
                reward = 1.0 if status == "correct" else 0.0
                decision_id = str(uuid.uuid4())
                group_id = f"{item['group_id']}"
                duration_ms = round(rng.uniform(0.3, 12.0), 3)
                copy.write_row(
                    (
                        decision_id,
                        TENANT,
                        request_id,
                        index % 1024,
                        item["id"],
                        group_id,
                        run_id,
                        index // 1024,
                        "math",
                        spec.version,
                        spec.version_hash,
                        item["prompt"],
                        "p" * 64,
                        item["completion"],
                        "c" * 64,
                        len(item["completion"]),
                        orjson.dumps(item["ground_truth"]).decode(),
                        "g" * 64,
                        "{}",
                        reward,
                        status,
                        orjson.dumps({"accuracy": reward}).decode(),
                        orjson.dumps({"extracted": item["ground_truth"][:40]}).decode(),
                        False,
                        duration_ms,
                        False,
                        "bench:1",
                        start + timedelta(microseconds=index),
                    )
                )
                made.append(Seeded(decision_id, request_id, group_id, status, reward, duration_ms))
        cursor.execute("ANALYZE decisions")
    return made


def bench_replay(client: httpx.Client, run_id: str, probes: int, window_s: float) -> dict[str, Any]:
    """(b) Re-scoring rate, and reward latency while the replay runs vs idle."""
    groups = make_latency_groups(3 * probes + 5, seed=11)
    for group in groups[:5]:
        _post_group(client, "bench-replay-warm", group)
    idle = [_post_group(client, "bench-replay-idle", g) for g in groups[5 : 5 + probes]]
    created = client.post(
        "/v1/replays", json={"filter": {"run_id": run_id}, "target": "math@1.1.0"}
    )
    created.raise_for_status()
    replay_id = created.json()["id"]

    def progress() -> dict[str, Any]:
        return dict(client.get(f"/v1/replays/{replay_id}").json())

    wait_until(lambda: progress()["progress"]["done"] > 0, 300, "the replay to start deciding")
    first, first_at = progress()["progress"]["done"], time.monotonic()
    busy = [
        _post_group(client, "bench-replay-busy", g) for g in groups[5 + probes : 5 + 2 * probes]
    ]
    remaining = window_s - (time.monotonic() - first_at)
    if remaining > 0:
        time.sleep(remaining)
    last, last_at = progress()["progress"]["done"], time.monotonic()
    state = progress()
    client.delete(f"/v1/replays/{replay_id}")
    idle_after = [_post_group(client, "bench-replay-idle", g) for g in groups[5 + 2 * probes :]]
    idle_all = idle + idle_after
    return {
        "rescored_per_s": (last - first) / (last_at - first_at),
        "window_s": last_at - first_at,
        "done_at_cancel": state["progress"]["done"],
        "total": state["progress"]["total"],
        "idle_p50_ms": statistics.median(idle_all),
        "busy_p50_ms": statistics.median(busy),
        "ratio_p50": statistics.median(busy) / statistics.median(idle_all),
        "n": {"idle": len(idle_all), "busy": len(busy)},
    }


def seed_experiments(client: httpx.Client, decisions: list[Seeded]) -> tuple[str, str]:
    """A stopped shadow experiment and a stopped split one, each over every seeded decision."""
    ids = []
    for mode in ("shadow", "split"):
        created = client.post(
            "/v1/experiments",
            json={
                "name": f"bench-report-{mode}",
                "verifier": "math",
                "control": "1.0.0",
                "treatment": "1.1.0",
                "mode": mode,
                "filter": {"run_id": f"bench-{mode}"},
            },
        )
        created.raise_for_status()
        ids.append(created.json()["id"])
        client.post(f"/v1/experiments/{ids[-1]}/stop").raise_for_status()
    shadow_id, split_id = ids
    treatment = resolve_builtin("math@1.0.0")  # the hash only labels the rows here
    rng = random.Random(9)
    now = datetime.now(UTC)
    with psycopg.connect(DSN) as connection, connection.cursor() as cursor:
        with cursor.copy(f"COPY shadow_decisions ({SHADOW_COLUMNS}) FROM STDIN") as copy:
            for seeded in decisions:
                flipped = rng.random() < 0.1
                status = seeded.status
                new = ("incorrect" if status == "correct" else "correct") if flipped else status
                reward = 1.0 if new == "correct" else 0.0
                copy.write_row(
                    (
                        str(uuid.uuid4()),
                        shadow_id,
                        TENANT,
                        seeded.id,
                        seeded.request_id,
                        seeded.group_id,
                        seeded.reward,
                        seeded.status,
                        False,
                        seeded.duration_ms,
                        "math",
                        "1.1.0",
                        treatment.version_hash,
                        reward,
                        new,
                        orjson.dumps({"accuracy": reward}).decode(),
                        "{}",
                        False,
                        round(rng.uniform(0.3, 12.0), 3),
                        "bench:1",
                        now,
                    )
                )
        with cursor.copy(f"COPY experiment_assignments ({ASSIGNMENT_COLUMNS}) FROM STDIN") as copy:
            for seeded in decisions:
                unit = f"{seeded.request_id}/{seeded.group_id}"
                arm = "treatment" if _stable_unit(unit) < 0.5 else "control"
                copy.write_row(
                    (
                        split_id,
                        seeded.id,
                        TENANT,
                        arm,
                        seeded.request_id,
                        seeded.group_id,
                        seeded.reward,
                        seeded.status,
                        False,
                        seeded.duration_ms,
                        now,
                    )
                )
        cursor.execute("ANALYZE shadow_decisions")
        cursor.execute("ANALYZE experiment_assignments")
    return shadow_id, split_id


def bench_report(client: httpx.Client, experiment_id: str, repeats: int) -> dict[str, Any]:
    """(c) The report, timed over HTTP (the server computes it in SQL)."""
    timings = []
    body: dict[str, Any] = {}
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(f"/v1/experiments/{experiment_id}/report")
        timings.append(time.perf_counter() - started)
        response.raise_for_status()
        body = response.json()
    return {
        "p50_s": statistics.median(timings),
        "worst_s": max(timings),
        "items": body["control"]["items"] + (0 if body["paired"] else body["treatment"]["items"]),
        "groups": (body["grpo"] or {}).get("groups"),
    }


def _line(name: str, value: str, target: str) -> None:
    print(f"  {name:<52} {value:>18}   target {target}")


def run(args: argparse.Namespace, client: httpx.Client) -> dict[str, Any]:
    results: dict[str, Any] = {}
    client.post("/v1/verifiers/math/versions", json=TOLERANT).raise_for_status()
    if "a" in args.parts:
        print("(a) shadow experiment on the hot path")
        results["shadow"] = shadow = bench_shadow(client, args.requests, args.block)
        for arm in ("off", "on"):
            figures = f"{shadow[arm]['p50_ms']:.1f} / {shadow[arm]['p95_ms']:.1f} ms"
            _line(f"16-item group p50 / p95, shadow {arm}", figures, "")
        _line("shadow on / off, p50", f"{shadow['ratio_p50']:.2f}x", "<= 1.1x")
        _line("shadow on / off, p95", f"{shadow['ratio_p95']:.2f}x", "<= 1.1x")
    if "b" not in args.parts and "c" not in args.parts:
        return results

    print(f"seeding {args.decisions} decisions by COPY")
    seeded_at = time.perf_counter()
    decisions = seed_decisions(args.decisions, "bench-replay-source")
    print(f"  seeded in {time.perf_counter() - seeded_at:.1f} s")

    if "b" in args.parts:
        print(f"(b) replay of {args.decisions} decisions")
        replay = bench_replay(client, "bench-replay-source", args.probes, args.window)
        results["replay"] = replay
        _line("math decisions re-scored per second", f"{replay['rescored_per_s']:.0f}/s", "")
        figures = f"{replay['idle_p50_ms']:.1f} / {replay['busy_p50_ms']:.1f} ms"
        _line("reward p50 idle / during replay", figures, "")
        _line("during replay / idle, p50", f"{replay['ratio_p50']:.2f}x", "<= 1.5x")

    if "c" in args.parts:
        print(f"(c) reports over {args.decisions} decisions")
        shadow_id, split_id = seed_experiments(client, decisions)
        results["report"] = {}
        for mode, experiment_id in (("shadow", shadow_id), ("split", split_id)):
            report = bench_report(client, experiment_id, args.repeats)
            results["report"][mode] = report
            figures = f"{report['p50_s']:.2f} / {report['worst_s']:.2f} s"
            _line(f"{mode} report ({report['items']} items) p50 / worst", figures, "<= 2 s")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="(a) group requests")
    parser.add_argument("--block", type=int, default=20, help="(a) requests per block")
    parser.add_argument("--decisions", type=int, default=100_000, help="(b), (c) seeded")
    parser.add_argument("--probes", type=int, default=40, help="(b) requests per block")
    parser.add_argument("--window", type=float, default=60.0, help="(b) seconds of replay")
    parser.add_argument("--repeats", type=int, default=5, help="(c) report requests")
    parser.add_argument("--parts", default="abc", help="which of (a), (b), (c) to run")
    parser.add_argument(
        "--shadow-defer",
        type=float,
        default=None,
        help="(a) the API's RLVR_SHADOW_DEFER_S (0: shadow work published at once, as before "
        "it waited for gaps between requests); the service's default when not given",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    url = _recreate()
    with (
        tempfile.TemporaryDirectory(prefix="rlvr-bench-experiments-") as logs,
        stack(url, Path(logs), args.shadow_defer) as base_url,
        httpx.Client(base_url=base_url, headers=AUTH, timeout=300) as client,
    ):
        results = run(args, client)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
