"""NeMo-Gym rows and metrics no trainer sends but a client can: a field nested past what the
answer can carry, task indexes that cannot group, statistics past a float. Each was a 500."""

from __future__ import annotations

from typing import Any

from service.compat.nemo_gym import MAX_FIELD_DEPTH

JSON = {"content-type": "application/json"}


def _row_text(extra: str) -> bytes:
    return (
        '{"responses_create_params": {"input": "What is 6*7?"}, '
        '"response": {"output": [{"type": "message", "content": [{"text": "\\\\boxed{42}"}]}]}, '
        f'"expected_answer": "42", "task_id": "t-1"{extra}}}'
    ).encode()


def test_a_field_nested_too_deep_masks_the_sample_and_is_named(embedded_client: Any) -> None:
    deep = "[" * 900 + "]" * 900  # legal JSON; echoed back, it made serialisation fail
    response = embedded_client.post(
        "/compat/nemo-gym/math/verify", content=_row_text(f', "trace": {deep}'), headers=JSON
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["mask_sample"] is True and data["reward"] == 0.0
    assert data["failure_kind"] == "rlvr:invalid_request"
    assert "trace" in data["failure_reason"] and "nested deeper" in data["failure_reason"]
    assert "trace" not in data and data["task_id"] == "t-1"
    # Nesting NeMo-Gym's own rows use is verified as before.
    fine = "[" * (MAX_FIELD_DEPTH - 1) + "]" * (MAX_FIELD_DEPTH - 1)
    response = embedded_client.post(
        "/compat/nemo-gym/math/verify", content=_row_text(f', "trace": {fine}'), headers=JSON
    )
    assert response.status_code == 200, response.text
    assert response.json()["reward"] == 1.0 and response.json()["mask_sample"] is False


def _aggregate(client: Any, responses: str) -> Any:
    body = f'{{"verify_responses": {responses}}}'.encode()
    return client.post("/compat/nemo-gym/math/aggregate_metrics", content=body, headers=JSON)


def test_a_task_index_that_cannot_group_is_a_422_naming_it(embedded_client: Any) -> None:
    for task in ("[1]", '{"a": 1}'):
        response = _aggregate(
            embedded_client,
            f'[{{"reward": 1, "_ng_task_index": 0}}, {{"reward": 1, "_ng_task_index": {task}}}]',
        )
        assert response.status_code == 422, response.text
        assert "verify_responses[1]._ng_task_index" in response.json()["error"]["message"]


def test_non_finite_task_indexes_group_together(embedded_client: Any) -> None:
    response = _aggregate(
        embedded_client,
        '[{"reward": 1, "_ng_task_index": NaN}, {"reward": 0, "_ng_task_index": NaN}]',
    )
    assert response.status_code == 200, response.text
    groups = response.json()["group_level_metrics"]
    assert [(g["_ng_task_index"], g["num_rollouts"]) for g in groups] == [(None, 2)]


def test_statistics_past_a_float_are_left_out_not_a_500(embedded_client: Any) -> None:
    response = _aggregate(
        embedded_client,
        '[{"reward": 1e308, "accuracy": 1, "_ng_task_index": 0},'
        ' {"reward": 1e308, "accuracy": 0, "_ng_task_index": 0}]',
    )
    assert response.status_code == 200, response.text
    metrics = response.json()["agent_metrics"]
    assert "mean/reward" not in metrics and metrics["num_rollouts"] == 2
    assert metrics["mean/accuracy"] == 0.5
