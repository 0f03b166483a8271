"""What a wrong or too slow C++ program tries, through each real sandbox backend: leaving
before the answer, answering from a constructor, reading files at compile time, compile-time
bombs, CPU in children and threads, ignoring SIGXCPU, raising its rlimits, answers on stderr,
floods, state left for the next test. None earns a reward or a null. Honest programs written
the way competitive programmers write them pass, and stdio is judged as the public suites state
their tests (CRLF inputs, trailing whitespace, tolerances)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

SUM = {
    "language": "cpp",
    "time_limit_s": 0.5,
    "tests": [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "10 -4\n", "stdout": "6\n"}],
}
# <cstdio> and POSIX headers only: a program compiles in a tenth of the time <iostream> takes.
C = (
    "#include <cstdio>\n#include <cstdlib>\n#include <csignal>\n#include <ctime>\n"
    "#include <unistd.h>\n#include <pthread.h>\n#include <sys/wait.h>\n"
    "#include <sys/resource.h>\n"
)
SOLVE = 'long long a, b; if (scanf("%lld %lld", &a, &b) != 2) return 1; printf("%lld\\n", a + b);'
# Burn `s` seconds of this thread's CPU time.
BURN = (
    "static void burn(double s) { timespec t0, t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);"
    " volatile unsigned long x = 0; do { for (int i = 0; i < 100000; i++) x++;"
    " clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); } while ((t.tv_sec - t0.tv_sec)"
    " + (t.tv_nsec - t0.tv_nsec) / 1e9 < s); }\n"
)

# Each run-time attack and the status its first test must end with.
RUNTIME = {
    "exit(0) before the answer": (C + "int main() { exit(0); }", "wrong answer"),
    "quick_exit": (C + "int main() { quick_exit(0); }", "wrong answer"),
    "_Exit": (C + "int main() { _Exit(0); }", "wrong answer"),
    "exit_group by asm": (
        C + 'int main() { asm volatile("mov $231, %eax\\n xor %edi, %edi\\n syscall"); }',
        "wrong answer",
    ),
    # Answers the first test from a constructor, before main: the second is wrong.
    "constructor prints": (
        C + '__attribute__((constructor)) static void f() { puts("3"); fflush(stdout); _exit(0); }'
        "\nint main() {}",
        "accepted",
    ),
    "static initialiser prints": (
        C + 'struct S { S() { puts("3"); exit(0); } } s;\nint main() {}',
        "accepted",
    ),
    "system(echo)": (C + 'int main() { return system("echo 3"); }', "accepted"),
    "answer on stderr": (
        C + 'int main() { long long a, b; scanf("%lld %lld", &a, &b);'
        ' fprintf(stderr, "%lld\\n", a + b); }',
        "wrong answer",
    ),
    "stderr flood after the answer": (
        C + "int main() { " + SOLVE + " fflush(stdout); static char s[1 << 16];"
        " for (;;) fwrite(s, 1, sizeof s, stderr); }",
        "time limit",  # stderr past its cap is dropped; the flood runs into the clock
    ),
    "stdout flood": (
        C + "int main() { static char s[1 << 16]; for (;;) fwrite(s, 1, sizeof s, stdout); }",
        "output limit",
    ),
    "busy loop": (C + "int main() { for (;;); }", "time limit"),
    "ignores SIGXCPU": (
        C + BURN + "int main() { signal(SIGXCPU, SIG_IGN); burn(1.5); " + SOLVE + " }",
        "time limit",
    ),
    "raises its rlimits": (
        C + BURN + "int main() { rlimit r; getrlimit(RLIMIT_CPU, &r); r.rlim_cur = r.rlim_max;"
        " setrlimit(RLIMIT_CPU, &r); r.rlim_cur = r.rlim_max = RLIM_INFINITY;"
        " setrlimit(RLIMIT_CPU, &r); signal(SIGXCPU, SIG_IGN); burn(1.2); " + SOLVE + " }",
        "time limit",
    ),
    # 2 x 0.4 s of CPU in 0.4 s of wall time (on two cores).
    "threads share the work": (
        C + BURN + "static void *work(void *) { burn(0.4); return nullptr; }\n"
        "int main() { pthread_t t[2]; for (auto &x : t) pthread_create(&x, nullptr, work,"
        " nullptr); for (auto &x : t) pthread_join(x, nullptr); " + SOLVE + " }",
        "time limit",
    ),
    # Each child stays under its own RLIMIT_CPU; together they use 1.6 s.
    "children waited for do the work": (
        C + BURN + "int main() { for (int k = 0; k < 4; k++) if (fork() == 0) { burn(0.4);"
        " _exit(0); } while (wait(nullptr) > 0) {} " + SOLVE + " }",
        "time limit",
    ),
    "children left running": (
        C + BURN + "int main() { for (int k = 0; k < 4; k++) if (fork() == 0) { burn(5);"
        " _exit(0); } burn(0.3); " + SOLVE + " }",
        "time limit",
    ),
    # The parent leaves at once; a daemon would answer later.
    "daemon answers later": (
        C + BURN + "int main() { if (fork() == 0) { setsid(); burn(0.2); " + SOLVE + " } }",
        "wrong answer",
    ),
    "sleeps": (C + "int main() { sleep(10); }", "time limit"),
    # RLIMIT_AS refuses the gigabyte: std::bad_alloc, then abort(), which any program can do
    # after printing the same words. Only the kernel's OOM kill is a memory limit.
    "memory": (
        C + "int main() { size_t n = 1ul << 30; volatile char *p = new char[n];"
        " for (size_t i = 0; i < n; i += 4096) p[i] = 1; " + SOLVE + " }",
        "runtime error",
    ),
    # A wrong answer dressed up as a limit: the words a failed allocation prints, SIGXCPU sent
    # without the CPU time spent.
    "says bad_alloc": (
        C + "int main() { fputs(\"terminate called after throwing an instance of 'std::bad_alloc'"
        '\\nMemoryError\\nCannot allocate memory\\n", stderr); puts("0"); }',
        "wrong answer",
    ),
    "sends itself SIGXCPU": (C + "int main() { raise(SIGXCPU); }", "runtime error"),
    # Its parent is the sandbox's own process, which it may not signal.
    "sends its parent SIGXCPU": (
        C + "int main() { kill(getppid(), SIGXCPU); usleep(200000); }",
        "wrong answer",
    ),
}

# Compile-time attacks: reading files into the program, and bombs that must end in a limit
# or an error of the compiler's, never in a null or a worker held past the compile's clock.
COMPILE = {
    "includes /proc/self/environ": '#include "/proc/self/environ"\nint main() {}',
    "includes /proc/self/cmdline": '#include "/proc/self/cmdline"\nint main() {}',
    "includes its own file": '#include "/work/main.cpp"\nint main() {}',
    "includes /dev/stdin": "#include </dev/stdin>\nint main() {}",
    "includes /proc/self/fd/0": "#include </proc/self/fd/0>\nint main() {}",
    "includes /dev/zero": "#include </dev/zero>\nint main() {}",
    "includes /dev/urandom": "#include </dev/urandom>\nint main() {}",
    "includes /dev/tty": "#include </dev/tty>\nint main() {}",
    "includes the tests in /tmp": '#include "/tmp/tests.json"\nint main() {}',
    "incbin /dev/zero": 'asm(".incbin \\"/dev/zero\\"");\nint main() {}',
    "incbin /dev/urandom": 'asm(".section .rodata\\n.incbin \\"/dev/urandom\\"");\nint main() {}',
    ".rept bomb": 'asm(".rept 100000000\\n nop\\n .endr");\nint main() {}',
    "template recursion": "template <int N> struct F { static const int v = F<N + 1>::v; };\n"
    "int main() { return F<0>::v; }",
    "template explosion": "template <int N> struct F { static const int v = F<N - 1>::v"
    " + F<N - 2>::v; };\ntemplate <> struct F<0> { static const int v = 1; };\n"
    "template <> struct F<1> { static const int v = 1; };\nint main() { return F<800>::v; }",
    "constexpr loop": "constexpr long f() { long s = 0; for (long i = 0; i < (1L << 40); i++)"
    " s += i % 7; return s; }\nconstexpr long v = f();\nint main() { return v; }",
    "macro bomb": "#define A(x) x x x x x x x x x x\n#define B(x) A(A(A(A(A(A(A(A(x))))))))\n"
    "B(int;)\nint main() {}",
    "huge initialised array": "#include <cstdio>\nchar a[1 << 30] = {1};\n"
    'int main() { int i; if (scanf("%d", &i) == 1) printf("%d\\n", a[i]); }',
    "includes itself 2^40 times": "#if __INCLUDE_LEVEL__ < 40\n#include __FILE__\n"
    "#include __FILE__\n#endif\nint main() {}",
}
# The compiler's words for running out of memory, written by the program itself.
FORGED_COMPILE = '#error "virtual memory exhausted: Cannot allocate memory (std::bad_alloc)"\n'


def _no_reward(verdict: Any) -> None:
    assert verdict.reward == 0.0, verdict
    assert verdict.status in ("incorrect", "timeout"), verdict


@pytest.mark.parametrize("attack", RUNTIME)
def test_a_runtime_attack_earns_nothing(attack: str) -> None:
    program, first = RUNTIME[attack]
    verdict = verify(fenced(program, "cpp"), SUM, {})
    _no_reward(verdict)
    assert verdict.details["tests"][0]["status"] == first, verdict.details
    if first in ("time limit", "memory limit"):
        assert verdict.status == "timeout"


@pytest.mark.parametrize("attack", COMPILE)
def test_a_compile_time_attack_earns_nothing(attack: str) -> None:
    started = time.monotonic()
    verdict = verify(fenced(COMPILE[attack], "cpp"), SUM, {"reward": "fraction"})
    _no_reward(verdict)
    # The compile's own limits: 10 s of CPU, 20 s of wall clock.
    assert time.monotonic() - started < 25
    compiled = verdict.details["compile"]["status"]
    assert compiled in ("accepted", "compile error", "time limit", "memory limit", "output limit")
    if compiled != "accepted":
        assert verdict.details["tests"] == []


def test_a_compile_error_that_reads_as_out_of_memory_is_a_compile_error() -> None:
    verdict = verify(fenced(FORGED_COMPILE + "int main() {}", "cpp"), SUM, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["compile"]["status"] == "compile error"


def test_nothing_a_test_leaves_reaches_the_next() -> None:
    # Right only when it finds what an earlier test of the same submission left in /tmp,
    # /dev/shm, /work or a SysV segment; else it prints 0.
    program = C + (
        "#include <sys/ipc.h>\n#include <sys/shm.h>\n"
        'static bool found(const char *p) { FILE *f = fopen(p, "r"); if (f) fclose(f);'
        " return f; }\n"
        'static void leave(const char *p) { FILE *f = fopen(p, "w"); if (f) fclose(f); }\n'
        'int main() { long long a, b; scanf("%lld %lld", &a, &b);'
        ' bool seen = found("/tmp/seen") || found("/dev/shm/seen") || found("/work/seen");'
        " int id = shmget(0x5eed, 4096, 0); seen = seen || id >= 0;"
        ' leave("/tmp/seen"); leave("/dev/shm/seen"); leave("/work/seen");'
        " shmget(0x5eed, 4096, IPC_CREAT | 0666);"
        ' printf("%lld\\n", seen ? a + b : 0); }'
    )
    ground_truth = {**SUM, "tests": SUM["tests"] * 2}
    verdict = verify(fenced(program, "cpp"), ground_truth, {"reward": "fraction"})
    _no_reward(verdict)
    assert [t["status"] for t in verdict.details["tests"]] == ["wrong answer"] * 4


HONEST = {
    "fast iostream, bits/stdc++.h, EOF": "#include <bits/stdc++.h>\nusing namespace std;\n"
    "int main() { ios::sync_with_stdio(false); cin.tie(nullptr); long long x, s = 0;"
    " while (cin >> x) s += x; cout << s << '\\n'; }",
    "scanf until EOF": "#include <cstdio>\nint main() { long long x, s = 0;"
    ' while (scanf("%lld", &x) == 1) s += x; printf("%lld\\n", s); }',
    "pragmas": '#pragma GCC optimize("O3,unroll-loops")\n'
    '#pragma GCC target("avx2,bmi,bmi2,popcnt,lzcnt")\n#include <cstdio>\n'
    'int main() { long long x, s = 0; while (scanf("%lld", &x) == 1) s += x;'
    ' printf("%lld\\n", s); }',
    # Compiler dumps next to the program, a profile the read-only /work refuses at exit.
    "dumps and profiling": '#pragma GCC optimize("-fdump-tree-all", "-fprofile-generate")\n'
    '#include <cstdio>\nint main() { long long x, s = 0; while (scanf("%lld", &x) == 1)'
    ' s += x; printf("%lld\\n", s); }',
}
# Sums of long longs: CRLF lines, no final newline, an empty input, one long line.
LONG_LINE = " ".join(["1000000000"] * 100_000)
SUMS = {
    "language": "cpp",
    "tests": [
        {"stdin": "1 2 3", "stdout": "6"},
        {"stdin": "1000000000000\r\n2000000000000\r\n", "stdout": "3000000000000\r\n"},
        {"stdin": "", "stdout": "0\n\n\n"},
        {"stdin": "5\n", "stdout": "5   \n"},
        {"stdin": LONG_LINE, "stdout": str(10**9 * 100_000)},
    ],
}


@pytest.mark.parametrize("program", HONEST)
def test_honest_programs_pass(program: str) -> None:
    verdict = verify(fenced(HONEST[program], "cpp"), SUMS, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def test_lines_read_with_getline_from_crlf_inputs_have_no_cr() -> None:
    program = (
        "#include <bits/stdc++.h>\nusing namespace std;\nint main() { string s;"
        " while (getline(cin, s)) { reverse(s.begin(), s.end()); cout << s << '\\n'; } }"
    )
    ground_truth = {
        "language": "cpp",
        "tests": [
            {"stdin": "abc\r\nde\r\n", "stdout": "cba\ned\n"},
            {"stdin": LONG_LINE + "\r\n", "stdout": LONG_LINE[::-1]},
        ],
    }
    verdict = verify(fenced(program, "cpp"), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def _printing(text: str) -> str:
    return fenced(f'#include <cstdio>\nint main() {{ fputs("{text}", stdout); }}', "cpp")


@pytest.mark.parametrize("tolerance", [None, 1e-6])
@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("1  2\\n", "1 2\n"),
        ("1\\t2\\n", "1 2\n"),
        ("yes\\n", "YES\n"),
        ("\\n3\\n", "3\n"),
        ("1_0\\n", "10\n"),
        ("0.334\\n", "0.333333\n"),
        # float() reads 401 digits as inf: any number was within a tolerance of it.
        ("0\\n", "1" + "0" * 400 + "\n"),
    ],
)
def test_a_difference_inside_a_line_is_wrong(
    output: str, expected: str, tolerance: float | None
) -> None:
    ground_truth = {
        "language": "cpp",
        "float_tolerance": tolerance,
        "tests": [{"stdin": "", "stdout": expected}],
    }
    if tolerance is None:
        del ground_truth["float_tolerance"]
    verdict = verify(_printing(output), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    assert verdict.details["tests"][0]["status"] == "wrong answer"


def test_floats_within_the_ground_truths_tolerance_pass() -> None:
    ground_truth = {
        "language": "cpp",
        "float_tolerance": 1e-6,
        "tests": [{"stdin": "", "stdout": "0.333333 2\r\n"}],
    }
    verdict = verify(_printing("0.333333333 2.000000000  \\n\\n"), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details
    del ground_truth["float_tolerance"]
    assert verify(_printing("0.333333333 2.000000000\\n"), ground_truth, {}).reward == 0.0
