"""Inputs that once never returned: each must be judged within a wall-clock bound.

They run in a child process with a timeout, so a regression fails the test instead of hanging
the suite. A logarithm to a base other than e against a decimal agreeing to ~10 digits sent
sympy.simplify (logcombine) into a loop without end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
LIMIT_S = 5.0
# (completion, ground truth, config, expected status)
CASES = [
    ("\\boxed{\\log_2 3}", "1.5849625007211563", {}, "incorrect"),
    ("\\boxed{1.5849625007}", "\\log_2 3", {}, "incorrect"),
    ("\\boxed{1.5849625007}", "\\log_2 3", {"min_significant_digits": 10}, "correct"),
    ("\\boxed{\\log 2}", "0.30102999566", {}, "incorrect"),
    ("\\boxed{\\log_3 5}", "1.4649735207", {}, "incorrect"),
    ("\\boxed{\\frac{\\ln 2}{2}}", 0.34657359027997264, {}, "incorrect"),
    ("\\boxed{2\\log_2 3}", "3.1699250014423126", {}, "incorrect"),
    ("\\boxed{\\frac{\\pi}{\\ln 2}}", "4.532360141827194", {}, "incorrect"),
    ("\\boxed{\\log_3 7\\cdot\\log_7 2}", "0.6309297535714574", {}, "incorrect"),
    ("\\boxed{y = 1.5849625007211563 x}", "y = x\\log_2 3", {}, "incorrect"),
    ("\\boxed{y > 1.5849625007211563 x}", "y > x\\log_2 3", {}, "incorrect"),
]
_CHILD = """
import json, sys, time
from service.verifiers.math import verify
out = []
for completion, truth, config, _ in json.loads(sys.stdin.read()):
    start = time.monotonic()
    status = verify(completion, truth, config).status
    out.append((status, time.monotonic() - start))
print(json.dumps(out))
"""


def test_logarithms_against_long_decimals_return_quickly() -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps(CASES),
        capture_output=True,
        text=True,
        timeout=LIMIT_S * len(CASES) + 30,
        env=env,
        check=True,
    )
    results = json.loads(done.stdout)
    for (completion, truth, config, expected), (status, seconds) in zip(
        CASES, results, strict=True
    ):
        assert seconds < LIMIT_S, (completion, truth, seconds)
        assert status == expected, (completion, truth, config, status)
