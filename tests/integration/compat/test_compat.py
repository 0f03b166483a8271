"""OpenRLHF and NeMo-Gym protocols, answered by the same logged pipeline."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from service.db.models import Decision
from service.db.session import session_scope
from service.settings import Settings
from tests.support import ADMIN_KEY


def test_openrlhf_protocol_scores_only_the_response(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    prompts = ["Q: 2+2? A:", "Q: 3*3? A:", "Q: 1/2 as a decimal? A:"]
    responses = [" so \\boxed{4}", " I think \\boxed{6}", " the answer is 0.5"]
    body = {
        "query": [p + r for p, r in zip(prompts, responses, strict=True)],
        "prompts": prompts,
        "labels": ["4", "9", "\\frac{1}{2}"],
    }
    response = embedded_client.post("/compat/openrlhf", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["rewards"] == [1.0, 0.0, 1.0]
    assert data["scores"] == data["rewards"]
    # OpenRLHF makes a tensor of every extra_logs value: numbers only, one per item.
    assert data["extra_logs"]["status_correct"] == [1.0, 0.0, 1.0]
    assert data["extra_logs"]["status_incorrect"] == [0.0, 1.0, 0.0]
    for values in data["extra_logs"].values():
        assert len(values) == 3 and all(isinstance(v, float) for v in values)
    request_id = response.headers["X-RLVR-Request-Id"]
    with session_scope(embedded_settings) as session:
        query = select(Decision).where(Decision.request_id == request_id)
        rows = list(session.scalars(query.order_by(Decision.item_index)))
    assert [row.completion for row in rows] == responses
    assert [row.prompt for row in rows] == prompts


def test_openrlhf_mismatched_lengths_are_422(embedded_client: Any) -> None:
    body = {"query": ["a", "b"], "prompts": ["a"], "labels": ["1", "2"]}
    response = embedded_client.post("/compat/openrlhf", json=body)
    assert response.status_code == 422
    assert "prompts" in response.json()["error"]["message"]


def test_openrlhf_without_labels_is_422(embedded_client: Any) -> None:
    response = embedded_client.post("/compat/openrlhf", json={"query": ["x \\boxed{1}"]})
    assert response.status_code == 422


def test_openrlhf_invalid_label_is_an_error_not_a_zero(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    body = {"query": ["\\boxed{1}", "\\boxed{2}"], "labels": ["1", ""]}
    response = embedded_client.post("/compat/openrlhf", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_ground_truth"


def test_openrlhf_retry_with_a_key_logs_once(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    key = f"orlhf-{uuid.uuid4()}"
    body = {"query": ["\\boxed{1}"], "labels": ["1"]}
    for _ in range(2):
        response = embedded_client.post(
            "/compat/openrlhf", json=body, headers={"Idempotency-Key": key}
        )
        assert response.status_code == 200
    with session_scope(embedded_settings) as session:
        count = session.scalar(
            select(func.count()).select_from(Decision).where(Decision.request_id == key)
        )
    assert count == 1


def test_nemo_gym_verify_echoes_the_task_with_a_reward(embedded_client: Any) -> None:
    body = {
        "responses_create_params": {"input": [{"role": "user", "content": "What is 6*7?"}]},
        "response": {
            "output": [
                {"type": "reasoning", "summary": []},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "6*7 = 42, so \\boxed{42}."}],
                },
            ]
        },
        "expected_answer": "42",
        "task_id": "t-1",
    }
    response = embedded_client.post("/compat/nemo-gym/verify", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["reward"] == 1.0 and data["status"] == "correct"
    assert data["task_id"] == "t-1" and data["expected_answer"] == "42"
    assert data["version"] == "1.0.0" and data["decision_id"]


def _nemo_row(text: str, expected: Any = "42", **extra: Any) -> dict[str, Any]:
    return {
        "responses_create_params": {"input": "What is 6*7?"},
        "response": {"output": [{"type": "message", "content": [{"text": text}]}]},
        "expected_answer": expected,
        **extra,
    }


def test_nemo_gym_per_verifier_server_echoes_the_row_as_sent(embedded_client: Any) -> None:
    row = _nemo_row("so \\boxed{42}", task_id="t-2", _ng_task_index=3)
    response = embedded_client.post("/compat/nemo-gym/math%401.0.0/verify", json=row)
    assert response.status_code == 200, response.text
    data = response.json()
    assert {name: data[name] for name in row} == row
    assert "ground_truth" not in data
    assert data["reward"] == 1.0 and data["mask_sample"] is False
    assert data["extracted_answer"] == "42" and data["library_reward"] == 1.0
    assert data["judge_evaluations"] is None and data["version"] == "1.0.0"
    decision = embedded_client.get(f"/v1/decisions/{data['decision_id']}").json()
    assert decision["group_id"] == "task-3"


@pytest.mark.parametrize(
    ("row", "kind", "named"),
    [
        (_nemo_row("\\boxed{1}", expected=None), "rlvr:invalid_request", "expected_answer"),
        (_nemo_row("\\boxed{1}", expected=""), "rlvr:invalid_ground_truth", ""),
        (
            {"responses_create_params": {}, "response": "text", "expected_answer": "1"},
            "rlvr:invalid_request",
            "response",
        ),
        # An unpaired surrogate and a non-finite number, as raw JSON text can carry them.
        (
            '{"response": {"output": []}, "expected_answer": "1", "note": "a\\ud800b"}',
            "rlvr:invalid_request",
            "note",
        ),
        (
            '{"response": {"output": []}, "expected_answer": "1", "score": NaN}',
            "rlvr:invalid_request",
            "score",
        ),
    ],
)
def test_nemo_gym_sample_failures_are_masked_200s(
    embedded_client: Any, row: dict[str, Any] | str, kind: str, named: str
) -> None:
    # NeMo-Gym crashes its rollout collection on any error status: one bad sample must not.
    sent = {"content": row, "headers": {"content-type": "application/json"}}
    response = embedded_client.post(
        "/compat/nemo-gym/math/verify", **(sent if isinstance(row, str) else {"json": row})
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["reward"] == 0.0 and data["mask_sample"] is True
    assert data["failure_kind"] == kind
    assert named in data["failure_reason"]
    assert "decision_id" not in data


def test_nemo_gym_misconfiguration_is_loud(embedded_client: Any) -> None:
    row = _nemo_row("\\boxed{42}")
    unknown = embedded_client.post("/compat/nemo-gym/nope/verify", json=row)
    assert unknown.status_code == 422
    assert unknown.json()["error"]["code"] == "unknown_verifier"
    anonymous = embedded_client.post(
        "/compat/nemo-gym/math/verify", json=row, headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401
    malformed = embedded_client.post("/compat/nemo-gym/math%40%25/verify", json=row)
    assert malformed.status_code == 422


def test_nemo_gym_takes_the_key_as_basic_password(embedded_client: Any) -> None:
    # NeMo-Gym builds http://{host}:{port}: the key can only travel in the URL's userinfo.
    row = _nemo_row("\\boxed{42}")
    good = "Basic " + base64.b64encode(f"rlvr:{ADMIN_KEY}".encode()).decode()
    bad = "Basic " + base64.b64encode(f"rlvr:{ADMIN_KEY}x".encode()).decode()
    for header, status in [(good, 200), (bad, 401), ("Basic !!!", 401), ("Basic ", 401)]:
        response = embedded_client.post(
            "/compat/nemo-gym/math/verify", json=row, headers={"Authorization": header}
        )
        assert response.status_code == status, (header, response.text)


def test_nemo_gym_aggregate_metrics_leave_masked_samples_out(embedded_client: Any) -> None:
    responses = [
        {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "mask_sample": False},
        {"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 0.0, "mask_sample": False},
        {"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 0.0, "mask_sample": True},
        {"_ng_task_index": 1, "_ng_rollout_index": 1, "reward": 1.0, "status": "correct"},
    ]
    response = embedded_client.post(
        "/compat/nemo-gym/math/aggregate_metrics", json={"verify_responses": responses}
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["agent_metrics"]["mean/reward"] == pytest.approx(2 / 3)
    assert data["agent_metrics"]["num_masked"] == 1
    assert data["key_metrics"]["mean/reward"] == pytest.approx(2 / 3)
    groups = {group["_ng_task_index"]: group for group in data["group_level_metrics"]}
    assert groups[0]["mean/reward"] == 0.5 and groups[0]["std/reward"] == pytest.approx(
        0.7071, abs=1e-3
    )
    assert groups[1]["num_rollouts"] == 1
    bad = embedded_client.post("/compat/nemo-gym/math/aggregate_metrics", json={"x": 1})
    assert bad.status_code == 422 and "verify_responses" in bad.json()["error"]["message"]


def test_nemo_gym_first_route_answers_the_same_way(embedded_client: Any) -> None:
    response = embedded_client.post("/compat/nemo-gym/verify", json={"response": {"output": []}})
    assert response.status_code == 200
    data = response.json()
    assert data["mask_sample"] is True and "expected_answer" in data["failure_reason"]
