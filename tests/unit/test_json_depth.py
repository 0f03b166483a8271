"""The walk that names where a JSON body passes a depth: keys and indexes as the body has them,
whatever the strings hold, without recursing however deep the body goes."""

from __future__ import annotations

import pytest

from service.json_depth import too_deep_at


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (b"[[[[1]]]]", [0, 0, 0]),
        (b'{"a": {"b": {"c": {"d": 1}}}}', ["a", "b", "c"]),
        (b'{"items": [1, "x", {"m": [[[]]]}]}', ["items", 2, "m"]),
        # Commas, brackets and quotes inside strings are text, not structure.
        (b'[" ,[{", "\\" ,]", {"k": 1, "l,[": {"x": [[]]}}]', [2, "l,[", "x"]),
        # Escapes in keys are read as JSON reads them.
        (b'{"\\u00e9\\"t\\u00e9": [{"a": [[]]}]}', ['\u00e9"t\u00e9', 0, "a"]),
        # Shallow siblings before the deep one are counted and left behind.
        (b"[[1, [2]], {}, [[], [[[0]]]]]", [2, 1, 0]),
        (b' \n{ "a" : [ 0 , [ [ [ ] ] ] ] } ', ["a", 1, 0]),
    ],
)
def test_the_path_to_the_first_container_past_the_limit(body: bytes, path: list[str | int]) -> None:
    assert too_deep_at(body, 3) == path


def test_a_body_never_that_deep_has_no_path() -> None:
    assert too_deep_at(b'{"a": [[1]], "b": [[]]}', 3) is None
    assert too_deep_at(b"[[[1]]]", 3) is None


def test_text_that_is_not_json_has_no_path() -> None:
    assert too_deep_at(b'{"a": "unterminated [[[[[', 3) is None
    assert too_deep_at(b"]]]][[[[[", 3) is None
    assert too_deep_at(b'{"a": 1 [[[[', 3) is None


def test_the_walk_stops_at_the_limit_of_any_depth() -> None:
    assert too_deep_at(b"[" * 10_000_000, 500) == [0] * 500
    body = b'{"items": [{"metadata": ' + b'{"a": ' * 100_000
    assert too_deep_at(body, 500) == ["items", 0, "metadata"] + ["a"] * 497
