"""Where a JSON body is nested too deep for the parser: the path of keys and indexes to it.

Python's ``json`` parser recurses once per level of nesting and gives up with a RecursionError
near the interpreter's recursion limit (about 950 levels in the API process), a point that
moves with the frames already on the stack. FastAPI answers that with a bare 400 naming no
field. The walk here finds the first place where the body passes ``limit`` levels, without
recursing and without building any value: it runs only on a body the parser refused.
"""

from __future__ import annotations

import json
import re

# Everything up to the next bracket outside a string: the scalars, strings, commas and colons
# of one container, matched in one step however long (a 10 MB flat list is one match).
_RUN = re.compile(rb'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# The key a run of an object ends with, just before the value that opens a container.
_LAST_KEY = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")\s*:\s*\Z', re.DOTALL)

# The depth a message names: half of Python's default recursion limit, so every body the
# parser gives up on passes it wherever the stack stood when it was parsed.
NAMED_DEPTH = 500

_OPENERS = b"[{"
_CLOSERS = b"]}"


def too_deep_at(body: bytes, limit: int) -> list[str | int] | None:
    """The keys and indexes down to the first container that opens level ``limit + 1``; None
    if the body never gets that deep (or is not JSON text this walk can follow)."""
    path: list[str | int] = []  # per open container: the key or index of its current value
    lists: list[bool] = []  # per open container: a list (True) or an object
    pos = 0
    while True:
        run = _RUN.match(body, pos)
        assert run is not None  # the pattern matches the empty string
        pos = run.end()
        if pos == len(body):
            return None
        bracket = body[pos]
        if lists and lists[-1]:
            path[-1] = int(path[-1]) + _STRING.sub(b"", run.group()).count(b",")
        if bracket in _OPENERS:
            if lists and not lists[-1]:
                key = _LAST_KEY.search(run.group())
                if key is None:
                    return None
                try:
                    path[-1] = json.loads(key.group(1))
                except ValueError:  # past where the parser stopped: text it never read
                    return None
            if len(lists) == limit:
                return path
            lists.append(bracket == _OPENERS[0])
            path.append(0)
        elif bracket in _CLOSERS and lists:
            lists.pop()
            path.pop()
        else:  # an unterminated string, or more closers than openers
            return None
        pos += 1
