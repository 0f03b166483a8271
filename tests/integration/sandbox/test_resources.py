"""Attacks on memory, output and disk, and state left for the next run."""

from __future__ import annotations

from service.sandbox.base import Limits
from tests.integration.sandbox.conftest import Sandboxed


def test_memory_bomb_fails_inside_its_limit(sandbox: Sandboxed) -> None:
    result = sandbox.run("x = []\nwhile True:\n    x.append(bytearray(10**7))\n", memory_mb=64)
    assert result.exit_code == 1 and b"MemoryError" in result.stderr
    assert result.max_rss_kb < 200 * 1024


def test_memory_spread_over_processes_is_stopped_by_the_cgroup(dangerous: Sandboxed) -> None:
    if dangerous.kind == "local" and dangerous.backend.cgroups.memory is None:
        return  # without a memory cgroup each process is bounded by RLIMIT_AS alone
    source = (
        "import os, time\nfor _ in range(6):\n    if os.fork() == 0:\n"
        "        block = bytearray(50 * 2**20)\n"
        "        for i in range(0, len(block), 4096):\n            block[i] = 1\n"
        "        time.sleep(30)\nos.wait()\n"
    )
    result = dangerous.run(source, memory_mb=64, tmp_mb=16, wall_s=3.0)
    assert result.memory_exceeded


def test_endless_output_is_cut_at_the_cap_and_killed(sandbox: Sandboxed) -> None:
    result = sandbox.run("import sys\nwhile True:\n    sys.stdout.write('y' * 4096)\n")
    assert result.killed == "stdout_limit" and len(result.stdout) == 1 << 20
    assert result.wall_s < 1.5
    result = sandbox.run("import sys\nwhile True:\n    sys.stderr.write('e' * 4096)\n")
    assert result.killed == "stderr_limit" and len(result.stderr) == 64 << 10


def test_stderr_past_its_cap_can_keep_its_head_and_tail_and_the_run_going(
    sandbox: Sandboxed,
) -> None:
    chatty = (
        "import sys\nfor i in range(50000):\n    print('debug', i, file=sys.stderr)\n"
        "print('answer')\n"
    )
    result = sandbox.run(chatty, stderr_keeps_tail=True)
    assert (result.exit_code, result.killed, result.stdout) == (0, None, b"answer\n")
    # Within the cap: the first lines, a mark, and the last 4 KB up to the very last line.
    assert len(result.stderr) == 64 << 10
    assert result.stderr.startswith(b"debug 0\ndebug 1\n") and b"\n[...]\n" in result.stderr
    assert result.stderr.endswith(b"debug 49999\n")
    assert len(result.stderr.rsplit(b"\n[...]\n", 1)[1]) == 4096
    # Under the cap nothing is cut or marked.
    short = sandbox.run("import sys\nprint('x' * 100, file=sys.stderr)\n", stderr_keeps_tail=True)
    assert short.stderr == b"x" * 100 + b"\n" and short.killed is None
    # A flood never ends by itself: the wall clock ends it, and nothing is left.
    flood = sandbox.run(
        "import sys\nwhile True:\n    sys.stderr.write('e' * 4096)\n",
        stderr_keeps_tail=True,
        wall_s=1.0,
    )
    assert flood.killed == "wall" or flood.exceeded_time(Limits(cpu_s=5.0)), flood
    assert len(flood.stderr) == 64 << 10 and flood.stderr.endswith(b"e" * 100)
    sandbox.assert_nothing_survived()


def test_disk_fill_stops_at_the_tmp_cap(sandbox: Sandboxed) -> None:
    source = (
        "import os\nn = 0\ntry:\n    for i in range(1000):\n"
        "        with open(f'/tmp/f{i}', 'wb') as f:\n            f.write(b'x' * 2**20)\n"
        "        n += 1\nexcept OSError as e:\n    print(n, e.errno)\n"
    )
    result = sandbox.run(source, tmp_mb=8)
    written, errno = result.stdout.split()
    assert int(written) <= sandbox.tmp_cap_mb(8) and errno == b"28"  # ENOSPC


def test_files_left_behind_are_gone_for_the_next_run(sandbox: Sandboxed) -> None:
    leave = (
        "import os\nopen('/tmp/note', 'w').write('secret')\nos.makedirs('/tmp/a/b/c')\n"
        "os.chmod('/tmp/a', 0)\nprint(sorted(os.listdir('/tmp')))\n"
    )
    look = (
        "import os\nshm = os.listdir('/dev/shm') if os.path.isdir('/dev/shm') else []\n"
        "print(os.listdir('/tmp'), shm)\n"
    )
    first, second = sandbox.runs([leave, look])  # one session: the same program's next test
    assert first.stdout == b"['a', 'note']\n"
    assert second.stdout == b"[] []\n"


def test_sysv_ipc_cannot_carry_state_between_runs(sandbox: Sandboxed) -> None:
    load = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    create = load + "print(libc.shmget(4242, 4096, 0o1666) >= 0, libc.msgget(4242, 0o1666) >= 0)\n"
    find = load + "print(libc.shmget(4242, 0, 0), libc.msgget(4242, 0))\n"
    made, found = sandbox.runs([create, find])
    if sandbox.kind == "local":
        assert made.stdout == b"False False\n"  # seccomp refuses SysV IPC outright
    assert found.stdout == b"-1 -1\n"  # docker: created, then removed before the next run


def test_non_utf8_and_nul_bytes_come_back_intact(sandbox: Sandboxed) -> None:
    source = "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00abc\\x00\\n')\n"
    assert sandbox.run(source).stdout == b"\xff\xfe\x00abc\x00\n"


def test_stdin_larger_than_a_pipe_buffer_is_fed_completely(sandbox: Sandboxed) -> None:
    data = b"7\n" * 200_000
    result = sandbox.run("import sys\nprint(len(sys.stdin.buffer.read()))\n", stdin=data)
    assert result.stdout == b"400000\n"


def test_a_program_that_never_reads_a_large_stdin_still_finishes(sandbox: Sandboxed) -> None:
    result = sandbox.run("print('ignored my input')\n", stdin=b"x" * (8 << 20))
    assert result.stdout == b"ignored my input\n" and result.exit_code == 0
    assert result.killed is None and result.wall_s < 1.5
