"""Attacks on what earlier runs leave in memory: a later program must never inherit another
run's data (a hidden test's input, a session's files), in the same session or another one."""

from __future__ import annotations

import json
import secrets

from tests.integration.sandbox.conftest import Sandboxed, sandbox_spec

# Holds its input (and, in its own session, a file of the same secret) while it runs.
HOLD = "import sys\ndata = sys.stdin.buffer.read()\nprint(len(data))\n"
# Makes itself dumpable again (a uid change cleared it), then reads every readable mapping
# of every process it can see, itself included, for the marker followed by a secret: plain,
# or base64 at any of the three alignments (the data is laid out so one copy is aligned).
SCAN = r"""
import base64, binascii, ctypes, json, os, re
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1
mark = bytes.fromhex("524c56522d4c45414b2d5151")  # not spelled out: this source is in /work
plain = re.compile(re.escape(mark) + rb"([0-9a-f]{32})")
encoded = re.compile(re.escape(base64.b64encode(mark)) + rb"([A-Za-z0-9+/]{40})")
found, scanned = set(), []
def scan(pid):
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError:
        return
    scanned.append(pid)
    for line in maps:
        span, perms = line.split()[:2]
        if "r" not in perms or line.endswith(("[vvar]", "[vsyscall]", "[vvar_vclock]")):
            continue
        start, end = (int(x, 16) for x in span.split("-"))
        for at in range(start, end, 1 << 20):
            try:
                mem.seek(at)
                chunk = mem.read(min(1 << 20, end - at) + 64)
            except (OSError, ValueError, OverflowError):
                break
            found.update(m.group(1).decode() for m in plain.finditer(chunk))
            for m in encoded.finditer(chunk):
                try:
                    found.add(base64.b64decode(m.group(1)).decode("latin-1"))
                except (binascii.Error, ValueError):
                    pass
for entry in os.listdir("/proc"):
    if entry.isdigit():
        scan(entry)
print(json.dumps({"found": sorted(found), "scanned": scanned}))
"""
LIMITS = {"cpu_s": 10.0, "wall_s": 20.0}


def _payload(secret: str) -> bytes:
    # A hidden test's input of some 46 KB (freed buffers of that size stay in a heap as they
    # were); 46 bytes a copy (1 mod 3), so copies start at every alignment of a base64 text.
    return (bytes.fromhex("524c56522d4c45414b2d5151") + secret.encode() + b"\n\n") * 1000


def _leaked(found: list[str], secret: str) -> list[str]:
    return [f for f in found if secret.startswith(f[:30]) and len(f) >= 30]


def test_an_earlier_sessions_input_and_files_are_not_in_a_later_programs_memory(
    sandbox: Sandboxed,
) -> None:
    secret = secrets.token_hex(16)
    payload = _payload(secret)
    files = {"hold.py": HOLD.encode(), "tests.txt": payload}
    with sandbox.backend.session(files) as first:
        held = first.run(sandbox_spec("hold.py", payload, {}))
    assert held.stdout == f"{len(payload)}\n".encode()
    with sandbox.backend.session({"scan.py": SCAN.encode()}) as later:
        result = later.run(sandbox_spec("scan.py", b"", LIMITS))
    report = json.loads(result.stdout)
    assert report["scanned"], result.stderr  # it did read its own memory
    assert _leaked(report["found"], secret) == [], report


def test_an_earlier_tests_input_is_not_in_the_next_tests_memory(sandbox: Sandboxed) -> None:
    secret = secrets.token_hex(16)
    payload = _payload(secret)
    files = {"hold.py": HOLD.encode(), "scan.py": SCAN.encode()}
    with sandbox.backend.session(files) as session:  # one submission, two hidden tests
        session.run(sandbox_spec("hold.py", payload, {}))
        result = session.run(sandbox_spec("scan.py", b"", LIMITS))
    report = json.loads(result.stdout)
    assert report["scanned"], result.stderr
    assert _leaked(report["found"], secret) == [], report
