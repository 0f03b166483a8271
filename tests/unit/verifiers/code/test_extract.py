"""Which program a completion holds."""

from __future__ import annotations

from service.verifiers.code.extract import extract_program
from service.verifiers.code.languages import CPP, PYTHON


def test_last_block_of_the_language_wins() -> None:
    text = "First try:\n```python\nprint(1)\n```\nBetter:\n```py\nprint(2)\n```\n```text\n2\n```"
    extracted = extract_program(text, PYTHON)
    assert extracted is not None and extracted.program == "print(2)\n"
    assert extracted.source == "fenced block"


def test_cpp_tags_and_other_language_blocks() -> None:
    text = "```python\nprint(1)\n```\n```c++\nint main(){}\n```"
    assert extract_program(text, CPP).program == "int main(){}\n"  # type: ignore[union-attr]
    assert extract_program(text, PYTHON).program == "print(1)\n"  # type: ignore[union-attr]


def test_untagged_block_is_the_fallback() -> None:
    extracted = extract_program("Here:\n```\nprint(3)\n```\ndone", PYTHON)
    assert extracted is not None and extracted.program == "print(3)\n"
    assert extracted.source == "other fenced block"


def test_whole_completion_only_when_it_is_code() -> None:
    code = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
    assert extract_program(code, PYTHON).source == "whole completion"  # type: ignore[union-attr]
    assert extract_program("The answer is to print the sum.", PYTHON) is None
    assert extract_program("hello", PYTHON) is None  # parses as Python, but is not a program
    assert extract_program("#include <cstdio>\nint main(){}", CPP) is not None


def test_a_fence_cut_off_at_the_length_limit_still_counts() -> None:
    extracted = extract_program("Solution:\n```python\nprint(1)\nprint(2", PYTHON)
    assert extracted is not None and extracted.program == "print(1)\nprint(2"


def test_empty_blocks_are_no_program() -> None:
    assert extract_program("```python\n\n```", PYTHON) is None


def test_a_block_indented_as_a_whole_is_dedented() -> None:
    # A fence inside a list item: the block as written would be an IndentationError.
    text = "1. The code:\n\n   ```python\n   def f(x):\n       return x + 1\n   ```\n"
    extracted = extract_program(text, PYTHON)
    assert extracted is not None and extracted.program == "def f(x):\n    return x + 1\n"


USAGE_AFTER = (
    "```python\ndef add(a, b):\n    return a + b\n```\nExample usage:\n"
    "```python\nprint(add(1, 2))  # 3\n```\n"
)


def test_function_mode_passes_over_a_usage_example_to_the_definition() -> None:
    extracted = extract_program(USAGE_AFTER, PYTHON, "add")
    assert extracted is not None and extracted.program.startswith("def add(a, b):")
    # Without an entry point (stdio, assert) the last block stays the program.
    assert extract_program(USAGE_AFTER, PYTHON).program == "print(add(1, 2))  # 3\n"  # type: ignore[union-attr]


def test_the_last_block_stays_when_it_may_define_the_entry() -> None:
    first = "```python\ndef add(a, b):\n    return 0\n```\n"
    cases = {
        # A second, corrected definition.
        "```python\ndef add(a, b):\n    return a + b\n```": "a + b",
        # A class of the LeetCode shape, an import, an assignment.
        "```python\nclass Solution:\n    def add(self, a, b):\n        return a\n```": "Solution",
        "```python\nfrom operator import add\n```": "operator",
        "```python\nadd = lambda a, b: a + b\n```": "lambda",
        # Nothing can be told of a block that does not parse or star-imports.
        "```python\nfrom math import *\n```": "*",
        "```python\nprint(add(1, 2)\n```": "print(",
    }
    for text, marker in cases.items():
        extracted = extract_program(first + text, PYTHON, "add")
        assert extracted is not None and marker in extracted.program, text
    # No earlier block defines it: the last block stays, and fails as it would have.
    only_usage = "```python\nprint(add(1, 2))\n```"
    assert extract_program(only_usage, PYTHON, "add").program == "print(add(1, 2))\n"  # type: ignore[union-attr]


def test_assert_mode_passes_over_usage_and_test_blocks_to_the_definition() -> None:
    # MBPP-style answers: the solution, then a block of prints, asserts or a pytest test.
    for after in (
        "print(add(1, 2))  # 3",
        "assert add(1, 2) == 3\nprint('ok')",
        "import pytest\n\ndef test_add():\n    assert add(1, 2) == 3",
    ):
        text = f"```python\ndef add(a, b):\n    return a + b\n```\nCheck:\n```python\n{after}\n```"
        extracted = extract_program(text, PYTHON, reads=("add",))
        assert extracted is not None and extracted.program.startswith("def add(a, b):"), after
    # A last block that binds a name the tests read stays the program.
    fixed = "```python\ndef add(a, b):\n    return 0\n```\n```python\nadd = lambda a, b: a + b\n```"
    assert "lambda" in extract_program(fixed, PYTHON, reads=("add",)).program  # type: ignore[union-attr]


def test_an_opening_line_without_its_newline_is_read_in_linear_time() -> None:
    # The fence pattern used to try every split of such a line before failing: quadratic in
    # its length, about a minute for these (the completion is the model's, up to 1 MB).
    spaces = "```python" + " " * 300_000
    assert extract_program(spaces, PYTHON) is None
    assert extract_program("`" * 300_000, PYTHON) is None
    extracted = extract_program("```python\nprint(1)\n```\n" + spaces, PYTHON)
    assert extracted is not None and extracted.program == "print(1)\n"
