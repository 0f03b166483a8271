"""Where a stdio program's output goes, through each real sandbox backend: output written
through another file object on descriptor 1 (``sys.__stdout__`` after replacing
``sys.stdout``, ``open(1, "w")``, ``os.fdopen``, ``/dev/stdout``, an atexit function's saved
stream) reaches the judge as it does under ``python3``, which flushes every file object still
alive when it exits; ``os._exit`` loses it there and here."""

from __future__ import annotations

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

COUNT_TO_N = {"language": "python", "tests": [{"stdin": "3\n", "stdout": "0\n1\n2\n"}]}

FLUSHED_AT_EXIT = {
    "sys.__stdout__ after replacing sys.stdout": "import sys, io\nsys.stdout = io.StringIO()\n"
    "for i in range(int(input())):\n    print(i)\nsys.__stdout__.write(sys.stdout.getvalue())",
    "print(file=sys.__stdout__)": "import sys, io\nsys.stdout = io.StringIO()\n"
    "for i in range(int(input())):\n    print(i, file=sys.__stdout__)",
    "open(1, 'w')": "out = open(1, 'w')\nfor i in range(int(input())):\n    out.write(f'{i}\\n')",
    "os.fdopen(1, 'w')": "import os\nout = os.fdopen(1, 'w')\n"
    "for i in range(int(input())):\n    out.write(f'{i}\\n')",
    "/dev/stdout": "out = open('/dev/stdout', 'w')\nfor i in range(int(input())):\n"
    "    out.write(f'{i}\\n')",
    "a saved stream written at exit": "import sys, io, atexit\nreal = sys.stdout\n"
    "sys.stdout = io.StringIO()\nn = int(input())\n"
    "atexit.register(lambda: real.write(''.join(f'{i}\\n' for i in range(n))))",
    "a buffered writer of its own": "import io\nout = io.BufferedWriter(io.FileIO(1, 'w'))\n"
    "for i in range(int(input())):\n    out.write(f'{i}\\n'.encode())",
}


@pytest.mark.parametrize("program", FLUSHED_AT_EXIT.values(), ids=FLUSHED_AT_EXIT.keys())
def test_output_through_another_file_object_is_flushed_at_exit(program: str) -> None:
    verdict = verify(fenced(program), COUNT_TO_N, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def test_os_exit_loses_unflushed_output_as_python_does() -> None:
    program = "import os\nout = open(1, 'w')\nfor i in range(int(input())):\n"
    program += "    out.write(f'{i}\\n')\nos._exit(0)"
    verdict = verify(fenced(program), COUNT_TO_N, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
