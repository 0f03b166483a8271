"""What a test's outcome holds, as the verdict's details show it."""

from __future__ import annotations

import json

from service.verifiers.code import outcomes
from service.verifiers.code.harness.records import line, text
from service.verifiers.code.outcomes import printable


def test_lone_surrogates_become_their_escapes() -> None:
    # A solution can put them in a message or a name; UTF-8 writers refuse them.
    for convert in (printable, text):
        assert convert("ok \ud800 \udcff") == "ok \\ud800 \\udcff"
        assert convert("naïve 😀") == "naïve 😀"  # valid text stays as it is


def test_every_text_of_an_outcome_is_valid_utf8() -> None:
    # The harness's JSON lines escape a surrogate, and json.loads makes it one again.
    reported = json.loads(line({"invalid_result": "a solution.\ud800 is not plain data"}))
    outcome = outcomes.TestOutcome(0, "wrong answer", reported["invalid_result"], stderr="\udcff")
    json.dumps(outcome.to_dict(), ensure_ascii=False).encode("utf-8")
    assert outcome.reason == "a solution.\\ud800 is not plain data"
