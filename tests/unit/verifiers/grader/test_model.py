"""score_model, label_model and cosine against an OpenAI-compatible server (a mock transport)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from service.verifiers.grader import model, verify

MODEL_URL = "http://judge.test/v1"
SCORE_MODEL: dict[str, Any] = {
    "type": "score_model",
    "name": "judge",
    "model": "judge-model",
    "range": [0, 10],
    "sampling_params": {"temperature": 0, "max_completions_tokens": 64},
    "input": [
        {"role": "developer", "content": "Score the answer from 0 to 10."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Answer: {{sample.output_text}}"},
                {"type": "input_text", "text": "Reference: {{item.answer}}"},
            ],
        },
    ],
}
LABEL_MODEL: dict[str, Any] = {
    "type": "label_model",
    "name": "tone",
    "model": "judge-model",
    "labels": ["polite", "rude"],
    "passing_labels": ["polite"],
    "input": [{"role": "user", "content": "Label the tone of: {{sample.output_text}}"}],
}


def _completion(content: str | None = None, refusal: str | None = None) -> dict[str, Any]:
    return {
        "model": "judge-model-2026",
        "choices": [{"message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }


def _serve(
    monkeypatch: pytest.MonkeyPatch, answer: Callable[[httpx.Request], httpx.Response]
) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"url": str(request.url), "body": json.loads(request.content)})
        return answer(request)

    transport = httpx.MockTransport(handler)
    monkeypatch.setattr(model, "http_client", lambda: httpx.Client(transport=transport))
    return seen


def _run(grader: dict[str, Any], sample: str = "Paris", item: Any = None) -> dict[str, Any]:
    config = {"grader": grader, "model_url": MODEL_URL}
    verdict = verify(sample, {"answer": "Paris"} if item is None else item, config)
    return {"verdict": verdict, "run": verdict.details["grader_run"]}


def test_a_score_is_asked_for_as_structured_output_and_read_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _serve(
        monkeypatch, lambda _: httpx.Response(200, json=_completion('{"steps": [], "result": 7}'))
    )
    outcome = _run(SCORE_MODEL)
    assert outcome["run"]["reward"] == 7.0
    assert outcome["verdict"].status == "partial"  # within the range 0..10
    metadata = outcome["run"]["metadata"]
    assert metadata["sampled_model_name"] == "judge-model-2026"
    assert metadata["token_usage"] == 25
    usage = outcome["run"]["model_grader_token_usage_per_model"]["judge-model-2026"]
    assert usage == {
        "prompt_tokens": 20,
        "completion_tokens": 5,
        "total_tokens": 25,
        "cached_tokens": 0,
    }
    (call,) = seen
    assert call["url"] == f"{MODEL_URL}/chat/completions"
    body = call["body"]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0 and body["max_completion_tokens"] == 64
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["steps", "result"]
    assert body["messages"][0] == {"role": "system", "content": "Score the answer from 0 to 10."}
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Answer: Paris"},
        {"type": "text", "text": "Reference: Paris"},
    ]


@pytest.mark.parametrize(
    ("content", "reward"), [("12", 10.0), ("-3", 0.0), ('```json\n{"result": 4.5}\n```', 4.5)]
)
def test_scores_are_clamped_to_the_range_and_bare_numbers_accepted(
    monkeypatch: pytest.MonkeyPatch, content: str, reward: float
) -> None:
    _serve(monkeypatch, lambda _: httpx.Response(200, json=_completion(content)))
    assert _run(SCORE_MODEL)["run"]["reward"] == reward


def test_an_answer_without_a_score_is_a_parse_error_with_reward_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _serve(monkeypatch, lambda _: httpx.Response(200, json=_completion("I would say good")))
    outcome = _run(SCORE_MODEL)
    assert outcome["run"]["reward"] == 0.0
    assert outcome["run"]["metadata"]["errors"]["model_grader_parse_error"] is True
    assert outcome["verdict"].status == "incorrect"


def test_a_refusal_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(monkeypatch, lambda _: httpx.Response(200, json=_completion(refusal="I cannot")))
    errors = _run(SCORE_MODEL)["run"]["metadata"]["errors"]
    assert errors["model_grader_refusal_error"] is True


@pytest.mark.parametrize(
    "answer",
    [
        lambda _: httpx.Response(500, text="overloaded"),
        lambda _: httpx.Response(200, json={"unexpected": True}),
        lambda _: httpx.Response(200, text="<html>"),
    ],
)
def test_a_failing_server_is_the_services_error_not_a_zero(
    monkeypatch: pytest.MonkeyPatch, answer: Callable[[httpx.Request], httpx.Response]
) -> None:
    _serve(monkeypatch, answer)
    outcome = _run(SCORE_MODEL)
    assert outcome["verdict"].status == "error" and outcome["verdict"].reward is None
    errors = outcome["run"]["metadata"]["errors"]
    assert errors["model_grader_server_error"] is True
    assert MODEL_URL in errors["model_grader_server_error_details"]


def test_an_unreachable_server_is_the_services_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    _serve(monkeypatch, refuse)
    assert _run(SCORE_MODEL)["verdict"].status == "error"


def test_labels_pass_when_they_are_passing_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter(['{"result": "polite"}', '{"result": "rude"}', "rude", "sarcastic"])
    seen = _serve(monkeypatch, lambda _: httpx.Response(200, json=_completion(next(answers))))
    assert _run(LABEL_MODEL)["run"]["reward"] == 1.0
    assert _run(LABEL_MODEL)["run"]["reward"] == 0.0
    assert _run(LABEL_MODEL)["run"]["reward"] == 0.0  # a bare label is read too
    assert _run(LABEL_MODEL)["run"]["metadata"]["errors"]["model_grader_parse_error"] is True
    schema = seen[0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["result"]["enum"] == ["polite", "rude"]


def test_a_template_error_never_reaches_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _serve(monkeypatch, lambda _: httpx.Response(200, json=_completion("1")))
    outcome = _run(SCORE_MODEL, item={"reference": "Paris"})
    assert outcome["run"]["metadata"]["errors"]["invalid_variable_error"] is True
    assert outcome["verdict"].status == "invalid" and outcome["verdict"].reward is None
    assert seen == []


def test_cosine_compares_the_servers_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = {"Paris": [1.0, 0.0], "paris": [0.8, 0.6]}

    def embeddings(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        data = [{"index": i, "embedding": vectors[text]} for i, text in enumerate(texts)]
        return httpx.Response(200, json={"data": data})

    seen = _serve(monkeypatch, embeddings)
    grader = {
        "type": "text_similarity",
        "name": "cos",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "evaluation_metric": "cosine",
    }
    config = {"grader": grader, "embedding_url": "http://embed.test/v1"}
    verdict = verify("paris", {"answer": "Paris"}, config)
    assert verdict.details["grader_run"]["reward"] == pytest.approx(0.8)
    assert seen[0]["url"] == "http://embed.test/v1/embeddings"
    assert seen[0]["body"] == {"model": "text-embedding-3-large", "input": ["paris", "Paris"]}


def test_an_answer_nested_too_deep_to_parse_has_no_score() -> None:
    assert model.parse_score("[" * 100_000) is None
    assert model.parse_score('{"result": ' * 100_000) is None
