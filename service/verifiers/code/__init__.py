"""Code verifier (kind ``code``, code 1.7.1): run the completion's program against hidden tests.

Contract: ``verify(completion, ground_truth, config, prompt=None) -> Verdict``.

Ground truth: ``{"language": "python"|"cpp", "mode": "stdio"|"function"|"assert",
"tests": [...], "fn_name": ..., "time_limit_s": 2, "memory_mb": 256, "float_tolerance": null,
"ignore_case": false, "unwrap_expected": false, "prelude": ""}``
(or its JSON text). Bad ground truth raises ``InvalidGroundTruth`` naming the problem.

- Program: the last fenced block of the language (```python/```py, ```cpp/```c++), else the
  last fenced block, else the whole completion when it is only code; none → ``unparseable``.
  A block indented as a whole is dedented; in function mode a last block that surely does not
  define ``fn_name`` (or ``Solution``) gives way to the last block that does, and in assert
  mode one that defines none of the names the asserts take from the solution. typing's
  annotation names (``List``, ``Optional``...) are in a Python program's builtins.
- Every run happens in the sandbox (``service.sandbox``, the backend of the process's sandbox
  config: ``RLVR_SANDBOX_BACKEND``); every verdict is computed on the host. Expected stdout,
  expected return values and the expected side of assert comparisons never enter the sandbox.
- Python tests run in one sandbox run per submission (``harness/``, ``batch.py``), each test
  with its own limits, output and report; a test that crashes the run or goes over a limit is
  recorded for that test and a fresh run takes the rest. C++ runs once per test.
- Function and assert tests: the solution is loaded once, in a process of its own, and test
  code runs in another, reaching the solution through proxies that carry plain data only
  (exact builtin types, bounded; an answer may also be a ``Counter``, ``OrderedDict``,
  ``deque``, ``Fraction`` or ``defaultdict``, which cross as themselves, or an iterator, which
  reaches a lifted assert on the host as its items):
  any other value is a wrong answer, and nothing the solution patches (builtins, modules,
  ``sys.modules``) reaches test code. Test code's ``import numpy`` gets numpy's comparisons
  over plain data where the sandbox has none (MBPP+); a test whose own import fails is
  ``error``.
- stdio: lines compared after dropping trailing whitespace per line and trailing blank lines;
  same number of lines; with ``float_tolerance`` numeric tokens may differ by it (absolute or
  relative); with ``ignore_case`` ASCII letters compare without case. Output must be UTF-8.
  function: the return value as strict JSON data, compared as data (``true`` is not ``1``;
  ``2`` equals ``2.0``); with ``unwrap_expected`` an expected one-element list also accepts its
  element (APPS / TACO call-based tests). assert: see ``asserts.py``.
- Per test: accepted, wrong answer, time limit (CPU time over ``time_limit_s``, or the wall
  clock at 2x + 1 s), memory limit (the kernel's OOM kill, or the harness's own memory; a
  MemoryError of the program's is its runtime error), output limit, runtime error; compile
  error for C++. Limits come from the host's clocks, the kernel and the harness's records,
  never from what the program writes, raises or signals.
- Reward (config ``{"reward": "all"|"fraction"}``): ``all`` (default) stops at the first
  failure, 1.0 or 0.0; ``fraction`` runs every test, ``partial`` with passed/total. When no
  reward is earned and the first failure is a time or memory limit the status is
  ``timeout`` (reward 0.0, never cached: it depends on the machine); otherwise ``incorrect``.
- The sandbox failing or being unavailable is ``error`` with reward None, never 0.0.
- ``details.flags`` lists static hack patterns (early exit, ``__eq__`` overrides, patched
  builtins, file or /proc reads, ctypes, signals): audit only, they never change a verdict.
"""

from __future__ import annotations

import subprocess
from functools import cache

from service.sandbox import SandboxConfig, sandbox_config
from service.sandbox.local import sandbox_python
from service.verifiers.base import InvalidGroundTruth

from .config import DEFAULT_CONFIG, validate_config
from .execute import item_budget_s
from .ground_truth import parse_ground_truth
from .verifier import CODE_VERSION, verify

# The sandbox bounds every run itself; the bounded child of the cpu queue is not needed.
ISOLATED = False
QUEUE = "sandbox"


def budget_s(ground_truth: object) -> float:
    """The longest one item can take: compile plus every test at its wall clock. A worker's
    task is given the sum over its items, so slow but legal programs are never cut short."""
    try:
        problem = parse_ground_truth(ground_truth)
    except InvalidGroundTruth:
        return 0.0
    return item_budget_s(problem)


def _tool_version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "missing"
    return done.stdout.strip() or "missing"


def library_versions() -> dict[str, str]:
    """What decides verdicts besides this code: the interpreter and compiler, or the runner
    images holding them, for this process's sandbox config (computed once per config)."""
    return dict(_toolchain_versions(sandbox_config()))


@cache
def _toolchain_versions(config: SandboxConfig) -> dict[str, str]:
    if config.backend == "docker":
        from service.sandbox.docker import image_reference

        # The runner images hold them there: each pinned by its id.
        pinned = {"sandbox": "docker", "image": image_reference(config.docker_image)}
        for language, image in sorted(config.docker_images.items()):
            pinned[f"image.{language}"] = image_reference(image)
        return pinned
    python = [sandbox_python(config.python), "-I", "-S", "-c"]
    return {
        "sandbox": config.backend,
        "python": _tool_version([*python, "import sys; print(sys.version.split()[0])"]),
        "g++": _tool_version(["g++", "-dumpfullversion"]),
    }


__all__ = [
    "CODE_VERSION",
    "DEFAULT_CONFIG",
    "ISOLATED",
    "QUEUE",
    "budget_s",
    "library_versions",
    "validate_config",
    "verify",
]
