"""JSON columns' text on SQLite (``service.db.session.json_text``): orjson where it can, ``json``
where orjson refuses; either way the value reads back as it was."""

from __future__ import annotations

import json

import pytest

from service.db.session import json_text


@pytest.mark.parametrize(
    "value",
    [
        {"reward": 1.0, "details": {"followed": [True, False], "measure": 'é 😀 \n "q"'}},
        [1, 2.5, None, "x", {"nested": [{"a": 1e-07}]}],
        {"n": 2**63 - 1, "m": -(2**63)},
        "plain",
        None,
    ],
)
def test_json_text_reads_back_as_the_value(value: object) -> None:
    assert json.loads(json_text(value)) == value


def test_what_orjson_refuses_is_written_by_json() -> None:
    big = {"n": 2**70}  # beyond 64 bits
    surrogate = {"s": "\ud800"}  # a lone surrogate is not UTF-8
    assert json.loads(json_text(big)) == big
    assert json.loads(json_text(surrogate)) == surrogate


def test_keys_that_are_not_strings_are_written_as_json_writes_them() -> None:
    value = {1: "a", 2.5: "b", None: "c"}
    assert json.loads(json_text(value)) == json.loads(json.dumps(value))
