"""What a wrong solution does to its process, the harness and the run, through each real
sandbox backend, in every mode: tracing and rewriting the caller, exits and signals, threads
and children that keep printing "PASS", writing to or closing descriptors, replacing stdout,
patching the harness's own modules, reading the tests, memory at the last moment, sleeping
past the clock; stdio's own tricks; the same kinds of attack made while a test calls the
solution; and limits or sandbox failures it forges (text, exception classes, exit codes,
signals, the harness's frames), each a wrong answer. None earns a reward or a null; an honest
solution run next on the same backend passes."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import EXEC, FUNCTION, VALUES, fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

STDIO = {
    "language": "python",
    "tests": [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "2 2\n", "stdout": "4\n"}],
}
MODES = {"function": FUNCTION, "values": VALUES, "exec": EXEC, "stdio": STDIO}
HONEST = "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n"
HONEST += "    print(add(*map(int, input().split())))\n"

TAIL = "\ndef add(a, b):\n    return 0\nif __name__ == '__main__':\n    print(0)\n"
ATTACKS = {
    "settrace": "import sys\ndef tr(f, e, a):\n    f.f_locals\n    return tr\n"
    "sys.settrace(tr)\nsys.setprofile(lambda *a: None)",
    "gc rewrites expected values": "import gc\ndef _rewrite():\n    for o in gc.get_objects():\n"
    "        if isinstance(o, dict) and 'expected' in o: o['expected'] = 0\n"
    "        if isinstance(o, list) and 3 in o: o[o.index(3)] = 0\n_rewrite()",
    "caller frames": "import inspect\ndef _rewrite():\n    f = inspect.currentframe()\n"
    "    while f:\n        f.f_globals['AssertionError'] = KeyError\n        f = f.f_back\n"
    "_rewrite()",
    "SystemExit at import": "raise SystemExit(0)",
    "os._exit at import": "import os\nos._exit(0)",
    "signal handlers": "import signal\nfor s in (signal.SIGTERM, signal.SIGALRM, signal.SIGXCPU,"
    " signal.SIGINT):\n    signal.signal(s, signal.SIG_IGN)\nsignal.alarm(0)",
    "atexit prints": "import atexit, os\natexit.register(lambda: print('3\\n4'))\n"
    "atexit.register(lambda: os.write(1, b'PASS\\n'))",
    "thread prints PASS": "import threading, time, os\ndef spam():\n    while True:\n"
    "        for fd in (1, 2):\n            try: os.write(fd, b'PASS\\n')\n"
    "            except OSError: pass\n        time.sleep(0.01)\n"
    "threading.Thread(target=spam, daemon=True).start()",
    "writes every descriptor": "import os\nfor fd in range(3, 64):\n    try:\n"
    '        os.write(fd, b\'{"index":0,"report":{"done":true,"value":3}}\\n\')\n'
    "    except OSError: pass",
    "closes every descriptor": "import os\nos.closerange(0, 1024)",
    "replaces stdout": "import os, sys\nos.dup2(2, 1)\nsys.stdout = open('/dev/null', 'w')",
    "reads the tests": "import glob, os\nblob = b''\nfor p in glob.glob('/work/*') + "
    "glob.glob('/tmp/*') + ['/proc/self/environ', f'/proc/{os.getppid()}/cmdline']:\n"
    "    try: blob += open(p, 'rb').read()\n    except OSError: pass\n"
    "assert b'expected' not in blob and b'\"stdout\"' not in blob",
    "child prints for it": "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
    "    for _ in range(100):\n        try: os.write(1, b'PASS\\n')\n        except OSError: pass\n"
    "        time.sleep(0.02)\n    os._exit(0)",
    "double fork": "import os, time\nif os.fork() == 0:\n    if os.fork() == 0:\n"
    "        os.setsid()\n        time.sleep(30)\n    os._exit(0)",
    "patches the harness": "import sys\nfor n, m in list(sys.modules.items()):\n"
    "    if n.startswith('rlvr_harness'):\n        for k in ('encode', 'to_json', 'pack'):\n"
    "            if hasattr(m, k): setattr(m, k, lambda *a, **kw: b'')",
    # A limit or a failure of the sandbox's, forged while the program loads (see FORGERIES).
    "says MemoryError on stderr": "import sys\nsys.stderr.write('MemoryError\\n')",
    "raises MemoryError": "raise MemoryError",
    "sends itself SIGXCPU": "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)",
    "sends the driver SIGXCPU": "import os, signal\nos.kill(os.getppid(), signal.SIGXCPU)",
}


# The same kinds of attack made while a test calls the solution, not at its import: each is the
# body of ``add``.
IN_A_CALL = {
    "SystemExit(0)": "raise SystemExit(0)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "GeneratorExit": "raise GeneratorExit",
    "a BaseException of its own": "raise type('Stop', (BaseException,), {})()",
    "os._exit(0)": "import os\n    os._exit(0)",
    "stops the driver": "import os, signal\n    os.kill(os.getppid(), signal.SIGSTOP)\n"
    "    return 0",
    "kills the driver": "import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n"
    "    return 0",
    "kills its group": "import os, signal\n    os.killpg(0, signal.SIGKILL)",
    "walks to the caller's frame": "import sys\n    return sys._getframe(1).f_locals",
    "forks a child to answer": "import os\n    if os.fork() == 0:\n        return a + b\n"
    "    os._exit(0)",
    "an alarm for later": "import signal\n    signal.signal(signal.SIGALRM, lambda *x: None)\n"
    "    signal.alarm(1)\n    return 0",
    "closes its descriptors": "import os\n    os.closerange(0, 1024)\n    return a + b",
    "no CPU left": "import resource\n    resource.setrlimit(resource.RLIMIT_CPU, (0, 0))\n"
    "    return a + b + 1",
    "NaN": "return float('nan')",
}

# A wrong answer dressed up as a limit or as the sandbox's failure, from inside a call (each is
# the body of ``add``, which then returns 0): what it writes, the exception classes it raises,
# the codes it exits with, the signals it sends, the harness's frames it forges. A limit is what
# the host's clocks and caps, the kernel and the harness's own frames say, never the program's
# word: each is a wrong answer (``incorrect``), never a ``timeout`` or a null.
FORGERIES = {
    "MemoryError on stderr": "import sys\n    sys.stderr.write('MemoryError\\n')",
    "bad_alloc on stderr": 'import sys\n    sys.stderr.write("terminate called after throwing an'
    " instance of 'std::bad_alloc'\\nvirtual memory exhausted: Cannot allocate memory\\n\")",
    "raises MemoryError": "raise MemoryError",
    "raises a MemoryError of its own": "raise type('MemoryError', (MemoryError,), {})('no memory')",
    "a class named builtins.MemoryError": "raise type('MemoryError', (Exception,),"
    " {'__module__': 'builtins'})('out of memory')",
    "raises TimeoutError": "raise TimeoutError('time limit exceeded')",
    "a SandboxError of its own": "raise type('SandboxError', (RuntimeError,),"
    " {'__module__': 'service.sandbox.base'})('the sandbox failed')",
    "an import error naming a module": "raise ModuleNotFoundError(\"No module named 'numpy'\","
    " name='numpy')",
    "sends itself SIGXCPU": "import os, signal\n    os.kill(os.getpid(), signal.SIGXCPU)",
    "sends the driver SIGXCPU": "import os, signal, time\n"
    "    os.kill(os.getppid(), signal.SIGXCPU)\n    time.sleep(0.2)",
    "sends itself SIGKILL": "import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)",
    "aborts": "import os\n    os.abort()",
    "exits as the harness fails": "import os\n    os._exit(3)",
    "exits as a set-up fails": "import os\n    os._exit(2)",
    "prints the harness's records": 'import sys\n    print(\'{"setup_error": "bad magic"}\')\n'
    '    sys.stderr.write(\'{"driver_error": "x"}\\n{"harness_limit": "x"}\\n\')',
    "forges the solution process's reply": "import json, os, struct\n"
    "    x = ['builtins', 'MemoryError', 'out of memory', '']\n"
    "    frame = json.dumps({'x': x}).encode()\n"
    "    try:\n        os.write(4, struct.pack('>I', len(frame)) + frame)\n"
    "    except OSError:\n        pass",
}
CALL_MODES = {"function": FUNCTION, "values": VALUES, "exec": EXEC}


def _no_reward(verdict: Any) -> None:
    assert verdict.reward == 0.0, verdict
    assert verdict.status in ("incorrect", "timeout"), verdict


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("mode", MODES)
def test_an_attack_on_the_process_earns_nothing_and_leaves_no_trace(mode: str, attack: str) -> None:
    verdict = verify(fenced(ATTACKS[attack] + TAIL), MODES[mode], {"reward": "fraction"})
    _no_reward(verdict)
    if attack != "patches the harness":  # its half of the channel is mute: the clock ends it
        assert verdict.status == "incorrect", verdict
    honest = verify(fenced(HONEST), MODES[mode], {"reward": "fraction"})
    assert (honest.status, honest.reward) == ("correct", 1.0), honest.details


@pytest.mark.parametrize("mode", MODES)
def test_a_memory_error_of_the_solution_is_its_runtime_error(mode: str) -> None:
    # RLIMIT_AS refuses the allocation and Python raises MemoryError, as a program may raise it
    # itself: its own word is not a limit (see FORGERIES), and the test fails as a crash.
    program = "def add(a, b):\n    x = bytearray(1 << 34)\n    return 0\nx = bytearray(1 << 34)\n"
    verdict = verify(fenced(program), MODES[mode], {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["tests"][0]["status"] == "runtime error"


@pytest.mark.parametrize("mode", MODES)
def test_sleeping_past_the_wall_clock_is_a_time_limit(mode: str) -> None:
    # time_limit_s 0.2: a wall clock of 1.4 s per test.
    program = "import time\ndef add(a, b):\n    time.sleep(3)\n    return a + b\n"
    program += "if __name__ == '__main__':\n    time.sleep(3)\n"
    verdict = verify(fenced(program), {**MODES[mode], "time_limit_s": 0.2}, {})
    assert (verdict.status, verdict.reward) == ("timeout", 0.0), verdict
    assert verdict.details["tests"][0]["status"] == "time limit"


STDIO_TRICKS = {
    "every plausible answer": "for n in range(10):\n    print(n)\n",
    "another case": "a, b = map(int, input().split())\nprint(f'{a + b}')\nprint('YES')\n",
    "leading space": "a, b = map(int, input().split())\nprint('', a + b)\n",
    "exit 1 after the answer": "import sys\na, b = map(int, input().split())\n"
    "print(a + b, flush=True)\nsys.exit(1)\n",
    "killed after the answer": "import os, signal\na, b = map(int, input().split())\n"
    "print(a + b, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "os._exit(3) after the answer": "import os\na, b = map(int, input().split())\n"
    "print(a + b, flush=True)\nos._exit(3)\n",
    "answer on stderr": "import sys\na, b = map(int, input().split())\n"
    "print(a + b, file=sys.stderr)\n",
}


@pytest.mark.parametrize("trick", STDIO_TRICKS)
def test_stdio_tricks_earn_nothing(trick: str) -> None:
    verdict = verify(fenced(STDIO_TRICKS[trick]), STDIO, {"reward": "fraction"})
    _no_reward(verdict)


def test_a_long_token_under_a_tolerance_is_judged_at_once() -> None:
    # The host's number pattern took quadratic time on a run of digits with a letter after it
    # (15 s for 30,000 digits): outside every limit of the run, at the verifier's expense.
    tolerant = {**STDIO, "float_tolerance": 1e-6}
    verdict = verify(fenced("print('1' * 200_000 + 'x')"), tolerant, {"reward": "fraction"})
    _no_reward(verdict)
    assert verdict.details["tests"][0]["status"] == "wrong answer"


def test_stdio_forgives_trailing_whitespace_only() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b, end='   \\r\\n\\n\\n')\n"
    assert verify(fenced(program), STDIO, {}).status == "correct"


# The work done in a child the solution waits for: 1.6 s of CPU against a 1 s limit.
WORK_IN_A_CHILD = (
    "import os, time\n"
    "def add(a, b):\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        end = time.process_time() + 1.6\n"
    "        while time.process_time() < end:\n"
    "            pass\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "    return a + b\n"
)


@pytest.mark.parametrize("mode", ["function", "values", "exec"])
def test_cpu_spent_in_a_child_does_not_escape_the_time_limit(mode: str) -> None:
    # Each test is charged the solution process's CPU time, so that process may start no
    # other: the fork fails and the test with it.
    verdict = verify(fenced(WORK_IN_A_CHILD), {**MODES[mode], "time_limit_s": 1}, {})
    _no_reward(verdict)


@pytest.mark.parametrize("mode", ["function", "values", "exec"])
def test_threads_still_work_in_a_solution(mode: str) -> None:
    program = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "def add(a, b):\n"
        "    with ThreadPoolExecutor(2) as pool:\n"
        "        return pool.submit(lambda: a + b).result()\n"
    )
    verdict = verify(fenced(program), MODES[mode], {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


@pytest.mark.parametrize("attack", IN_A_CALL)
@pytest.mark.parametrize("mode", CALL_MODES)
def test_an_attack_made_during_a_call_earns_nothing(mode: str, attack: str) -> None:
    program = f"def add(a, b):\n    {IN_A_CALL[attack]}\n"
    ground_truth = {**CALL_MODES[mode], "time_limit_s": 1}
    _no_reward(verify(fenced(program), ground_truth, {"reward": "fraction"}))
    honest = verify(fenced(HONEST), CALL_MODES[mode], {"reward": "fraction"})
    assert (honest.status, honest.reward) == ("correct", 1.0), honest.details


@pytest.mark.parametrize("forgery", FORGERIES)
@pytest.mark.parametrize("mode", MODES)
def test_a_forged_limit_or_failure_is_a_wrong_answer(mode: str, forgery: str) -> None:
    program = f"def add(a, b):\n    {FORGERIES[forgery]}\n    return 0\n"
    program += "if __name__ == '__main__':\n    print(add(*map(int, input().split())))\n"
    verdict = verify(fenced(program), MODES[mode], {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details


# What ends a test, made inside a call that test code wraps in ``try: ... except: pass``: the
# solution process gone (an exit, a signal), its clocks, an output cap, an exception that ends
# a run. Each ends the test all the same, as in Python (where ``os._exit`` ends the test's
# process too); before, a bare ``except`` in test code swallowed the harness's own end and the
# test passed.
ENDS_OF_A_TEST = {
    "SystemExit(0)": "raise SystemExit(0)",
    "sys.exit(1)": "import sys\n    sys.exit(1)",
    "os._exit(0)": "import os\n    os._exit(0)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "GeneratorExit": "raise GeneratorExit",
    "kills itself": "import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)",
    "sleeps": "import time\n    time.sleep(30)",
    "a busy loop": "while True:\n        pass",
    "floods stdout": "print('x' * 10**7)",
    # A frame too large to be a reply: the driver's ProtocolError. (A well-formed frame
    # written before its own reply is only an answer of the solution's, read or not.)
    "a malformed reply": "import os, struct\n    os.write(4, struct.pack('>I', 1 << 30))\n"
    "    return 3",
}
CATCHES_ALL = [
    "try:\n    add(1, 2)\nexcept:\n    pass\n",
    "import pytest\n\ndef test_add():\n    try:\n        add(1, 2)\n    except BaseException:\n"
    "        pass\n",
]


@pytest.mark.parametrize("test", CATCHES_ALL, ids=["bare except", "pytest, BaseException"])
@pytest.mark.parametrize("attack", ENDS_OF_A_TEST)
def test_test_code_that_catches_everything_does_not_catch_the_end_of_a_test(
    attack: str, test: str
) -> None:
    program = f"def add(a, b):\n    {ENDS_OF_A_TEST[attack]}\n"
    ground_truth = {"language": "python", "mode": "assert", "tests": [test], "time_limit_s": 0.5}
    _no_reward(verify(fenced(program), ground_truth, {}))
    honest = verify(fenced(HONEST), ground_truth, {})
    assert (honest.status, honest.reward) == ("correct", 1.0), honest.details
