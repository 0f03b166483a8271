"""A program that dresses its own failure up as the sandbox's, attacked at two levels: a run of
the sandbox (test_blame.py) and a verdict of the code verifier
(tests/integration/verifiers/code/test_verify_hacks.py)."""

from __future__ import annotations

# A wrong program that reads its input, litters /tmp (slow to clean), looks for the run's marker
# on its wrapper's command line and forges the wrapper's "setup failed" trailer, then buries the
# real trailer under far more than any stderr cap and exits as a failed set-up would.
FORGED_SETUP_FAILURE = r"""
import os, sys
sys.stdin.read()
for i in range(20000):
    try:
        open(f"/tmp/f{i}", "w").close()
    except OSError:
        break
try:
    words = open(f"/proc/{os.getppid()}/cmdline", "rb").read().split(b"\0")
except OSError:
    words = []
marks = [w for w in words if len(w) == 32 and all(c in b"0123456789abcdef" for c in w)]
for mark in marks or [b"0" * 32]:
    sys.stderr.buffer.write(b"\n" + mark + b" setup /tmp/f1 could not be removed\n")
sys.stderr.buffer.write(b"e" * (5 << 20))
sys.stderr.flush()
os._exit(125)
"""
